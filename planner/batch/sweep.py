"""`--sweep FIELD=VALUES`: parse the spec, expand several sweeps as a grid, set a value in raw
scenario data.

A sweep sets a scalar field of the scenario file before validation, so a swept value passes through
the same loader and gives the same one-line error as a value written in the file. Sweepable fields
are the scenario's top-level scalars (budget, deadline, value_of_time_per_day, objective, ...) and
the scalars of its nested sections (`policy.allow_spot`, `solver.time_limit_s`); list entries (jobs,
sites, owned pools) are not. VALUES is a comma list (`14d,21d,30d`, each item read as a YAML scalar,
as in the file) or an inclusive range `START..STOP:STEP` read by the field's own parser: durations
for duration fields (`deadline=14d..42d:7d`, as `parse_duration_h` accepts), amounts for the other
numeric fields (`budget=100k..500k:50k`, as `parse_money` accepts; plain numbers too,
`solver.gap=0..0.2:0.05`).
"""

from __future__ import annotations

import itertools
import math
import re
import types
import typing
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import AliasChoices, BaseModel

from plan.models.errors import InputError, did_you_mean
from plan.models.said import say_as
from plan.models.scenario import Scenario
from plan.models.units import parse_duration_h, parse_money
from plan.models.validation_words import listed
from plan.models.yaml_io import load_yaml_value

MAX_VARIANTS = 10_000  # per scenario file; a grid beyond this is almost surely a typo in a step
MAX_RUN_VARIANTS = 20_000
"""Rows one `plan batch` run may ask for (scenario files x variants each) unless --max-variants
lifts it: each row is a solve and a line kept in memory and in the results file, so more is almost
surely a glob or a grid larger than meant (docs/limits.md)."""


class SweepError(ValueError):
    """A bad --sweep spec; the message is one line naming the spec."""


@dataclass(frozen=True)
class Target:
    """Where a sweepable field lives in the raw YAML mapping."""

    section: tuple[str, ...]  # keys of the enclosing mappings, () for top level
    spellings: tuple[str, ...]  # every accepted key for the field (name and aliases)
    kind: str  # duration | number | other: how a START..STOP:STEP range is read


@dataclass(frozen=True)
class Assignment:
    """Set `key` in the mapping at `section` to `value`, after removing the field's other
    spellings."""

    section: tuple[str, ...]
    key: str
    drop: tuple[str, ...]
    value: Any


@dataclass(frozen=True)
class Sweep:
    field: str
    target: Target
    values: tuple[tuple[str, Any], ...]  # (text for the variant label, value written into the data)


@dataclass(frozen=True)
class Variant:
    label: str  # "budget=150000 deadline=21d"; "" for the scenario as written
    assignments: tuple[Assignment, ...]


def _spellings(name: str, info: Any) -> tuple[str, ...]:
    alias = info.validation_alias
    choices = (
        [c for c in alias.choices if isinstance(c, str)] if isinstance(alias, AliasChoices) else []
    )
    return (*choices, *([name] if name not in choices else []))


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _leaves(annotation: Any) -> Iterator[tuple[Any, tuple[Any, ...]]]:
    """(base type, Annotated metadata) for each member of an Optional/Union/Annotated annotation."""
    if typing.get_origin(annotation) is typing.Annotated:
        base, *metadata = typing.get_args(annotation)
        yield base, tuple(metadata)
    elif typing.get_origin(annotation) in (typing.Union, types.UnionType):
        for member in typing.get_args(annotation):
            yield from _leaves(member)
    else:
        yield annotation, ()


def _kind(info: Any) -> str:
    leaves = list(_leaves(info.annotation))
    validators = {
        getattr(m, "func", None) for _, metadata in leaves for m in (*metadata, *info.metadata)
    }
    if parse_duration_h in validators:
        return "duration"
    return "number" if any(base in (int, float) for base, _ in leaves) else "other"


def _is_scalar(annotation: Any) -> bool:
    origins = {typing.get_origin(a) for a in (annotation, *typing.get_args(annotation))}
    return not origins & {list, dict, tuple, set} and _model_of(annotation) is None


