"""What an overlay changed in the catalog, one line per changed figure (`plan catalog diff`, and the
assumptions of every answer that used the overlay).

Entries are compared as their schema dumps them: lists of offers, purchases and capacity limits by
their keys (gpu and billing), so a changed price reads `offer a800-80gb/hourly:
price_per_gpu_period 5.57 -> 5.2`, not as a shifted list. Texts about a figure (source, date,
assumption, notes) are not lines of their own: an entry whose only change is such a text gets one
line saying its source changed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

_TEXTS = frozenset({"source", "as_of", "assumption", "notes", "regions_source",
                    "gpus_per_node_assumption"})
_SHOWN_CHARS = 60


def catalog_changes(before: Any, after: Any) -> list[str]:
    """Lines for what differs between two catalogs (plan.models.catalog.Catalog): entries added,
    and each changed figure of a changed entry with its old and new value."""
    lines: list[str] = []
    for kind, old_table, new_table in (
        ("model", before.models, after.models),
        ("GPU", before.gpus, after.gpus),
        ("platform", before.platforms, after.platforms),
    ):
        for key, entry in new_table.items():
            old = old_table.get(key)
            if old is None:
                lines.append(f"{kind} {key}: added")
            elif old != entry:
                lines += [f"{kind} {key}: {line}" for line in _entry_changes(old, entry)]
    if before.exchange_rates != after.exchange_rates:
        lines += [f"exchange rates: {line}"
                  for line in _entry_changes(before.exchange_rates, after.exchange_rates)]
    return lines


def _entry_changes(old: BaseModel, new: BaseModel) -> list[str]:
    old_dump = old.model_dump(mode="json", by_alias=True)
    new_dump = new.model_dump(mode="json", by_alias=True)
    lines: list[str] = []
    for field in dict.fromkeys([*old_dump, *new_dump]):
        was, now = old_dump.get(field), new_dump.get(field)
        if was == now:
            continue
        if field in _KEYED and isinstance(was, list) and isinstance(now, list):
            lines += _keyed_changes(field, was, now)
        else:
            lines += _leaf_changes(field, _flatten(was, field), _flatten(now, field))
    return lines


def _keyed_changes(field: str, was: list[Any], now: list[Any]) -> list[str]:
    """Offers or purchases compared item by item, by key."""
    key_of = _KEYED[field]
    old_items = {key_of(item): item for item in was}
    lines = []
    for item in now:
        key = key_of(item)
        name = f"{field.removesuffix('s')} {key}"
        before = old_items.get(key)
        if before is None:
            price = item.get("price_per_gpu_period", item.get("capex_per_gpu"))
            lines.append(f"{name}: added ({_shown(price)} {item.get('currency')})")
        elif before != item:
            rule = item.get("derived")
            derived = f" (derived from {rule.get('from')})" if isinstance(rule, Mapping) else ""
            lines += [f"{name}: {line}{derived if line.startswith('price_') else ''}"
                      for line in _leaf_changes("", _flatten(before), _flatten(item))]
    return lines


def _leaf_changes(where: str, was: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    lines, texts = [], False
    for path in dict.fromkeys([*was, *now]):
        old, new = was.get(path, "(none)"), now.get(path, "(none)")
        if old == new:
            continue
        if path.rsplit(".", 1)[-1] in _TEXTS:
            texts = True
        else:
            lines.append(f"{path} {_shown(old)} -> {_shown(new)}")
    if texts and not lines:
        lines.append(f"{where + ' ' if where else ''}source changed")
    return lines


def _flatten(value: Any, path: str = "") -> dict[str, Any]:
    """Leaf values by dotted path; capacity limits by their gpu and billing, other lists whole."""
    if isinstance(value, Mapping):
        flat: dict[str, Any] = {}
        for key, item in value.items():
            flat.update(_flatten(item, f"{path}.{key}" if path else str(key)))
        return flat
    if path.endswith("capacity") and isinstance(value, list):
        flat = {}
        for item in value:
            if isinstance(item, Mapping):
                billing = "+".join(item.get("billing") or []) or "any"
                flat.update(_flatten(item, f"{path}[{item.get('gpu') or 'any'}/{billing}]"))
        return flat
    return {path: value}


_KEYED = {
    "offers": lambda item: f"{item.get('gpu')}/{item.get('billing')}",
    "purchase": lambda item: str(item.get("gpu")),
}


def _shown(value: Any) -> str:
    text = "none" if value is None else str(value).lower() if isinstance(value, bool) \
        else str(value)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "..."
