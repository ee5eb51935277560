"""Prices set by rule from another offer of the same GPU on the same platform (daily from hourly,
monthly from hourly, yearly from monthly): the rule is data (`derived:` on the offer), so a price an
overlay changes moves every price derived from it, and a price that was stated stays as stated.

The rule: price = base price per period x `hours` x `factor` / the base's period in hours, in
decimal arithmetic rounded half up to 0.01 (the figures the catalog has always written: 24 h x
hourly x 0.9 for daily, 720 h x hourly x 0.65 for monthly, 8760 h x monthly/720 x 0.85 for yearly).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

# Hours in one billing period, per mode (a month is 30 days, the rental-cloud convention): the same
# lengths as plan.models.platform.PERIOD_H, written here as the exact decimals the rule uses.
_PERIOD_H = {"hourly": 1, "spot": 1, "daily": 24, "monthly": 720, "yearly": 8760}
_CENT = Decimal("0.01")
# the rule's own field names: `from` as written, `from_billing` as the schema dumps it
_FROM_KEYS = ("from", "from_billing")


def derived_price(base_price: float, base_billing: str, hours: float, factor: float) -> float:
    """The price per GPU per period of an offer derived from a base offer's price (per its own
    period), rounded half up to 0.01."""
    exact = (
        Decimal(repr(base_price)) * Decimal(repr(hours)) * Decimal(repr(factor))
        / Decimal(_PERIOD_H[base_billing])
    )
    return float(exact.quantize(_CENT, rounding=ROUND_HALF_UP))


def rule_words(billing: str, rule: Mapping[str, Any]) -> str:
    """`monthly = 720 h x hourly/1 h x 0.65`, the rule in words (for listings and notes)."""
    base = _rule_base(rule)
    per = _PERIOD_H.get(str(base), 1)
    rate = f"{base}" if per == 1 else f"{base}/{per} h"
    return f"{billing} = {rule.get('hours', 0):g} h x {rate} x {rule.get('factor', 0):g}"


def _rule_base(rule: Mapping[str, Any]) -> Any:
    base = next((rule[k] for k in _FROM_KEYS if k in rule), None)
    return base.lower() if isinstance(base, str) else base


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def fill_derived_prices(offers: list[Any]) -> list[Any]:
    """Offers as written, with each derived offer that states no price given its base's price by
    its rule (and, where unstated, the base's currency, source and date, and the rule as its
    assumption), in the order the rules depend on each other. Anything malformed is left as
    written, for the schema to name."""
    by_key = {_key(o): o for o in offers if isinstance(o, Mapping)}
    filled = list(offers)
    for _ in range(len(_PERIOD_H)):  # a chain is at most as long as the billing modes
        changed = False
        for i, offer in enumerate(filled):
            priced = _priced(offer, by_key)
            if priced is not None:
                filled[i] = priced
                by_key[_key(priced)] = priced
                changed = True
        if not changed:
            break
    return filled


def unpriced_problems(offers: list[Any]) -> list[str]:
    """Each derived offer left without a price because the platform lacks its base offer (the
    schema would only say the price is missing)."""
    keys = {_key(o) for o in offers if isinstance(o, Mapping)}
    problems = []
    for offer in offers:
        if not isinstance(offer, Mapping) or "price_per_gpu_period" in offer \
                or not isinstance(offer.get("derived"), Mapping):
            continue
        base = _rule_base(offer["derived"])
        if (offer.get("gpu"), base) not in keys:
            problems.append(f"offer {offer.get('gpu')}/{offer.get('billing')}: derived from "
                            f"{base}, but the platform has no {offer.get('gpu')} {base} offer; "
                            "state its price")
    return problems


def _key(offer: Mapping[str, Any]) -> tuple[Any, Any]:
    """(gpu, billing) as written; a value that is not a plain word or number (a list, a map) is
    malformed, for the schema to name, and keyed by its text so that it never matches a base."""
    billing = offer.get("billing")  # a billing word in any case is that word (plan.models.base)
    return _hashable(offer.get("gpu")), _hashable(
        billing.lower() if isinstance(billing, str) else billing)


def _hashable(value: Any) -> Any:
    return value if value is None or isinstance(value, str | int | float) else f"<{value!r}>"


def _priced(offer: Any, by_key: Mapping[tuple[Any, Any], Any]) -> dict[str, Any] | None:
    """The offer with its price computed, or None where it states one (or cannot have one yet)."""
    if not isinstance(offer, Mapping) or "price_per_gpu_period" in offer:
        return None
    rule = offer.get("derived")
    if not isinstance(rule, Mapping):
        return None
    base_billing = _rule_base(rule)
    hours, factor = _number(rule.get("hours")), _number(rule.get("factor"))
    base = by_key.get((offer.get("gpu"), base_billing))
    if base_billing not in _PERIOD_H or hours is None or factor is None \
            or not isinstance(base, Mapping):
        return None
    base_price = _number(base.get("price_per_gpu_period"))
    if base_price is None:
        return None  # the base is derived too and not priced yet, or malformed
    try:
        price = derived_price(base_price, str(base_billing), hours, factor)
    except (InvalidOperation, ValueError):  # .inf or .nan somewhere: the schema names it
        return None
    currency = base.get("currency")
    note = (f"{rule_words(str(offer.get('billing')), rule)} (the catalog's rule for this offer); "
            f"{base_billing} = {base_price:g} {currency}")
    return {
        "currency": currency,
        # a chain names the first stated price's source once (yearly from monthly from hourly)
        "source": base.get("source") if isinstance(base.get("derived"), Mapping)
        else f"derived from the {base_billing} offer: {base.get('source')}",
        "as_of": base.get("as_of"),
        "assumed": True,
        "assumption": note,
        **offer,
        "price_per_gpu_period": price,
    }


def _cycles(offer: Any, by_key: Mapping[tuple[str, str], Any]) -> bool:
    seen = {(offer.gpu, offer.billing)}
    current = offer
    while current is not None and current.derived is not None:
        key = (current.gpu, current.derived.from_billing)
        if key in seen:
            return True
        seen.add(key)
        current = by_key.get(key)
    return False


def derived_problems(offers: list[Any]) -> list[str]:
    """Each derived offer whose base the platform lacks, whose currency differs from its base's, or
    whose stated price is not what its rule gives (a figure and a rule that disagree: one of them is
    stale). Offers are validated schema objects with `gpu`, `billing`, `derived`, `currency` and
    `price_per_gpu_period`."""
    by_key = {(o.gpu, o.billing): o for o in offers}
    problems = []
    for offer in offers:
        rule = offer.derived
        if rule is None:
            continue
        name = f"offer {offer.gpu}/{offer.billing}"
        if _cycles(offer, by_key):
            problems.append(f"{name}: its `derived:` rules lead back to itself; state one price")
            continue
        base = by_key.get((offer.gpu, rule.from_billing))
        if base is None:
            problems.append(f"{name}: derived from {rule.from_billing}, but the platform has no "
                            f"{offer.gpu} {rule.from_billing} offer")
            continue
        if base.currency != offer.currency:
            problems.append(f"{name}: in {offer.currency}, but derived from a price in "
                            f"{base.currency}")
            continue
        expected = derived_price(base.price_per_gpu_period, base.billing, rule.hours, rule.factor)
        if abs(expected - offer.price_per_gpu_period) > 1e-9 * max(1.0, expected):
            problems.append(
                f"{name}: price {offer.price_per_gpu_period:g} is not what its rule gives "
                f"({rule_words(offer.billing, rule.model_dump(by_alias=True))} = {expected:g}); "
                "state the price without `derived:`, or drop the price to have it derived")
    return problems