def sweepable_fields(
    model: type[BaseModel] = Scenario, section: tuple[str, ...] = ()
) -> dict[str, Target]:
    """Every scalar field reachable through nested sections, by each of its spellings
    ('policy.allow_spot')."""
    found: dict[str, Target] = {}
    for name, info in model.model_fields.items():
        spellings = _spellings(name, info)
        nested = _model_of(info.annotation)
        if nested is not None:
            found.update(sweepable_fields(nested, (*section, spellings[0])))
        elif _is_scalar(info.annotation):
            target = Target(section, spellings, _kind(info))
            for spelling in spellings:
                found[".".join((*section, spelling))] = target
    return found


def _number_text(value: float) -> str:
    value = round(value, 9)  # 0.1 + 2 * 0.1 is 0.30000000000000004; a label should say 0.3
    return str(int(value)) if value.is_integer() else repr(value)


def _range_values(spec: str, field: str, target: Target, text: str) -> list[tuple[str, Any]]:
    span, sep, step_text = text.partition(":")
    ends = span.split("..")
    if not sep or len(ends) != 2 or not all(p.strip() for p in (*ends, step_text)):
        raise SweepError(say_as("batch.range_form",
                                "--sweep {spec}: a range is START..STOP:STEP, e.g. "
                                "budget=100k..500k:50k", spec=repr(spec)))
    parts = [ends[0].strip(), ends[1].strip(), step_text.strip()]
    if target.kind == "other":
        raise SweepError(say_as("batch.range_not_number",
                                "--sweep {spec}: {field} is not a number; give a list of values, "
                                "e.g. {name}=A,B", spec=repr(spec), field=repr(field), name=field))
    parse, example = (
        (parse_duration_h, "14d..42d:7d")
        if target.kind == "duration"
        else (parse_money, "100k..500k:50k")
    )
    try:
        start, stop, step = (parse(p) for p in parts)
    except ValueError as exc:
        raise SweepError(say_as("batch.range_bad_value",
                                "--sweep {spec}: {problem} (a range of {field} reads like "
                                "{example})", spec=repr(spec), problem=exc.args[0], field=field,
                                example=example)) from None
    unit_h, suffix = 0.0, ""
    if target.kind == "duration":  # labels keep the unit START was written in: 14d, 21d, 28d
        suffix = re.sub(r"^[-+0-9.eE_,\s]*", "", parts[0])
        unit_h = parse_duration_h(f"1{suffix}")
    if step <= 0:
        raise SweepError(say_as("batch.step_positive", "--sweep {spec}: STEP must be > 0",
                                spec=repr(spec)))
    if stop < start:
        raise SweepError(say_as("batch.stop_below", "--sweep {spec}: STOP is below START",
                                spec=repr(spec)))
    count = math.floor((stop - start) / step + 1e-9) + 1
    if count > MAX_VARIANTS:
        raise SweepError(say_as("batch.range_too_long",
                                "--sweep {spec}: {count} values; at most {most} (check STEP)",
                                spec=repr(spec), count=count, most=MAX_VARIANTS))
    values: list[tuple[str, Any]] = []
    for i in range(count):
        value = start + i * step
        if unit_h:
            text_value = f"{_number_text(value / unit_h)}{suffix}"
            values.append((text_value, text_value))
        else:
            number = round(value, 9)
            values.append((_number_text(number), int(number) if number.is_integer() else number))
    return values


def _list_values(spec: str, text: str) -> list[tuple[str, Any]]:
    items = [item.strip() for item in text.split(",")]
    if not all(items):
        raise SweepError(say_as("batch.empty_item",
                                "--sweep {spec}: empty item in the list; write FIELD=A,B,C",
                                spec=repr(spec)))
    values: list[tuple[str, Any]] = []
    for item in items:
        try:
            # "true" -> True, "150000" -> 150000, "21d" -> "21d", as in a file (with its limits)
            value = load_yaml_value(item, f"--sweep {spec[:60]!r}")
        except yaml.YAMLError:
            value = item
        except InputError as exc:
            raise SweepError(exc.problems[0]) from None
        values.append((item, value))
    return values


