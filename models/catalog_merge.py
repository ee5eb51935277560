"""How one overlay platform entry lays over the catalog's: it changes only what it names.

- `features:` merges into the catalog's map (`replace: true` inside it replaces the map whole);
- `offers` merge by (gpu, billing), `purchase` by gpu, `limits.capacity` by (gpu, billing modes);
  the rest of `limits` merges key by key;
- an offer whose price is derived by rule (`derived:`) from an offer the overlay changes is
  recomputed from the new price (plan.models.derived_prices); a price the overlay states stays;
- every other field (`fabric`, `reliability`, `spot`, `egress`, `vendor_claims`, ...) is one fact
  with its source, and an overlay that names it replaces it whole.

Anything of the wrong type (an id that is a list, `offers: 5`) is left as written: the schema then
names the field, exactly as for the built-in catalog.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plan.models.platform import Platform
from plan.models.said import say_as

# the key inside an overlay's `features:` that replaces the catalog's map instead of merging
REPLACE = "replace"
# Fields of a derived offer that follow its base when the base changes (the fill recomputes them).
_FOLLOWS_BASE = ("price_per_gpu_period", "currency", "source", "as_of", "assumed", "assumption")
# Facts of how an offer is sold (what its pool lacks, whole instances, its node), which a price
# quote does not restate: an overlay offer keeps the catalog's unless it names them.
_HOW_SOLD = ("lacks", "lacks_source", "min_gpus", "step", "gpus_per_node")


def merge_platform(platforms: Mapping[str, Platform], raw: Any) -> Any:
    """The overlay entry `raw` laid over the catalog's platform of the same id (a new id, or a
    malformed entry, is returned as written)."""
    if (
        not isinstance(raw, Mapping)
        or not isinstance(raw.get("id"), str)
        or raw["id"] not in platforms
    ):
        return raw
    base = platforms[raw["id"]].model_dump(by_alias=True)
    merged = {**base, **raw}
    if isinstance(raw.get("features"), Mapping):
        merged["features"] = _merged_features(base["features"], raw["features"])
    raw_offers = raw.get("offers", []) or []
    if isinstance(raw_offers, list):
        merged["offers"] = _merged_offers(base["offers"], raw_offers)
    raw_purchase = raw.get("purchase", []) or []
    if isinstance(raw_purchase, list):
        purchases = {_purchase_key(p): p for p in base["purchase"]}
        for entry in raw_purchase:
            purchases[_purchase_key(entry)] = entry
        merged["purchase"] = list(purchases.values())
    raw_limits = raw.get("limits")
    if isinstance(raw_limits, Mapping):
        raw_capacity = raw_limits.get("capacity", []) or []
        capacity = {capacity_key(c): c for c in base["limits"]["capacity"]}
        if isinstance(raw_capacity, list):
            for entry in raw_capacity:
                capacity[capacity_key(entry)] = entry
        merged["limits"] = {
            **base["limits"],
            **raw_limits,
            "capacity": list(capacity.values()) if isinstance(raw_capacity, list) else raw_capacity,
        }
    return merged


def _merged_features(base: Mapping[str, Any], raw: Mapping[str, Any]) -> dict[str, Any]:
    """The catalog's features with the overlay's on top; `replace: true` keeps only the overlay's
    (the rest at their defaults). A `replace` that is not true or false is left for the schema."""
    replace = raw.get(REPLACE, False)
    named = {k: v for k, v in raw.items() if k != REPLACE or not isinstance(replace, bool)}
    return dict(named) if replace is True else {**base, **named}


def _merged_offers(base: list[dict[str, Any]], raw: list[Any]) -> list[Any]:
    """Offers merged by (gpu, billing): an overlay's offer replaces the price facts and keeps how
    the catalog's is sold (`_HOW_SOLD`) unless it names them; a kept derived offer whose base the
    overlay changed (itself or through another derived offer) loses its price, so the platform's
    schema derives it again."""
    offers: dict[Any, Any] = {offer_key(o): o for o in base}
    changed = set()
    for offer in raw:
        key = offer_key(offer)
        kept = offers.get(key)
        if isinstance(offer, Mapping) and isinstance(kept, Mapping):
            offer = {**{k: kept[k] for k in _HOW_SOLD if k in kept}, **offer}
        offers[key] = offer
        changed.add(key)
    for _ in range(len(offers)):  # follow chains: yearly from monthly from hourly
        moved = False
        for key, offer in offers.items():
            rule = offer.get("derived") if isinstance(offer, Mapping) else None
            if key in changed or not isinstance(rule, Mapping) or not isinstance(key, tuple):
                continue
            if (key[0], rule.get("from", rule.get("from_billing"))) in changed:
                offers[key] = {k: v for k, v in offer.items() if k not in _FOLLOWS_BASE}
                changed.add(key)
                moved = True
        if not moved:
            break
    return list(offers.values())


def repeated_entries(data: Mapping[str, Any], label: str) -> list[str]:
    """Two entries of one overlay for the same model, GPU or platform, or one platform entry with
    two offers (purchases, capacity limits) for the same GPU and billing: merged, the last would
    silently win."""
    problems: list[str] = []
    for section in ("models", "gpus", "platforms"):
        entries = data.get(section)
        if not isinstance(entries, list):
            continue  # the schema names a section of the wrong type
        problems += _repeats(entries, section, label, "id", lambda e: e.get("id"))
        if section != "platforms":
            continue
        for i, platform in enumerate(entries):
            if not isinstance(platform, Mapping):
                continue
            where = f"{section}[{i}]"
            if isinstance(platform.get("offers"), list):
                problems += _repeats(platform["offers"], f"{where}.offers", label,
                                     "GPU and billing", offer_key)
            if isinstance(platform.get("purchase"), list):
                problems += _repeats(platform["purchase"], f"{where}.purchase", label, "GPU",
                                     _purchase_key)
            limits = platform.get("limits")
            if isinstance(limits, Mapping) and isinstance(limits.get("capacity"), list):
                problems += _repeats(limits["capacity"], f"{where}.limits.capacity", label,
                                     "GPU and billing", capacity_key, none_is_any=True)
    return problems


def _repeats(entries: list[Any], where: str, label: str, what: str, key_of: Any,
             none_is_any: bool = False) -> list[str]:
    """`none_is_any`: a missing part of the key means "every" (a capacity limit without `gpu`),
    not a missing field."""
    first: dict[Any, int] = {}
    problems: list[str] = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, Mapping):
            continue
        key = _hashable(key_of(entry), entry)  # an unusable key is the entry's own: never repeated
        if key is None or (isinstance(key, tuple) and None in key and not none_is_any):
            continue  # no id (or GPU, billing): the schema names the missing field
        if key in first:
            parts = key if isinstance(key, tuple) else (key,)
            shown = " ".join("+".join(map(str, p)) if isinstance(p, tuple) else str(p)
                             for p in parts)
            problems.append(say_as(
                "rule.overlay_repeated", "{label}: {where}[{i}]: the same {what} as "
                "{where}[{first}] ({shown}); one entry each, or the last would silently win",
                label=label, where=where, i=i, what=_SAME[what](), first=first[key],
                shown=shown[:80]))
        else:
            first[key] = i
    return problems


_SAME = {  # what two repeated entries share
    "id": lambda: say_as("rule.same_id", "id"),
    "GPU": lambda: say_as("rule.same_gpu", "GPU"),
    "GPU and billing": lambda: say_as("rule.same_gpu_billing", "GPU and billing"),
}


def _hashable(key: Any, entry: Any) -> Any:
    try:
        hash(key)
    except TypeError:
        # a list where an id belongs: keep the entry, and let validation name the problem
        return id(entry)
    return key


def offer_key(entry: Any) -> Any:
    if not isinstance(entry, Mapping):
        return id(entry)
    billing = entry.get("billing")
    # a billing word in any case is the same word (plan.models.base takes it so)
    return _hashable((entry.get("gpu"), billing.lower() if isinstance(billing, str) else billing),
                     entry)


def _purchase_key(entry: Any) -> Any:
    if not isinstance(entry, Mapping):
        return id(entry)
    return _hashable(entry.get("gpu"), entry)


def capacity_key(entry: Any) -> Any:
    if not isinstance(entry, Mapping):
        return id(entry)  # not a mapping: keep it, and let validation name the problem
    billing = entry.get("billing") or []
    try:
        key = entry.get("gpu"), (tuple(sorted(str(b).lower() for b in billing))
                                 if isinstance(billing, list) else billing)
    except TypeError:
        return id(entry)
    return _hashable(key, entry)
