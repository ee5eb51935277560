"""Parsing of the human-friendly quantities users write in scenario files.

Every parser takes a number or a string and returns a float in the unit its name says, or raises
``ValueError`` with a message that says what is allowed (pydantic turns it into a field error).
"""

from __future__ import annotations

import math
import re

from plan.models.said import say_as

HOURS_PER_DAY = 24.0
HOURS_PER_MONTH = 30 * 24.0  # billing month: 30 days, the rental-cloud convention
HOURS_PER_YEAR = 365 * 24.0

_NUMBER = r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_MONEY_SUFFIX = {
    "": 1.0,
    "k": 1e3,
    "K": 1e3,
    "m": 1e6,
    "M": 1e6,
    "万": 1e4,
    "w": 1e4,
    "W": 1e4,
    "亿": 1e8,
    "千": 1e3,
}
# Currency marks people write around an amount; each names an ISO 4217 code. `¥`/`￥` and `元` are
# read as Chinese yuan (the catalog's base currency), not Japanese yen.
_CURRENCY_PREFIX = {
    "US$": "USD",
    "$": "USD",
    "¥": "CNY",
    "￥": "CNY",
    "€": "EUR",
    "£": "GBP",
    "RMB": "CNY",
}
_CURRENCY_WORD = {
    "元": "CNY",
    "人民币": "CNY",
    "块": "CNY",
    "美元": "USD",
    "RMB": "CNY",
    "rmb": "CNY",
    "yuan": "CNY",
    "dollars": "USD",
}
_COUNT_SUFFIX = {
    "": 1.0,
    "K": 1e3,
    "k": 1e3,
    "M": 1e6,
    "m": 1e6,
    "B": 1e9,
    "b": 1e9,
    "G": 1e9,
    "T": 1e12,
    "t": 1e12,
}
_DURATION_UNITS_H: dict[float, tuple[str, ...]] = {
    1 / 60: ("min", "mins", "minute", "minutes", "分钟"),
    1.0: ("h", "hr", "hrs", "hour", "hours", "小时"),
    HOURS_PER_DAY: ("d", "day", "days", "天"),
    7 * HOURS_PER_DAY: ("w", "wk", "wks", "week", "weeks", "周"),
}
_DURATION_SUFFIX_H = {name: hours for hours, names in _DURATION_UNITS_H.items() for name in names}
_SIZE_SUFFIX_GB = {
    "B": 1e-9,
    "KB": 1e-6,
    "MB": 1e-3,
    "GB": 1.0,
    "TB": 1e3,
    "PB": 1e6,
    "KiB": 1024 / 1e9,
    "MiB": 1024**2 / 1e9,
    "GiB": 1024**3 / 1e9,
    "TiB": 1024**4 / 1e9,
}


def _split(value: object, what: str, allowed: str) -> tuple[float, str]:
    if isinstance(value, bool):
        raise ValueError(_expected(what, allowed, repr(value)))
    if isinstance(value, int | float):
        # (an int too large for a float is infinite to us; a float, NaN included, is itself)
        return _finite(
            float(value) if isinstance(value, float) or abs(value) < 1e308 else math.inf,
            what,
            allowed,
        ), ""
    if not isinstance(value, str):
        raise ValueError(_expected(what, allowed, type(value).__name__))
    text = value.strip().replace(",", "").replace("_", "")
    match = re.fullmatch(rf"(-?){_NUMBER}\s*([^\s0-9.]*)", text)
    if not match:
        raise ValueError(_expected(what, allowed, repr(value)))
    sign = -1.0 if match.group(1) else 1.0
    number_text = text[len(match.group(1)) : len(text) - len(match.group(3))].strip()
    return _finite(sign * float(number_text), what, allowed), match.group(3)


def _finite(number: float, what: str, allowed: str) -> float:
    if not math.isfinite(number):
        raise ValueError(say_as("rule.unit_not_finite", "expected {what} ({allowed}) that is a "
                                "finite number, got {value}", what=what, allowed=allowed,
                                value=repr(number)))
    return number


def _expected(what: str, allowed: str, got: str) -> str:
    return say_as("rule.unit_expected", "expected {what} ({allowed}), got {value}", what=what,
                  allowed=allowed, value=got)


def _suffix(suffix: str, value: object, allowed: str) -> str:
    return say_as("rule.unit_suffix", "unknown suffix {suffix} in {value}; allowed: {allowed}",
                  suffix=repr(suffix), value=repr(value), allowed=allowed)


_MONEY = say_as("rule.unit_money", "an amount of money")
_COUNT = say_as("rule.unit_count", "a count")
_SEQ_LEN = say_as("rule.unit_seq_len", "a sequence length")
_DURATION = say_as("rule.unit_duration", "a duration")
_SIZE = say_as("rule.unit_size", "a size")


_MONEY_ALLOWED = say_as("rule.allowed_money", "a number, optionally with k, M, 万 or 亿 and a "
                        "currency (¥, $, 元, USD, CNY, ...), e.g. 400k, 40万, 2万元, ¥20,000 or "
                        "20k USD")
_COUNT_ALLOWED = say_as("rule.allowed_count",
                        "a number, optionally with K, M, B or T, e.g. 200M or 2B")
