"""Shared pydantic base: unknown fields are errors, so a typo never becomes a silent default."""

from __future__ import annotations

import datetime as dt
import types
from typing import Annotated, Any, ClassVar, Literal, Union, get_args, get_origin

from pydantic import AliasChoices, BaseModel, BeforeValidator, ConfigDict, Field, model_validator


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

    # Each field whose value is a word of a fixed list (a Literal), by every name it may be written
    # under: such words are taken in any case (`SFT`, `Hourly`, `BF16`), as model names are.
    _words_of_field: ClassVar[dict[str, frozenset[str]]] = {}

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        found: dict[str, frozenset[str]] = {}
        for name, info in cls.model_fields.items():
            words = _literal_words(info.annotation)
            if not words:
                continue
            names = [name, *([info.alias] if info.alias else [])]
            if isinstance(info.validation_alias, AliasChoices):
                names += [c for c in info.validation_alias.choices if isinstance(c, str)]
            elif isinstance(info.validation_alias, str):
                names.append(info.validation_alias)
            found.update(dict.fromkeys(names, words))
        cls._words_of_field = found

    @model_validator(mode="before")
    @classmethod
    def _words_in_any_case(cls, data: Any) -> Any:
        if not cls._words_of_field or not isinstance(data, dict):
            return data
        fixed = {key: _in_case(value, cls._words_of_field[key]) for key, value in data.items()
                 if key in cls._words_of_field}
        changed = {k: v for k, v in fixed.items() if v is not data[k]}
        return {**data, **changed} if changed else data


def _literal_words(annotation: Any) -> frozenset[str]:
    """The words of the Literal in `annotation` (through Optional, lists and Annotated), if every
    one is a lower-case str; else none."""
    origin = get_origin(annotation)
    if origin is Literal:
        args = get_args(annotation)
        ok = args and all(isinstance(a, str) and a == a.lower() for a in args)
        return frozenset(args) if ok else frozenset()
    if origin in (Union, types.UnionType, list, Annotated):
        for arg in get_args(annotation):
            words = _literal_words(arg)
            if words:
                return words
    return frozenset()


def _in_case(value: Any, words: frozenset[str]) -> Any:
    """`value` as its lower-case word where that is one of `words`; anything else as written."""
    if isinstance(value, str) and value not in words and value.lower() in words:
        return value.lower()
    if isinstance(value, list) and any(isinstance(v, str) and v not in words for v in value):
        cased = [_in_case(v, words) for v in value]
        return cased if any(a is not b for a, b in zip(cased, value, strict=True)) else value
    return value
