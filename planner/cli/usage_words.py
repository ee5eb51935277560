"""click's usage errors (no such option, missing argument, invalid value, no such command) said in
the reader's language. click (vendored by typer) writes them in English only: the one line `main`
prints is read back through click's message forms (plan.planner.i18n.usage_en) and said again from
the current language's table. English lines are returned unchanged, and a line that matches no
form (another click or pydantic version) is kept as click wrote it."""

from __future__ import annotations

import functools

from plan.planner import i18n
from plan.planner.i18n.said import template_pattern

# the forms in the order they are tried: a more specific one before the one it extends
FORMS = (
    "usage.no_such_option_possible", "usage.no_such_option", "usage.missing_choose",
    "usage.missing", "usage.missing_command", "usage.extra_arguments", "usage.invalid_value_for",
    "usage.invalid_value", "usage.not_one_of", "usage.no_such_command_guess",
    "usage.no_such_command", "usage.requires_argument", "usage.requires_arguments",
    "usage.takes_no_value", "usage.argument_values", "usage.at_least", "usage.at_most",
    "usage.above", "usage.below", "usage.finite", "usage.not_finite", "usage.path_missing",
    "usage.path_is_file", "usage.path_is_folder", "usage.path_unreadable",
    "usage.path_unwritable", "rule.pyd_int_parsing", "rule.pyd_float_parsing",
    "rule.pyd_bool_parsing", "rule.pyd_int_from_float", "rule.pyd_int", "rule.pyd_float",
    "rule.pyd_bool", "rule.pyd_string",
)
# fields holding another message (said again), one of click's words, or a list of names
_NESTED = ("problem",)
_WORDS = ("kind", "label")
_LISTS = ("choices", "options")


def usage_line(message: str) -> str:
    """click's `message` (whitespace already folded to single spaces) in the current language."""
    if i18n.language() == "en":
        return message
    table = i18n.TABLES["en"]
    for key in FORMS:
        found = template_pattern(table[key]).fullmatch(message)
        if found:
            fields = found.groupdict()
            for name in _NESTED:
                if name in fields:
                    fields[name] = usage_line(fields[name])
            for name in _WORDS:
                if name in fields:
                    fields[name] = i18n.word("usage.word", fields[name])
            for name in _LISTS:
                if name in fields:
                    fields[name] = functools.reduce(
                        lambda head, last: i18n.t("rule.comma", head=head, last=last),
                        fields[name].split(", "))
            return i18n.t(key, **fields)
    return message
