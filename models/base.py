"""Shared pydantic base: unknown fields are errors, so a typo never becomes a silent default."""

from __future__ import annotations

import datetime as dt
from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field


def _date_text(value: object) -> object:
    # YAML reads 2026-11-20 as a date and 2026 as an int; the catalog keeps dates as the text the
    # source gave.
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value.isoformat() if isinstance(value, dt.date) else value


DateText = Annotated[str, BeforeValidator(_date_text), Field(min_length=4)]


class Strict(BaseModel):
    # allow_inf_nan=False: .inf and .nan are refused in every number field, naming the field.
    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, allow_inf_nan=False
    )
