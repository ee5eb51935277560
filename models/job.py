"""One training job of a scenario: what to train, how, on how much data, and what it fixes."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    AliasChoices,
    BeforeValidator,
    Field,
    WithJsonSchema,
    model_validator,
)

from plan.models import units_schema
from plan.models.base import Strict
from plan.models.bounded import Id, Text
from plan.models.calendar import Step, parse_step
from plan.models.fields import (
    Count,
    DurationH,
    FrameworkChoice,
    KernelsChoice,
    LoraTargetsChoice,
    LossChoice,
    OptimizerChoice,
    PositiveDurationH,
    PrecisionChoice,
    RecomputePolicy,
    Residency,
    Sensitivity,
    SeqLen,
    SizeGB,
    StackMaturity,
)
from plan.models.limits import (
    MAX_GLOBAL_BATCH,
    MAX_GPUS,
    MAX_JOBS,
    MAX_LORA_RANK,
    MAX_PARALLEL,
)
from plan.models.methods import ADAPTER_METHODS, QLORA_FP8, QLORA_METHODS, Method
from plan.models.said import say_as
from plan.models.stacks import (
    PURE_BF16_PRECISION,
    PYTORCH_ONLY_OPTIMIZER_NAMES,
    hybrid_shard_conflict,
    loss_not_on_megatron,
    may_run,
    not_on_megatron,
    stated_lacks,
)


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


DURATION_OR_DATE = {"anyOf": [
    units_schema.duration(positive=False),
    {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$", "description": "with start: a date"}]}
"""A duration from the plan's start, or (with `start`) a date: the loader turns it into hours."""

JobBilling = Literal["hourly", "daily", "monthly", "yearly", "spot", "owned", "purchase"]


class Repeat(Strict):
    """A job run again and again: `count` instances, `every` apart (a calendar month, quarter or
    year when the scenario has a start date; else a duration)."""

    every: Annotated[
        Step,
        BeforeValidator(parse_step),
        WithJsonSchema({"type": "string", "description": "1 month, quarter, year, or a duration "
                                                         "such as 30d"}),
    ]
    count: int = Field(ge=1, le=MAX_JOBS)


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
    deadline_h: Annotated[PositiveDurationH | None, WithJsonSchema(DURATION_OR_DATE)] = Field(
        default=None, validation_alias=AliasChoices("deadline", "deadline_h"),
        description="hours from the plan's start (with the scenario's start: a date, the end of "
                    "that day); for a recurring job, after each release")
    release_h: Annotated[DurationH, WithJsonSchema(DURATION_OR_DATE)] = Field(
        default=0.0, validation_alias=AliasChoices("release", "release_h"),
        description="the earliest start, as an offset (30d) or, with the scenario's start, a date")
    repeat: Repeat | None = Field(
        default=None, description="recurring work: {every: 1 month, count: 12} expands into "
                                  "instances ID-01..ID-12, instance k released (k-1) steps after "
                                  "the first")
    billing: list[JobBilling] | None = Field(
        default=None, description="the billing modes this job may use (hourly, daily, monthly, "
                                  "yearly, spot, owned, purchase); unset, all")
    series: Id | None = Field(
        default=None, description="set on a recurring job's instances: the job they repeat")
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
    stack_maturity: StackMaturity | None = Field(
        default=None, description="the training stack at this job's scale: mature (its team has "
                                  "run it there) or new (its first run there: a pre-training "
                                  "run's whole run timed longer, assumed); unset, the scenario's")

    @model_validator(mode="after")
    def _method_options(self) -> Job:
        if self.lora_rank is not None and self.method not in ADAPTER_METHODS:
            raise ValueError(say_as("rule.lora_rank_only", "lora_rank is only for lora or qlora "
                                    "(or lora_dpo, qlora_dpo), not {method}", method=self.method))
        if self.lora_targets is not None and self.method not in ADAPTER_METHODS:
            raise ValueError(say_as("rule.lora_targets_only", "lora_targets is only for lora or "
                                    "qlora (or lora_dpo, qlora_dpo), not {method}",
                                    method=self.method))
        if self.optimizer == "adamw-precision-aware":
            unmet = self.unmet_for_megatron_optimizer()
            if unmet:
                raise ValueError("optimizer adamw-precision-aware is Megatron's distributed "
                                 "optimizer: it needs "
                                 + " and ".join(unmet))
        if self.optimizer in PYTORCH_ONLY_OPTIMIZER_NAMES and stated_lacks(
            self.framework, "pytorch_optimizers"
        ):
            raise ValueError(say_as("stack.job_optimizer", "optimizer {reason}, or leave framework "
                                    "out", reason=not_on_megatron(self.optimizer)))
        if self.loss != "plain" and stated_lacks(self.framework, "leaner_losses"):
            raise ValueError(say_as("stack.job_loss", "loss {reason}",
                                    reason=loss_not_on_megatron(self.loss)))
        conflict = self.hybrid_shard and hybrid_shard_conflict(
            self.framework,
            self.layout.zero if self.layout else None,
            self.cpu_offload,
            "layout.zero",
        )
        if conflict:
            raise ValueError(say_as("stack.job_hybrid", "hybrid_shard: {reason}: leave "
                                    "hybrid_shard out or change that", reason=conflict))
        if self.optimizer == "adamw-bf16" and self.precision != "bf16":
            raise ValueError(say_as("stack.job_optimizer_bf16", "optimizer {reason}",
                                    reason=PURE_BF16_PRECISION))
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
