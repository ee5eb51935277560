"""Parsing of the human-friendly quantities users write in scenario files.

Every parser takes a number or a string and returns a float in the unit its name says, or raises
``ValueError`` with a message that says what is allowed (pydantic turns it into a field error).
"""

from __future__ import annotations

import math
import re

HOURS_PER_DAY = 24.0
HOURS_PER_MONTH = 30 * 24.0  # billing month: 30 days, the rental-cloud convention
HOURS_PER_YEAR = 365 * 24.0

_NUMBER = r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_MONEY_SUFFIX = {"": 1.0, "k": 1e3, "K": 1e3, "m": 1e6, "M": 1e6, "万": 1e4, "w": 1e4, "W": 1e4, "亿": 1e8}
_COUNT_SUFFIX = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "m": 1e6, "B": 1e9, "b": 1e9, "G": 1e9, "T": 1e12, "t": 1e12}
_DURATION_SUFFIX_H = {"h": 1.0, "d": HOURS_PER_DAY, "w": 7 * HOURS_PER_DAY, "min": 1 / 60}
_SIZE_SUFFIX_GB = {"B": 1e-9, "KB": 1e-6, "MB": 1e-3, "GB": 1.0, "TB": 1e3, "PB": 1e6,
                   "KiB": 1024 / 1e9, "MiB": 1024**2 / 1e9, "GiB": 1024**3 / 1e9, "TiB": 1024**4 / 1e9}


def _split(value: object, what: str, allowed: str) -> tuple[float, str]:
    if isinstance(value, bool):
        raise ValueError(f"expected {what} ({allowed}), got {value!r}")
    if isinstance(value, int | float):
        return _finite(float(value) if abs(value) < 1e308 else math.inf, what, allowed), ""
    if not isinstance(value, str):
        raise ValueError(f"expected {what} ({allowed}), got {type(value).__name__}")
    text = value.strip().replace(",", "").replace("_", "")
    match = re.fullmatch(rf"(-?){_NUMBER}\s*([^\s0-9.]*)", text)
    if not match:
        raise ValueError(f"expected {what} ({allowed}), got {value!r}")
    sign = -1.0 if match.group(1) else 1.0
    number_text = text[len(match.group(1)) : len(text) - len(match.group(3))].strip()
    return _finite(sign * float(number_text), what, allowed), match.group(3)


def _finite(number: float, what: str, allowed: str) -> float:
    if not math.isfinite(number):
        raise ValueError(f"expected {what} ({allowed}) that is a finite number, got {number!r}")
    return number


def parse_money(value: object) -> float:
    """Amount of money in the scenario's currency. Accepts 400000, '400k', '1.2M', '40万'."""
    allowed = "a number, optionally with k, M, 万 or 亿, e.g. 400k or 40万"
    number, suffix = _split(value, "an amount of money", allowed)
    if suffix not in _MONEY_SUFFIX:
        raise ValueError(f"unknown suffix {suffix!r} in {value!r}; allowed: {allowed}")
    return _finite(number * _MONEY_SUFFIX[suffix], "an amount of money", allowed)


def parse_count(value: object) -> float:
    """A count such as tokens or parameters. Accepts 2e9, '2B', '200M', '1.5T'."""
    allowed = "a number, optionally with K, M, B or T, e.g. 200M or 2B"
    number, suffix = _split(value, "a count", allowed)
    if suffix not in _COUNT_SUFFIX:
        raise ValueError(f"unknown suffix {suffix!r} in {value!r}; allowed: {allowed}")
    return _finite(number * _COUNT_SUFFIX[suffix], "a count", allowed)


def parse_duration_h(value: object) -> float:
    """A duration in hours. Accepts '30d', '12h', '2w', '90min'; a bare number is not a duration."""
    allowed = "a number with h, d, w or min, e.g. 30d or 12h"
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError(f"a duration needs a unit ({allowed}), got {value!r}")
    number, suffix = _split(value, "a duration", allowed)
    if suffix not in _DURATION_SUFFIX_H:
        raise ValueError(f"expected a duration ({allowed}), got {value!r}")
    return _finite(number * _DURATION_SUFFIX_H[suffix], "a duration", allowed)


def parse_size_gb(value: object) -> float:
    """A data size in GB (10^9 bytes). Accepts '50GB', '1.5TB', '500MiB'."""
    allowed = "a number with B, KB, MB, GB, TB, PB (or KiB..TiB), e.g. 50GB"
    if isinstance(value, int | float) and not isinstance(value, bool):
        raise ValueError(f"a size needs a unit ({allowed}), got {value!r}")
    number, suffix = _split(value, "a size", allowed)
    if suffix not in _SIZE_SUFFIX_GB:
        raise ValueError(f"expected a size ({allowed}), got {value!r}")
    return _finite(number * _SIZE_SUFFIX_GB[suffix], "a size", allowed)
