"""Sentences a solve records in English that a reader's language can say again.

A solve writes its explanations, assumptions, conflicts and trades as English strings: the records
and the JSON keep them (JSON never changes with --lang). `say(key, **fields)` gives such a string,
rendered from the English table, that also remembers its key and fields; `local(text)` renders it
in the current language when the text is shown. The string class (`Said`) lives in models/said.py,
where rules in constraints/ make their reasons with `say_as` (their own English template, the same
as the table's: they may not import the planner). A plain string (a catalog's source note) is
shown as it is. Fields may be numbers (formatted by the template's own spec), other sentences
(`say`), lists of them (`Joined`) or amounts, words and dates (`Fmt`): each rendered in the
language of the sentence around it."""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from plan.models.said import Said, keyed, say_as
from plan.planner import i18n
from plan.planner.i18n import numbers

__all__ = ["Fmt", "Joined", "Said", "date", "keyed", "local", "money", "phrase", "said_of", "say",
           "say_as",
           "signed_money", "template_pattern", "word"]


@dataclass(frozen=True)
class Fmt:
    """A field written by a function of the current language (an amount, a word, a date); the
    function is a module's own, so that a plan holding it still pickles (batch workers)."""

    func: Callable[..., str]
    args: tuple[Any, ...]

    def text(self) -> str:
        return self.func(*self.args)


def money(value: float, currency: str) -> Fmt:
    """'15,074 CNY' in English, '1.51万元' in Chinese."""
    return Fmt(numbers.money, (value, currency))


def signed_money(value: float, currency: str) -> Fmt:
    """'+116 CNY' / '+116元'."""
    return Fmt(numbers.signed_money, (value, currency))


def word(family: str, value: str) -> Fmt:
    """A domain word (a billing mode, a status) in the reader's language."""
    return Fmt(i18n.word, (family, value))


def phrase(text: str, *keys: str) -> Fmt:
    """A fixed English phrase (a mechanism, a stack's name) in the reader's language, looked up by
    its text: it may come back as plain text from the estimate store. `keys` name templates the
    text may also be filled from ('blackwell GPUs' compute efficiency')."""
    return Fmt(_phrase, (str(text), keys))


def _phrase(text: str, keys: tuple[str, ...]) -> str:
    if i18n.language() == "en":
        return text
    table = i18n.TABLES[i18n.language()]
    if f"phrase.{text}" in table:
        return table[f"phrase.{text}"]
    for key in keys:
        found = template_pattern(i18n.TABLES["en"][key]).fullmatch(text)
        if found:
            return i18n.t(key, **{name: _Shown(table.get(f"phrase.{value}", value))
                                  for name, value in found.groupdict().items()})
    return text


class _Shown(str):
    """A field read back from English text, already formatted: shown as it is, whatever the
    template's format spec ('{gib:.1f}' of '60.4')."""

    def __format__(self, spec: str) -> str:
        return str(self)


def template_pattern(template: str) -> re.Pattern[str]:
    """A template of plain {fields} as a pattern that reads them back from its English text."""
    parts = string.Formatter().parse(template)
    return re.compile("".join(re.escape(literal) + (f"(?P<{name}>.+?)" if name else "")
                              for literal, name, _, _ in parts))


def date(iso: str) -> Fmt:
    """'2027-01-15' / '2027年1月15日'."""
    return Fmt(numbers.date, (iso,))


@dataclass(frozen=True)
class Joined:
    """Parts said one after another with a separator message between them ('; ' / '；')."""

    parts: Sequence[object]
    separator: str = "list_sep"

    def text(self) -> str:
        return i18n.t(self.separator).join(str(_field(part)) for part in self.parts)


@contextmanager
def _speaking(lang: str) -> Iterator[None]:
    token = i18n._language.set(lang)
    try:
        yield
    finally:
        i18n._language.reset(token)


def _field(value: object) -> object:
    if isinstance(value, Said):
        return i18n.t(value.key, **{k: _field(v) for k, v in value.fields.items()})
    if isinstance(value, Fmt | Joined):
        return value.text()
    return value


def said_of(exc: BaseException) -> str:
    """An exception's message: its keyed sentence where it has one (said again in the reader's
    language), else its text."""
    return exc.args[0] if exc.args and isinstance(exc.args[0], Said) else str(exc)


def say(key: str, **fields: object) -> str:
    """The message `key` in English, remembering its key and fields for `local`."""
    with _speaking("en"):
        text = i18n.t(key, **{k: _field(v) for k, v in fields.items()})
    return keyed(text, key, fields)


def local(text: str) -> str:
    """`text` in the current language: a sentence from `say` rendered again from its key and
    fields; any other string as it is."""
    if not isinstance(text, Said) or i18n.language() == "en":
        return str(text)
    return str(_field(text))
