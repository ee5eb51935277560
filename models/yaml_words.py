"""What a YAML parser says is wrong, keyed so that a reader's language can say it again: libyaml's
words (the parser PyYAML's wheels use) and the pure-Python parser's commonest. Any other problem is
shown as the parser wrote it."""

from __future__ import annotations

import re
from collections.abc import Callable

import yaml

from plan.models.said import say_as

# the parser's exact words -> the keyed sentence (a brace goes in a field: templates format)
_FIXED: dict[str, Callable[[], str]] = {
    "mapping values are not allowed in this context": lambda: say_as(
        "rule.yaml_mapping_values", "mapping values are not allowed in this context"),
    "mapping values are not allowed here": lambda: say_as(
        "rule.yaml_mapping_values_here", "mapping values are not allowed here"),
    "mapping keys are not allowed in this context": lambda: say_as(
        "rule.yaml_mapping_keys", "mapping keys are not allowed in this context"),
    "block sequence entries are not allowed in this context": lambda: say_as(
        "rule.yaml_sequence_entries", "block sequence entries are not allowed in this context"),
    "sequence entries are not allowed here": lambda: say_as(
        "rule.yaml_sequence_entries_here", "sequence entries are not allowed here"),
    "did not find expected ',' or ']'": lambda: say_as(
        "rule.yaml_expected_list_end", "did not find expected ',' or ']'"),
    "did not find expected ',' or '}'": lambda: say_as(
        "rule.yaml_expected_mapping_end", "did not find expected ',' or {close}",
        close="'}'"),
    "did not find expected key": lambda: say_as(
        "rule.yaml_expected_key", "did not find expected key"),
    "did not find expected '-' indicator": lambda: say_as(
        "rule.yaml_expected_dash", "did not find expected '-' indicator"),
    "did not find expected node content": lambda: say_as(
        "rule.yaml_expected_content", "did not find expected node content"),
    "did not find expected <document start>": lambda: say_as(
        "rule.yaml_expected_document", "did not find expected <document start>"),
    "did not find expected comment or line break": lambda: say_as(
        "rule.yaml_expected_line_break", "did not find expected comment or line break"),
    "did not find expected hexdecimal number": lambda: say_as(
        "rule.yaml_expected_hex", "did not find expected hexdecimal number"),
    "could not find expected ':'": lambda: say_as(
        "rule.yaml_expected_colon", "could not find expected ':'"),
    "found undefined alias": lambda: say_as("rule.yaml_undefined_alias", "found undefined alias"),
    "found character that cannot start any token": lambda: say_as(
        "rule.yaml_bad_character", "found character that cannot start any token"),
    "found unknown escape character": lambda: say_as(
        "rule.yaml_unknown_escape", "found unknown escape character"),
    "found unexpected end of stream": lambda: say_as(
        "rule.yaml_end_of_stream", "found unexpected end of stream"),
    "found a tab character that violates indentation": lambda: say_as(
        "rule.yaml_tab_indent", "found a tab character that violates indentation"),
    "but found another document": lambda: say_as(
        "rule.yaml_another_document", "but found another document"),
    "found unknown directive name": lambda: say_as(
        "rule.yaml_unknown_directive", "found unknown directive name"),
    "second occurrence": lambda: say_as("rule.yaml_second_occurrence", "second occurrence"),
    "exceeded maximum nesting depth": lambda: say_as(
        "rule.yaml_nesting_depth", "exceeded maximum nesting depth"),
}

# the pure-Python parser's words with what it found in them ('@', '<stream end>')
_FOUND_CHARACTER = re.compile(r"found character (?P<found>.+) that cannot start any token")
_EXPECTED = re.compile(r"expected (?P<wanted>.+), but (?P<verb>found|got) (?P<found>.+)")


def yaml_problem(problem: str | None) -> str:
    """The parser's problem, keyed where its words are known."""
    text = "" if problem is None else str(problem)
    if text in _FIXED:
        return _FIXED[text]()
    if match := _FOUND_CHARACTER.fullmatch(text):
        return say_as("rule.yaml_bad_character_found", "found character {found} that cannot start "
                      "any token", found=match["found"])
    if (match := _EXPECTED.fullmatch(text)) and match["verb"] == "found":
        return say_as("rule.yaml_expected_found", "expected {wanted}, but found {found}",
                      wanted=match["wanted"], found=match["found"])
    if match:
        return say_as("rule.yaml_expected_got", "expected {wanted}, but got {found}",
                      wanted=match["wanted"], found=match["found"])
    return text


# the reader's reasons for a character no YAML may hold (libyaml's and the pure-Python reader's)
_READER_REASONS: dict[str, Callable[[], str]] = {
    "control characters are not allowed": lambda: say_as(
        "rule.yaml_control_characters", "control characters are not allowed"),
    "special characters are not allowed": lambda: say_as(
        "rule.yaml_special_characters", "special characters are not allowed"),
}


def yaml_error(exc: yaml.YAMLError) -> str:
    """A YAML error with no mark (the reader's refusal of a character: it names a position in the
    text instead), keyed where it is one; any other as the parser wrote it."""
    text = str(exc)
    if not isinstance(exc, yaml.reader.ReaderError) or not isinstance(exc.character, int):
        return text
    reason = _READER_REASONS[exc.reason]() if exc.reason in _READER_REASONS else exc.reason
    said = say_as("rule.yaml_unacceptable", "unacceptable character #x{code:04x}: {reason}\n  in "
                  "{name}, position {position}", code=exc.character, reason=reason,
                  name=f'"{exc.name}"', position=exc.position)
    return said if said == text else text  # (a reader that words it otherwise: as written)
