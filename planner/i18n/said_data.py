"""A keyed sentence (`Said`) as plain JSON data and back: the estimate store keeps an estimate's
notes so, and a note read back is still said in the reader's language (`local`).

The data holds the message key and the fields: numbers, words, other sentences, lists of them
(`Joined`) and the few formatting functions of the i18n package, named (`Fmt`); never code. A note
that cannot be written so (a field of another kind) is kept as its plain English text. What comes
back is rendered again from the English table and must give the very text stored; anything else
raises `Unreadable` (the store's row is then a miss), so a stored note can never say other English
than the estimator wrote."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plan.planner import i18n
from plan.planner.i18n import numbers, said
from plan.planner.i18n.said import Fmt, Joined, Said, say

__all__ = ["Unreadable", "from_data", "to_data"]

_FORMATTERS: dict[str, Callable[..., str]] = {
    "phrase": said._phrase, "money": numbers.money, "signed_money": numbers.signed_money,
    "word": i18n.word, "date": numbers.date, "millions": numbers.millions}
_NAME_OF = {func: name for name, func in _FORMATTERS.items()}


class Unreadable(ValueError):
    """Data that is not a note as `to_data` writes it."""


class _NotData(TypeError):
    """A field `to_data` cannot write as data."""


def to_data(text: str) -> Any:
    """A note as JSON data: a keyed one as its text, key and fields (where it reads back as the
    same text), any other as its text."""
    if not isinstance(text, Said):
        return str(text)
    try:
        data = _said_data(text)
        if from_data(data) == text:
            return data
    except (_NotData, Unreadable):
        pass
    return str(text)


def _said_data(text: Said) -> dict[str, Any]:
    return {"text": str(text), "key": text.key,
            "fields": {name: _field_data(value) for name, value in text.fields.items()}}


def _field_data(value: object) -> Any:
    if isinstance(value, Said):
        return {"said": _said_data(value)}
    if isinstance(value, Joined):
        return {"joined": [_field_data(part) for part in value.parts],
                "separator": value.separator}
    if isinstance(value, Fmt) and value.func in _NAME_OF:
        return {"fmt": _NAME_OF[value.func], "args": _args_data(value.args)}
    if value is None or type(value) in (bool, int, float, str):
        return value
    raise _NotData(type(value).__name__)


def _args_data(args: tuple[Any, ...]) -> list[Any]:
    if not all(type(arg) in (bool, int, float, str) or isinstance(arg, tuple) for arg in args):
        raise _NotData("args")
    return [_args_data(arg) if isinstance(arg, tuple) else arg for arg in args]


def from_data(data: Any) -> str:
    """The note `to_data` wrote: keyed again where it was keyed. Raises Unreadable for anything
    else, or a keyed note whose English is not the text stored."""
    if type(data) is str:
        return data
    try:
        return _said(data)
    except Unreadable:
        raise
    except Exception as exc:  # whatever forged data makes a formatter raise: a miss
        raise Unreadable(type(exc).__name__) from exc


def _said(data: Any) -> str:
    _check(type(data) is dict and set(data) == {"text", "key", "fields"}, "note")
    key, fields = data["key"], data["fields"]
    _check(type(key) is str and key in i18n.TABLES["en"] and type(fields) is dict, "note.key")
    note = say(key, **{name: _field(value) for name, value in fields.items()})
    _check(note == data["text"], "note.text")
    return note


def _field(value: Any) -> object:
    if type(value) is not dict:
        _check(value is None or type(value) in (bool, int, float, str), "field")
        return value
    if set(value) == {"said"}:
        return _said(value["said"])
    if set(value) == {"joined", "separator"}:
        separator, parts = value["separator"], value["joined"]
        _check(type(parts) is list and separator in i18n.TABLES["en"], "joined")
        return Joined([_field(part) for part in parts], separator)
    _check(set(value) == {"fmt", "args"} and value["fmt"] in _FORMATTERS
           and type(value["args"]) is list, "fmt")
    return Fmt(_FORMATTERS[value["fmt"]], _args(value["args"]))


def _args(values: list[Any]) -> tuple[Any, ...]:
    for value in values:
        _check(type(value) in (bool, int, float, str, list), "fmt.args")
    return tuple(_args(value) if type(value) is list else value for value in values)


def _check(condition: bool, what: str) -> None:
    if not condition:
        raise Unreadable(what)
