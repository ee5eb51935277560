"""JSON Schema fragments for the quantities of `plan.models.units`: a number, or a string whose
pattern is built from the same suffix tables the parsers use, so an editor accepts what the loader
accepts.

Patterns use only the regex syntax JSON Schema (ECMA-262) and Python share."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from plan.models import units

_NUMBER = r"([0-9][0-9,_]*(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?"


def _alternatives(words: Iterable[object]) -> str:
    ordered = sorted({str(w) for w in words if w}, key=lambda w: (-len(w), w))  # longest first
    return "|".join(re.escape(w).replace("\\ ", " ") for w in ordered)


MONEY_PATTERN = (
    rf"^\s*({_alternatives(units._CURRENCY_PREFIX)})?\s*{_NUMBER}\s*({_alternatives(units._MONEY_SUFFIX)})?"
    rf"\s*({_alternatives(units._CURRENCY_WORD)}|[A-Z]{{3}})?\s*$"
)
COUNT_PATTERN = rf"^\s*{_NUMBER}\s*({_alternatives(units._COUNT_SUFFIX)})?\s*$"
DURATION_PATTERN = rf"^\s*{_NUMBER}\s*({_alternatives(units._DURATION_SUFFIX_H)})\s*$"
SIZE_PATTERN = rf"^\s*{_NUMBER}\s*({_alternatives(units._SIZE_SUFFIX_GB)})\s*$"
SEQ_LEN_PATTERN = r"^\s*[0-9][0-9,_]*(\s*[kK]|\.[0-9]*\s*[kK])?\s*$"


def quantity(pattern: str, example: str, description: str, *, number: bool = True,
             exclusive_minimum: bool = True, integer: bool = False) -> dict[str, Any]:
    """A number (when `number`) or a string matching `pattern`."""
    text: dict[str, Any] = {"type": "string", "pattern": pattern}
    forms: list[dict[str, Any]] = [text]
    if number:
        bound = {"exclusiveMinimum": 0} if exclusive_minimum else {"minimum": 0}
        forms.insert(0, {"type": "integer" if integer else "number", **bound})
    return {"anyOf": forms, "description": description, "examples": [example]}


def money(positive: bool) -> dict[str, Any]:
    return quantity(
        MONEY_PATTERN,
        "400k",
        "amount of money: 400000, 400k, 40万, 2万元, ¥20,000 or 20k USD (another currency converts "
        "at the catalog's dated rate)",
        exclusive_minimum=positive,
    )


def count() -> dict[str, Any]:
    return quantity(COUNT_PATTERN, "2B", "a count: 2e9, 2B, 200M, 1.5T")


def duration(positive: bool) -> dict[str, Any]:
    return quantity(DURATION_PATTERN, "30d", "a duration with its unit: 30d, 12h, 2w, 2 weeks, "
                                             "90min",
                    number=False, exclusive_minimum=positive)


def size() -> dict[str, Any]:
    return quantity(
        SIZE_PATTERN, "50GB", "a data size with its unit: 50GB, 1.5TB, 500MiB", number=False
    )


def seq_len() -> dict[str, Any]:
    return quantity(
        SEQ_LEN_PATTERN, "4k", "tokens per sequence: 4096 or 4k (k = 1024)", integer=True
    )
