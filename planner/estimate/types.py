"""Value types of the estimator API: layouts, results and their breakdowns (units in the names)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from plan.models.layout import (  # noqa: F401  (re-exported: the layout the estimator finds)
    HOST_ACTIVATIONS,
    OPTIMIZER_ALIASES,
    OPTIMIZER_NAME_OF,
    Framework,
    Kernels,
    Layout,
    LoraTargets,
    Loss,
    Optimizer,
    Precision,
    Recompute,
    words,
)
from plan.models.methods import (  # noqa: F401  (re-exported: the estimator's method vocabulary)
    ADAPTER_METHODS,
    DPO_METHODS,
    FULL_METHODS,
    METHODS,
    PRETRAIN_METHODS,
    QLORA_METHODS,
    Method,
)
from plan.models.said import say_as
from plan.models.stacks import (  # noqa: F401  (re-exported: what the stacks run)
    DEEPSPEED_OFFLOAD_OPTIMIZERS,
    EXACT_BATCH_FRAMEWORKS,
    EXPERTS_NOT_SPLIT_ON_DEEPSPEED,
    EXPERTS_SPLIT_BY_TORCHTITAN,
    FRAMEWORK_ZERO,
    MEGATRON_CP_SEQUENCE,
    MEGATRON_FSDP_SHARDING,
    PYTORCH_ONLY_OPTIMIZER_NAMES,
    RING_ATTENTION_NEEDS_FLASH,
    expert_parallel_gap,
    framework_zero,
    hybrid_shard_refused,
    interleaving_refused,
    megatron_splits_sequence,
    offloads_states,
    pipeline_fp8_gap,
    ring_attention_gap,
    ulysses_fp8_gap,
    ulysses_head_gap,
)
from plan.planner.estimate.band import MEMORY_BAND, memory_factor, throughput_band
from plan.planner.estimate.reliability import RunEstimate, run_estimate

if TYPE_CHECKING:
    from plan.models.model_card import ModelCard
    from plan.planner.estimate.cluster import Cluster

RECOMPUTE = words(Recompute)
"""Activation policies (`Recompute`): keep all, recompute part (see `Layout.framework`),
recompute each layer from its input, the same with those inputs in host memory (offloaded
checkpoints: Unsloth's gradient checkpointing, LLaMA-Factory's `use_unsloth_gc`, torchtune's
checkpointing with activation offloading), or keep all but in host memory (activation offloading,
as torchtune and Megatron offer)."""
CHECKPOINT_OFFLOAD_NOT_ON_MEGATRON = say_as(
    "stack.checkpoint_offload_not_megatron", "full_offload (checkpoints in host memory: Unsloth's "
    "gradient checkpointing, LLaMA-Factory's use_unsloth_gc) is a PyTorch stack's; Megatron's "
    "activation offloading cannot be combined with recomputation: use full or offload, or "
    "framework fsdp or deepspeed")
FULL_RECOMPUTE = ("full", "full_offload")
"""Policies that recompute every layer from its checkpointed input."""
PRECISIONS = words(Precision)
OPTIMIZERS = words(Optimizer)
OPTIMIZER_NAMES = tuple(OPTIMIZER_NAME_OF.values())
"""The names users write (CLI `--optimizer`, a job's `optimizer`), each an alias of an OPTIMIZERS id
(`OPTIMIZER_NAME_OF`, `OPTIMIZER_ALIASES`)."""
MEGATRON_ONLY_OPTIMIZERS = ("adam_precision_aware",)
"""Optimizers only Megatron's distributed optimizer implements (see `Layout.optimizer`)."""
PYTORCH_ONLY_OPTIMIZERS = tuple(Optimizer.id_of(name) for name in PYTORCH_ONLY_OPTIMIZER_NAMES)
"""Optimizers the PyTorch stacks run (bitsandbytes' 8-bit AdamW, Adafactor: FSDP, and DeepSpeed as a
client optimizer; pure BF16 AdamW) and Megatron-LM does not: its `--optimizer` takes adam or sgd
(megatron/training/arguments.py, megatron-core 0.16), plus the precision-aware Adam above, whose
master weights are fp32 or fp16 (`--main-params-dtype`), never BF16."""
LORA_TARGETS = words(LoraTargets)
FRAMEWORKS = words(Framework)
"""How data parallelism and recomputation are implemented (see `Layout`)."""
KERNELS = words(Kernels)
"""How a PyTorch stack runs the layers (`Layout.kernels`): eager modules, or fused/compiled ones."""


def eager_kernels_on_megatron(stated: str, keep: str, keyed: bool = False) -> str:
    """What a stated eager `kernels` answered with a Megatron layout is told (`plan estimate` and a
    plan alike): `stated` names the setting as the user wrote it, `keep` the one that keeps to an
    eager stack. `keyed`: said again in the reader's language (`plan estimate`'s flags); a plan's
    explanation quotes the English."""
    said = say_as("enote.eager_on_megatron", "{stated} says how a PyTorch stack (fsdp, deepspeed) "
                  "runs its layers; the layout chosen is Megatron's, which always runs fused "
                  "kernels ({keep} keeps to an eager stack)", stated=stated, keep=keep)
    return said if keyed else str(said)


LOSSES = words(Loss)
"""How the cross-entropy holds the logits (`Layout.loss`): plain, chunked or fused (PyTorch
stacks only)."""
LOSS_KINDS = {
    "chunked": "a chunked cross-entropy that holds the bf16 logits but never their fp32 copy "
               "(flash-attn's cross-entropy, torchtune's compiled chunked loss)",
    "fused": "a fused linear cross-entropy that never holds the whole logits (Liger's, Unsloth's "
             "Cut Cross-Entropy)",
}
"""What each non-plain loss is and which libraries run it, as notes, plans and exports say it."""


def hybrid_shard_group(framework: str, zero: int, tp: int, shard_ranks: int, gpus_per_node: int,
                       state_offload: bool = False, ep: int = 1, cp: int = 1) -> int:
    """The shard group of a hybrid-sharded layout (`Layout.shard_group`): the data- and
    context-parallel ranks of one node (ranks run tensor-parallel fastest, so a node holds
    gpus_per_node / tp of them), where their group spans several nodes; 0 where the layout cannot
    shard so: another stack, ZeRO 0/1, a group inside one node, a context-parallel group that does
    not fit whole in a node (FSDP shards over dp_shard x cp), CPU offload (FSDP offloads the full
    shard), expert parallelism."""
    if (
        hybrid_shard_refused(framework, zero, state_offload, ep)
        or tp > gpus_per_node
        or gpus_per_node % tp
    ):
        return 0
    group = gpus_per_node // tp
    return group if 1 < group < shard_ranks and shard_ranks % group == 0 and group % cp == 0 else 0


@dataclass(frozen=True)
class LayoutSpec:
    """What the user fixed; None means 'search'. Sequences for the batch sizes."""

    tp: int | None = None
    pp: int | None = None
    zero: int | None = None
    recompute: str | None = None
    micro_batch: int | None = None
    global_batch: int | None = None
    seq_len: int = 4096
    precision: str = "bf16"
    lora_rank: int = 16
    optimizer: str = "adam"
    sequence_parallel: bool | None = None
    loss: str = "plain"
    fused_modules: bool = False
    lora_targets: str = "all"
    virtual_pipeline: int | None = None
    flash_attention: bool = True
    framework: str | None = None
    # the search kept to the one-click PyTorch path (a team with no ops skill: Hugging Face/PEFT as
    # LLaMA-Factory runs them): FSDP, data-parallel, whole-layer checkpointing; what the user fixes
    # is kept
    pytorch_stacks_only: bool = False
    # activation offload searched (search_layout turns it on only where nothing else fits)
    offload: bool = True
    # ZeRO-3 CPU offload of the model states (`Layout.state_offload`): None searched where nothing
    # fits without it, True forced on every ZeRO-3 layout it applies to, False never
    state_offload: bool | None = None
    # FSDP hybrid sharding (`Layout.shard_group`): None searched where it applies, True only
    # hybrid-sharded layouts (FSDP at ZeRO 2 or 3), False never
    hybrid_shard: bool | None = None
    cp: int | None = None
    ep: int | None = None
    # MoE routed experts' padded capacity (Layout's); stated, never searched
    capacity_factor: float = 1.0
    # Megatron block recomputation, layers per model chunk (Layout's)
    recompute_layers: int | None = None
    # The most sequences the default global batch may hold: the job's whole data (a step cannot
    # train on more than the job has, as a stated global_batch may not). None: no limit (no token
    # count given)
    batch_limit: int | None = None
    # Fraction of the card kept free (allocator spikes, fragmentation the model misses); a layout
    # fits only if its peak <= (1 - memory_headroom) x the card. 0 here; the planner passes the
    # policy's.
    memory_headroom: float = 0.0
    # None: fit the point estimate; q: fit the memory the estimate's band puts at quantile q
    # (band.py)
    memory_confidence: float | None = None

    def usable_gib(self, card_gib: float) -> float:
        """What a layout's point estimate may use: the card less the headroom, divided by the band's
        factor at the memory confidence."""
        usable = card_gib * (1.0 - self.memory_headroom)
        return usable / memory_factor(self.memory_confidence) if self.memory_confidence else usable

    def searched_fields(self) -> tuple[str, ...]:
        names = (
            "tp",
            "pp",
            "cp",
            "zero",
            "recompute",
            "micro_batch",
            "virtual_pipeline",
            "framework",
        )
        # block recomputation: Megatron's
        fixed = {"recompute", "framework"} if self.recompute_layers else set()
        return tuple(n for n in names if getattr(self, n) is None and n not in fixed)


@dataclass(frozen=True, slots=True)
class MemoryBreakdown:
    """Peak memory per GPU in GiB (2^30 bytes), on the pipeline stage with the highest peak."""

    weights_gib: float
    gradients_gib: float
    optimizer_gib: float
    activations_gib: float
    other_gib: float
    total_gib: float

    def to_dict(self) -> dict[str, float]:
        return {"weights": self.weights_gib, "gradients": self.gradients_gib,
                "optimizer": self.optimizer_gib, "activations": self.activations_gib,
                "other": self.other_gib, "total": self.total_gib}


@dataclass(frozen=True, slots=True)
class TimeBreakdown:
    """Seconds of one optimizer step. They sum to the step time.

    compute_s: model FLOPs (and memory-bound kernels) at the achieved rate; recompute_s: the extra
    forward passes of activation recomputation (and PCIe transfers activation offloading could not
    hide); tp_comm_s / cp_comm_s / dp_comm_s: exposed tensor-, context- and data-parallel
    communication; pp_bubble_s: pipeline fill/drain plus point-to-point transfers;
    other_s: optimizer step, QLoRA dequantization, optimizer paging over PCIe; host_s: what the host
    needs beyond the GPU's time to issue an eager stack's kernels (small micro-batches of small
    models).
    """

    compute_s: float
    tp_comm_s: float
    dp_comm_s: float
    pp_bubble_s: float
    recompute_s: float
    other_s: float = 0.0
    cp_comm_s: float = 0.0
    ep_comm_s: float = 0.0
    host_s: float = 0.0

    @property
    def total_s(self) -> float:
        return (
            self.compute_s
            + self.tp_comm_s
            + self.cp_comm_s
            + self.ep_comm_s
            + self.dp_comm_s
            + self.pp_bubble_s
            + self.recompute_s
            + self.other_s
            + self.host_s
        )

    def to_dict(self) -> dict[str, float]:
        return {"compute": self.compute_s, "recompute": self.recompute_s, "tp_comm": self.tp_comm_s,
                "cp_comm": self.cp_comm_s, "ep_comm": self.ep_comm_s, "dp_comm": self.dp_comm_s,
                "pp_bubble": self.pp_bubble_s,
                "other": self.other_s, "host": self.host_s}


CAUSAL_MFU_NOTE_GAP = 0.05
"""MFU points between the conventional figure and the causal one above which both are shown."""


@dataclass
class Estimate:
    """Memory, speed and (via `run`) duration of one (model, method, cluster, layout)."""

    model_id: str
    method: str
    cluster: Cluster
    layout: Layout
    memory: MemoryBreakdown
    gpu_memory_gib: float
    fits: bool
    margin_gib: float
    flops_per_token: float
    step_time_s: float
    time: TimeBreakdown
    tokens_per_s: float
    tokens_per_s_per_gpu: float
    model_tflops_per_gpu: float
    mfu: float
    notes: list[str] = field(default_factory=list)
    model: ModelCard | None = field(default=None, repr=False, compare=False)
    # what the time rests on that no calibration row measures (band.uncalibrated_mechanisms): each
    # widens the band
    uncalibrated: tuple[str, ...] = ()
    # the least the run needs: the peak with PyTorch's allocator cache squeezed, as at the card's
    # limit (memory.py)
    memory_floor_gib: float = 0.0

    @property
    def fits_card(self) -> bool:
        """Whether the layout runs on the card at all: its peak fits with the allocator's cache
        squeezed (a plan asks more, `fits`: the reserved peak within the card less the headroom)."""
        return self.memory_floor_gib <= self.gpu_memory_gib

    @property
    def tokens_per_s_range(self) -> tuple[float, float]:
        """p10-p90 of the throughput (planner/estimate/band.py)."""
        lo, hi = throughput_band(self.layout, self.uncalibrated)
        return self.tokens_per_s * lo, self.tokens_per_s * hi

    @property
    def memory_gib_range(self) -> tuple[float, float]:
        """p10-p90 of the peak memory per GPU."""
        return self.memory.total_gib * MEMORY_BAND[0], self.memory.total_gib * MEMORY_BAND[1]

    @property
    def mfu_causal(self) -> float:
        """MFU with the attention core counted as flash attention runs it under a causal mask: half
        of the 4 s d FLOPs per token and layer that `mfu` counts (the Megatron/PaLM convention,
        which the published rows use). The two differ by the attention's share, large at long
        sequences."""
        if self.model is None or not self.flops_per_token:
            return self.mfu
        from plan.models.methods import reference_forward_passes
        from plan.planner.estimate.flops import shape_of

        attention = shape_of(self.model).forward_flops_per_token(self.layout.seq_len)[1]
        counted = attention * (3.0 + reference_forward_passes(self.method))
        return self.mfu * (1.0 - 0.5 * counted / self.flops_per_token)

    def run(self, tokens: float) -> RunEstimate:
        """Hours and GPU-hours to train on `tokens` tokens, failures included (see
        reliability.py)."""
        return run_estimate(self, tokens)

    def to_dict(self, tokens: float | None = None) -> dict[str, Any]:
        """The JSON object of `plan estimate --format json` (hours/gpu_hours when tokens is
        given)."""
        lay = self.layout
        out: dict[str, Any] = {
            "model": self.model_id,
            "method": self.method,
            "gpu": self.cluster.gpu.id,
            "gpus": self.cluster.gpus,
            "gpus_per_node": self.cluster.gpus_per_node,
            "layout": {
                "tp": lay.tp,
                "pp": lay.pp,
                "dp": lay.dp,
                "zero": lay.zero,
                "recompute": lay.recompute,
                "micro_batch": lay.micro_batch,
                "global_batch": lay.global_batch,
                "seq_len": lay.seq_len,
                "precision": lay.precision,
                "sequence_parallel": lay.sequence_parallel,
                "lora_rank": lay.lora_rank,
                **({"lora_targets": lay.lora_targets} if lay.lora_rank is not None else {}),
                "optimizer": lay.optimizer,
                "virtual_pipeline": lay.virtual_pipeline,
                "framework": lay.framework,
                "cp": lay.cp,
                "ep": lay.ep,
                "flash_attention": lay.flash_attention,
                "kernels": lay.kernels,
                "loss": lay.loss,
                **(
                    {"recompute_layers": lay.recompute_layers}
                    if lay.recompute_layers is not None
                    else {}
                ),
                **({"state_offload": True} if lay.state_offload else {}),
                **(
                    {"shard_group": lay.shard_group, "replicas": lay.replicas}
                    if lay.shard_group
                    else {}
                ),
                **({"capacity_factor": lay.capacity_factor} if lay.capacity_factor != 1.0 else {}),
            },
            "memory_gib": {k: round(v, 3) for k, v in self.memory.to_dict().items()},
            "gpu_memory_gib": self.gpu_memory_gib,
            "fits": self.fits,
            "fits_card": self.fits_card,
            "memory_floor_gib": round(self.memory_floor_gib, 3),
            "margin_gib": round(self.margin_gib, 3),
            "flops_per_token": self.flops_per_token,
            "step_time_s": self.step_time_s,
            "time_s": {k: round(v, 6) for k, v in self.time.to_dict().items()},
            "tokens_per_s": self.tokens_per_s,
            "tokens_per_s_range": [round(x, 1) for x in self.tokens_per_s_range],
            "band_widened_by": list(self.uncalibrated),
            "tokens_per_s_per_gpu": self.tokens_per_s_per_gpu,
            "memory_gib_range": [round(x, 3) for x in self.memory_gib_range],
            "framework": lay.framework,
            "model_tflops_per_gpu": self.model_tflops_per_gpu,
            "mfu": self.mfu,
            "mfu_causal": self.mfu_causal,
            "notes": list(self.notes),
        }
        if tokens is not None:
            run = self.run(tokens)
            out.update({
                "tokens": tokens, "hours": run.hours, "gpu_hours": run.gpu_hours,
                "failure_free_hours": run.failure_free_hours,
                "failure_overhead_fraction": run.failure_overhead_fraction,
                "checkpoint_interval_h": run.checkpoint_interval_h,
                "expected_interruptions": run.expected_interruptions,
                "hours_range": [round(x, 3) for x in run.hours_range],
                "gpu_hours_range": [round(x * self.cluster.gpus, 3) for x in run.hours_range],
            })
        return out
