"""Layout search: the fastest valid layout that fits, for the fields the user left open.

The global batch is a training hyper-parameter, not a search variable: it comes from the spec, else
from `default_global_batch` (published recipes by model size), and only the layout is searched
under it. A layout needs dp <= global batch (each replica gets whole sequences).

Candidates: tp over the divisors of the GPU count that fit in one node and divide the attention heads
(and are compatible with the KV heads; one that does not divide the node, such as 3 on 8-GPU nodes, is
timed on its groups that straddle two nodes, topology.group_link); cp (context parallelism, ring
attention) over 1, 2, 4, 8 for sequences of LONG_SEQUENCE tokens or more, keeping
MIN_TOKENS_PER_CP_RANK tokens per rank (1 otherwise unless given); pp over the divisors of the rest
(at most one layer per stage; stages may be uneven); dp = gpus / (tp pp cp); for MoE models in full
training, ep (expert parallelism) over the powers of two up to 64 that divide dp and the experts; the
framework and its ZeRO stage (Megatron: 0 or 1 = distributed optimizer; FSDP: 2 = SHARD_GRAD_OP or 3 =
FULL_SHARD; DeepSpeed only when asked, since in this model it is FSDP with more gradient traffic);
recompute none, selective (FSDP's op-level policy; for Megatron only when asked, since with
FlashAttention it stores what "none" stores), full (Megatron: also its block method, the fewest layers
per chunk that fit) or offload (full_offload too, where nothing else fits, on a layout with no tensor,
pipeline or context parallelism the search chose: LLaMA-Factory's path); interleaved pipeline with 1, 2
or 4 virtual stages and the counts that divide a stage (also when pp is fixed), each only where the
framework's stack can split the layers so
(stages.py); and the micro-batch: every size from 1 to the per-replica batch is allowed on FSDP (a last
smaller micro-batch where it does not divide, as Composer runs it), found by bisection on memory (memory
never falls as the micro-batch grows), then the few sizes around the step-time optimum are timed: the
balanced size with as few micro-batches as the largest that fits allows, and the largest that divides the
replica's batch (no last smaller micro-batch); under pipelining also sizes of about 1, 2, 4 and 8 (fewer,
larger micro-batches lengthen the bubble); where the largest size pages a paged optimizer's states to host
memory, its halvings too (a smaller micro-batch may keep them on the GPU); each checked for memory.
Megatron, DeepSpeed and the one-click Hugging Face path need the micro-batches to fill the per-replica
batch exactly, so there the sizes are its divisors.

Pruning (none of it changes the answer): every combination of (tp, pp, cp), expert parallelism,
framework and ZeRO stage, recomputation and virtual stages has a throughput bound (compute,
recomputation and tensor-parallel traffic at the largest micro-batch, the smallest bubble, no
data-parallel traffic); combinations are tried best bound first and the search stops at the first
that cannot beat the best found. Within one, micro-batch sizes whose bubble alone rules them out are
skipped, and a heavier recomputation or ZeRO-3 is skipped where the lighter one fits every size.
Results are cached per (model, method, cluster, spec).
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, TypeVar

from plan.models.methods import DPO_METHODS, QLORA_FP8
from plan.models.model_card import ModelCard
from plan.models.scenario import hybrid_shard_conflict
from plan.planner.estimate.cluster import Cluster
from plan.planner.estimate.estimator import _estimate, layout_problems
from plan.planner.estimate.flops import ModelShape, model_key, shape_of
from plan.planner.estimate.memory import chunk_layers, memory_per_gpu, states_floor_gib
from plan.planner.estimate.stages import split_problem
from plan.planner.estimate.store import store
from plan.planner.estimate.timing import (
    MicroBatchCompute,
    Rates,
    dp_exposed_s,
    ep_exposed_s,
    micro_batch_compute,
    optimizer_and_paging_s,
    p2p_s,
    rates,
    recompute_s,
    sharding_links,
    stage_lower_bound_s,
    stage_recompute_s,
    step_time,
)
from plan.planner.estimate.topology import GroupLink, group_link, layout_links
from plan.planner.estimate.types import (
    ADAPTER_METHODS,
    DEEPSPEED_OFFLOAD_OPTIMIZERS,
    EXACT_BATCH_FRAMEWORKS,
    EXPERTS_NOT_SPLIT_ON_DEEPSPEED,
    EXPERTS_SPLIT_BY_TORCHTITAN,
    FRAMEWORK_ZERO,
    MEGATRON_CP_SEQUENCE,
    MEGATRON_ONLY_OPTIMIZERS,
    OPTIMIZER_NAME_OF,
    PRETRAIN_METHODS,
    PYTORCH_ONLY_OPTIMIZERS,
    QLORA_METHODS,
    Estimate,
    Layout,
    LayoutSpec,
    expert_parallel_gap,
    framework_zero,
    hybrid_shard_group,
    interleaving_refused,
    megatron_splits_sequence,
    offloads_states,
    pipeline_fp8_gap,
    ring_attention_gap,
    ulysses_fp8_gap,
    ulysses_head_gap,
)

FINETUNE_SEQUENCES_PER_STEP = 128
"""Sequences per optimizer step for fine-tuning, LoRA and QLoRA when the job states none (Stanford Alpaca's
batch size 128, tatsu-lab/stanford_alpaca README); capped by `LayoutSpec.batch_limit`, the job's whole data."""
VIRTUAL_STAGES = (1, 2, 4)
"""Virtual pipeline stages per rank always searched (with pp > 1); `virtual_stage_candidates` adds the
largest counts that divide a stage's layers, which Megatron's even splits need (NeMo runs 20 on 80
layers over 4 stages); each is kept only where the framework's stack can split the layers so
(stages.py)."""
EXTRA_VIRTUAL_STAGES = 2
"""Of the counts above 4 that divide a stage's layers, the largest this many are searched: the bubble
((pp - 1) / v micro-batches) and the first stage's in-flight activations (pp + (pp - 1) / v
micro-batches) both fall as v grows and only the point-to-point transfers grow, so the best count is
a large one; the smaller ones only cost search time."""


CONTEXT_PARALLEL = (1, 2, 4, 8)
EXPERT_PARALLEL = (1, 2, 4, 8, 16, 32, 64)
"""Expert-parallel sizes searched for MoE models (full training; LoRA keeps experts whole)."""
LONG_SEQUENCE = 8192
"""Sequences at least this long also search context parallelism (shorter ones keep cp = 1 unless
given: splitting a short sequence only adds K/V traffic). 8k: NeMo's published performance runs use
context parallelism 2 at 8,192 tokens (validation rows NEMO-11, Llama 3 8B on 8 H100s, and NEMO-12,
Llama 3 70B at tp 4 x pp 4), where it splits the activations that would otherwise need recomputation and
gives each replica more micro-batches to fill the pipeline. The ring may cross nodes, as Llama 3's
131k-token stage ran it (tp 8 x cp 16; Llama Team 2024, Table 4): its link is costed
(timing.cp_exposed_s)."""
MIN_TOKENS_PER_CP_RANK = 4096
"""The searched context parallelism leaves each rank at least this many tokens of the sequence, as every
published layout in bench/data does (NEMO-11/12: 8,192 / 2; TTT-P02/P03: 65,536 / 2 and 131,072 / 4;
Llama 3: 131,072 / 16): the ring's blocks shrink with it (smaller attention kernels, one exchange per
block), which the estimate does not charge below that."""
MAX_REJECTED_KEPT = 24
"""Rejected layouts a result keeps as examples: the first of each kind (`reasons` counts every one by
kind), at most this many. A sample, not the list: results travel through the persistent store, where
400 layouts per result made reading a warm cache cost more than the rest of a solve (medical_hybrid:
0.23 s to unpickle 501 results), and the first 24 of any kind still made a third of a cold run's
writing (medical_hybrid: 501 results, 0.07 -> 0.03 s)."""

PRETRAIN_TOKENS_PER_STEP = (
    (1e9, 2**19),    # < 1B: 0.5M tokens (GPT-3 125M-760M, Brown et al. 2020, table 2.1)
    (3e9, 2**20),    # < 3B: 1M (GPT-3 1.3B and 2.7B)
    (7e9, 2**21),    # < 7B: 2M (GPT-3 6.7B)
    (2e11, 2**22),   # 7B-200B: 4M (Llama 2 all sizes; Llama 3 8B/70B)
    # 200B and up: 16M (Llama 3.1 405B after its first 2.87T tokens, Llama 3 paper section 3.4.1; DeepSeek-V3
    # 671B ramps from 3,072 to 15,360 sequences of 4K, 12.6M -> 63M, DeepSeek-V3 technical report 4.2)
    (float("inf"), 2**24),
)
"""Tokens per optimizer step for pre-training and continued pre-training, by parameter count."""


