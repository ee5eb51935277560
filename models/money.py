"""Money amounts that name their currency (`20k USD`, `¥20,000`, `2万元`), converted into the
scenario's currency with the catalog's dated exchange rate while a scenario is validated.

The scenario's `currency` and the rates in force are held in a context variable for the length of
one validation (`converting`); each conversion is recorded as a line the plan shows among its
assumptions.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from plan.models.platform import ExchangeRates
from plan.models.units import parse_money_amount


@dataclass
class Conversion:
    currency: str
    rates: ExchangeRates
    notes: list[str] = field(default_factory=list)


_ACTIVE: ContextVar[Conversion | None] = ContextVar("plan_money_conversion", default=None)


@lru_cache(maxsize=1)
def builtin_rates() -> ExchangeRates:
    """The built-in catalog's exchange rates (models/data/exchange_rates.yaml)."""
    import yaml

    path = Path(__file__).parent / "data" / "exchange_rates.yaml"
    return ExchangeRates.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))


def active_conversion() -> Conversion | None:
    return _ACTIVE.get()


@contextmanager
def converting(currency: object, rates: ExchangeRates | None = None) -> Iterator[Conversion]:
    """Amounts validated inside this block that name another currency are converted to
    `currency`."""
    state = Conversion(currency if isinstance(currency, str) else "CNY", rates or builtin_rates())
    token = _ACTIVE.set(state)
    try:
        yield state
    finally:
        _ACTIVE.reset(token)


def _rate_text(rates: ExchangeRates, currency: str) -> str:
    if currency == rates.base:
        return f"1 {currency} = 1 {rates.base}"
    return f"1 {currency} = {rates.rates[currency]:g} {rates.base}"


def to_scenario_currency(value: object) -> float:
    """Pydantic before-validator: a plain amount stays as is; one naming a currency is converted."""
    amount, currency = parse_money_amount(value)
    state = _ACTIVE.get()
    target = state.currency if state else "CNY"
    if currency is None or currency == target:
        return amount
    rates = state.rates if state else builtin_rates()
    known = [rates.base, *sorted(rates.rates)]
    if currency not in known or target not in known:
        missing = currency if currency not in known else target
        raise ValueError(f"no exchange rate for {missing} in the catalog (known: "
                         f"{', '.join(known)}); write the amount in the scenario's currency or add "
                         "the rate in a catalog overlay")
    converted = rates.convert(amount, currency, target)
    note = (f"{value} = {converted:,.0f} {target} at {_rate_text(rates, currency)}"
            + (f", {_rate_text(rates, target)}" if target != rates.base else "")
            + f" (exchange rate as of {rates.as_of}; override it in a catalog overlay)")
    if state is not None and note not in state.notes:
        state.notes.append(note)
    return converted
