"""Field types with the bounds of `plan.models.limits`: ids in a documented character set, free text
without control characters, finite numbers in range. pydantic names the field in every error."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field

from plan.models.limits import ID_PATTERN, ID_RULE, MAX_TEXT_CHARS

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _id(value: str) -> str:
    if not re.fullmatch(ID_PATTERN, value):
        raise ValueError(f"{value!r} is not a valid id ({ID_RULE})")
    return value


def _text(value: str) -> str:
    if _CONTROL.search(value):
        raise ValueError("contains control characters (terminal escapes); only tab and newline are "
                         "allowed")
    return value


Id = Annotated[str, AfterValidator(_id)]
Text = Annotated[str, Field(max_length=MAX_TEXT_CHARS), AfterValidator(_text)]
