"""Amounts, durations and dates as a reader of the current language writes them: `3,000,000 CNY`
in English, `300万元` in Chinese (other currencies keep their code: `12.5万 USD`); `2027-01` as
`2027年1月`."""

from __future__ import annotations

import re

from plan.planner.i18n import speaks_chinese, t

WAN = 10_000.0
YI = 100_000_000.0


def _trimmed(value: float) -> str:
    """Two decimals at most, trailing zeros dropped (300, 1.5, 1,234.57)."""
    text = f"{value:,.2f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def chinese_amount(amount: float) -> str:
    """An amount in 万 or 亿 (two decimals at most); under 1万 in whole units."""
    sign = "-" if amount < 0 else ""
    whole = round(abs(amount))
    if whole >= YI:
        return f"{sign}{_trimmed(abs(amount) / YI)}亿"
    if whole >= WAN:
        return f"{sign}{_trimmed(abs(amount) / WAN)}万"
    return f"{sign}{whole:,}"


def amount(value: float) -> str:
    """A table cell's amount (its unit in the column's header)."""
    return chinese_amount(value) if speaks_chinese() else f"{value:,.0f}"


def currency_unit(currency: str) -> str:
    """The unit a header names: 元 for CNY in Chinese, else the ISO code."""
    return "元" if speaks_chinese() and currency == "CNY" else currency


def money(value: float, currency: str) -> str:
    """'15,074 CNY'; '1.51万元'; '12.5万 USD'."""
    if not speaks_chinese():
        return f"{value:,.0f} {currency}"
    unit = "元" if currency == "CNY" else f" {currency}"
    return f"{chinese_amount(value)}{unit}"


def signed_money(value: float, currency: str) -> str:
    """'+116 CNY' / '+116元'."""
    text = money(value, currency)
    return text if text.startswith("-") else f"+{text}"


def millions(count: float) -> str:
    """A token count as a note rounds it: '4.2M' in English, '420万' in Chinese (to the same
    hundred thousand)."""
    if not speaks_chinese():
        return f"{count / 1e6:.1f}M"
    return chinese_amount(round(count / 1e5) * 1e5)


WAN_YI = WAN * YI


def count(value: float) -> str:
    """A run's token count: '1e+09' in English (three significant digits), '10亿' in Chinese
    ('1万亿' from 10^12 up)."""
    if not speaks_chinese():
        return f"{value:,.3g}"
    return f"{_trimmed(value / WAN_YI)}万亿" if value >= WAN_YI else chinese_amount(value)


def hours(value: float) -> str:
    return t("unit.hours", h=f"{value:,.1f}")


def days_or_hours(value_h: float) -> str:
    """Days from two days up, hours below."""
    return t("unit.days", d=f"{value_h / 24:,.1f}") if value_h >= 48 else hours(value_h)


_MONTH = re.compile(r"^(\d{4})-(\d{2})$")
_QUARTER = re.compile(r"^(\d{4})-Q([1-4])$")
_FISCAL = re.compile(r"^(\d{4})/(\d{2})$")
_BLOCK = re.compile(r"^(month|year) (\d+)$")


def period(label: str) -> str:
    """A cash-flow period ('2027-01', '2027-Q1', '2027', '2027/28', 'month 1') as the reader
    writes it ('2027年1月', '2027年第1季度', '2027年', '2027/28财年', '第1个月')."""
    if not speaks_chinese():
        return label
    if match := _MONTH.match(label):
        return f"{match[1]}年{int(match[2])}月"
    if match := _QUARTER.match(label):
        return f"{match[1]}年第{match[2]}季度"
    if match := _FISCAL.match(label):
        return f"{match[1]}/{match[2]}财年"
    if match := _BLOCK.match(label):
        return f"第{match[2]}个月" if match[1] == "month" else f"第{match[2]}年"
    if label.isdigit():
        return f"{label}年"
    return label


def date(iso: str) -> str:
    """'2027-01-15' as '2027年1月15日' in Chinese."""
    match = re.match(r"^(\d{4})-(\d{2})-(\d{2})$", iso)
    if not speaks_chinese() or not match:
        return iso
    return f"{match[1]}年{int(match[2])}月{int(match[3])}日"
