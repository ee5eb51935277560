"""Physical invariants of the estimator, checked on random fully stated layouts.

A calibration row tests one point; a planner compares thousands of layouts, and a wrong *direction*
(FP8 taking more memory than BF16, recomputation making a step faster, a faster network making it
slower) mis-ranks plans without moving any calibration figure. This draws random valid layouts
(every field stated, so no search intervenes), changes one thing at a time in a direction whose
effect is known, and counts the pairs where the estimate moves the wrong way:

- memory per GPU must not rise with: more recomputation, a higher ZeRO stage, FP8 instead of BF16, a
  lighter optimizer, paging 8-bit AdamW's states, a smaller micro-batch (no pipeline), a shorter
  sequence, a leaner loss, fused kernels, flash attention, sequence parallelism, a lower LoRA rank,
  a lighter method (full -> LoRA -> QLoRA), CPU offload, more recomputed layers, the full shard
  instead of a hybrid one;
- step time must not fall with: more recomputation, eager attention, a higher LoRA rank, CPU
offload,
  paging 8-bit AdamW's states; it must not rise with a faster fabric or fused kernels; tokens per
  second per GPU must not fall with a larger global batch (same micro-batch);
- every estimate: memory and time parts non-negative, MFU at most 1, `fits` agreeing with the total,
  bands containing the point; a run's hours at least what its steps take, GPU-hours its hours x
  GPUs;
- fixing a field the search chooses never finds a faster layout than the free search (offloading,
the
  search's last resort, counted apart); and a card with half as much memory again never makes the
  search's fastest fitting layout faster (all it fitted still fits; a paged optimizer pages less),
  nor fits where the smaller card fitted nothing.

Usage: python bench/estimate_invariants.py [--seed 1] [--count 2000]
Exit 1 if any pair breaks an invariant (each printed with both layouts).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("PLAN_CACHE_DIR", "off")

from plan.models.catalog import builtin_catalog
from plan.models.model_card import ModelCard
from plan.planner.estimate import Cluster, Estimate, LayoutSpec, estimate, search_layout, shape_of
from plan.planner.estimate.estimator import layout_problems
from plan.planner.estimate.model_states import upcasts_unquantized
from plan.planner.estimate.search_space import LONG_SEQUENCE, MIN_TOKENS_PER_CP_RANK
from plan.planner.estimate.types import FRAMEWORK_ZERO, Layout, framework_zero, hybrid_shard_group

MODELS = (
    "llama3.2-1b",
    "qwen2.5-7b",
    "llama3.1-8b",
    "glm-4-9b",
    "qwen3-14b",
    "qwen3-32b",
    "llama3.1-70b",
    "mixtral-8x7b",
    "qwen3-30b-a3b",
    "llama2-7b",
)
METHODS = ("pretrain", "full_finetune", "lora", "qlora", "dpo")
GPUS = ("h100-sxm", "a100-80gb", "rtx-4090", "a100-40gb", "h20")
GPU_COUNTS = (1, 2, 4, 8, 16, 32, 64, 128)
SEQ_LENS = (1024, 2048, 4096, 8192, 16384)
RECOMPUTE_ORDER = ("none", "selective", "full")
OPTIMIZERS_LIGHTER = {"adam": ("adam_8bit", "adafactor", "sgd")}
METHOD_LIGHTER = {"full_finetune": "lora", "lora": "qlora"}
LOSS_LEANER = {"plain": "chunked", "chunked": "fused"}

RUN_TOKENS = 1e9
"""Tokens of the run each estimate's hours are checked on."""
MEMORY_TOLERANCE_GIB = 0.01
"""Memory differences under 10 MiB are below anything a plan can notice: an optimizer stepping
inside the backward pass holds one layer's gradients unsharded, the same transient that sharded
AdamW's accounting leaves to the gathered-layer buffers; for LoRA over 64 ranks it is 0.1 MiB
more."""
TIME_TOLERANCE = 1e-6  # relative
SEARCH_TOLERANCE = 0.005
"""A fixed micro-batch that leaves a smaller last one may come out up to 0.5% faster than the
balanced sizes the search times: the estimate charges the last micro-batch pro rata at the full
one's GEMM efficiency (`Layout.micro_batch_equivalents`), a little better than it runs."""
TOLERANCE = {"time: eager attention": 0.01}
"""Eager attention may be up to 1% faster than flash at short sequences: FlashAttention's backward
pass recomputes the scores (FLASH_ATTENTION_BACKWARD_PASSES) that an eager backward reads back."""