def parse_sweep(spec: str) -> Sweep:
    """Parse one `FIELD=VALUES` spec. Raises SweepError with a one-line message."""
    field, sep, text = spec.partition("=")
    field, text = field.strip(), text.strip()
    if not sep or not field or not text:
        raise SweepError(say_as("batch.sweep_form",
                                "--sweep {spec}: expected FIELD=A,B,C or FIELD=START..STOP:STEP, "
                                "e.g. budget=100k..500k:50k or deadline=14d,21d,30d",
                                spec=repr(spec)))
    fields = sweepable_fields()
    if field not in fields:
        top = sorted(k for k, t in fields.items() if not t.section and k == t.spellings[0])
        raise SweepError(say_as("batch.unknown_field",
                                "--sweep {spec}: unknown or unsweepable field {field}{hint} "
                                "(sweepable: {fields}, policy.*, solver.*)", spec=repr(spec),
                                field=repr(field), hint=did_you_mean(field, fields),
                                fields=listed(top)))
    target = fields[field]
    values = _range_values(spec, field, target, text) if ".." in text else _list_values(spec, text)
    return Sweep(field=field, target=target, values=tuple(values))


def parse_sweeps(specs: Sequence[str]) -> list[Sweep]:
    """Parse every spec; a field swept twice is an error (a grid needs one axis per field)."""
    sweeps = [parse_sweep(spec) for spec in specs]
    seen: dict[Target, str] = {}
    for sweep in sweeps:
        if sweep.target in seen:
            raise SweepError(say_as("batch.swept_twice",
                                    "--sweep {field}: the field is already swept by --sweep "
                                    "{other}", field=repr(sweep.field),
                                    other=repr(seen[sweep.target])))
        seen[sweep.target] = sweep.field
    total = math.prod(len(s.values) for s in sweeps)
    if total > MAX_VARIANTS:
        raise SweepError(say_as("batch.grid_too_large",
                                "--sweep: the grid has {total} variants per scenario; at most "
                                "{most}", total=total, most=MAX_VARIANTS))
    return sweeps


def expand_grid(sweeps: Sequence[Sweep]) -> list[Variant]:
    """Every combination, in the order the sweeps were given (the first varies slowest)."""
    if not sweeps:
        return [Variant("", ())]
    variants: list[Variant] = []
    for combo in itertools.product(*(s.values for s in sweeps)):
        label = " ".join(f"{s.field}={text}" for s, (text, _) in zip(sweeps, combo, strict=True))
        assignments = tuple(
            _assignment(s, value) for s, (_, value) in zip(sweeps, combo, strict=True)
        )
        variants.append(Variant(label, assignments))
    return variants


def _assignment(sweep: Sweep, value: Any) -> Assignment:
    key = sweep.field.rsplit(".", 1)[-1]
    return Assignment(
        sweep.target.section, key, tuple(s for s in sweep.target.spellings if s != key), value
    )


def apply(raw: Any, assignments: Sequence[Assignment]) -> Iterator[str]:
    """Set each assignment in `raw` (a parsed scenario mapping) in place; yield a problem for each
    that cannot be set.

    A non-mapping `raw` is left alone: the loader reports it with its usual message.
    """
    if not isinstance(raw, dict):
        return
    for a in assignments:
        mapping = raw
        for depth, key in enumerate(a.section):
            inner = mapping.setdefault(key, {})
            if inner is None:
                inner = mapping[key] = {}
            if not isinstance(inner, dict):
                yield say_as("batch.sweep_no_mapping",
                             "{section}: expected a mapping to set --sweep {name} in",
                             section=".".join(a.section[: depth + 1]), name=repr(a.key))
                break
            mapping = inner
        else:
            for other in a.drop:
                mapping.pop(other, None)
            mapping[a.key] = a.value
