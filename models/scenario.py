"""The user's scenario file: jobs, money, time, data rules and what the team owns.

Quantities accept the short forms people write (`400k`, `40万`, `30d`, `2B`, `50GB`); after
validation they are plain floats in the unit their name says (`budget` in `currency`,
`deadline_h` in hours, `tokens` as a count, `size_gb` in 10^9 bytes).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeAlias

from pydantic import (
    AliasChoices,
    BeforeValidator,
    Field,
    ModelWrapValidatorHandler,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import PydanticCustomError

from plan.models import units_schema
from plan.models.base import Strict
from plan.models.bounded import Id, Text
from plan.models.errors import did_you_mean
from plan.models.features import FeatureName
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
    MAX_GAP,
    MAX_GBPS,
    MAX_GLOBAL_BATCH,
    MAX_GPUS,
    MAX_GPUS_PER_NODE,
    MAX_INTERRUPTIONS,
    MAX_JOBS,
    MAX_LEAD_TIME_DAYS,
    MAX_LIFE_YEARS,
    MAX_LORA_RANK,
    MAX_MONEY,
    MAX_PARALLEL,
    MAX_PRICE_PER_GPU,
    MAX_PRICE_PER_GPU_HOUR,
    MAX_SEED,
    MAX_SEQ_LEN,
    MAX_SOLVER_LIMIT,
    MAX_TOKENS,
    MAX_VALUE_OF_TIME_PER_DAY,
    MAX_WORKERS,
)
from plan.models.methods import ADAPTER_METHODS, QLORA_FP8, QLORA_METHODS, Method
from plan.models.money import active_conversion, converting, to_scenario_currency
from plan.models.platform import FabricKind
from plan.models.stacks import (
    PURE_BF16_PRECISION,
    PYTORCH_ONLY_OPTIMIZER_NAMES,
    hybrid_shard_conflict,
    loss_not_on_megatron,
    may_run,
    not_on_megatron,
    stated_lacks,
)
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


class Link(Strict):
    to: Id = Field(description="a platform id (or another site id)")
    kind: LinkKind
    gbps: float = Field(gt=0, le=MAX_GBPS, description="gigabits per second")


class Site(Strict):
    id: Id
    jurisdiction: Jurisdiction = "cn"
    links: list[Link] = Field(default_factory=list)


class OwnedFabric(Strict):
    kind: FabricKind
    gbps_per_gpu: float = Field(ge=0, le=MAX_GBPS)


class OwnedPool(Strict):
    """Hardware the team already has; `cost_per_gpu_hour` is its running cost (power, staff), in
    `currency`."""

    id: Id
    site: Id
    gpu: Id
    count: int = Field(gt=0, le=MAX_GPUS)
    gpus_per_node: int = Field(gt=0, le=MAX_GPUS_PER_NODE)
    fabric: OwnedFabric = Field(default_factory=lambda: OwnedFabric(kind="none", gbps_per_gpu=0))
    cost_per_gpu_hour: Annotated[Money, Field(le=MAX_PRICE_PER_GPU_HOUR)] = 0.0
    available_from_h: DurationH = Field(default=0.0, validation_alias=AliasChoices("available_from",
                                                                                   "available_from_h"))
    available_until_h: PositiveDurationH | None = Field(
        default=None, validation_alias=AliasChoices("available_until", "available_until_h")
    )
    features: list[FeatureName] = Field(
        default_factory=list, description="capabilities beyond the GPU's defaults (CUDA cards: "
                                          "qlora_kernels), e.g. env_snapshot, checkpoint_resume")
    lacks: list[FeatureName] = Field(default_factory=list,
                                     description="defaults this pool does not have, e.g. "
                                                 "[qlora_kernels]")
    host_memory_gib_per_gpu: float | None = Field(
        default=None, gt=0, le=4096, allow_inf_nan=False,
        description="server RAM free for offloading, per GPU (a 2-GPU box with 128 GiB to spare: "
                    "64); unset, 128 assumed (a DGX A100's 1 TB over 8 GPUs)")

    @model_validator(mode="after")
    def _window(self) -> OwnedPool:
        if self.count % self.gpus_per_node and self.count > self.gpus_per_node:
            raise ValueError(f"count ({self.count}) is not a whole number of nodes of "
                             f"{self.gpus_per_node}")
        if self.available_until_h is not None and self.available_until_h <= self.available_from_h:
            raise ValueError("available_until must be after available_from")
        both = sorted(set(self.features) & set(self.lacks))
        if both:
            raise ValueError(f"{', '.join(both)} is both in features and in lacks")
        return self

    def capabilities(self, defaults: frozenset[str]) -> frozenset[str]:
        """The GPU's defaults (`plan.models.features.owned_defaults`), plus `features`, less
        `lacks`."""
        return (defaults | {f.value for f in self.features}) - {f.value for f in self.lacks}


class Reproducibility(Strict):
    fixed_gpu_type: bool = False
    exclusive_hardware: bool = False
    env_snapshot: bool = False


class Policy(Strict):
    reproducibility: Reproducibility = Field(default_factory=Reproducibility)
    allow_platforms: list[Id] = Field(default_factory=list, description="empty = all")
    forbid_platforms: list[Id] = Field(default_factory=list)
    allow_gpus: list[Id] = Field(default_factory=list, description="empty = all")
    forbid_gpus: list[Id] = Field(default_factory=list)
    allow_spot: bool = Field(default=False, description="spot is a risk the scenario opts into")
    max_expected_interruptions: float | None = Field(
        default=None, ge=0, le=MAX_INTERRUPTIONS,
        description="per job: failures plus spot preemptions expected during the run")
    consider_purchase: bool = Field(default=False, description="weigh the catalog's purchase "
                                                               "options")
    trust_vendor_claims: bool = False
    max_gpus_per_job: int | None = Field(default=None, gt=0, le=MAX_GPUS)
    memory_headroom: float = Field(default=DEFAULT_MEMORY_HEADROOM, ge=0, le=MAX_MEMORY_HEADROOM,
                                   description="fraction of each card's memory kept free; a layout "
                                               "fits only if its peak is at most (1 - headroom) x "
                                               "the card")


class PurchaseQuote(Strict):
    """Hardware the team could buy, from its own quote; fields left out come from the catalog's
    purchase entry for the same GPU. `price_per_gpu` includes the GPU's share of the server."""

    gpu: Id
    price_per_gpu: Annotated[PositiveMoney, Field(le=MAX_PRICE_PER_GPU)] | None = Field(
        default=None, description="in the scenario's currency")
    life_years: float | None = Field(default=None, gt=0, le=MAX_LIFE_YEARS)
    lead_time_days: float | None = Field(default=None, ge=0, le=MAX_LEAD_TIME_DAYS)
    max_gpus: int | None = Field(default=None, gt=0, le=MAX_GPUS, description="the most the team "
                                                                              "would buy")
    source: Text | None = Field(default=None, description="where the quote comes from")