_SEQ_LEN_ALLOWED = say_as("rule.allowed_seq_len",
                          "a whole number of tokens, or with k (x1024), e.g. 4096 or 4k")
_DURATION_ALLOWED = say_as("rule.allowed_duration", "a number with h, d, w or min (or hours, "
                           "days, weeks), e.g. 30d, 12h or 2 weeks")
_SIZE_ALLOWED = say_as("rule.allowed_size",
                       "a number with B, KB, MB, GB, TB, PB (or KiB..TiB), e.g. 50GB")


def parse_money(value: object) -> float:
    """Amount of money in the scenario's currency. Accepts 400000, '400k', '1.2M', '40万'.

    An amount that names a currency is refused here; `parse_money_amount` reads it."""
    amount, currency = parse_money_amount(value)
    if currency is not None:
        raise ValueError(say_as("rule.unit_names_currency", "{value} names a currency "
                                "({currency}); give the amount in the scenario's currency",
                                value=repr(value), currency=currency))
    return amount


def parse_money_amount(value: object) -> tuple[float, str | None]:
    """An amount and the currency it names, if any (ISO code): '2万元' -> (20000, 'CNY'),
    '¥20,000' -> (20000, 'CNY'), '20k USD' -> (20000, 'USD'), '400k' -> (400000, None)."""
    if not isinstance(value, str):
        number, _ = _split(value, _MONEY, _MONEY_ALLOWED)
        return number, None
    text = value.strip()
    currency: str | None = None
    for mark, code in _CURRENCY_PREFIX.items():
        if text.startswith(mark):
            currency, text = code, text[len(mark):].strip()
            break
    match = re.fullmatch(
        r"(.*?[0-9.])\s*([kKmMwW万亿千]?)\s*([A-Za-z\u4e00-\u9fff]*)", text.replace(",", "")
    )
    if not match:
        raise ValueError(_expected(_MONEY, _MONEY_ALLOWED, repr(value)))
    number_text, multiplier, word = match.groups()
    if word:
        word_code: str | None = _CURRENCY_WORD.get(word) or (
            word if re.fullmatch(r"[A-Z]{3}", word) else None
        )
        if word_code is None:
            raise ValueError(_suffix(word, value, _MONEY_ALLOWED))
        if currency is not None and word_code != currency:
            raise ValueError(say_as("rule.unit_two_currencies", "{value} names two currencies "
                                    "({first} and {second})", value=repr(value), first=currency,
                                    second=word_code))
        currency = word_code
    number, rest = _split(number_text, _MONEY, _MONEY_ALLOWED)
    if rest:
        raise ValueError(_suffix(rest, value, _MONEY_ALLOWED))
    return _finite(number * _MONEY_SUFFIX[multiplier], _MONEY, _MONEY_ALLOWED), currency


def parse_count(value: object) -> float:
    """A count such as tokens or parameters. Accepts 2e9, '2B', '200M', '1.5T'."""
    number, suffix = _split(value, _COUNT, _COUNT_ALLOWED)
    if suffix not in _COUNT_SUFFIX:
        raise ValueError(_suffix(suffix, value, _COUNT_ALLOWED))
    return _finite(number * _COUNT_SUFFIX[suffix], _COUNT, _COUNT_ALLOWED)


def parse_seq_len(value: object) -> int:
    """A sequence length in tokens. Accepts 4096, '4k' (= 4096), '32K' (= 32768): in context lengths
    k means 1024, as in "a 4k context"."""
    number, suffix = _split(value, _SEQ_LEN, _SEQ_LEN_ALLOWED)
    if suffix not in ("", "k", "K"):
        raise ValueError(_suffix(suffix, value, _SEQ_LEN_ALLOWED))
    tokens = number * (1024 if suffix else 1)
    if tokens != int(tokens):
        raise ValueError(say_as("rule.unit_whole_tokens", "expected {allowed}, got {value}",
                                allowed=_SEQ_LEN_ALLOWED, value=repr(value)))
    return int(tokens)


def parse_duration_h(value: object) -> float:
    """A duration in hours. Accepts '30d', '12h', '2w', '90min'; a bare number is not a duration."""
    allowed = _DURATION_ALLOWED
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError(say_as("rule.unit_duration_needs", "a duration needs a unit ({allowed}), "
                                "got {value}", allowed=allowed, value=repr(value)))
    number, suffix = _split(value, _DURATION, allowed)
    if suffix not in _DURATION_SUFFIX_H:
        raise ValueError(_expected(_DURATION, allowed, repr(value)))
    return _finite(number * _DURATION_SUFFIX_H[suffix], _DURATION, allowed)


def parse_size_gb(value: object) -> float:
    """A data size in GB (10^9 bytes). Accepts '50GB', '1.5TB', '500MiB'."""
    allowed = _SIZE_ALLOWED
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError(say_as("rule.unit_size_needs", "a size needs a unit ({allowed}), got "
                                "{value}", allowed=allowed, value=repr(value)))
    number, suffix = _split(value, _SIZE, allowed)
    if suffix not in _SIZE_SUFFIX_GB:
        raise ValueError(_expected(_SIZE, allowed, repr(value)))
    return _finite(number * _SIZE_SUFFIX_GB[suffix], _SIZE, allowed)
