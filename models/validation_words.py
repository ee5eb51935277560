"""Pydantic's own messages ('Field required', 'Input should be a valid list') and the reasons our
validators raise, as keyed sentences (plan.models.said) that a reader's language can say again.

Each template is pydantic's wording with its context filled in; a message whose text differs from
what the template gives (another pydantic version, a new type) is kept as pydantic wrote it, so the
English output never changes."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from plan.models.said import Said, say_as


def _items(n: object) -> str:
    return (say_as("rule.one_item", "{n} item", n=n) if n == 1
            else say_as("rule.many_items", "{n} items", n=n))


def _chars(n: object) -> str:
    return (say_as("rule.one_char", "{n} character", n=n) if n == 1
            else say_as("rule.many_chars", "{n} characters", n=n))


_PLAIN: dict[str, Callable[[Mapping[str, Any]], str]] = {
    "missing": lambda ctx: say_as("rule.pyd_missing", "Field required"),
    "list_type": lambda ctx: say_as("rule.pyd_list", "Input should be a valid list"),
    "dict_type": lambda ctx: say_as("rule.pyd_dict", "Input should be a valid dictionary"),
    "string_type": lambda ctx: say_as("rule.pyd_string", "Input should be a valid string"),
    "int_type": lambda ctx: say_as("rule.pyd_int", "Input should be a valid integer"),
    "float_type": lambda ctx: say_as("rule.pyd_float", "Input should be a valid number"),
    "bool_type": lambda ctx: say_as("rule.pyd_bool", "Input should be a valid boolean"),
    "int_parsing": lambda ctx: say_as(
        "rule.pyd_int_parsing",
        "Input should be a valid integer, unable to parse string as an integer"),
    "float_parsing": lambda ctx: say_as(
        "rule.pyd_float_parsing",
        "Input should be a valid number, unable to parse string as a number"),
    "bool_parsing": lambda ctx: say_as(
        "rule.pyd_bool_parsing", "Input should be a valid boolean, unable to interpret input"),
    "int_from_float": lambda ctx: say_as(
        "rule.pyd_int_from_float",
        "Input should be a valid integer, got a number with a fractional part"),
    "model_type": lambda ctx: say_as(
        "rule.pyd_model", "Input should be a valid dictionary or instance of {name}",
        name=ctx.get("class_name", "")),
    "too_short": lambda ctx: say_as(
        "rule.pyd_too_short", "List should have at least {items} after validation, not {actual}",
        items=_items(ctx.get("min_length")), actual=ctx.get("actual_length")),
    "too_long": lambda ctx: say_as(
        "rule.pyd_too_long", "List should have at most {items} after validation, not {actual}",
        items=_items(ctx.get("max_length")), actual=ctx.get("actual_length")),
    "string_too_long": lambda ctx: say_as(
        "rule.pyd_string_too_long", "String should have at most {chars}",
        chars=_chars(ctx.get("max_length"))),
    "string_too_short": lambda ctx: say_as(
        "rule.pyd_string_too_short", "String should have at least {chars}",
        chars=_chars(ctx.get("min_length"))),
    "string_pattern_mismatch": lambda ctx: say_as(
        "rule.pyd_pattern", "String should match pattern {pattern}",
        pattern=repr(ctx.get("pattern"))),
}


def keyed_message(err: Mapping[str, Any], message: str) -> str:
    """`message` (pydantic's, 'Value error, ' removed) as a keyed sentence where one is known: a
    validator's own keyed reason, or pydantic's message said again from its template."""
    ctx = err.get("ctx") or {}
    if err["type"] == "value_error":
        reason = ctx.get("error")
        said = reason.args[0] if reason is not None and reason.args else None
        return said if isinstance(said, Said) and said == message else message
    build = _PLAIN.get(err["type"])
    if build is None:
        return message
    said = build(ctx)
    return said if said == message else message


def listed(names: Iterable[str]) -> str:
    """'a, b, c': names (ids, fields, codes) one after another, the separator said in the reader's
    language ('a、b、c')."""
    shown = ""
    for name in names:
        shown = say_as("rule.comma", "{head}, {last}", head=shown, last=name) if shown else name
    return shown