class DataSpec(Strict):
    sensitivity: Sensitivity = "public"
    residency: Residency = "any"
    size_gb: SizeGB = Field(default=0.0, validation_alias=AliasChoices("size", "size_gb"))
    at: Id | None = Field(default=None, description="the site where the data lives")




class FixedLayout(Strict):
    """Parts of the parallel layout a job fixes (a paper's exact setup); the rest is searched."""

    tp: int | None = Field(default=None, gt=0, le=MAX_PARALLEL, description="tensor-parallel size")
    pp: int | None = Field(default=None, gt=0, le=MAX_PARALLEL, description="pipeline stages")
    zero: int | None = Field(default=None, ge=0, le=3, description="ZeRO stage 0-3")
    cp: int | None = Field(default=None, gt=0, le=MAX_PARALLEL, description="context-parallel size "
                                                                            "(long sequences)")
    recompute: RecomputePolicy | None = Field(
        default=None, description="activation recomputation: none, selective (Megatron's attention "
                                  "core; torchtitan's "
        "op-level policy on FSDP), full (every layer's input kept), full_offload (those inputs in "
        "host memory) or offload (every saved activation in host memory)")
    micro_batch: int | None = Field(default=None, gt=0, le=MAX_GLOBAL_BATCH,
                                    description="sequences per micro-batch on each data-parallel "
                                                "replica")
    ep: int | None = Field(default=None, gt=0, le=MAX_PARALLEL,
                           description="expert-parallel size (MoE models): ranks each layer's "
                                       "experts are split over")


