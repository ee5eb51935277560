"""What Python's JSON decoder says is wrong, keyed so that a reader's language can say it again:
its message (json.JSONDecodeError.msg, a fixed phrase) and where (.lineno, .colno, .pos), in the
decoder's own English form. A phrase this table does not know is shown as the decoder wrote it."""

from __future__ import annotations

import json
from collections.abc import Callable

from plan.models.said import say_as

_PHRASES: dict[str, Callable[[], str]] = {
    "Expecting value": lambda: say_as("rule.json_value", "Expecting value"),
    "Extra data": lambda: say_as("rule.json_extra", "Extra data"),
    "Expecting ':' delimiter": lambda: say_as("rule.json_colon", "Expecting ':' delimiter"),
    "Expecting ',' delimiter": lambda: say_as("rule.json_comma", "Expecting ',' delimiter"),
    "Expecting property name enclosed in double quotes": lambda: say_as(
        "rule.json_name", "Expecting property name enclosed in double quotes"),
    "Unterminated string starting at": lambda: say_as(
        "rule.json_unterminated", "Unterminated string starting at"),
    "Invalid control character at": lambda: say_as(
        "rule.json_control", "Invalid control character at"),
    "Invalid \\escape": lambda: say_as("rule.json_escape", "Invalid \\escape"),
    "Invalid \\uXXXX escape": lambda: say_as("rule.json_unicode_escape", "Invalid \\uXXXX escape"),
    # Python 3.13's
    "Illegal trailing comma before end of object": lambda: say_as(
        "rule.json_comma_object", "Illegal trailing comma before end of object"),
    "Illegal trailing comma before end of array": lambda: say_as(
        "rule.json_comma_array", "Illegal trailing comma before end of array"),
}


def json_phrase(msg: str) -> str:
    """The decoder's message alone ('Expecting value'), keyed where the table knows it."""
    build = _PHRASES.get(msg)
    return build() if build is not None else msg


def json_problem(exc: json.JSONDecodeError) -> str:
    """'Expecting value: line 1 column 2 (char 1)' (the decoder's own text), keyed."""
    return say_as("rule.json_problem", "{problem}: line {line} column {column} (char {char})",
                  problem=json_phrase(exc.msg), line=exc.lineno, column=exc.colno, char=exc.pos)


def json_nesting() -> str:
    """A JSON text nested past Python's recursion limit."""
    return say_as("rule.json_too_deep", "nested too deeply")
