"""Keyed English sentences: a str that also remembers the message key and fields it was made from,
so that a reader's language can say it again when it is shown (plan.planner.i18n.said renders it
from the planner's tables). Rules in constraints/ write their reasons with `say_as`, which needs no
table: the English template travels with the call, and the planner's English table holds the same
template under the same key (tests/planner/test_i18n_rules.py checks the two agree)."""

from __future__ import annotations

from typing import Any


class Said(str):
    """An English sentence with the message key and fields it was made from."""

    key: str
    fields: dict[str, Any]


def keyed(text: str, key: str, fields: dict[str, Any]) -> Said:
    """`text` (already English) remembering `key` and `fields`."""
    said = Said(text)
    said.key, said.fields = key, fields
    return said


def say_as(key: str, template: str, **fields: Any) -> Said:
    """The English `template` filled with `fields` (numbers, ids, other sentences), remembering
    `key`: the same text the planner's English table gives for `key`."""
    return keyed(template.format(**fields), key, fields)