class Job(Strict):
    id: Id
    model: Text = Field(min_length=1, max_length=4096,
                        description="catalog id or alias, or a path to a model-card YAML")
    method: Method
    tokens: Count
    seq_len: SeqLen = Field(default=4096, description="tokens per sequence; 4k = 4096")
    global_batch: int | None = Field(default=None, gt=0, le=MAX_GLOBAL_BATCH,
                                     description="sequences per optimizer step")
    lora_rank: int | None = Field(default=None, gt=0, le=MAX_LORA_RANK)
    lora_targets: LoraTargetsChoice | None = Field(
        default=None, description="the linear layers LoRA adapts: all (q, k, v, o and the FFN's, "
                                  "as QLoRA and "
        "LLaMA-Factory do; the default) or attention (q, k, v, o only)")
    precision: PrecisionChoice = "bf16"
    after: list[Id] = Field(default_factory=list)
    deadline_h: PositiveDurationH | None = Field(
        default=None, validation_alias=AliasChoices("deadline", "deadline_h")
    )
    data: DataSpec = Field(default_factory=DataSpec)
    max_gpus: int | None = Field(default=None, gt=0, le=MAX_GPUS)
    min_gpus: int | None = Field(default=None, gt=0, le=MAX_GPUS)
    gpus: int | None = Field(default=None, gt=0, le=MAX_GPUS, description="exactly this many GPUs "
                                                                          "(a reproduction)")
    layout: FixedLayout | None = Field(default=None, description="fixed parallel layout; unset "
                                                                 "fields are searched")
    framework: FrameworkChoice | None = Field(
        default=None, description="the training stack (megatron, deepspeed, fsdp); chosen by the "
                                  "planner if unset")
    optimizer: OptimizerChoice = Field(
        default="adamw", description="adamw (16 B/param with mixed precision), or a low-memory "
                                     "one; "
        "adamw-precision-aware is Megatron's (bf16 gradients, fp32 master kept as 16-bit "
        "remainders); adamw-bf16 is pure BF16 training as torchtune runs it (8 B/param, no fp32 "
        "master copy)")
    kernels: KernelsChoice = Field(
        default="eager", description="how a PyTorch stack (fsdp, deepspeed) runs the layers: eager "
                                     "as Hugging "
        "Face, torchtune and peft do (more saved activations, kernel launches that small "
        "micro-batches wait for), or fused under torch.compile, Liger or Unsloth; Megatron is "
        "always fused")
    loss: LossChoice = Field(
        default="plain", description="how the cross-entropy holds the logits: plain (the whole "
                                     "fp32 logits of a "
        "micro-batch, gigabytes at 128k-152k-token vocabularies); chunked, the bf16 logits but not "
        "their fp32 copy (flash-attn's cross-entropy, torchtune's compiled chunked loss); or "
        "fused, never the whole logits (Liger's fused linear cross-entropy, Unsloth's Cut "
        "Cross-Entropy). Chunked and fused are a PyTorch stack's (fsdp, deepspeed; planned on FSDP "
        "when framework is unset): Megatron's is always plain")
    cpu_offload: bool | None = Field(
        default=None, description="ZeRO-3 CPU offload of the parameters, gradients and optimizer "
                                  "states "
        "(FSDP or DeepSpeed): unset, the planner uses it only where the job fits its hardware no "
        "other way; false, never (a host short of free memory); true, on every layout that can run "
        "it")
    hybrid_shard: bool | None = Field(
        default=None, description="FSDP hybrid sharding (HSDP): the ZeRO-2/3 states sharded over "
                                  "one node's GPUs "
        "and replicated across nodes. Unset, the planner uses it where it is faster than the full "
        "shard (a slow network between nodes); false, never (a stack or launcher without it); "
        "true, on every layout, which then runs on FSDP across nodes only")

    @model_validator(mode="after")
    def _method_options(self) -> Job:
        if self.lora_rank is not None and self.method not in ADAPTER_METHODS:
            raise ValueError("lora_rank is only for lora or qlora (or lora_dpo, qlora_dpo), not "
                             f"{self.method}")
        if self.lora_targets is not None and self.method not in ADAPTER_METHODS:
            raise ValueError("lora_targets is only for lora or qlora (or lora_dpo, qlora_dpo), "
                             f"not {self.method}")
        if self.optimizer == "adamw-precision-aware":
            unmet = self.unmet_for_megatron_optimizer()
            if unmet:
                raise ValueError("optimizer adamw-precision-aware is Megatron's distributed "
                                 "optimizer: it needs "
                                 + " and ".join(unmet))
        if self.optimizer in PYTORCH_ONLY_OPTIMIZER_NAMES and stated_lacks(
            self.framework, "pytorch_optimizers"
        ):
            raise ValueError(f"optimizer {not_on_megatron(self.optimizer)}, or leave framework out")
        if self.loss != "plain" and stated_lacks(self.framework, "leaner_losses"):
            raise ValueError(f"loss {loss_not_on_megatron(self.loss)}")
        conflict = self.hybrid_shard and hybrid_shard_conflict(
            self.framework,
            self.layout.zero if self.layout else None,
            self.cpu_offload,
            "layout.zero",
        )
        if conflict:
            raise ValueError(f"hybrid_shard: {conflict}: leave hybrid_shard out or change that")
        if self.optimizer == "adamw-bf16" and self.precision != "bf16":
            raise ValueError(f"optimizer {PURE_BF16_PRECISION}")
        if self.method in QLORA_METHODS and self.precision == "fp8":
            raise ValueError(QLORA_FP8)
        if self.tokens < self.seq_len:
            raise ValueError(f"tokens ({self.tokens:,.0f}) is less than one sequence of seq_len "
                             f"({self.seq_len})")
        if self.global_batch is not None and self.global_batch * self.seq_len > self.tokens:
            raise ValueError("one optimizer step (global_batch x seq_len = "
                             f"{self.global_batch * self.seq_len:,} tokens) is more than the job's "
                             f"tokens ({self.tokens:,.0f})")
        low, high = self.gpus or self.min_gpus, self.gpus or self.max_gpus
        if self.min_gpus is not None and self.gpus is not None and self.gpus < self.min_gpus:
            raise ValueError(f"gpus ({self.gpus}) is below min_gpus ({self.min_gpus})")
        if low is not None and self.max_gpus is not None and low > self.max_gpus:
            raise ValueError(f"{'gpus' if self.gpus else 'min_gpus'} ({low}) is above max_gpus "
                             f"({self.max_gpus})")
        if self.layout is not None and high is not None:
            group = (self.layout.tp or 1) * (self.layout.pp or 1)
            if group > high or (self.gpus is not None and self.gpus % group):
                raise ValueError(f"layout: tp x pp = {group} does not divide "
                                 f"{'gpus' if self.gpus else 'max_gpus'} ({high})")
        return self

    def unmet_for_megatron_optimizer(self) -> list[str]:
        """What this job's own fields rule out for Megatron's distributed optimizer (the
        precision-aware one): another framework, a ZeRO stage other than 1, QLoRA (no Megatron
        path); empty if none."""
        zero = self.layout.zero if self.layout is not None else None
        return [
            need
            for need, met in (
                (
                    f"framework megatron, not {self.framework}",
                    may_run(self.framework, "distributed_optimizer"),
                ),
                (f"ZeRO stage 1, not layout.zero {zero}", zero in (None, 1)),
                (f"a method other than {self.method}", self.method not in QLORA_METHODS),
            )
            if not met
        ]

    def allows_count(self, gpus: int) -> bool:
        """Whether the job's own count fields (gpus, min_gpus) and fixed layout admit `gpus`
        GPUs."""
        if self.gpus is not None and gpus != self.gpus:
            return False
        if self.min_gpus is not None and gpus < self.min_gpus:
            return False
        group = (self.layout.tp or 1) * (self.layout.pp or 1) if self.layout else 1
        return gpus % group == 0