@dataclass(frozen=True)
class Case:
    model: ModelCard
    method: str
    cluster: Cluster
    layout: Layout

    def label(self) -> str:
        lay = self.layout
        extra = [
            f"seq={lay.seq_len}",
            lay.precision,
            lay.optimizer,
            f"loss={lay.loss}",
            lay.kernels,
            "flash" if lay.flash_attention else "eager-attention",
            f"sp={lay.sequence_parallel}",
        ]
        if lay.recompute_layers:
            extra.append(f"recompute_layers={lay.recompute_layers}")
        return (f"{self.model.id} {self.method} {self.cluster.gpus}x{self.cluster.gpu.id} "
                f"{self.cluster.fabric_gbps_per_gpu:g}Gb/s: {lay.short()} {' '.join(extra)}")


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def draw(rng: random.Random, catalog: object) -> Case | None:
    """A random layout the estimator accepts, or None."""
    model = catalog.model(rng.choice(MODELS))  # type: ignore[attr-defined]
    gpu = catalog.gpu(rng.choice(GPUS))  # type: ignore[attr-defined]
    gpus = rng.choice(GPU_COUNTS)
    cluster = Cluster.of(gpu, gpus)
    method = rng.choice(METHODS)
    shape = shape_of(model)
    framework = rng.choice(("megatron", "fsdp", "deepspeed"))
    tp = rng.choice([d for d in _divisors(gpus) if d <= 8])
    pp = rng.choice([d for d in _divisors(gpus // tp) if d <= 8])
    cp = rng.choice([d for d in _divisors(gpus // tp // pp) if d <= 4])
    dp = gpus // (tp * pp * cp)
    zero = rng.choice(framework_zero(framework, pp))
    seq_len = rng.choice(SEQ_LENS)
    micro_batch = rng.choice((1, 1, 2, 3, 4, 8))
    accumulation = rng.choice((1, 2, 4, 8))
    precision = "fp8" if gpu.peak_tflops.fp8 and rng.random() < 0.25 else "bf16"
    optimizer = (
        rng.choice(("adam", "adam", "adam_8bit", "adafactor"))
        if framework != "megatron"
        else "adam"
    )
    adapters = method in ("lora", "qlora")
    lora_rank = rng.choice((8, 16, 64)) if adapters else None
    recompute = rng.choice(RECOMPUTE_ORDER)
    vpp = 1
    if pp > 1 and framework == "megatron" and rng.random() < 0.4:
        options = [v for v in (2, 3, 4) if shape.layers % (pp * v) == 0]
        vpp = rng.choice(options) if options else 1
    ep = 1
    if shape.is_moe and not adapters and rng.random() < 0.5:
        options = [e for e in (2, 4, 8) if dp % e == 0 and shape.moe_experts % e == 0]
        ep = rng.choice(options) if options else 1
    layout = Layout(
        tp=tp, pp=pp, dp=dp, cp=cp, ep=ep, zero=zero, recompute=recompute, micro_batch=micro_batch,
        global_batch=micro_batch * dp * accumulation, seq_len=seq_len, precision=precision,
        sequence_parallel=tp > 1 and rng.random() < 0.8, lora_rank=lora_rank, optimizer=optimizer,
        virtual_pipeline=vpp, framework=framework,
        loss=rng.choice(("plain", "chunked", "fused")) if framework != "megatron" else "plain",
        fused_modules=framework != "megatron" and rng.random() < 0.5,
        flash_attention=rng.random() < 0.85,
    )
    group = hybrid_shard_group(framework, zero, tp, dp * cp, cluster.gpus_per_node, ep=ep, cp=cp)
    # FSDP's hybrid sharding, where the data-parallel group spans nodes
    if group and rng.random() < 0.5:
        layout = replace(layout, shard_group=group)
    if layout_problems(shape, method, cluster, layout):
        return None
    return Case(model, method, cluster, layout)


def _estimate(case: Case) -> Estimate | None:
    if layout_problems(shape_of(case.model), case.method, case.cluster, case.layout):
        return None
    return estimate(case.model, case.method, case.cluster, case.layout)


Variant = Callable[[Case], Case | None]


def _with(case: Case, **fields: object) -> Case:
    return replace(case, layout=replace(case.layout, **fields))


def _full_shard(case: Case) -> Case | None:
    """The full shard in place of a hybrid one: the states over every data-parallel rank, not one
    node's."""
    return _with(case, shard_group=None) if case.layout.shard_group else None


def _more_recompute(case: Case) -> Case | None:
    order = RECOMPUTE_ORDER
    if case.layout.recompute not in order or case.layout.recompute == order[-1]:
        return None
    return _with(case, recompute=order[order.index(case.layout.recompute) + 1])


def _higher_zero(case: Case, below_three: bool = True) -> Case | None:
    lay = case.layout
    stages = [z for z in framework_zero(lay.framework, lay.pp) if z > lay.zero]
    if (
        not stages
        or lay.zero not in FRAMEWORK_ZERO[lay.framework]
        or (stages[0] == 3) == below_three
    ):
        return None
    return _with(case, zero=stages[0])


def _zero_three(case: Case) -> Case | None:
    """ZeRO-3 from a lower stage: it shards the weights but adds the gathered layers' prefetch
    buffers, which outweigh the saving where few ranks share the weights (experts over dp / ep = 1
    rank, a 1B model under QLoRA), so only the model states must not grow."""
    return _higher_zero(case, below_three=False)


def _more_traffic_zero(case: Case) -> Case | None:
    """A ZeRO stage that only adds traffic, the optimizer step sharded alike: ZeRO-2 -> 3 on FSDP
    (parameters gathered again for every pass), ZeRO-1 -> 2 on DeepSpeed (gradients reduced every
    micro-batch, not once per step). Not DeepSpeed's ZeRO-2 -> 3: stage 3 also turns on
    `overlap_comm` (Stack.overlaps_unsharded_reduction), so it moves its collectives off the
    compute stream as well as adding some, and may be the faster."""
    lay = case.layout
    stages = framework_zero(lay.framework, lay.pp)
    step = {"fsdp": {2: 3}, "deepspeed": {1: 2}}.get(lay.framework, {}).get(lay.zero)
    return _with(case, zero=step) if step in stages and not lay.state_offload else None


def _fp8(case: Case) -> Case | None:
    if case.layout.precision != "bf16" or not case.cluster.gpu.peak_tflops.fp8:
        return None
    return _with(case, precision="fp8")


def _lighter_optimizer(case: Case) -> Case | None:
    options = OPTIMIZERS_LIGHTER.get(case.layout.optimizer)
    if not options or case.layout.framework == "megatron":
        return None
    # (a stable pick: str hashes differ between processes, and a seed must reproduce its draws)
    return _with(case, optimizer=options[zlib.crc32(case.label().encode()) % len(options)])


def _paged(case: Case) -> Case | None:
    """8-bit AdamW's states paged: on the GPU while they fit the card, else in host memory,
    stepped across PCIe."""
    return (
        _with(case, optimizer="paged_adam_8bit") if case.layout.optimizer == "adam_8bit" else None
    )


def _smaller_micro_batch(case: Case) -> Case | None:
    """One sequence fewer per micro-batch, where both accumulate gradients over several
    micro-batches (the first accumulation step adds FSDP's unsharded gradient buffer) and no
    pipeline keeps several in flight (a smaller last micro-batch can leave more sequences in
    flight)."""
    lay = case.layout
    if lay.micro_batch == 1 or lay.pp > 1 or lay.micro_batches < 2:
        return None
    return _with(case, micro_batch=lay.micro_batch - 1)


def _shorter_sequence(case: Case) -> Case | None:
    lay = case.layout
    return _with(case, seq_len=lay.seq_len // 2) if lay.seq_len >= 2048 else None


def _leaner_loss(case: Case) -> Case | None:
    """plain -> chunked; chunked -> fused under adapters without tensor parallelism only: a fused
    linear cross-entropy holds the output layer's whole weight gradient from the forward pass on
    (Liger), more than a short micro-batch's logits, and the gradient of its input (tokens x
    hidden), more than the vocabulary-parallel logits of a 32k vocabulary over tp = 8."""
    leaner = LOSS_LEANER.get(case.layout.loss)
    if leaner is None or case.layout.framework == "megatron":
        return None
    if leaner == "fused" and (case.method not in ("lora", "qlora") or case.layout.tp > 1):
        return None
    return _with(case, loss=leaner)


def _fused_kernels(case: Case) -> Case | None:
    lay = case.layout
    return (
        _with(case, fused_modules=True)
        if lay.framework != "megatron" and not lay.fused_modules
        else None
    )


def _flash(case: Case) -> Case | None:
    return None if case.layout.flash_attention else _with(case, flash_attention=True)


def _eager_attention(case: Case) -> Case | None:
    return _with(case, flash_attention=False) if case.layout.flash_attention else None


def _sequence_parallel(case: Case) -> Case | None:
    lay = case.layout
    return _with(case, sequence_parallel=True) if lay.tp > 1 and not lay.sequence_parallel else None


def _lower_rank(case: Case) -> Case | None:
    rank = case.layout.lora_rank
    return _with(case, lora_rank=rank // 2) if rank and rank >= 2 else None


def _higher_rank(case: Case) -> Case | None:
    rank = case.layout.lora_rank
    return _with(case, lora_rank=rank * 2) if rank else None


def _lighter_method(case: Case) -> Case | None:
    """The next lighter method on the same layout. Not for an MoE model sharded at ZeRO 1 or 2 (or
    split by expert parallelism): its LoRA adapts every expert, and those adapters' weights, which
    ZeRO below 3 does not shard, can outweigh a full fine-tune's gradients and optimizer states
    sharded over a large data-parallel group (Qwen3 30B-A3B, 128 experts, over 128 ranks at ZeRO-2:
    57.50 GiB of states against 57.46). Nor LoRA -> QLoRA where peft would upcast the unquantized
    part to fp32 (`upcasts_unquantized`: eager modules under autocast): a pipeline stage holding a
    large embedding and few layers then holds more (Llama 3.2 1B, 4 of 16 layers with the 128k
    embedding: the fp32 embedding's 0.5 GiB more outweighs the 4-bit layers' 0.4 GiB less)."""
    lighter = METHOD_LIGHTER.get(case.method)
    moe = shape_of(case.model).is_moe
    if lighter is None or case.layout.ep > 1 or (moe and case.layout.zero in (1, 2)):
        return None
    rank = case.layout.lora_rank or 16
    layout = replace(case.layout, lora_rank=rank)
    if upcasts_unquantized(lighter, layout) and layout.pp > 1:
        return None
    return replace(case, method=lighter, layout=layout)


def _cpu_offload(case: Case) -> Case | None:
    return None if case.layout.state_offload else _with(case, state_offload=True)


def _more_recompute_deep(case: Case) -> Case | None:
    """More recomputation on stages of at least 8 layers: with a few layers a stage, rebuilding one
    whole layer's activations in the backward pass (an eager layer's every intermediate) holds about
    as much as op-level selective checkpointing keeps of all of them (a 7B QLoRA at 4 layers a
    stage: 0.4% more). Nor with tensor parallelism but no sequence parallelism: the rebuilt layer's
    norm inputs and outputs are then whole on every tensor-parallel rank, where the matmul outputs
    selective checkpointing keeps are split (Mixtral QLoRA at tp 8, 8 layers a stage: 3.87 GiB
    against 3.72; seed 36)."""
    layers = shape_of(case.model).layers // case.layout.pp
    replicated = case.layout.tp > 1 and not case.layout.sequence_parallel
    return _more_recompute(case) if layers >= 8 and not replicated else None


def _more_recomputed_layers(case: Case) -> Case | None:
    lay = case.layout
    if lay.framework != "megatron" or lay.recompute != "full":
        return None
    chunk = shape_of(case.model).layers // (lay.pp * lay.virtual_pipeline)
    if chunk < 2:
        return None
    current = lay.recompute_layers or chunk
    return _with(case, recompute_layers=max(1, current // 2)) if current > 1 else None


def _faster_fabric(case: Case) -> Case | None:
    cluster = case.cluster
    if cluster.gpus <= cluster.gpus_per_node:
        return None
    return replace(
        case, cluster=replace(cluster, fabric_gbps_per_gpu=cluster.fabric_gbps_per_gpu * 2)
    )


def _faster_gpu(case: Case, **update: object) -> Case:
    gpu = case.cluster.gpu.model_copy(update=update)
    return replace(case, cluster=replace(case.cluster, gpu=gpu))


def _more_memory_bandwidth(case: Case) -> Case | None:
    bandwidth = case.cluster.gpu.memory_bandwidth_gb_per_s
    return _faster_gpu(case, memory_bandwidth_gb_per_s=bandwidth * 2) if bandwidth else None


def _higher_peak(case: Case) -> Case | None:
    """Twice the card's peak at every precision: more compute, less of it to hide traffic behind,
    never a longer step (what compute no longer hides is at most what it saved)."""
    peak = case.cluster.gpu.peak_tflops
    doubled = peak.model_copy(update={name: value * 2 for name, value in peak.model_dump().items()
                                      if isinstance(value, (int, float)) and value})
    return _faster_gpu(case, peak_tflops=doubled)


def _larger_batch(case: Case) -> Case | None:
    return _with(case, global_batch=case.layout.global_batch * 2)


def _twice_the_replicas(case: Case) -> Case | None:
    """Twice the data-parallel ranks, each with the same work (weak scaling), from at least two (one
    rank has no data-parallel buffers or traffic at all): ZeRO shards over more of them."""
    lay = case.layout
    if lay.gpus * 2 > max(GPU_COUNTS) or lay.dp < 2:
        return None
    cluster = Cluster.of(case.cluster.gpu, lay.gpus * 2)
    return replace(
        case, cluster=cluster, layout=replace(lay, dp=lay.dp * 2, global_batch=lay.global_batch * 2)
    )


def _split_twice(case: Case, name: str) -> Case | None:
    """Twice `name`'s parallelism on the same GPUs, the data-parallel ranks halved, where nothing
    shards over them (ZeRO-0: the states do not grow back as the shards get fewer) and no pipeline
    runs (fewer replicas take more micro-batches each, and a pipeline keeps up to pp of them in
    flight)."""
    lay = case.layout
    half = lay.dp // 2
    if lay.zero != 0 or lay.pp > 1 or lay.dp % 2 or lay.global_batch % half:
        return None
    if name == "tp" and not lay.sequence_parallel and lay.tp > 1:
        return None  # (without sequence parallelism the norms' activations are not split)
    if lay.ep > 1 and (lay.dp // 2) % lay.ep:
        return None
    return _with(case, **{name: getattr(lay, name) * 2, "dp": lay.dp // 2,
                          "sequence_parallel": lay.sequence_parallel or name == "tp"})


def _twice_the_tp(case: Case) -> Case | None:
    return _split_twice(case, "tp")


def _twice_the_cp(case: Case) -> Case | None:
    return _split_twice(case, "cp")


def _twice_the_ep(case: Case) -> Case | None:
    """Twice the expert parallelism over the same data-parallel ranks: each holds half the experts.
    Below ZeRO-3 (which already shards the experts' weights over the same ranks: the states stay,
    the all-to-all buffers come on top)."""
    lay = case.layout
    shape = shape_of(case.model)
    if (
        not shape.is_moe
        or case.method in ("lora", "qlora")
        or lay.zero == 3
        or lay.dp % (lay.ep * 2)
        or shape.moe_experts % (lay.ep * 2)
    ):
        return None
    return _with(case, ep=lay.ep * 2)


def _twice_the_replicas_unsharded(case: Case) -> Case | None:
    """The same at ZeRO-0, where every rank steps the whole optimizer (ZeRO shards that work too, so
    it can make more replicas faster per GPU): no collective gets faster with more ranks."""
    return _twice_the_replicas(case) if case.layout.zero == 0 else None


def _memory(est: Estimate) -> float:
    return est.memory.total_gib


def _states(est: Estimate) -> float:
    """Weights, gradients and optimizer states: a lighter method's activations may be larger (peft's
    eager LoRA layers save a cast copy of their input, measured on an H200), its states never."""
    return est.memory.weights_gib + est.memory.gradients_gib + est.memory.optimizer_gib


def _step_s(est: Estimate) -> float:
    return est.step_time_s


def _tokens_per_gpu(est: Estimate) -> float:
    return est.tokens_per_s_per_gpu


# (name, variant, quantity, direction): the variant's quantity must be <= (-1) or >= (+1) the
# base's.
CHECKS: tuple[tuple[str, Variant, Callable[[Estimate], float], int], ...] = (
    ("memory: more recomputation", _more_recompute_deep, _memory, -1),
    ("memory: ZeRO stage 0 -> 1 -> 2", _higher_zero, _memory, -1),
    ("model states: ZeRO-3", _zero_three, _states, -1),
    ("memory: fp8 instead of bf16", _fp8, _memory, -1),
    ("memory: lighter optimizer", _lighter_optimizer, _memory, -1),
    ("memory: paged 8-bit AdamW", _paged, _memory, -1),
    ("memory: smaller micro-batch", _smaller_micro_batch, _memory, -1),
    ("memory: half the sequence", _shorter_sequence, _memory, -1),
    ("memory: leaner loss", _leaner_loss, _memory, -1),
    ("memory: fused kernels", _fused_kernels, _memory, -1),
    ("memory: flash attention", _flash, _memory, -1),
    ("memory: sequence parallelism", _sequence_parallel, _memory, -1),
    ("memory: lower LoRA rank", _lower_rank, _memory, -1),
    ("model states: lighter method", _lighter_method, _states, -1),
    ("memory: CPU offload", _cpu_offload, _memory, -1),
    ("memory: full shard instead of hybrid", _full_shard, _memory, -1),
    ("memory: more recomputed layers", _more_recomputed_layers, _memory, +1),
    ("time: more recomputation", _more_recompute, _step_s, +1),
    ("time: a ZeRO stage that adds traffic", _more_traffic_zero, _step_s, +1),
    ("time: eager attention", _eager_attention, _step_s, +1),
    ("time: higher LoRA rank", _higher_rank, _step_s, +1),
    ("time: CPU offload", _cpu_offload, _step_s, +1),
    ("time: paged 8-bit AdamW", _paged, _step_s, +1),
    ("time: faster fabric", _faster_fabric, _step_s, -1),
    ("time: fused kernels", _fused_kernels, _step_s, -1),
    ("time: twice the memory bandwidth", _more_memory_bandwidth, _step_s, -1),
    ("time: twice the GPU's peak", _higher_peak, _step_s, -1),
    ("tokens/s/GPU: larger global batch", _larger_batch, _tokens_per_gpu, +1),
    ("memory: twice the replicas", _twice_the_replicas, _memory, -1),
    ("memory: tp x 2, dp / 2, ZeRO-0", _twice_the_tp, _memory, -1),
    ("memory: cp x 2, dp / 2, ZeRO-0", _twice_the_cp, _memory, -1),
    ("memory: twice the expert parallelism", _twice_the_ep, _memory, -1),
    (
        "tokens/s/GPU: twice the replicas, ZeRO-0",
        _twice_the_replicas_unsharded,
        _tokens_per_gpu,
        -1,
    ),
)


SEARCH_FIELDS = {
    "tp": (1, 2, 4, 8),
    "pp": (1, 2, 4),
    "zero": (0, 1, 2, 3),
    "recompute": RECOMPUTE_ORDER,
    "micro_batch": (1, 2, 3, 4, 8),
    "virtual_pipeline": (1, 2),
    "cp": (1, 2),
    "hybrid_shard": (True, False),
}
"""Fields the search chooses over every value listed here (the stack is searched among those the
method makes sensible: fixing it may reach a layout the search leaves out on purpose). Context
parallelism is searched from LONG_SEQUENCE tokens with at least MIN_TOKENS_PER_CP_RANK per rank: cp
2 is fixed only there."""


def search_case(
    rng: random.Random, catalog: object, *optimizers: str
) -> tuple[ModelCard, str, Cluster, LayoutSpec]:
    """A random search to run: model, method, cluster and spec (at one of `optimizers` where
    given)."""
    model = catalog.model(rng.choice(MODELS))  # type: ignore[attr-defined]
    cluster = Cluster.of(catalog.gpu(rng.choice(GPUS)), rng.choice(GPU_COUNTS))  # type: ignore[attr-defined]
    method = rng.choice(METHODS)
    spec = LayoutSpec(seq_len=rng.choice(SEQ_LENS), global_batch=rng.choice((None, 64, 256)),
                      memory_headroom=0.08)
    return (
        model,
        method,
        cluster,
        replace(spec, optimizer=rng.choice(optimizers)) if optimizers else spec,
    )


def search_pair(rng: random.Random, catalog: object) -> tuple[str, Any, Any] | None:
    """(the fixed field and value, the free search, the search with it fixed), where the fixed
    one is valid."""
    model, method, cluster, spec = search_case(rng, catalog)
    name = rng.choice(sorted(SEARCH_FIELDS))
    value = rng.choice(SEARCH_FIELDS[name])
    if name == "cp" and spec.seq_len < max(LONG_SEQUENCE, 2 * MIN_TOKENS_PER_CP_RANK):
        return None
    try:
        fixed = search_layout(model, method, cluster, replace(spec, **{name: value}))
    except ValueError:
        return None
    free = search_layout(model, method, cluster, spec)
    label = (
        f"{model.id} {method} {cluster.gpus}x{cluster.gpu.id} seq={spec.seq_len} "
        f"gb={spec.global_batch}"
    )
    return f"{name}={value} ({label})", free, fixed


def _offloads(est: Estimate | None) -> bool:
    return est is not None and (est.layout.state_offload or est.layout.host_activations)


def check_searches(rng: random.Random, catalog: object, count: int) -> tuple[int, int, int]:
    """Fixing a field the search chooses never finds a faster fitting layout, nor one that fits
    where the free search found none: what the fixed search reaches, the free one considered.
    Offloading to the host (model states or activations) is the search's last resort, taken only
    where nothing fits without it (its speed rests on an assumed host bandwidth, and the host memory
    is assumed), and searched with whole-layer checkpointing as the offloading stacks run it: a
    fixed field that offloads and comes out faster is counted apart. (pairs, broken, faster only by
    offloading)"""
    pairs = broken = by_offload = 0
    while pairs < count:
        drawn = search_pair(rng, catalog)
        if drawn is None:
            continue
        label, free, fixed = drawn
        pairs += 1
        if fixed.best is None:
            continue
        if _offloads(fixed.best) and free.best is not None:
            by_offload += fixed.best.tokens_per_s > free.best.tokens_per_s
            continue
        if free.best is None or free.best.tokens_per_s < fixed.best.tokens_per_s * (
            1 - SEARCH_TOLERANCE
        ):
            broken += 1
            if broken <= 5:
                got = (
                    "nothing"
                    if free.best is None
                    else f"{free.best.tokens_per_s:.5g} ({free.best.layout.short()})"
                )
                print(f"search: fixing {label} found {fixed.best.tokens_per_s:.5g} tok/s "
                      f"({fixed.best.layout.short()}), the free search {got}")
    return pairs, broken, by_offload


def check_more_memory(rng: random.Random, catalog: object, count: int) -> tuple[int, int, int]:
    """The free search on a card and on the same card with 1.5x its memory, at a random optimizer
    (paged 8-bit AdamW included): the larger card's fastest fitting layout is never slower, nor
    missing. Where the smaller card's is offloaded (to the host: the search's last resort) and
    faster, it is counted apart. (pairs, broken, faster only by offloading)"""
    pairs = broken = by_offload = 0
    while pairs < count:
        model, method, cluster, spec = search_case(
            rng, catalog, "adam", "adam_8bit", "paged_adam_8bit"
        )
        gpu, gpus = cluster.gpu, cluster.gpus
        try:
            small = search_layout(model, method, cluster, spec).best
            large = search_layout(model, method, Cluster.of(gpu.model_copy(
                update={"memory_gib": gpu.memory_gib * 1.5}), gpus), spec).best
        except ValueError:
            continue
        pairs += 1
        if small is None:
            continue
        if _offloads(small) and large is not None and not _offloads(large):
            by_offload += small.tokens_per_s > large.tokens_per_s
            continue
        if large is None or large.tokens_per_s < small.tokens_per_s * (1 - SEARCH_TOLERANCE):
            broken += 1
            if broken <= 5:
                got = (
                    "nothing"
                    if large is None
                    else f"{large.tokens_per_s:.5g} ({large.layout.short()})"
                )
                print(f"search: {model.id} {method} {gpus}x{gpu.id} seq={spec.seq_len} "
                      f"gb={spec.global_batch} {spec.optimizer}: {small.tokens_per_s:.5g} tok/s "
                      f"({small.layout.short()}), with 1.5x the memory {got}")
    return pairs, broken, by_offload


def self_check(est: Estimate) -> list[str]:
    """What must hold of any one estimate."""
    problems = [f"memory.{k} = {v:.3g} < 0" for k, v in est.memory.to_dict().items() if v < 0]
    problems += [f"time.{k} = {v:.3g} < 0" for k, v in est.time.to_dict().items() if v < 0]
    if est.mfu > 1.0:
        problems.append(f"mfu {est.mfu:.2f} above the card's peak")
    if est.fits != (est.memory.total_gib <= est.gpu_memory_gib):
        problems.append("fits disagrees with the memory total")
    m = est.memory
    if (
        not m.weights_gib + m.gradients_gib + m.optimizer_gib - 1e-9
        <= est.memory_floor_gib
        <= m.total_gib + 1e-9
    ):
        problems.append(f"memory floor {est.memory_floor_gib:.3g} GiB outside the model states and "
                        "the total")
    if est.fits and not est.fits_card:
        problems.append("fits the card with room but not at its limit")
    lo, hi = est.tokens_per_s_range
    if not lo <= est.tokens_per_s <= hi:
        problems.append(f"tokens/s {est.tokens_per_s:.4g} outside its band ({lo:.4g}, {hi:.4g})")
    mlo, mhi = est.memory_gib_range
    if not mlo <= est.memory.total_gib <= mhi:
        problems.append(
            f"memory {est.memory.total_gib:.4g} outside its band ({mlo:.4g}, {mhi:.4g})"
        )
    run = est.run(RUN_TOKENS)
    steady_h = RUN_TOKENS / est.tokens_per_s / 3600
    if not steady_h * (1 - 1e-9) <= run.failure_free_hours <= run.hours:
        problems.append(f"run: {run.failure_free_hours:.4g} h without failures, {run.hours:.4g} h "
                        f"with them, below the {steady_h:.4g} h its steps take")
    if abs(run.gpu_hours - run.hours * est.cluster.gpus) > 1e-9 * run.gpu_hours:
        problems.append(f"run: {run.gpu_hours:.4g} GPU-hours, not {run.hours:.4g} h x "
                        f"{est.cluster.gpus} GPUs")
    if not run.hours_range[0] <= run.hours <= run.hours_range[1]:
        problems.append(f"run: {run.hours:.4g} h outside its band {run.hours_range}")
    return problems


def _broken(base: float, variant: float, direction: int, relative: bool, tolerance: float) -> bool:
    slack = tolerance * abs(base) if relative else MEMORY_TOLERANCE_GIB
    return variant > base + slack if direction < 0 else variant < base - slack


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--searches", type=int, default=200, help="free/fixed search pairs")
    args = parser.parse_args(argv)
    rng = random.Random(args.seed)
    catalog = builtin_catalog()
    checked: Counter[str] = Counter()
    broken: Counter[str] = Counter()
    shown: Counter[str] = Counter()
    drawn = 0
    while drawn < args.count:
        case = draw(rng, catalog)
        if case is None:
            continue
        drawn += 1
        base = estimate(case.model, case.method, case.cluster, case.layout)
        for problem in self_check(base):
            broken["self: " + problem.split(" ")[0]] += 1
            print(f"self-check: {problem}\n  {case.label()}")
        for name, variant_of, quantity, direction in CHECKS:
            variant = variant_of(case)
            other = _estimate(variant) if variant is not None else None
            if other is None or (
                variant_of is _cpu_offload and any("stay on the GPU" in n for n in other.notes)
            ):
                continue  # (offload asked for where the host cannot take the states: nothing moves)
            checked[name] += 1
            before, after = quantity(base), quantity(other)
            if _broken(before, after, direction, relative=quantity not in (_memory, _states),
                       tolerance=TOLERANCE.get(name, TIME_TOLERANCE)):
                broken[name] += 1
                shown[name] += 1
                if shown[name] <= 3:
                    print(f"{name}: {before:.4g} -> {after:.4g}\n  base:    {case.label()}\n  "
                          f"variant: {variant.label()}")  # type: ignore[union-attr]
    search_pairs, search_broken, by_offload = check_searches(rng, catalog, args.searches)
    if search_broken:
        broken["search: a fixed field beats the free search"] += search_broken
    memory_pairs, memory_broken, memory_by_offload = check_more_memory(
        rng, catalog, args.searches // 2
    )
    if memory_broken:
        broken["search: more memory, a slower best layout"] += memory_broken
    print(f"\n{drawn} random layouts (seed {args.seed})")
    print(f"{'invariant':40s} {'pairs':>6s} {'broken':>7s}")
    for name, *_ in CHECKS:
        print(f"{name:40s} {checked[name]:6d} {broken[name]:7d}")
    print(f"{'search: fixing a field never beats it':40s} {search_pairs:6d} {search_broken:7d}")
    print("  (fixed fields that beat it only by offloading, the search's last resort: "
          f"{by_offload})")
    print(f"{'search: more memory never slower':40s} {memory_pairs:6d} {memory_broken:7d}")
    print("  (smaller cards faster only by offloading, the search's last resort: "
          f"{memory_by_offload})")
    for name in sorted(k for k in broken if k.startswith("self:")):
        print(f"{name:40s} {'':6s} {broken[name]:7d}")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
