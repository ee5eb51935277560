"""Jurisdictions as ISO-style codes: ISO 3166-1 alpha-2 country codes in lower case (cn, us, sg, de,
hk), plus `eu` for the European Union, and `global` for a platform whose data centres are in several
countries that its sources do not pin down.

A data residency rule names a code; a place satisfies it when the place's jurisdiction, or one of
its platform's regions, is that code or (for `eu`) a member state."""

from __future__ import annotations

import re
from collections.abc import Iterable

# EU member states, ISO 3166-1 alpha-2 (source: europa.eu, "EU countries",
# https://european-union.europa.eu/principles-countries-history/eu-countries_en; 27 members since
# 2020-02-01).
EU_MEMBERS = frozenset(
    {
        "at",
        "be",
        "bg",
        "hr",
        "cy",
        "cz",
        "dk",
        "ee",
        "fi",
        "fr",
        "de",
        "gr",
        "hu",
        "ie",
        "it",
        "lv",
        "lt",
        "lu",
        "mt",
        "nl",
        "pl",
        "pt",
        "ro",
        "sk",
        "si",
        "es",
        "se",
    }
)
GROUPS = {"eu": EU_MEMBERS}
GLOBAL = "global"
CODE_PATTERN = r"^[a-z]{2}$"
WRITTEN_CODE_PATTERN = r"^\s*[A-Za-z]{2}\s*$"  # what a file may say: `CN` and ` cn ` read as `cn`
EXAMPLES = "cn, us, eu, sg, de, hk"


def check_code(value: object, *, allow_global: bool = False) -> object:
    """Pydantic before-validator: a lower-case two-letter code (`CN` is read as `cn`)."""
    if isinstance(value, str):
        code = value.strip().lower()
        if re.fullmatch(CODE_PATTERN, code) or (allow_global and code == GLOBAL):
            return code
    extra = " or global" if allow_global else ""
    raise ValueError("expected a jurisdiction code (ISO 3166-1 alpha-2 such as "
                     f"{EXAMPLES}{extra}), got {value!r}")


def within(required: str, jurisdiction: str, regions: Iterable[str] = ()) -> bool:
    """Whether a place in `jurisdiction` (or able to run in one of `regions`) satisfies
    `required`."""
    return any(
        code == required or code in GROUPS.get(required, ()) for code in (jurisdiction, *regions)
    )


def residency_rule(value: object) -> object:
    """Pydantic before-validator for `data.residency`: any, on_premises, or a jurisdiction code."""
    if value in ("any", "on_premises"):
        return value
    try:
        return check_code(value)
    except ValueError:
        raise ValueError(f"expected any, on_premises or a jurisdiction code ({EXAMPLES}), got "
                         f"{value!r}") from None