class SolverSettings(Strict):
    """How CP-SAT runs. It stops on `work_limit`, CP-SAT's deterministic time (a count of work,
    about a second of one unloaded core per unit), so the same scenario gives the same plan on a
    busy machine; `time_limit_s` (wall clock) is only a safety net, and a result it cut says so."""

    work_limit: float = Field(default=30.0, gt=0, le=MAX_SOLVER_LIMIT,
                              description="deterministic time units, all solves together")
    time_limit_s: float = Field(default=600.0, gt=0, le=MAX_SOLVER_LIMIT,
                                description="wall-clock safety net, seconds: an answer it cuts "
                                "says status cut (exit 3)")
    workers: int = Field(default=1, ge=1, le=MAX_WORKERS,
                         description="1: one search thread; more: CP-SAT's interleaved (still "
                                     "deterministic) portfolio")
    seed: int = Field(default=0, ge=0, le=MAX_SEED)
    top_k: int = Field(default=3, ge=1, le=20)
    gap: float = Field(default=0.1, ge=0, le=MAX_GAP, description="alternatives within this "
                                                                  "fraction of the best")


class Scenario(Strict):
    name: Text = Field(min_length=1)
    description: Text | None = None
    currency: str = Field(default="CNY", pattern=r"^[A-Z]{3}$", description="ISO 4217 code, e.g. "
                                                                            "CNY or USD")
    calibration: str | None = Field(default=None, description="calibration overlay from `plan "
                                                              "calibrate` (path "
                                    "relative to this file): your measured speed per "
                                    "GPU/framework/method")
    budget: PositiveMoney | None = None
    deadline_h: PositiveDurationH | None = Field(
        default=None, validation_alias=AliasChoices("deadline", "deadline_h")
    )
    objective: ObjectiveChoice = "cost"
    value_of_time_per_day: Annotated[Money, Field(le=MAX_VALUE_OF_TIME_PER_DAY)] = 0.0
    academic: bool = False
    ops_skill: OpsSkill = "basic"
    sites: list[Site] = Field(default_factory=list)
    owned: list[OwnedPool] = Field(default_factory=list)
    policy: Policy = Field(default_factory=Policy)
    confidence: float = Field(
        default=0.8, ge=0.5, le=0.95,
        description="memory must fit, and deadlines hold, at this quantile of the estimator's "
                    "error band")
    budget_basis: BudgetBasis = Field(
        default="cash", description="cash: purchases at full price; amortized: residual value "
                                    "credited")
    purchase: list[PurchaseQuote] = Field(default_factory=list, description="buy options; none = "
                                                                            "rent only")
    catalog: Text | None = Field(default=None, description="overlay file, relative to the scenario")
    jobs: list[Job] = Field(min_length=1, max_length=MAX_JOBS)
    solver: SolverSettings = Field(default_factory=SolverSettings)

    @model_validator(mode="wrap")
    @classmethod
    def _in_currency(cls, data: Any, handler: ModelWrapValidatorHandler[Scenario]) -> Scenario:
        # Amounts that name a currency (`20k USD`) convert into this scenario's `currency`.
        if active_conversion() is not None or not isinstance(data, Mapping):
            return handler(data)
        with converting(data.get("currency", "CNY")):
            return handler(data)

    @model_validator(mode="after")
    def _references(self) -> Scenario:
        problems = self.reference_problems()
        if problems:
            # One error carrying every problem, each already 'field.path: message'.
            raise PydanticCustomError("scenario_reference", "{summary}",
                                      {"summary": "; ".join(problems), "problems": problems})
        return self

    def reference_problems(self) -> list[str]:
        """Internal cross-references as 'field.path: message' (catalog ids are checked by the
        loader)."""
        problems: list[str] = []
        for section, ids in (
            ("jobs", [j.id for j in self.jobs]),
            ("sites", [s.id for s in self.sites]),
            ("owned", [o.id for o in self.owned]),
        ):
            for i, item_id in enumerate(ids):
                if item_id in ids[:i]:
                    problems.append(f"{section}[{i}].id: duplicate id {item_id!r}; ids must be "
                                    "unique")
        site_ids = {s.id for s in self.sites}
        job_ids = [j.id for j in self.jobs]
        declared = ", ".join(sorted(site_ids)) or "none declared"
        for i, pool in enumerate(self.owned):
            if pool.site not in site_ids:
                problems.append(f"owned[{i}].site: {pool.site!r} is not a declared site "
                                f"({declared})")
        for i, job in enumerate(self.jobs):
            if job.data.at is not None and job.data.at not in site_ids:
                problems.append(f"jobs[{i}].data.at: {job.data.at!r} is not a declared site "
                                f"({declared})")
            for dep in job.after:
                if dep == job.id:
                    problems.append(f"jobs[{i}].after: job {job.id!r} cannot come after itself")
                elif dep not in job_ids:
                    problems.append(f"jobs[{i}].after: unknown job "
                                    f"{dep!r}{did_you_mean(dep, job_ids)}")
        if not problems:
            cycle = _find_cycle({j.id: j.after for j in self.jobs})
            if cycle:
                problems.append("jobs.after: cycle " + " -> ".join(cycle) + "; `after` must not "
                                                                            "loop")
        if self.objective == "balanced" and self.value_of_time_per_day <= 0:
            problems.append("value_of_time_per_day: objective balanced needs a value > 0")
        return problems

    @property
    def considers_purchase(self) -> bool:
        return bool(self.purchase) or self.policy.consider_purchase

    def job(self, job_id: str) -> Job:
        return next(j for j in self.jobs if j.id == job_id)

    def effective_deadline_h(self, job: Job) -> float | None:
        limits = [d for d in (job.deadline_h, self.deadline_h) if d is not None]
        return min(limits) if limits else None


def _find_cycle(graph: dict[str, list[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in graph.get(node, []):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt):], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in graph:
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None