@lru_cache(maxsize=4096)
def virtual_stage_candidates(layers: int, pp: int) -> tuple[int, ...]:
    """Virtual stages per rank worth searching for `layers` over pp stages: VIRTUAL_STAGES, the divisors
    of the layers per stage up to 4 and the largest EXTRA_VIRTUAL_STAGES above it (plain, or with the
    embedding and the loss counted as layers)."""
    if pp <= 1:
        return (1,)
    divisors = {d for total in (layers, layers + 2) if total % pp == 0 for d in _divisors(total // pp)
                if pp * d <= layers + 2}
    small = {d for d in divisors if d <= max(VIRTUAL_STAGES)}
    large = sorted(d for d in divisors if d > max(VIRTUAL_STAGES))[-EXTRA_VIRTUAL_STAGES:]
    return tuple(sorted({v for v in VIRTUAL_STAGES if pp * v <= layers} | small | set(large)))


def default_global_batch(method: str, seq_len: int, params: float = 7e9) -> int:
    """Sequences per step when the user gives none: pre-training by model size (PRETRAIN_TOKENS_PER_STEP),
    fine-tuning, LoRA and QLoRA FINETUNE_SEQUENCES_PER_STEP sequences."""
    if method in PRETRAIN_METHODS:
        tokens = next(t for limit, t in PRETRAIN_TOKENS_PER_STEP if params < limit)
        return max(1, round(tokens / seq_len))
    return FINETUNE_SEQUENCES_PER_STEP


def batch_for_replicas(target: int, dp: int) -> int | None:
    """The default batch rounded to the nearest multiple of dp (each replica gets whole sequences),
    or None when there are more replicas than sequences."""
    if dp > target:
        return None
    return max(dp, round(target / dp) * dp)


PIPELINE_MICRO_BATCHES = (1, 2, 4, 8)
"""Micro-batch sizes timed under pipelining, where small ones pay: the bubble is (pp - 1) / v
micro-batch times and in-flight memory grows with the size (Megatron and NeMo configurations use 1-4)."""


def dividing_sizes(replica_batch: int, limits: Iterable[int]) -> set[int]:
    """For each limit, the largest micro-batch at most that which divides the replica's batch (no last smaller
    micro-batch)."""
    divisors = _divisors(replica_batch)
    return {max(d for d in divisors if d <= limit) for limit in limits}


def micro_batch_candidates(replica_batch: int, largest_fitting: int, pp: int, exact: bool = False) -> tuple[int, ...]:
    """Micro-batch sizes worth timing (module docstring), largest first. `exact`: the stack needs
    micro-batch x accumulation steps = the per-replica batch (Megatron's `gbs % (mbs * dp) == 0`,
    DeepSpeed's train_batch_size, the Hugging Face Trainer), so only its divisors are sizes."""
    top = min(replica_batch, largest_fitting)
    pipelined = [k for k in PIPELINE_MICRO_BATCHES if k <= top]
    if exact:
        return tuple(sorted(dividing_sizes(replica_batch, [top] if pp == 1 else pipelined), reverse=True))
    # the balanced size: as few micro-batches as `top` allows, as even as sizes allow; and the largest size
    # that divides the replica's batch, where that is another: a last smaller micro-batch wastes GEMM
    # efficiency and hides less traffic behind its shorter backward pass, so more, even micro-batches
    # may be faster
    balanced = {-(-replica_batch // -(-replica_batch // k)) for k in ([top] if pp == 1 else pipelined)}
    return tuple(sorted(balanced | dividing_sizes(replica_batch, [top]), reverse=True))


@dataclass(frozen=True)
class SearchResult:
    """The fastest layout that fits (ties: less memory), or None; what was considered and rejected.

    `rejected` keeps the first (layout, reason) pair of each kind as examples (MAX_REJECTED_KEPT;
    `reasons` counts all of them by kind); `closest` is the least-memory layout when nothing fits; `searched`
    names the fields the search chose. `why(tp=8)` answers "why not TP=8?" in one sentence.
    """

    best: Estimate | None
    considered: int
    rejected: tuple[tuple[Layout, str], ...]
    reasons: dict[str, int]
    searched: tuple[str, ...]
    spec: LayoutSpec = field(default_factory=LayoutSpec)
    _model: ModelCard | None = field(default=None, repr=False, compare=False)
    _method: str = field(default="pretrain", repr=False, compare=False)
    _cluster: Cluster | None = field(default=None, repr=False, compare=False)

    @property
    def closest(self) -> Estimate | None:
        """The least-memory layout when nothing fits, None otherwise. Worked out on first use: the
        planner never asks, and most of a large model's searches on a few cards find nothing."""
        if self.best is not None or self._model is None or self._cluster is None:
            return None
        return _least_memory(_Key(model_key(self._model), self._method, self._cluster, self.spec, self._model))

    @property
    def least_memory(self) -> Estimate | None:
        """Alias of `closest`."""
        return self.closest

    def why(self, **fixed: Any) -> str:
        """Why the best layout does not have these values, e.g. `why(tp=8)` or `why(zero=3)`."""
        label = " ".join(f"{k}={v}" for k, v in fixed.items())
        best = self.best
        if best is not None and all(getattr(best.layout, k, None) == v for k, v in fixed.items()):
            return f"{label} is the chosen layout"
        if self._model is None or self._cluster is None:
            return f"{label}: no search context"
        spec_fields = {k: v for k, v in fixed.items() if hasattr(self.spec, k)}
        unknown = sorted(set(fixed) - set(spec_fields))
        if unknown:
            return f"{label}: cannot fix {', '.join(unknown)} (not a layout field)"
        try:
            other = search_layout(self._model, self._method, self._cluster, replace(self.spec, **spec_fields))
        except ValueError as exc:
            return f"{label} is invalid: {exc}"
        if other.best is None:
            if other.closest is not None:
                c = other.closest
                return (f"{label} does not fit: even the least-memory layout ({c.layout.short()}) needs "
                        f"{c.memory.total_gib:.1f} GiB > {self.spec.usable_gib(c.gpu_memory_gib):.1f} GiB usable")
            top = ", ".join(f"{r} ({n})" for r, n in other.reasons.items())
            return f"{label} has no valid layout: {top}"
        alt = other.best
        if best is None:
            return f"{label} fits ({alt.layout.short()}) although the searched spec found none"
        slower = best.tokens_per_s / alt.tokens_per_s - 1
        diffs = {k: alt.time.to_dict()[k] - best.time.to_dict()[k] for k in best.time.to_dict()}
        worst = max(diffs, key=lambda k: diffs[k])
        return (f"{label} is {slower:.0%} slower ({alt.tokens_per_s:,.0f} vs {best.tokens_per_s:,.0f} "
                f"tokens/s with {alt.layout.short()}); most of the difference is {worst} "
                f"(+{diffs[worst]:.3g} s per step)")


@dataclass(frozen=True)
class _Key:
    model_key: tuple[object, ...]
    method: str
    cluster: Cluster
    spec: LayoutSpec
    model: ModelCard = field(compare=False, hash=False)


def search_layout(model: ModelCard, method: str, cluster: Cluster, spec: LayoutSpec) -> SearchResult:
    """Fastest layout that fits for the fields `spec` leaves None (cached).

    Raises ValueError (naming the field) when the fixed fields can never run: unknown method or
    precision, a precision the GPU lacks, a lora rank with a full method, a fixed tp/pp/cp that does
    not divide the GPU count or the heads.
    """
    # Offloading only where nothing else fits, the model states' before the activations': CPU offload of
    # ZeRO-3's shards runs on DeepSpeed, FSDP, torchtitan, accelerate and LLaMA-Factory; activation offload
    # on torchtune alone, which `plan export` does not write for.
    states_searched = spec.state_offload is None
    activations_searched = spec.recompute is None and spec.offload
    plain = replace(spec, state_offload=bool(spec.state_offload), offload=spec.offload and not activations_searched)
    passes = [plain]
    if states_searched and not spec.hybrid_shard and (spec.virtual_pipeline or 1) == 1 and offloads_states(
            spec.framework or "fsdp", 3 if spec.zero is None else spec.zero, spec.tp or 1, spec.pp or 1,
            spec.optimizer):
        # (only ZeRO-3 on FSDP or DeepSpeed without tensor or pipeline parallelism offloads: the pass tries those;
        # a stated hybrid shard keeps its shards on the GPUs and a stated interleaving needs pipeline stages, so
        # where they do not fit nothing does)
        passes.append(replace(plain, state_offload=True, tp=1, pp=1, zero=3))
    if activations_searched:
        passes.append(replace(spec, state_offload=bool(spec.state_offload)))
    for spec_pass in passes[:-1]:
        result = _search(_Key(model_key(model), method, cluster, spec_pass, model))
        if result.best is not None:
            return result
    return _search(_Key(model_key(model), method, cluster, passes[-1], model))


def _stored_key(key: _Key) -> str:
    """Everything the search reads, as text: the shape, method, cluster, the GPU's whole catalog entry
    and the layout constraints (the code version is added by the store)."""
    return repr((key.model_key, key.method, key.cluster.key(), key.cluster.gpu.model_dump_json(), key.spec))


_SEARCHED_ZERO = {"megatron": (1,), "fsdp": (0, 2, 3), "deepspeed": (1, 2, 3)}
"""ZeRO stages searched per framework over more than one rank. Megatron's 2 and 3 (Megatron-FSDP) are
estimated where a job states them with framework megatron, never searched: no published run of that
stack calibrates them, and a row or job that names only a ZeRO stage of 2 or 3 ran FSDP or DeepSpeed.
Megatron's and DeepSpeed's ZeRO-1 moves what ZeRO-0 moves with less memory, so 0 is not searched there;
PyTorch has no ZeRO-1, and its replicated data parallelism (DDP, FSDP NO_SHARD) gathers nothing, which
is what LoRA and QLoRA over several GPUs usually run (their trainable states are small)."""


def _searched_frameworks(method: str, spec: LayoutSpec) -> tuple[str, ...]:
    """Frameworks searched when none is fixed: Megatron for its own options (block recomputation,
    the precision-aware optimizer; asked for by name, so kept for a PyTorch-only team too), FSDP for
    QLoRA, DPO (TRL, LLaMA-Factory's stage dpo, OpenRLHF: no Megatron stack of the reference trains it;
    Megatron-Bridge and mcore_adapter run pt/sft, launch-configs.md), the PyTorch optimizers, a chunked or
    fused loss and offloaded checkpoints (a job that names Liger's or Unsloth's loss or checkpointing runs a
    PyTorch stack) and for a team limited to PyTorch stacks, else both."""
    if spec.recompute_layers or spec.optimizer in MEGATRON_ONLY_OPTIMIZERS:
        return ("megatron",)
    if _megatron_left_out(method, spec):
        return ("fsdp",)
    return ("megatron", "fsdp")


def _megatron_left_out(method: str, spec: LayoutSpec) -> str:
    """Why `_searched_frameworks` leaves Megatron out for this job (it searches FSDP alone then), as a
    clause; '' when Megatron is searched."""
    if method in QLORA_METHODS:
        return "Megatron has no 4-bit QLoRA path"
    if method in DPO_METHODS:
        return "Megatron-Bridge and mcore_adapter train pt and sft, not DPO"
    if spec.optimizer in PYTORCH_ONLY_OPTIMIZERS:
        return f"Megatron has no {OPTIMIZER_NAME_OF[spec.optimizer]}"
    if spec.loss != "plain":
        return f"a {spec.loss} loss runs on the PyTorch stacks only"
    if spec.recompute == "full_offload":
        return "offloaded checkpoints run on the PyTorch stacks only"
    if spec.pytorch_stacks_only:
        return "a team with no ops skill is planned on the PyTorch stacks"
    return ""


def _frameworks(method: str, spec: LayoutSpec, shard_ranks: int, pp: int) -> tuple[tuple[str, int], ...]:
    """(framework, ZeRO stage) pairs to try with pp pipeline stages. Megatron has no 4-bit QLoRA path;
    DeepSpeed pipelines only at ZeRO 0 and 1 (types.framework_zero)."""
    fws = (spec.framework,) if spec.framework else _searched_frameworks(method, spec)
    options: list[tuple[str, int]] = []
    for fw in fws:
        if spec.zero is not None:
            searched_megatron_fsdp = fw == "megatron" and spec.zero >= 2 and spec.framework is None
            stages: tuple[int, ...] = ((spec.zero,) if spec.zero in FRAMEWORK_ZERO[fw]
                                       and not searched_megatron_fsdp else ())
        elif shard_ranks == 1:  # (one GPU shards nothing, but ZeRO-3 can still keep its states on the host)
            stages = tuple(z for z in ((0, 3) if spec.state_offload else (0,)) if z in FRAMEWORK_ZERO[fw])
        else:
            stages = _SEARCHED_ZERO[fw]
        options += [(fw, z) for z in stages if z in framework_zero(fw, pp)]
    return tuple(options)


HYBRID_SPLIT_GAP = "hybrid sharding needs the data-parallel ranks in whole nodes, two or more to a node"
"""Why a split (tp x pp x cp) leaves a stated hybrid shard nothing to run: its data-parallel ranks sit one to a
node (pp or tp x cp filling the node), or do not fill whole nodes (12 GPUs in nodes of 8)."""


def hybrid_shard_gap(spec: LayoutSpec, cluster: Cluster) -> str | None:
    """Why no layout of the spec can shard hybrid (`hybrid_shard_group`), where a stated field rules it out."""
    conflict = hybrid_shard_conflict(spec.framework, spec.zero, spec.state_offload)
    if conflict:
        return conflict
    if spec.pytorch_stacks_only:
        return ("a team kept to the one-click path runs LLaMA-Factory, whose sharding goes through DeepSpeed, "
                "which has no hybrid shard")
    if cluster.gpus <= cluster.gpus_per_node:
        return (f"the {cluster.gpus} GPUs fit one node of {cluster.gpus_per_node}: there are no nodes to "
                "replicate across")
    if spec.tp and (cluster.gpus_per_node % spec.tp or cluster.gpus_per_node // spec.tp < 2):
        return (f"tp {spec.tp} leaves fewer than two data-parallel ranks in a node of {cluster.gpus_per_node} to "
                "shard over")
    return None


def _hybrid_options(options: tuple[tuple[str, int], ...], spec: LayoutSpec, tp: int, cp: int, shard_ranks: int,
                    gpus_per_node: int) -> tuple[tuple[str, int, int], ...]:
    """Each (framework, ZeRO stage) with its shard groups: 0 (one group of all ranks), and the node's ranks
    where the layout can shard hybrid (`hybrid_shard_group`; not with the states offloaded to the host);
    spec.hybrid_shard True keeps only the hybrid ones (FSDP at ZeRO 2 or 3), False only 0. A team kept to the
    one-click path (pytorch_stacks_only: LLaMA-Factory's, whose sharding goes through DeepSpeed) has none."""
    out: list[tuple[str, int, int]] = []
    for fw, zero in options:
        group = (0 if spec.hybrid_shard is False or spec.state_offload or spec.pytorch_stacks_only
                 else hybrid_shard_group(fw, zero, tp, shard_ranks, gpus_per_node, cp=cp))
        if spec.hybrid_shard:
            groups: tuple[int, ...] = (group,) if group else ()
        else:
            groups = (0, group) if group else (0,)
        out += [(fw, zero, hs) for hs in groups]
    return tuple(out)


def _unrunnable(method: str, spec: LayoutSpec, framework: str, tp: int, pp: int, cp: int = 1,
                heads: int = 0) -> str | None:
    """Why no stack runs (framework, tp, pp, cp), or None. Megatron splits each sequence into 2 x cp chunks
    (types.MEGATRON_CP_SEQUENCE); the FSDP family has the gaps of `fsdp_stack_gap`, whether the search or
    the user put the split there (`_check_spec` refuses a stated one that no searched stack runs). A team
    limited to the PyTorch stacks (no ops skill) runs their plain, data-parallel path (LLaMA-Factory, the
    Hugging Face Trainer: ZeRO/FSDP sharding); a tensor or context parallelism the user fixed is kept, as
    DeepSpeed AutoTP and accelerate's parallelism config run it."""
    if framework == "megatron" and not megatron_splits_sequence(spec.seq_len, cp):
        return MEGATRON_CP_SEQUENCE
    split_gap = (ring_attention_gap(framework, cp, spec.flash_attention) or ulysses_head_gap(framework, heads, tp, cp)
                 or ulysses_fp8_gap(framework, spec.precision, cp) or pipeline_fp8_gap(framework, spec.precision, pp))
    if split_gap:
        return split_gap
    if framework != "fsdp":
        return None
    if (spec.framework is None and spec.pytorch_stacks_only
            and ((tp > 1 and spec.tp is None) or (cp > 1 and spec.cp is None))):
        return "the one-click PyTorch path is data-parallel only"
    gap = fsdp_stack_gap(method, spec.optimizer, spec.precision, tp, pp)
    return gap[1] if gap else None


def fsdp_stack_gap(method: str, optimizer: str, precision: str, tp: int, pp: int) -> tuple[str, str] | None:
    """(field, why) no FSDP-family stack runs this split, or None. The PyTorch stacks that train LoRA and
    QLoRA (torchtune, PEFT with accelerate, LLaMA-Factory's FSDP path) and DPO (TRL, LLaMA-Factory) have no
    pipeline parallelism, and torchtitan, which pipelines, has no adapters, no DPO loss and AdamW or Adam only
    (the other optimizers run on the Hugging Face path, which does not pipeline) in bf16 (its
    `mixed_precision_param` takes bfloat16 or float32, not fp16); Megatron-Bridge/NeMo
    pipeline LoRA (framework megatron). A 4-bit QLoRA base is sharded by FSDP/ZeRO-3 only: bitsandbytes'
    packed 4-bit layers are not sliced by tensor parallelism (LLaMA-Factory's AutoTP path; Megatron has no
    QLoRA), as the llamafactory export says."""
    if pp > 1 and optimizer != "adam":
        return "pp", "the one PyTorch stack that pipelines (torchtitan) runs AdamW or Adam only"
    if pp > 1 and precision == "fp16":
        return "pp", "the one PyTorch stack that pipelines (torchtitan) trains in bf16, not fp16"
    if pp > 1 and method in ADAPTER_METHODS:
        return "pp", "no FSDP-family stack pipelines LoRA/QLoRA"
    if pp > 1 and method in DPO_METHODS:
        return "pp", "no FSDP-family stack pipelines DPO (torchtitan, the one that pipelines, has no DPO loss)"
    if tp > 1 and method in QLORA_METHODS:
        return "tp", "no stack tensor-parallelizes a 4-bit QLoRA base"
    return None


CHECKPOINT_OFFLOAD_STACK = "offloaded checkpoints run on LLaMA-Factory's Hugging Face path (use_unsloth_gc)"
"""The one stack that offloads checkpoints, which each CHECKPOINT_OFFLOAD_ reason names first."""
CHECKPOINT_OFFLOAD_DATA_PARALLEL_ONLY = (f"{CHECKPOINT_OFFLOAD_STACK}, which has no tensor, pipeline, context or "
                                         "expert parallelism")
CHECKPOINT_OFFLOAD_FULL_SHARD_ONLY = (f"{CHECKPOINT_OFFLOAD_STACK}, whose multi-GPU sharding goes through DeepSpeed: "
                                      "no hybrid sharding")
CHECKPOINT_OFFLOAD_STATES_WITH_CPU_ADAM = (f"{CHECKPOINT_OFFLOAD_STACK}, which offloads model states through "
                                          "DeepSpeed's ZeRO-Offload, stepped by its CPU Adam only")
CHECKPOINT_OFFLOAD_NO_PURE_BF16_ZERO3 = (f"{CHECKPOINT_OFFLOAD_STACK}, which refuses pure BF16 AdamW (pure_bf16) "
                                         "with DeepSpeed ZeRO-3")


REPLICATED_SPLIT = ("tensor or context parallelism beside replicated (ZeRO-0) data parallelism: accelerate's "
                    "parallelism_config refuses it, and torchtitan, which runs it, has no adapters or DPO and "
                    "trains with AdamW or Adam in bf16 or fp8 only")


def _replicated_split_gap(method: str, spec: LayoutSpec, framework: str, zero: int, pair: _Pair) -> str | None:
    """Why no FSDP-family stack runs tp or cp > 1 over unsharded data-parallel replicas (launch-configs.md,
    accelerate: tp or cp with dp_replicate > 1 and dp_shard == 1 is refused) where torchtitan cannot run the
    job either (adapters, DPO, another optimizer than Adam, fp16: `fsdp_stack_gap`), or None."""
    if (framework == "fsdp" and zero == 0 and pair.dp > 1 and (pair.tp > 1 or pair.cp > 1)
            and (method in ADAPTER_METHODS or method in DPO_METHODS or spec.optimizer != "adam"
                 or spec.precision == "fp16")):
        return REPLICATED_SPLIT
    return None


ACTIVATION_OFFLOAD_NOT_PIPELINED = ("activation offload without recomputation is torchtune's policy, and torchtune "
                                   "does not pipeline or split experts")


def _offload_gap(recompute: str, tp: int, pp: int, cp: int, ep: int = 1) -> str | None:
    """Why no stack runs this recomputation policy on this split, or None: offloaded checkpoints are
    LLaMA-Factory's Hugging Face path (data parallel only); offloaded activations torchtune's (no pipeline, no
    expert parallelism)."""
    if recompute == "full_offload" and (tp > 1 or pp > 1 or cp > 1 or ep > 1):
        return CHECKPOINT_OFFLOAD_DATA_PARALLEL_ONLY
    if recompute == "offload" and (pp > 1 or ep > 1):
        return ACTIVATION_OFFLOAD_NOT_PIPELINED
    return None


OP_LEVEL_CHECKPOINTING = "selective recomputation on FSDP is torchtitan's op-level policy"


def selective_gap(method: str, optimizer: str, precision: str, framework: str,
                  unsharded_state_offload: bool = False) -> str | None:
    """Why no stack runs selective recomputation of this job on this framework, or None. Megatron's policy
    (the attention core) runs whatever Megatron trains. DeepSpeed, the Hugging Face Trainer, LLaMA-Factory,
    TRL and torchtune checkpoint whole layers (their exports refuse "selective"); torchtitan, whose op-level
    policy the FSDP estimate models, has no adapters, no DPO loss, AdamW or Adam only, bf16 only, and offloads
    the model states only where FSDP2 shards them over more than one rank (launch-configs.md, our exports)."""
    if framework == "megatron":
        return None
    if framework == "deepspeed":
        return "DeepSpeed checkpoints whole layers only (activation_checkpointing has no selective policy)"
    if method in ADAPTER_METHODS:
        return f"{OP_LEVEL_CHECKPOINTING}, and torchtitan has no LoRA/QLoRA"
    if method in DPO_METHODS:
        return f"{OP_LEVEL_CHECKPOINTING}, and torchtitan has no DPO loss"
    if optimizer != "adam":
        return f"{OP_LEVEL_CHECKPOINTING}, and torchtitan runs AdamW or Adam only"
    if precision == "fp16":
        return f"{OP_LEVEL_CHECKPOINTING}, and torchtitan trains in bf16, not fp16"
    if unsharded_state_offload:
        return (f"{OP_LEVEL_CHECKPOINTING}, and torchtitan offloads model states only where FSDP2 shards them "
                "over more than one rank")
    return None


def _uneven_micro_batch_gap(spec: LayoutSpec, framework: str, replica_batch: int) -> str | None:
    """Why a stated micro-batch cannot run on this stack with this replica batch, or None: Megatron and
    DeepSpeed take no smaller last micro-batch (EXACT_BATCH_FRAMEWORKS)."""
    if spec.micro_batch and framework in EXACT_BATCH_FRAMEWORKS and replica_batch % spec.micro_batch:
        return f"{framework} needs micro-batch x accumulation steps = each replica's share of the global batch"
    return None


def _recompute_gap(recompute: str, method: str, spec: LayoutSpec, framework: str, zero: int,
                   pair: _Pair, shard_group: int = 0, ep: int = 1) -> str | None:
    """Why no stack runs this recomputation policy on this combination, or None (`_offload_gap`,
    `selective_gap`: torchtitan offloads model states only where FSDP2 shards them over several ranks;
    offloaded checkpoints, LLaMA-Factory's, neither shard hybrid nor run pure BF16 AdamW on ZeRO-3)."""
    if recompute == "full_offload" and shard_group:
        return CHECKPOINT_OFFLOAD_FULL_SHARD_ONLY
    if recompute == "full_offload" and spec.optimizer == "adam_bf16" and zero == 3:
        return CHECKPOINT_OFFLOAD_NO_PURE_BF16_ZERO3
    if (recompute == "full_offload" and spec.state_offload and spec.optimizer not in DEEPSPEED_OFFLOAD_OPTIMIZERS
            and offloads_states(framework, zero, pair.tp, pair.pp, spec.optimizer)):
        return CHECKPOINT_OFFLOAD_STATES_WITH_CPU_ADAM
    if recompute != "selective":
        return _offload_gap(recompute, pair.tp, pair.pp, pair.cp, ep)
    unsharded_offload = (bool(spec.state_offload) and pair.dp * pair.cp == 1
                         and offloads_states(framework, zero, pair.tp, pair.pp, spec.optimizer))
    return selective_gap(method, spec.optimizer, spec.precision, framework, unsharded_offload)


def _recomputes(spec: LayoutSpec, framework: str, method: str = "pretrain") -> tuple[str, ...]:
    """Recomputation policies searched: Megatron's none or full (block recomputation chooses how many
    layers), DeepSpeed's none or full; on FSDP also torchtitan's op-level selective policy where torchtitan
    runs the job (`selective_gap`: no adapters, no DPO, Adam, bf16; the other PyTorch stacks checkpoint
    whole layers and their exports refuse it) and activation offload. A team limited to the one-click
    PyTorch path has the Hugging Face Trainer's whole-layer checkpointing only (and, where nothing else
    fits, its checkpoints offloaded as LLaMA-Factory's `use_unsloth_gc` does). A layout that offloads its
    model states to the CPU is searched with whole-layer checkpointing, as DeepSpeed, accelerate and
    LLaMA-Factory offload (a stated selective policy stays where torchtitan offloads too: FSDP2 sharding over
    more than one rank, the combinations' filter in `_combinations`)."""
    if spec.recompute or spec.recompute_layers:
        return (spec.recompute or "full",)
    if framework != "fsdp" or spec.state_offload:
        return ("none", "full")
    if spec.pytorch_stacks_only:
        return ("none", "full", *(("full_offload",) if spec.offload else ()))
    selective = () if selective_gap(method, spec.optimizer, spec.precision, framework) else ("selective",)
    offload = ("full_offload", "offload") if spec.offload else ()
    return ("none", *selective, "full", *offload)


@lru_cache(maxsize=4096)
def _search(key: _Key) -> SearchResult:
    """One search per key per process; across processes and runs through the persistent store."""
    persistent = store()
    if persistent is None:
        return _searched(key)
    text = _stored_key(key)
    found = persistent.get(text)
    if isinstance(found, SearchResult):
        return replace(found, _model=key.model, _method=key.method, _cluster=key.cluster)
    result = _searched(key)
    persistent.put(text, replace(result, _model=None, _cluster=None))
    return result


def _searched(key: _Key) -> SearchResult:
    model, method, cluster, spec = key.model, key.method, key.cluster, key.spec
    shape = shape_of(model)
    lora_rank = spec.lora_rank if method in ADAPTER_METHODS else None
    _check_spec(shape, method, cluster, spec, lora_rank)

    rejected: list[tuple[Layout, str]] = []
    reasons: Counter[str] = Counter()

    def reject(layout: Layout, reason: str, kind: str) -> None:
        reasons[kind] += 1
        if reasons[kind] == 1 and len(rejected) < MAX_REJECTED_KEPT:
            rejected.append((layout, reason))

    cap = spec.usable_gib(cluster.gpu.memory_gib)  # the card less the headroom kept free
    considered = 0
    best: tuple[float, float, Layout] | None = None  # (-tokens/s, memory, layout)

    pairs, rejections, combos, unrunnable = _search_space(shape, method, cluster, spec, lora_rank)
    for layout, reason, kind in rejections:
        reject(layout, reason, kind)
    for kind, n in unrunnable:
        reasons[kind] += n

    contexts: dict[int, _PairContext] = {}
    fits_everything: set[tuple[int, int, str, int, int, str, int]] = set()  # every size fits
    for position, (neg_bound, index, ep, fw, zero, hs, rc, v, work_s) in enumerate(combos):
        if best is not None and -neg_bound < -best[0]:
            reasons["cannot beat the fastest layout found"] += len(combos) - position
            break
        if spec.recompute is None and rc != "none" and (index, ep, fw, zero, hs, "none", v) in fits_everything:
            reasons["dominated (recomputation only adds time where none is needed)"] += 1
            continue
        if spec.zero is None and zero == 3 and (index, ep, fw, 2, hs, "none", v) in fits_everything:
            reasons["dominated (ZeRO-3 only adds traffic where ZeRO-2 fits)"] += 1
            continue
        pair = pairs[index]
        if index not in contexts:
            contexts[index] = _PairContext.of(pair, cluster)
        ctx = contexts[index]
        replica = pair.gb // pair.dp
        tokens_step = pair.gb * spec.seq_len

        def fits(mb: int, fw: str = fw, zero: int = zero, rc: str = rc, v: int = v, ep: int = ep,
                 pair: _Pair = pair, hs: int = hs) -> tuple[bool, Any]:
            key = (fw, zero, rc, mb, v, ep, hs)
            if key not in pair.memo:
                lay = _make(pair, spec, lora_rank, fw, zero, rc, mb, v, ep, hs)
                mem = _memory(shape, method, lay, cap, cluster.host_memory_gib_per_gpu)
                pair.memo[key] = (mem.breakdown.total_gib <= cap, (lay, mem))
            return pair.memo[key]

        if not spec.micro_batch:
            # the model states alone do not fit at any micro-batch size: none fits (most combinations of
            # a large model on a few cards end here, before any activation is counted). The states are
            # least with the whole replica batch as one micro-batch (FSDP's unsharded accumulation buffer
            # exists only with several)
            floor = _states_floor(shape, method, spec, lora_rank, pair, fw, zero, ep, replica, hs)
            if floor > cap:
                considered += 1
                if not reasons["out of memory"]:
                    reject(_make(pair, spec, lora_rank, fw, zero, rc, replica, v, ep, hs),
                           f"out of memory: the model states alone take {floor:.1f} GiB > {cap:g} GiB",
                           "out of memory")
                else:
                    reasons["out of memory"] += 1
                continue

        # The combination's traffic and optimizer time no micro-batch size avoids tighten its bound
        # (the order above uses compute alone): skip it when even that cannot beat the fastest found.
        # Worth its cost where data-parallel traffic crosses nodes; elsewhere once the layout fits.
        fixed_s = 0.0
        if best is not None and (spec.micro_batch or ctx.dp_link.spans_nodes or fits(1)[0]):
            fixed_s = _fixed_lower_bound_s(shape, method, cluster, spec, lora_rank, pair, ctx, fw, zero, rc, v, ep,
                                           hs)
            if tokens_step / (work_s * (1 + (pair.pp - 1) / v / replica) + fixed_s) < -best[0]:
                reasons["cannot beat the fastest layout found"] += 1
                continue

        all_fit = not spec.micro_batch
        block_sizes: set[int] = set()  # smaller micro-batches added for Megatron's block recomputation
        if spec.micro_batch:
            sizes: tuple[int, ...] = (spec.micro_batch,)
        else:
            # (under pipelining memory is not monotone in the size: the sizes are checked one by one)
            top = _largest_fitting(fits, replica, cap) if pair.pp == 1 else (
                min(replica, max(PIPELINE_MICRO_BATCHES)) if fits(1)[0] else 0)
            considered += 1
            all_fit = top == replica
            if top == 0:
                _, (lay, mem) = fits(1)
                reject(lay, f"out of memory: {mem.breakdown.total_gib:.1f} GiB > {cap:g} GiB", "out of memory")
                continue
            sizes = micro_batch_candidates(replica, top, pair.pp,
                                           exact=fw in EXACT_BATCH_FRAMEWORKS or spec.pytorch_stacks_only)
            _, (_, largest) = fits(sizes[0])
            if largest.paged_offload_params > 0:
                # a paged optimizer trades the micro-batch against its states: where the largest size pages
                # some of them to host memory, smaller ones (halving, dividing the replica's batch) may keep
                # them all on the GPU
                halvings = dividing_sizes(replica, [top >> i for i in range(1, top.bit_length())])
                sizes += tuple(sorted(halvings - set(sizes), reverse=True))
            if fw == "megatron" and rc == "full" and _tries_block(spec):
                # Megatron's block recomputation trades the micro-batch against the layers it redoes: a
                # smaller micro-batch (about 1, 2, 4 or 8 sequences, dividing the replica's batch) may need
                # far fewer, so they are timed too (below, only where the largest size redoes more than half
                # of each chunk: less leaves little to save)
                block_sizes = dividing_sizes(replica, [k for k in PIPELINE_MICRO_BATCHES if k < sizes[0]]) - set(sizes)
                sizes += tuple(sorted(block_sizes, reverse=True))
        ep_link = group_link(cluster, ep, pair.tp * pair.cp)
        for mb in sizes:
            if interleaving_refused(fw, v, -(-replica // mb), pair.pp):
                reasons["Megatron interleaves only with at least pp micro-batches per step"] += 1
                all_fit = False
                continue
            # a micro-batch of mb sequences leaves a bubble of at least (pp - 1) / v of its share
            if best is not None and pair.pp > 1 and tokens_step / (
                    work_s * (1 + (pair.pp - 1) / v * mb / replica) + fixed_s) < -best[0]:
                reasons["cannot beat the fastest layout found"] += 1
                all_fit = False
                continue
            if fw == "megatron" and rc == "full" and _tries_block(spec) and fits(mb, rc="none")[0]:
                # no recomputation fits this size: it is faster, and timed in its own combination
                reasons["dominated (recomputation only adds time where none is needed)"] += 1
                all_fit = False
                continue
            if mb in block_sizes:
                redone = pair.memo.get(("block", fw, zero, sizes[0], v, ep), 0)
                if redone is not None and 2 * redone <= chunk_layers(shape.layers, _make(pair, spec, lora_rank, fw,
                                                                                           zero, rc, mb, v, ep)):
                    continue
            ok, (layout, mem) = fits(mb)
            considered += 1
            total = mem.breakdown.total_gib
            all_fit = all_fit and ok
            if not ok:
                reject(layout, f"out of memory: {total:.1f} GiB > {cap:g} GiB", "out of memory")
                continue
            if (fw, mb) not in pair.compute:  # the same for every ZeRO stage, recompute, v and ep
                r = rates(shape, layout, cluster)
                pair.compute[(fw, mb)] = (r, micro_batch_compute(shape, method, layout, r))
            times = step_time(shape, method, layout, cluster, ctx.tp_link, ctx.dp_link, ctx.pp_link,
                              mem.paged_offload_params, ctx.cp_link, ep_link, pair.compute[(fw, mb)])
            rate = tokens_step / times.total_s
            candidate = (-rate, total, layout)
            if fw == "megatron" and rc == "full" and _tries_block(spec):
                # block recomputation redoes at least one layer of each of the v chunks: try it only where
                # that could beat the fastest layout found. Timed at one layer a chunk, the fastest it can be:
                # fewer recomputed layers also mean fewer tensor-parallel collectives and a shorter bubble
                fastest_s = step_time(shape, method, replace(layout, recompute_layers=1), cluster, ctx.tp_link,
                                      ctx.dp_link, ctx.pp_link, mem.paged_offload_params, ctx.cp_link, ep_link,
                                      pair.compute[(fw, mb)]).total_s
                if best is None or tokens_step / fastest_s > -best[0]:
                    candidate, tried = _block_recompute(candidate, shape, method, cluster, spec, cap, pair, ctx,
                                                        ep_link)
                    considered += tried
            if best is None or candidate[:2] < (best[0], best[1]):
                best = candidate
        if all_fit:
            fits_everything.add((index, ep, fw, zero, hs, rc, v))
    searched = spec.searched_fields() + (("ep",) if shape.is_moe and spec.ep is None else ())
    best_est = _estimate(model, shape, method, cluster, best[2], paging_limit_gib=cap) if best else None
    if best_est is not None:
        if searched:
            best_est.notes.insert(0, f"searched {', '.join(searched)} over {considered} layouts; chose "
                                     f"{best_est.layout.short()}")
        if not spec.global_batch:
            rule = (f"~{best_est.layout.global_batch * spec.seq_len / 1e6:.1f}M tokens per step for this "
                    "model size" if method in PRETRAIN_METHODS
                    else f"{FINETUNE_SEQUENCES_PER_STEP} sequences per step")
            best_est.notes.append(f"global batch {best_est.layout.global_batch} sequences by the default "
                                  f"rule ({rule}; set it to your recipe's)")
    return SearchResult(best=best_est, considered=considered, rejected=tuple(rejected),
                        reasons=dict(reasons.most_common()),
                        searched=searched,
                        spec=spec, _model=model, _method=method, _cluster=cluster)


_Combination = tuple[float, int, int, str, int, int, str, int, float]


_SearchSpace = tuple[tuple["_Pair", ...], tuple[tuple[Layout, str, str], ...], tuple[_Combination, ...],
                     tuple[tuple[str, int], ...]]


def _search_space(shape: ModelShape, method: str, cluster: Cluster, spec: LayoutSpec, lora_rank: int | None
                  ) -> _SearchSpace:
    """(pairs, their rejections, combinations fastest bound first, unrunnable counts by kind)."""
    # Nothing in the plan depends on the fabric between nodes unless a fixed tp spans nodes, so one
    # plan serves every platform with this GPU and node size.
    plan_cluster = cluster if (spec.tp or 1) > cluster.gpus_per_node else replace(
        cluster, fabric_kind="none", fabric_gbps_per_gpu=0.0)
    pairs, rejections = _plan(shape, method, plan_cluster, spec, lora_rank)
    if any(ep > 1 for pair in pairs for ep in pair.expert_parallel):  # all-to-all bounds read the fabric
        combos, unrunnable = _combinations(shape, method, cluster, spec, lora_rank, pairs)
    else:
        combos, unrunnable = _fabric_free_combinations(shape, method, plan_cluster, spec, lora_rank)
    return pairs, rejections, combos, unrunnable


@lru_cache(maxsize=256)
def _least_memory(key: _Key) -> Estimate | None:
    """The least-memory layout of a search where none fits: every combination the search tried, each at
    the micro-batch it starts from (the fixed one, else one sequence)."""
    model, method, cluster, spec = key.model, key.method, key.cluster, key.spec
    shape = shape_of(model)
    lora_rank = spec.lora_rank if method in ADAPTER_METHODS else None
    cap = spec.usable_gib(cluster.gpu.memory_gib)
    pairs, _, combos, _ = _search_space(shape, method, cluster, spec, lora_rank)
    mb = spec.micro_batch or 1
    # the model states bound each combination's memory from below: those whose states exceed the least
    # total found cannot hold the least memory, so the exact memory of few is computed
    bounded = sorted((_states_floor(shape, method, spec, lora_rank, pairs[index], fw, zero, ep, mb, hs), order,
                      pairs[index], fw, zero, rc, v, ep, hs)
                     for order, (_, index, ep, fw, zero, hs, rc, v, _) in enumerate(combos))
    least: tuple[float, Layout] | None = None
    for floor, _, pair, fw, zero, rc, v, ep, hs in bounded:
        if least is not None and floor >= least[0]:
            break
        layout = _make(pair, spec, lora_rank, fw, zero, rc, mb, v, ep, hs)
        total = _memory(shape, method, layout, cap, cluster.host_memory_gib_per_gpu).breakdown.total_gib
        if least is None or total < least[0]:
            least = (total, layout)
    return _estimate(model, shape, method, cluster, least[1], paging_limit_gib=cap) if least else None


def _states_floor(shape: ModelShape, method: str, spec: LayoutSpec, lora_rank: int | None, pair: _Pair,
                  fw: str, zero: int, ep: int, mb: int, hs: int = 0) -> float:
    """`states_floor_gib` of the pair's layouts at this micro-batch (memoised in the pair: recomputation
    and virtual stages do not change it)."""
    key = ("states", fw, zero, ep, mb, hs)
    if key not in pair.memo:
        pair.memo[key] = states_floor_gib(shape, method, _make(pair, spec, lora_rank, fw, zero, "none", mb, 1, ep,
                                                               hs))
    floor: float = pair.memo[key]
    return floor


def _combinations(shape: ModelShape, method: str, cluster: Cluster, spec: LayoutSpec, lora_rank: int | None,
                  pairs: tuple[_Pair, ...]) -> tuple[tuple[_Combination, ...], tuple[tuple[str, int], ...]]:
    """Every (tp, pp, cp) x expert parallelism x framework and ZeRO stage x recompute x virtual stages,
    with the most tokens/s it could reach (compute, recomputation, tensor-parallel traffic and the
    smallest bubble), as (-bound, pair index, ep, framework, zero, shard group (0: no hybrid sharding),
    recompute, virtual stages, work seconds),
    best bound first: the search stops at the first that cannot beat the fastest layout found, wherever in
    the space it lies. Also how many were left out because no stack runs them, by reason (a pipelined
    LoRA outside Megatron; a split of the layers no stack makes: stages.py)."""
    combos: list[_Combination] = []
    unrunnable: Counter[str] = Counter()
    for index, pair in enumerate(pairs):
        replica = pair.gb // pair.dp
        if pair.hybrid_gap:
            unrunnable[HYBRID_SPLIT_GAP] += 1
        for ep, fw, zero, hs in ((e, f, z, h) for e in pair.expert_parallel for f, z, h in pair.options):
            if hs and ep > 1:  # (hybrid sharding is not combined with expert parallelism)
                continue
            why = (_unrunnable(method, spec, fw, pair.tp, pair.pp, pair.cp, shape.heads)
                   or expert_parallel_gap(fw, method, spec.optimizer, spec.precision, ep)
                   or _replicated_split_gap(method, spec, fw, zero, pair) or _uneven_micro_batch_gap(spec, fw, replica))
            if why:
                unrunnable[why] += 1
                continue
            splits = [v for v in pair.virtual_stages if split_problem(shape.layers, pair.pp, v, fw) is None]
            unrunnable["no stack splits the layers so (pipeline stages)"] += len(pair.virtual_stages) - len(splits)
            for rc in _recomputes(spec, fw, method):
                gap = _recompute_gap(rc, method, spec, fw, zero, pair, hs, ep)
                if gap:
                    unrunnable[gap] += 1
                    continue
                base_s = pair.stage_s[fw]
                stage = -(-shape.layers // pair.pp)
                # all-to-all seconds per step do not depend on the micro-batch size; a recomputed forward
                # repeats its dispatch and combine, layer by layer (`redone_a2a_s`, for the share redone)
                redone_a2a_s = 0.0
                if ep > 1:
                    whole = _make(pair, spec, lora_rank, fw, zero, rc, replica, 1, ep, hs)
                    link = group_link(cluster, ep, pair.tp * pair.cp)
                    kept = ep_exposed_s(shape, whole, link, stage, 0) / cluster.speedup
                    base_s += kept
                    if rc == "full":
                        redone_a2a_s = ep_exposed_s(shape, whole, link, stage, 1) / cluster.speedup - kept
                # block recomputation (given, or tried by the search on Megatron's full recomputation) redoes
                # at least `recompute_layers` (or 1) layers of each of the v chunks of the slowest stage
                block = spec.recompute_layers or (1 if _tries_block(spec) and fw == "megatron" else 0)
                for v in splits:
                    # (a chunk of one layer has no block method: all of it or none is recomputed)
                    partial = block and rc == "full" and -(-stage // v) > 1
                    share = min(1.0, block * v / stage) if partial else 1.0
                    work_s = base_s + (pair.recompute_s[(rc, fw)] + redone_a2a_s) * share
                    bound = pair.gb * spec.seq_len / (work_s * (1 + (pair.pp - 1) / v / replica))
                    combos.append((-bound, index, ep, fw, zero, hs, rc, v, work_s))
    combos.sort()
    return tuple(combos), tuple((kind, n) for kind, n in unrunnable.items() if n)


@lru_cache(maxsize=4096)
def _fabric_free_combinations(shape: ModelShape, method: str, plan_cluster: Cluster, spec: LayoutSpec,
                              lora_rank: int | None) -> tuple[tuple[_Combination, ...], tuple[tuple[str, int], ...]]:
    """`_combinations` of a plan without expert parallelism, whose bounds do not read the fabric: one
    ordering serves every platform fabric of the GPU and node size."""
    pairs, _ = _plan(shape, method, plan_cluster, spec, lora_rank)
    return _combinations(shape, method, plan_cluster, spec, lora_rank, pairs)


def _tries_block(spec: LayoutSpec) -> bool:
    """Whether the search tries Megatron's block recomputation: when neither the policy nor the layer
    count is given."""
    return spec.recompute is None and spec.recompute_layers is None


def _block_recompute(best: tuple[float, float, Layout], shape: ModelShape, method: str, cluster: Cluster,
                     spec: LayoutSpec, cap: float, pair: _Pair, ctx: _PairContext, ep_link: GroupLink
                     ) -> tuple[tuple[float, float, Layout], int]:
    """A Megatron layout that fits only with every layer recomputed may fit with fewer: Megatron's block
    method recomputes the first N layers of each model chunk and keeps the rest. Memory falls as N grows
    and time rises, so the fewest layers that fit (bisection) is the fastest; it replaces the full
    recomputation when it is faster. Returns the best and the number of layouts tried. The pair's memo
    (shared by the searches of every fabric) keeps the fewest count per layout: memory reads no fabric;
    the step is timed on the search's links with the layout's compute, as the pair already holds them."""
    layout = best[2]
    chunk = chunk_layers(shape.layers, layout)
    if layout.framework != "megatron" or layout.recompute != "full" or chunk <= 1:
        return best, 0
    tried = 0

    def fits(n: int) -> tuple[bool, Layout, Any]:
        nonlocal tried
        tried += 1
        lay = replace(layout, recompute_layers=n)
        mem = _memory(shape, method, lay, cap, cluster.host_memory_gib_per_gpu)
        return mem.breakdown.total_gib <= cap, lay, mem

    key = ("block", layout.framework, layout.zero, layout.micro_batch, layout.virtual_pipeline, layout.ep)
    if key not in pair.memo:
        # the fewest layers in [1, chunk - 1] that fit (memory falls as the count grows), or none
        pair.memo[key] = (1 + bisect.bisect_left(range(1, chunk - 1), True, key=lambda n: fits(n)[0])
                          if fits(chunk - 1)[0] else None)
    fewest = pair.memo[key]
    if fewest is None:
        return best, tried
    _, lay, mem = fits(fewest)
    t = step_time(shape, method, lay, cluster, ctx.tp_link, ctx.dp_link, ctx.pp_link, mem.paged_offload_params,
                  ctx.cp_link, ep_link, pair.compute[(layout.framework, layout.micro_batch)]).total_s
    rate = lay.global_batch * spec.seq_len / t
    if (-rate, mem.breakdown.total_gib) < (best[0], best[1]):
        return (-rate, mem.breakdown.total_gib, lay), tried
    return best, tried


def _fixed_lower_bound_s(shape: ModelShape, method: str, cluster: Cluster, spec: LayoutSpec,
                         lora_rank: int | None, pair: _Pair, ctx: _PairContext, fw: str, zero: int, rc: str,
                         v: int, ep: int, hs: int = 0) -> float:
    """Seconds per step of data-parallel traffic, pipeline transfers and the optimizer step that no
    micro-batch size of this combination goes below: they are timed with the whole replica batch as
    one micro-batch, which has the most compute (and recomputation) to hide data-parallel traffic
    behind, the fewest gathers and transfers, and no paged optimizer states (all terms that only
    grow as the micro-batch shrinks)."""
    # virtual stages multiply the transfers and change nothing else, except which layers a block
    # recomputation redoes
    key = (fw, zero, rc, ep, hs, v if spec.recompute_layers else 1)
    if key not in ctx.fixed:
        whole = spec.micro_batch or pair.gb // pair.dp
        layout = _make(pair, spec, lora_rank, fw, zero, rc, whole, key[-1], ep, hs)
        r, mbc = pair.compute[(fw, whole)]  # (the pair's own probe: it bounds the stage at this size)
        dp_link, replicate_link = sharding_links(cluster, layout, ctx.dp_link)
        dp_s = dp_exposed_s(shape, method, layout, dp_link, zero, mbc.compute_s,
                            stage_recompute_s(shape, layout, r, mbc), replicate_link)
        ctx.fixed[key] = ((dp_s + optimizer_and_paging_s(shape, method, layout, r, 0.0, mbc.layers)) / cluster.speedup,
                          p2p_s(shape, layout, ctx.pp_link) / cluster.speedup)
    traffic_s, transfer_s = ctx.fixed[key]
    return traffic_s + v * transfer_s


def _largest_fitting(fits: Any, upper: int, cap: float) -> int:
    """Largest micro-batch in [1, upper] that fits (0 if none). Memory grows about linearly with the
    micro-batch, so the line through sizes 1 and 2 predicts it; the guess is checked, and bisection
    (memory being monotone) finishes the search when the line misses. The whole replica batch as one
    micro-batch is tried first: without gradient accumulation FSDP holds no unsharded gradient buffer,
    so it can fit where a single sequence per micro-batch does not."""
    if fits(upper)[0]:
        return upper
    ok, (_, one) = fits(1)
    if not ok:
        return 0
    lo, hi = 1, upper  # fits(lo), not fits(hi)
    ok, (_, two) = fits(2)
    if not ok:
        return 1
    slope = two.breakdown.total_gib - one.breakdown.total_gib
    if slope > 0:
        guess = min(upper - 1, max(2, 1 + int((cap - one.breakdown.total_gib) / slope)))
        if fits(guess)[0]:
            lo = guess
            if not fits(guess + 1)[0]:
                return guess
        else:
            hi = guess
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if fits(mid)[0]:
            lo = mid
        else:
            hi = mid
    return lo


@dataclass(frozen=True)
class _Pair:
    """One (tp, pp, cp) of the search: the choices left open, and the most tokens/s any layout of it
    could reach (`bound`, which orders the pairs and so breaks exact ties between combinations)."""

    tp: int
    pp: int
    cp: int
    dp: int
    gb: int
    sequence_parallel: bool
    options: tuple[tuple[str, int, int], ...]  # (framework, ZeRO stage, shard group: 0 unless hybrid-sharded)
    virtual_stages: tuple[int, ...]
    bound: float
    expert_parallel: tuple[int, ...]
    stage_s: dict[str, float]  # per framework: the replica batch as one micro-batch, compute and TP traffic
    recompute_s: dict[tuple[str, str], float]  # (recompute, framework) -> seconds it adds, for those searched
    # Memory and compute do not depend on the fabric, so every search this pair serves (one per platform
    # fabric) shares what the others evaluated: (framework, micro-batch) -> its compute, from the probe on;
    # (framework, zero, recompute, micro-batch, virtual stages, ep) -> whether it fits, layout and memory;
    # ("block", framework, zero, micro-batch, virtual stages, ep) -> the fewest block-recomputed layers.
    compute: dict[tuple[str, int], tuple[Rates, MicroBatchCompute]]
    hybrid_gap: bool = False  # a stated hybrid shard no stack of this split can run (HYBRID_SPLIT_GAP)
    memo: dict[tuple[Any, ...], Any] = field(default_factory=dict, compare=False)


def _loss_on(spec: LayoutSpec, framework: str | None) -> str:
    """The spec's loss on a stack: Megatron's (and an unnamed stack's skeleton) is always plain."""
    return spec.loss if framework not in (None, "megatron") else "plain"


def _make(pair: _Pair, spec: LayoutSpec, lora_rank: int | None, fw: str, zero: int, rc: str, mb: int, v: int,
          ep: int, hs: int = 0) -> Layout:
    return Layout(tp=pair.tp, pp=pair.pp, dp=pair.dp, zero=zero, recompute=rc, micro_batch=mb,
                  global_batch=pair.gb, seq_len=spec.seq_len, precision=spec.precision,
                  sequence_parallel=pair.sequence_parallel, lora_rank=lora_rank, optimizer=spec.optimizer,
                  virtual_pipeline=v, loss=_loss_on(spec, fw),
                  fused_modules=spec.fused_modules,
                  lora_targets=spec.lora_targets,
                  flash_attention=spec.flash_attention, framework=fw, cp=pair.cp, ep=ep,
                  recompute_layers=spec.recompute_layers if rc == "full" else None,
                  state_offload=bool(spec.state_offload) and offloads_states(fw, zero, pair.tp, pair.pp,
                                                                               spec.optimizer),
                  shard_group=hs or None, capacity_factor=spec.capacity_factor)


@dataclass
class _PairContext:
    """What the combinations of one (tp, pp, cp) share in one search: its groups' links, and the fixed
    costs of each combination on them (memory and compute, which do not read the links, live on the
    pair itself)."""

    tp_link: GroupLink
    cp_link: GroupLink
    dp_link: GroupLink
    pp_link: GroupLink
    fixed: dict[tuple[str, int, str, int, int, int], tuple[float, float]] = field(default_factory=dict)

    @classmethod
    def of(cls, pair: _Pair, cluster: Cluster) -> _PairContext:
        tp_link, cp_link, dp_link, pp_link, _ = layout_links(cluster, pair.tp, pair.pp, pair.cp, pair.dp)
        return cls(tp_link, cp_link, dp_link, pp_link)


@lru_cache(maxsize=4096)
def _plan(shape: ModelShape, method: str, cluster: Cluster, spec: LayoutSpec, lora_rank: int | None
          ) -> tuple[tuple[_Pair, ...], tuple[tuple[Layout, str, str], ...]]:
    """Every (tp, pp, cp) worth trying with its throughput bound, most promising first; and the ones
    rejected outright."""
    gpus, per_node = cluster.gpus, cluster.gpus_per_node
    rejections: list[tuple[Layout, str, str]] = []
    default = default_global_batch(method, spec.seq_len, shape.total_params)
    target = spec.global_batch or (min(default, spec.batch_limit) if spec.batch_limit else default)

    def skeleton(tp: int, pp: int, cp: int = 1) -> Layout:
        return Layout(tp=tp, pp=pp, dp=max(1, gpus // (tp * pp * cp)), zero=spec.zero or 0,
                      recompute=spec.recompute or "none", micro_batch=spec.micro_batch or 1,
                      global_batch=target, seq_len=spec.seq_len, precision=spec.precision,
                      sequence_parallel=bool(spec.sequence_parallel), lora_rank=lora_rank,
                      optimizer=spec.optimizer, fused_modules=spec.fused_modules,
                      loss=_loss_on(spec, spec.framework),
                      lora_targets=spec.lora_targets, cp=cp, framework=spec.framework or "megatron")

    pairs: list[_Pair] = []
    for tp in [spec.tp] if spec.tp else list(_divisors(gpus)):
        if tp > per_node and not spec.tp:
            rejections.append((skeleton(tp, 1), f"tp={tp} spans {-(-tp // per_node)} nodes", "tp spans nodes"))
            continue
        if shape.heads % tp or (tp > shape.kv_heads and tp % shape.kv_heads) or (
                tp < shape.kv_heads and shape.kv_heads % tp):
            rejections.append((skeleton(tp, 1),
                               f"tp={tp} does not divide {shape.heads} heads / {shape.kv_heads} KV heads",
                               "tp incompatible with heads"))
            continue
        cps = [spec.cp] if spec.cp else [c for c in CONTEXT_PARALLEL
                                         if c == 1 or (spec.seq_len >= LONG_SEQUENCE and spec.seq_len % c == 0
                                                       and spec.seq_len // c >= MIN_TOKENS_PER_CP_RANK)]
        for cp in cps:
            if (gpus // tp) % cp:
                continue
            rest = gpus // (tp * cp)
            # (a stated interleaving needs pipeline stages: without pp it is searched among the pp > 1)
            interleaved = (spec.virtual_pipeline or 1) > 1
            for pp in [spec.pp] if spec.pp else [p for p in _divisors(rest)
                                                 if p <= shape.layers and (p > 1 or not interleaved)]:
                if rest % pp:  # a fixed pp leaves no whole data-parallel group at this tp x cp
                    continue
                dp = rest // pp
                if spec.global_batch:
                    gb: int | None = spec.global_batch if spec.global_batch % dp == 0 else None
                    why = f"global_batch {spec.global_batch} is not a multiple of dp = {dp}"
                else:
                    gb = batch_for_replicas(target, dp)
                    why = f"dp={dp} replicas exceed the global batch of {target} sequences"
                if gb is None:
                    rejections.append((skeleton(tp, pp, cp), why, "global batch too small for dp"))
                    continue
                pair = _pair(shape, method, cluster, spec, lora_rank, tp, pp, cp, dp, gb)
                pairs.append(pair)
    pairs.sort(key=lambda pr: -pr.bound)
    return tuple(pairs), tuple(rejections)


def _pair(shape: ModelShape, method: str, cluster: Cluster, spec: LayoutSpec, lora_rank: int | None,
          tp: int, pp: int, cp: int, dp: int, gb: int) -> _Pair:
    stacks = _frameworks(method, spec, dp * cp, pp)
    options = _hybrid_options(stacks, spec, tp, cp, dp * cp, cluster.gpus_per_node)
    hybrid_gap = bool(spec.hybrid_shard and stacks and not options)  # (a stated hybrid shard this split cannot run)
    if spec.virtual_pipeline:
        vps: tuple[int, ...] = (spec.virtual_pipeline,)
    else:
        vps = virtual_stage_candidates(shape.layers, pp)
    sp = spec.sequence_parallel if spec.sequence_parallel is not None else tp > 1
    tp_link = group_link(cluster, tp, 1)
    replica = gb // dp
    mb = spec.micro_batch or replica  # the most tokens per micro-batch: the best GEMM efficiency
    stage_s: dict[str, float] = {}
    extra: dict[tuple[str, str], float] = {}
    compute: dict[tuple[str, int], tuple[Rates, MicroBatchCompute]] = {}
    # kernels (fusion, attention) differ by stack; a stack that cannot run this pair is not timed
    for fw in dict.fromkeys(f for f, _, _ in options if not _unrunnable(method, spec, f, tp, pp, cp, shape.heads)):
        probe = Layout(tp=tp, pp=pp, dp=dp, zero=0, recompute="none", micro_batch=mb, global_batch=gb,
                       seq_len=spec.seq_len, precision=spec.precision, sequence_parallel=sp,
                       lora_rank=lora_rank, optimizer=spec.optimizer,
                       loss=_loss_on(spec, fw), fused_modules=spec.fused_modules,
                       lora_targets=spec.lora_targets, flash_attention=spec.flash_attention, cp=cp,
                       framework=fw)
        r = rates(shape, probe, cluster)
        mbc = micro_batch_compute(shape, method, probe, r)
        compute[(fw, mb)] = (r, mbc)
        stage_s[fw] = stage_lower_bound_s(shape, probe, cluster, tp_link, mbc) * probe.micro_batch_equivalents
        for rc in _recomputes(spec, fw, method):
            extra[(rc, fw)] = recompute_s(mbc, r, rc, fw) * probe.micro_batch_equivalents / cluster.speedup
    # the bubble is at least (pp - 1) / v single-sequence stage times, at the most virtual stages
    bubble = 1 + (pp - 1) / max(vps) / replica if pp > 1 else 1.0
    bound = gb * spec.seq_len / (min(stage_s.values(), default=float("inf")) * bubble)
    if spec.ep:
        eps: tuple[int, ...] = (spec.ep,) if dp % spec.ep == 0 else ()
    elif shape.is_moe and method not in ADAPTER_METHODS:
        eps = tuple(e for e in EXPERT_PARALLEL if dp % e == 0 and shape.moe_experts % e == 0)
    else:
        eps = (1,)
    return _Pair(tp, pp, cp, dp, gb, sp, options, vps, bound, eps, stage_s, extra, compute, hybrid_gap)


# Memory does not depend on the fabric or reliability, so it is shared by every cluster of a GPU.
_memory = lru_cache(maxsize=65536)(memory_per_gpu)


_Gap = TypeVar("_Gap")


def _every_stack_gap(method: str, spec: LayoutSpec, gap_of: Callable[[str], _Gap | None]) -> tuple[_Gap, str] | None:
    """Where every stack the job may use (the stated one, else those searched) has a gap for a stated field:
    the first stack's, and the clause saying why Megatron was left out (' (...)', or '' with a stated stack
    or none left out); else None."""
    stacks = (spec.framework,) if spec.framework else _searched_frameworks(method, spec)
    gaps = [gap_of(fw) for fw in stacks]
    first = gaps[0]
    if first is None or not all(gaps):
        return None
    left_out = "" if spec.framework else _megatron_left_out(method, spec)
    return first, f" ({left_out})" if left_out else ""


def _check_spec(shape: ModelShape, method: str, cluster: Cluster, spec: LayoutSpec,
                lora_rank: int | None) -> None:
    """Raise ValueError for fixed fields that no search can repair."""
    gpus = cluster.gpus
    tp = spec.tp or 1
    pp = spec.pp or 1
    problems: list[str] = []
    if spec.tp is not None and (spec.tp < 1 or gpus % spec.tp):
        problems.append(f"tp: {spec.tp} does not divide the {gpus} GPUs")
    if spec.pp is not None and (spec.pp < 1 or gpus % (tp * spec.pp)):
        problems.append(f"pp: tp x pp = {tp} x {spec.pp} does not divide the {gpus} GPUs")
    for name in ("micro_batch", "global_batch", "virtual_pipeline", "cp", "ep"):
        value = getattr(spec, name)
        if value is not None and value < 1:
            problems.append(f"{name}: must be at least 1, got {value}")
    if spec.seq_len < 1:
        problems.append(f"seq_len: must be at least 1, got {spec.seq_len}")
    if method in QLORA_METHODS and spec.precision == "fp8":
        problems.append(QLORA_FP8)
    if spec.recompute_layers is not None and (not 1 <= spec.recompute_layers <= shape.layers
                                              or spec.recompute not in (None, "full")
                                              or spec.framework not in (None, "megatron")):
        problems.append(f"recompute_layers: {spec.recompute_layers} layers per chunk is Megatron's block "
                        f"recomputation: 1 to the model's {shape.layers} layers, with recompute full and "
                        "framework megatron")
    if spec.hybrid_shard:
        gap = hybrid_shard_gap(spec, cluster)
        if gap:
            problems.append(f"hybrid_shard: {gap}")
    if problems:
        raise ValueError("; ".join(problems))
    cp = spec.cp or 1
    if spec.cp is not None and (spec.cp < 1 or gpus % (tp * pp * spec.cp)):
        raise ValueError(f"cp: tp x pp x cp = {tp} x {pp} x {spec.cp} does not divide the {gpus} GPUs")
    if spec.pp is not None and spec.pp > 1:
        frameworks = (spec.framework,) if spec.framework else _searched_frameworks(method, spec)
        splits = [split_problem(shape.layers, spec.pp, spec.virtual_pipeline or 1, fw) for fw in frameworks]
        if all(splits):
            field_name = "virtual_pipeline" if (spec.virtual_pipeline or 1) > 1 else "pp"
            raise ValueError(f"{field_name}: " + "; ".join(str(problem) for problem in splits))
    if spec.recompute_layers and method in QLORA_METHODS and spec.framework in (None, "megatron"):
        raise ValueError("recompute_layers: block recomputation is Megatron's, and Megatron has no 4-bit QLoRA path; "
                         "use --recompute full")
    if spec.recompute_layers and method in DPO_METHODS and spec.framework is None:
        # (named, Megatron is kept: the team's own Megatron DPO, as `_megatron_left_out` says)
        raise ValueError("recompute_layers: block recomputation is Megatron's, and no exported Megatron stack trains "
                         "DPO (LLaMA-Factory's Megatron-Bridge backend trains pt and sft); use --recompute full, or "
                         "name framework megatron for your own Megatron DPO")
    if spec.optimizer == "adam_precision_aware" and (method in ADAPTER_METHODS or method in DPO_METHODS):
        raise ValueError(f"optimizer: the precision-aware optimizer is Megatron's, and the one stack written for "
                         f"{method} on Megatron (LLaMA-Factory's Megatron-Bridge backend) has none; use adamw")
    if spec.tp is not None or spec.pp is not None:  # a stated split that no stack the job may use runs
        split_gap = _every_stack_gap(method, spec, lambda fw: fsdp_stack_gap(
            method, spec.optimizer, spec.precision, spec.tp or 1, spec.pp or 1) if fw == "fsdp" else None)
        if split_gap:
            (field_name, why), left_out = split_gap
            raise ValueError(f"{field_name}: {why}; no stack runs {method} at {field_name}={getattr(spec, field_name)}"
                             + left_out)
    if (spec.ep or 1) > 1 and shape.is_moe and method not in ADAPTER_METHODS:
        experts_gap = _every_stack_gap(method, spec, lambda fw: expert_parallel_gap(
            fw, method, spec.optimizer, spec.precision, spec.ep or 1))
        if experts_gap:
            why, left_out = experts_gap
            raise ValueError(f"ep: {why}; no stack runs {method} at ep={spec.ep}{left_out}")
    if spec.framework == "deepspeed" and (spec.cp or 1) > 1:  # Ulysses: whole heads per rank at some tp
        tps = [spec.tp] if spec.tp else [t for t in _divisors(gpus) if shape.heads % t == 0]
        head_gaps = [ulysses_head_gap("deepspeed", shape.heads, t, spec.cp or 1) for t in tps]
        if head_gaps and all(head_gaps):
            raise ValueError(f"cp: {head_gaps[0]}" + ("" if spec.tp else " at any tensor-parallel size"))
    if (spec.cp or 1) > 1 and not spec.flash_attention:
        ring_gap = _every_stack_gap(method, spec, lambda fw: ring_attention_gap(fw, spec.cp or 1, False))
        if ring_gap:
            why, left_out = ring_gap
            stacks = spec.framework or f"the stacks searched for {method}"
            raise ValueError(f"attention: {why}; {stacks} cannot run eager attention at cp={spec.cp}{left_out}; use "
                             "flash attention, cp 1 or framework deepspeed")
    if spec.recompute == "selective":
        recompute_gap = _every_stack_gap(method, spec,
                                         lambda fw: selective_gap(method, spec.optimizer, spec.precision, fw))
        if recompute_gap:
            why, left_out = recompute_gap
            raise ValueError(f"recompute: {why}; no stack runs {method} with selective recomputation{left_out}; "
                             "use full or none")
    if spec.recompute:
        offload_gap = _offload_gap(spec.recompute, spec.tp or 1, spec.pp or 1, spec.cp or 1, spec.ep or 1)
        if offload_gap:
            raise ValueError(f"recompute: {offload_gap}; the job fixes {spec.recompute} with tp={spec.tp or 1} "
                             f"pp={spec.pp or 1} cp={spec.cp or 1}" + (f" ep={spec.ep}" if (spec.ep or 1) > 1 else ""))
    dp = gpus // (tp * pp * cp)
    if (spec.framework == "megatron" and (spec.virtual_pipeline or 1) > 1 and spec.tp is not None
            and spec.pp is not None and spec.global_batch is not None):
        gb = batch_for_replicas(spec.global_batch, dp)
        if gb is not None and interleaving_refused("megatron", spec.virtual_pipeline or 1, gb // dp, pp):
            raise ValueError(f"virtual_pipeline: Megatron's interleaved schedule needs at least pp = {pp} "
                             f"micro-batches per step; a global batch of {gb} over dp = {dp} gives at most {gb // dp}")
    if spec.micro_batch and spec.framework in EXACT_BATCH_FRAMEWORKS and spec.global_batch is not None:
        fixed_split = spec.tp is not None and spec.pp is not None
        dps = (dp,) if fixed_split else _divisors(gpus // (tp * pp * cp))
        shares = {d: gb // d for d in dps if (gb := batch_for_replicas(spec.global_batch, d)) is not None}
        if shares and all(_uneven_micro_batch_gap(spec, spec.framework, share) for share in shares.values()):
            over = ", ".join(f"{share} over dp = {d}" for d, share in shares.items())
            raise ValueError(f"micro_batch: {spec.framework} needs micro-batch x accumulation steps = each replica's "
                             f"share of the global batch ({over}), and {spec.micro_batch} divides none of them")
    default_fw = ("fsdp" if method in QLORA_METHODS or (spec.zero or 0) >= 2
                  else _searched_frameworks(method, spec)[0])
    probe_fw = spec.framework or default_fw
    # (Megatron's distributed optimizer is zero 1: a Megatron-only optimizer is probed there; DeepSpeed keeps
    # pure BF16 AdamW's states at ZeRO stage 1-3 only)
    probe_zero = spec.zero if spec.zero is not None else (
        1 if (probe_fw == "megatron" and spec.optimizer in MEGATRON_ONLY_OPTIMIZERS)
        or (probe_fw == "deepspeed" and spec.optimizer == "adam_bf16") else 0)
    probe = Layout(tp=tp, pp=pp, dp=dp, cp=cp, framework=probe_fw, zero=probe_zero,
                   recompute=spec.recompute or "none",
                   micro_batch=spec.micro_batch or 1,
                   # (pp micro-batches under interleaving, which Megatron needs: the batch is checked above)
                   global_batch=dp * (spec.micro_batch or 1) * (pp if (spec.virtual_pipeline or 1) > 1 else 1),
                   seq_len=spec.seq_len, precision=spec.precision, sequence_parallel=False,
                   lora_rank=lora_rank, optimizer=spec.optimizer, lora_targets=spec.lora_targets,
                   virtual_pipeline=spec.virtual_pipeline or 1, ep=spec.ep or 1,
                   capacity_factor=spec.capacity_factor)
    if method in ADAPTER_METHODS and spec.lora_rank < 1:
        raise ValueError(f"lora_rank: must be at least 1, got {spec.lora_rank}")
    # (the probe's dp is the layout's only where tp and pp are given)
    searched_dp = f"ep: {probe.ep} does not divide the {dp} data-parallel" if spec.tp is None or spec.pp is None \
        else "\0"
    fixed_problems = [p for p in layout_problems(shape, method, cluster, probe)
                      if not p.startswith(("global_batch", "tp:" if spec.tp is None else "\0",
                                           "pp:" if spec.pp is None else "\0", "virtual_pipeline"
                                           if spec.virtual_pipeline is None or (spec.pp is None and gpus > 1)
                                           else "\0",
                                           searched_dp,
                                           # (with the stack searched, one that splits the sequence so runs it)
                                           f"cp: {MEGATRON_CP_SEQUENCE}" if spec.framework is None else "\0",
                                           # (a stack that splits experts is searched; a stated ep is checked above)
                                           "ep: " + EXPERTS_NOT_SPLIT_ON_DEEPSPEED,
                                           "ep: " + EXPERTS_SPLIT_BY_TORCHTITAN))]
    if fixed_problems:
        raise ValueError("; ".join(fixed_problems))


@lru_cache(maxsize=1024)
def _divisors(n: int) -> tuple[int, ...]:
    """Every divisor of n, ascending, from its prime factorization (sqrt(n) steps, not n)."""
    divisors = [1]
    rest, factor = n, 2
    while factor * factor <= rest:
        power = 0
        while rest % factor == 0:
            rest //= factor
            power += 1
        if power:
            divisors = [d * factor**k for d in divisors for k in range(power + 1)]
        factor += 1 if factor == 2 else 2
    if rest > 1:
        divisors += [d * rest for d in divisors]
    return tuple(sorted(divisors))
