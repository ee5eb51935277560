"""Field types the scenario's sections share: vocabulary words kept as plain strings, data
rules, and quantities in the short forms people write (`400k`, `40万`, `30d`, `2B`, `50GB`)."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import (
    BeforeValidator,
    Field,
    WithJsonSchema,
)

from plan.models import units_schema
from plan.models.jurisdiction import EXAMPLES, WRITTEN_CODE_PATTERN, check_code, residency_rule
from plan.models.layout import (
    OPTIMIZER_NAME_OF,
    Framework,
    Kernels,
    LoraTargets,
    Loss,
    Objective,
    Precision,
    Recompute,
    words,
)
from plan.models.limits import (
    MAX_DATA_GB,
    MAX_DURATION_H,
    MAX_MONEY,
    MAX_SEQ_LEN,
    MAX_TOKENS,
)
from plan.models.money import to_scenario_currency
from plan.models.units import parse_count, parse_duration_h, parse_seq_len, parse_size_gb


def one_of(vocabulary: type[StrEnum]) -> Any:
    """A field type that takes one word of `vocabulary` and keeps it as a plain str: the Literal
    of its words, so the JSON Schema lists them inline and in order, and pydantic's refusal names
    them."""
    return Literal[words(vocabulary)]


# The field types of the words in plan.models.layout's vocabularies. A Literal built from a
# vocabulary is a value to mypy, not a type: it reads them as the str each field holds.
if TYPE_CHECKING:
    FrameworkChoice: TypeAlias = str
    KernelsChoice: TypeAlias = str
    LossChoice: TypeAlias = str
    LoraTargetsChoice: TypeAlias = str
    ObjectiveChoice: TypeAlias = str
    OptimizerChoice: TypeAlias = str
    PrecisionChoice: TypeAlias = str
    RecomputePolicy: TypeAlias = str
else:
    FrameworkChoice = one_of(Framework)
    KernelsChoice = one_of(Kernels)
    LossChoice = one_of(Loss)
    LoraTargetsChoice = one_of(LoraTargets)
    ObjectiveChoice = one_of(Objective)
    PrecisionChoice = one_of(Precision)
    RecomputePolicy = one_of(Recompute)
    """Activation recomputation policies a job may fix (plan.planner.estimate.types.RECOMPUTE, `plan
    estimate --recompute`)."""
    OptimizerChoice = Literal[tuple(OPTIMIZER_NAME_OF.values())]
    """The optimizer names a job may write (`plan.models.layout.OPTIMIZER_NAME_OF`)."""

OpsSkill = Literal["none", "basic", "expert"]
StackMaturity = Literal["mature", "new"]
"""The training stack at a run's scale (`stack_maturity`): `mature`, one its team has run at that
scale; `new`, its first run there (plan.planner.estimate.band.STACK_MATURITIES)."""
Sensitivity = Literal["public", "internal", "confidential", "regulated"]
# any | on_premises | a jurisdiction code (plan.models.jurisdiction: cn, us, eu, sg, ...)
Residency = Annotated[
    str,
    BeforeValidator(residency_rule),
    WithJsonSchema(
        {
            "anyOf": [
                {"enum": ["any", "on_premises"]},
                {"type": "string", "pattern": WRITTEN_CODE_PATTERN},
            ],
            "description": "any, on_premises, or a jurisdiction code the data must stay in "
                           f"({EXAMPLES})",
        }
    ),
]
Jurisdiction = Annotated[
    str,
    BeforeValidator(check_code),
    WithJsonSchema(
        {
            "type": "string",
            "pattern": WRITTEN_CODE_PATTERN,
            "description": f"ISO-style code: {EXAMPLES}",
        }
    ),
]
LinkKind = Literal["private_line", "vpn", "internet"]
BudgetBasis = Literal["cash", "amortized"]

# Allocator spikes and fragmentation the estimator does not see: keep 8% of the card free by
# default.
DEFAULT_MEMORY_HEADROOM = 0.08
MAX_MEMORY_HEADROOM = 0.5

# Each quantity's JSON Schema is a number or a patterned string (plan.models.units_schema), as the
# loader reads it.
# Bounds: plan.models.limits (each assumed, with its rule); .inf and .nan are refused everywhere
# (plan.models.base).
Money = Annotated[float, BeforeValidator(to_scenario_currency), Field(ge=0, le=MAX_MONEY),
                  WithJsonSchema(units_schema.money(positive=False))]
PositiveMoney = Annotated[float, BeforeValidator(to_scenario_currency), Field(gt=0, le=MAX_MONEY),
                          WithJsonSchema(units_schema.money(positive=True))]
DurationH = Annotated[float, BeforeValidator(parse_duration_h), Field(ge=0, le=MAX_DURATION_H),
                      WithJsonSchema(units_schema.duration(positive=False))]
PositiveDurationH = Annotated[
    float,
    BeforeValidator(parse_duration_h),
    Field(gt=0, le=MAX_DURATION_H),
    WithJsonSchema(units_schema.duration(positive=True)),
]
Count = Annotated[
    float,
    BeforeValidator(parse_count),
    Field(ge=1, le=MAX_TOKENS),
    WithJsonSchema(units_schema.count()),
]
SeqLen = Annotated[int, BeforeValidator(parse_seq_len), Field(gt=0, le=MAX_SEQ_LEN),
                   WithJsonSchema(units_schema.seq_len())]
SizeGB = Annotated[float, BeforeValidator(parse_size_gb), Field(ge=0, le=MAX_DATA_GB),
                   WithJsonSchema(units_schema.size())]
