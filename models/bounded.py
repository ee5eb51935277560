"""Field types with the bounds of `plan.models.limits`: ids in a documented character set, free text
without control characters, finite numbers in range. pydantic names the field in every error."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field

from plan.models.limits import ID_PATTERN, ID_RULE, MAX_TEXT_CHARS
from plan.models.said import say_as

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _id(value: str) -> str:
    if not re.fullmatch(ID_PATTERN, value):
        raise ValueError(say_as("rule.bad_id", "{value} is not a valid id ({rule})",
                                value=repr(value), rule=_ID_RULE))
    return value


def _text(value: str) -> str:
    if _CONTROL.search(value):
        raise ValueError(say_as("rule.control_chars", "contains control characters (terminal "
                                "escapes); only tab and newline are allowed"))
    return value


Id = Annotated[str, AfterValidator(_id)]
_ID_RULE = say_as("rule.id_rule", "1-128 characters: letters, digits and . _ - + : @ /, starting "
                  "with a letter or digit")  # ID_RULE, keyed
assert _ID_RULE == ID_RULE

# A catalog entry named the way people write it: its id, or an alias in any script ("智星云",
# "华为云 ModelArts", "A100 80GB", "昇腾910B"); the catalog's lookup resolves it
# (plan.models.catalog).
_CATALOG_NAME = re.compile(r"[^\W_][\w .+:@/()-]{0,127}")
CATALOG_NAME_RULE = ("1-128 characters: letters of any script, digits, spaces and "
                     ". _ - + : @ / ( ), starting with a letter or digit")


def _catalog_name(value: str) -> str:
    if not _CATALOG_NAME.fullmatch(value):
        raise ValueError(f"{value!r} is not a catalog name ({CATALOG_NAME_RULE})")
    return value


CatalogName = Annotated[str, AfterValidator(_catalog_name)]
Text = Annotated[str, Field(max_length=MAX_TEXT_CHARS), AfterValidator(_text)]
