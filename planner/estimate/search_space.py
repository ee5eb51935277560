"""What layouts the search considers: the splits of the GPUs and the combinations on each.

Splits (`Split`): tp over the divisors of the GPU count that fit in one node and divide the
attention heads (and are compatible with the KV heads; one that does not divide the node, such as
3 on 8-GPU nodes, is timed on its groups that straddle two nodes, topology.group_link); cp (context
parallelism, ring attention) over 1, 2, 4, 8 for sequences of LONG_SEQUENCE tokens or more, keeping
MIN_TOKENS_PER_CP_RANK tokens per rank (1 otherwise unless given); pp over the divisors of the rest
(at most one layer per stage; stages may be uneven); dp = gpus / (tp pp cp). A layout needs
dp <= global batch (each replica gets whole sequences).

Combinations (`Combination`) on each split: for MoE models in full training, ep (expert
parallelism) over the powers of two up to 64 that divide dp and the experts; the framework and its
ZeRO stage (Megatron: 0 or 1 = distributed optimizer; FSDP: 2 = SHARD_GRAD_OP or 3 = FULL_SHARD;
DeepSpeed only when asked, since in this model it is FSDP with more gradient traffic); recompute
none, selective (FSDP's op-level policy; for Megatron only when asked, since with FlashAttention it
stores what "none" stores), full (Megatron: also its block method, the fewest layers per chunk
that fit) or offload (full_offload too, where nothing else fits, on a layout with no tensor,
pipeline or context parallelism the search chose: LLaMA-Factory's path); interleaved pipeline with
1, 2 or 4 virtual stages and the counts that divide a stage (also when pp is fixed), each only
where the framework's stack can split the layers so (stages.py). Combinations no stack runs are
left out and counted by reason (stack_rules.py). Each combination carries the most tokens/s it
could reach (`Combination.bound`), and the space lists them best bound first.

The micro-batch: every size from 1 to the per-replica batch is allowed on FSDP (a last smaller
micro-batch where it does not divide, as Composer runs it), found by the search by bisection on
memory (memory never falls as the micro-batch grows); then the few sizes around the step-time
optimum are timed (`micro_batch_candidates`): the balanced size with as few micro-batches as the
largest that fits allows, and the largest that divides the replica's batch (no last smaller
micro-batch); under pipelining also sizes of about 1, 2, 4 and 8 (fewer, larger micro-batches
lengthen the bubble); where the largest size pages a paged optimizer's states to host memory, its
halvings too (a smaller micro-batch may keep them on the GPU); each checked for memory. Megatron,
DeepSpeed and the one-click Hugging Face path need the micro-batches to fill the per-replica batch
exactly, so there the sizes are its divisors.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import Any, NamedTuple

from plan.models.stacks import stack_of
from plan.planner.estimate.cluster import Cluster
from plan.planner.estimate.compute import (
    MicroBatchCompute,
    Rates,
    micro_batch_compute,
    rates,
    recompute_s,
)
from plan.planner.estimate.flops import ModelShape
from plan.planner.estimate.split_comm import ep_exposed_s
from plan.planner.estimate.stack_rules import (
    HYBRID_SPLIT_GAP,
    framework_options,
    hybrid_options,
    recompute_gap,
    recompute_options,
    replicated_split_gap,
    split_gap,
    uneven_micro_batch_gap,
)
from plan.planner.estimate.stages import split_problem
from plan.planner.estimate.timing import stage_lower_bound_s
from plan.planner.estimate.topology import GroupLink, group_link, layout_links
from plan.planner.estimate.types import (
    ADAPTER_METHODS,
    PRETRAIN_METHODS,
    Layout,
    LayoutSpec,
    expert_parallel_gap,
    offloads_states,
)

FINETUNE_SEQUENCES_PER_STEP = 128
"""Sequences per optimizer step for fine-tuning, LoRA and QLoRA when the job states none (Stanford
Alpaca's batch size 128, tatsu-lab/stanford_alpaca README); capped by `LayoutSpec.batch_limit`, the
job's whole data."""
VIRTUAL_STAGES = (1, 2, 4)
"""Virtual pipeline stages per rank always searched (with pp > 1); `virtual_stage_candidates` adds
the largest counts that divide a stage's layers, which Megatron's even splits need (NeMo runs 20 on
80 layers over 4 stages); each is kept only where the framework's stack can split the layers so
(stages.py)."""
EXTRA_VIRTUAL_STAGES = 2
"""Of the counts above 4 that divide a stage's layers, the largest this many are searched: the
bubble ((pp - 1) / v micro-batches) and the first stage's in-flight activations (pp + (pp - 1) / v
micro-batches) both fall as v grows and only the point-to-point transfers grow, so the best count
is a large one; the smaller ones only cost search time."""


CONTEXT_PARALLEL = (1, 2, 4, 8)
EXPERT_PARALLEL = (1, 2, 4, 8, 16, 32, 64)
"""Expert-parallel sizes searched for MoE models (full training; LoRA keeps experts whole)."""
LONG_SEQUENCE = 8192
"""Sequences at least this long also search context parallelism (shorter ones keep cp = 1 unless
given: splitting a short sequence only adds K/V traffic). 8k: NeMo's published performance runs use
context parallelism 2 at 8,192 tokens (validation rows NEMO-11, Llama 3 8B on 8 H100s, and NEMO-12,
Llama 3 70B at tp 4 x pp 4), where it splits the activations that would otherwise need
recomputation and gives each replica more micro-batches to fill the pipeline. The ring may cross
nodes, as Llama 3's 131k-token stage ran it (tp 8 x cp 16; Llama Team 2024, Table 4): its link is
costed (split_comm.cp_exposed_s)."""
MIN_TOKENS_PER_CP_RANK = 4096
"""The searched context parallelism leaves each rank at least this many tokens of the sequence, as
every published layout in bench/data does (NEMO-11/12: 8,192 / 2; TTT-P02/P03: 65,536 / 2 and
131,072 / 4; Llama 3: 131,072 / 16): the ring's blocks shrink with it (smaller attention kernels,
one exchange per block), which the estimate does not charge below that."""

PRETRAIN_TOKENS_PER_STEP = (
    (1e9, 2**19),    # < 1B: 0.5M tokens (GPT-3 125M-760M, Brown et al. 2020, table 2.1)
    (3e9, 2**20),    # < 3B: 1M (GPT-3 1.3B and 2.7B)
    (7e9, 2**21),    # < 7B: 2M (GPT-3 6.7B)
    (2e11, 2**22),   # 7B-200B: 4M (Llama 2 all sizes; Llama 3 8B/70B)
    # 200B and up: 16M (Llama 3.1 405B after its first 2.87T tokens, Llama 3 paper section 3.4.1;
    # DeepSeek-V3 671B ramps from 3,072 to 15,360 sequences of 4K, 12.6M -> 63M, DeepSeek-V3
    # technical report 4.2)
    (float("inf"), 2**24),
)
"""Tokens per optimizer step for pre-training and continued pre-training, by parameter count."""
PIPELINE_MICRO_BATCHES = (1, 2, 4, 8)
"""Micro-batch sizes timed under pipelining, where small ones pay: the bubble is (pp - 1) / v
micro-batch times and in-flight memory grows with the size (Megatron and NeMo configurations use
1-4)."""


@lru_cache(maxsize=1024)
def divisors(n: int) -> tuple[int, ...]:
    """Every divisor of n, ascending, from its prime factorization (sqrt(n) steps, not n)."""
    found = [1]
    rest, factor = n, 2
    while factor * factor <= rest:
        power = 0
        while rest % factor == 0:
            rest //= factor
            power += 1
        if power:
            found = [d * factor**k for d in found for k in range(power + 1)]
        factor += 1 if factor == 2 else 2
    if rest > 1:
        found += [d * rest for d in found]
    return tuple(sorted(found))


@lru_cache(maxsize=4096)
def virtual_stage_candidates(layers: int, pp: int) -> tuple[int, ...]:
    """Virtual stages per rank worth searching for `layers` over pp stages: VIRTUAL_STAGES, the
    divisors of the layers per stage up to 4 and the largest EXTRA_VIRTUAL_STAGES above it (plain,
    or with the embedding and the loss counted as layers)."""
    if pp <= 1:
        return (1,)
    counts = {d for total in (layers, layers + 2) if total % pp == 0
              for d in divisors(total // pp) if pp * d <= layers + 2}
    small = {d for d in counts if d <= max(VIRTUAL_STAGES)}
    large = sorted(d for d in counts if d > max(VIRTUAL_STAGES))[-EXTRA_VIRTUAL_STAGES:]
    return tuple(sorted({v for v in VIRTUAL_STAGES if pp * v <= layers} | small | set(large)))


def default_global_batch(method: str, seq_len: int, params: float = 7e9) -> int:
    """Sequences per step when the user gives none: pre-training by model size
    (PRETRAIN_TOKENS_PER_STEP), fine-tuning, LoRA and QLoRA FINETUNE_SEQUENCES_PER_STEP
    sequences."""
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


def dividing_sizes(replica_batch: int, limits: Iterable[int]) -> set[int]:
    """For each limit, the largest micro-batch at most that which divides the replica's batch (no
    last smaller micro-batch)."""
    sizes = divisors(replica_batch)
    return {max(d for d in sizes if d <= limit) for limit in limits}


def micro_batch_candidates(replica_batch: int, largest_fitting: int, pp: int,
                           exact: bool = False) -> tuple[int, ...]:
    """Micro-batch sizes worth timing (module docstring), largest first. `exact`: the stack needs
    micro-batch x accumulation steps = the per-replica batch (Megatron's `gbs % (mbs * dp) == 0`,
    DeepSpeed's train_batch_size, the Hugging Face Trainer), so only its divisors are sizes."""
    top = min(replica_batch, largest_fitting)
    pipelined = [k for k in PIPELINE_MICRO_BATCHES if k <= top]
    if exact:
        limits = [top] if pp == 1 else pipelined
        return tuple(sorted(dividing_sizes(replica_batch, limits), reverse=True))
    # the balanced size: as few micro-batches as `top` allows, as even as sizes allow; and the
    # largest size that divides the replica's batch, where that is another: a last smaller
    # micro-batch wastes GEMM efficiency and hides less traffic behind its shorter backward pass,
    # so more, even micro-batches may be faster
    balanced = {-(-replica_batch // -(-replica_batch // k))
                for k in ([top] if pp == 1 else pipelined)}
    return tuple(sorted(balanced | dividing_sizes(replica_batch, [top]), reverse=True))


def tries_block(spec: LayoutSpec) -> bool:
    """Whether the search tries Megatron's block recomputation: when neither the policy nor the
    layer count is given."""
    return spec.recompute is None and spec.recompute_layers is None


def loss_on(spec: LayoutSpec, framework: str | None) -> str:
    """The spec's loss on a stack: Megatron's (and an unnamed stack's skeleton) is always plain."""
    return spec.loss if framework is not None and stack_of(framework).leaner_losses else "plain"


@dataclass(frozen=True)
class SearchInputs:
    """What one search reads besides its space: the model's shape, the method, the cluster, the
    spec, the LoRA rank (None for full-weight methods) and `cap`, the memory a layout may use (the
    card less the headroom kept free, `LayoutSpec.usable_gib`)."""

    shape: ModelShape
    method: str
    cluster: Cluster
    spec: LayoutSpec
    lora_rank: int | None
    cap: float


@dataclass(frozen=True)
class Split:
    """One (tp, pp, cp) of the search: the choices left open, and the most tokens/s any layout of
    it could reach (`bound`, which orders the splits and so breaks exact ties between
    combinations)."""

    tp: int
    pp: int
    cp: int
    dp: int
    global_batch: int
    sequence_parallel: bool
    stacks: tuple[tuple[str, int, int], ...]  # (framework, ZeRO stage, shard group; 0: not hybrid)
    virtual_stages: tuple[int, ...]
    bound: float
    expert_parallel: tuple[int, ...]
    stage_s: dict[str, float]  # per framework: the replica batch as one micro-batch, compute and TP
    recompute_s: dict[tuple[str, str], float]  # (recompute, framework) -> seconds it adds
    # Memory and compute do not depend on the fabric, so every search this split serves (one per
    # platform fabric) shares what the others evaluated: (framework, micro-batch) -> its compute,
    # from the probe on; `memo`: (framework, zero, recompute, micro-batch, virtual stages, ep, shard
    # group) -> whether it fits, layout and memory; ("states", framework, zero, ep, micro-batch,
    # shard group) -> the model states' floor; ("block", framework, zero, micro-batch, virtual
    # stages, ep) -> the fewest block-recomputed layers.
    compute: dict[tuple[str, int], tuple[Rates, MicroBatchCompute]]
    hybrid_gap: bool = False  # a stated hybrid shard no stack of this split runs (HYBRID_SPLIT_GAP)
    memo: dict[tuple[Any, ...], Any] = field(default_factory=dict, compare=False)

    @cached_property
    def replica_batch(self) -> int:
        """Sequences per data-parallel replica per step."""
        return self.global_batch // self.dp

    def layout(self, spec: LayoutSpec, lora_rank: int | None, fw: str, zero: int, rc: str, mb: int,
               v: int, ep: int, hs: int = 0) -> Layout:
        """The layout of this split with these choices: framework, ZeRO stage, recomputation,
        micro-batch, virtual stages, expert parallelism and shard group (0: not hybrid)."""
        return Layout(tp=self.tp, pp=self.pp, dp=self.dp, zero=zero, recompute=rc, micro_batch=mb,
                      global_batch=self.global_batch, seq_len=spec.seq_len,
                      precision=spec.precision, sequence_parallel=self.sequence_parallel,
                      lora_rank=lora_rank, optimizer=spec.optimizer, virtual_pipeline=v,
                      loss=loss_on(spec, fw), fused_modules=spec.fused_modules,
                      lora_targets=spec.lora_targets, flash_attention=spec.flash_attention,
                      framework=fw, cp=self.cp, ep=ep,
                      recompute_layers=spec.recompute_layers if rc == "full" else None,
                      state_offload=bool(spec.state_offload) and offloads_states(
                          fw, zero, self.tp, self.pp, spec.optimizer),
                      shard_group=hs or None, capacity_factor=spec.capacity_factor)


Choices = tuple[int, int, str, int, int, str, int]
"""A combination's choices (`Combination.choices`), the key under which the search remembers
which combinations fit at every micro-batch size."""


class Combination(NamedTuple):
    """One combination of choices on a split (the search space's `splits[split]`): expert
    parallelism, framework, ZeRO stage, shard group (0: no hybrid sharding), recomputation and
    virtual stages. `bound` is the most tokens/s it could reach (compute, recomputation and
    tensor-parallel traffic at the largest micro-batch, the smallest bubble, no data-parallel
    traffic); `work_s` the seconds per step of that work. (A named tuple: a search makes thousands,
    and a frozen dataclass's construction was a tenth of the space's building.)"""

    split: int
    ep: int
    framework: str
    zero: int
    shard_group: int
    recompute: str
    virtual_stages: int
    bound: float
    work_s: float

    @property
    def choices(self) -> Choices:
        """(split, ep, framework, zero, shard group, recompute, virtual stages)."""
        return (self.split, self.ep, self.framework, self.zero, self.shard_group, self.recompute,
                self.virtual_stages)

    def layout(self, split: Split, spec: LayoutSpec, lora_rank: int | None, mb: int) -> Layout:
        """Its layout at micro-batch `mb` (`split` is the one it names)."""
        return split.layout(spec, lora_rank, self.framework, self.zero, self.recompute, mb,
                            self.virtual_stages, self.ep, self.shard_group)


class Rejection(NamedTuple):
    """A layout left out before any combination is timed, why, and the kind it is counted under."""

    layout: Layout
    reason: str
    kind: str


Row = tuple[int, int, str, int, int, str, int, float, float]
"""A `Combination`'s fields: the cached spaces hold these, which the garbage collector untracks (a
named tuple it walks for life: rubin_buy_or_rent's were 5.6 s of a 34 s replay of its searches)."""
Ranked = tuple[tuple[Row, ...], tuple[tuple[str, int], ...]]  # rows, unrunnable counts by kind


@dataclass(frozen=True)
class SearchSpace:
    """The splits with their rejections, the combinations best bound first (as `Row`s), and how
    many combinations no stack runs, by reason."""

    splits: tuple[Split, ...]
    rejections: tuple[Rejection, ...]
    rows: tuple[Row, ...]
    unrunnable: tuple[tuple[str, int], ...]


@dataclass
class SplitLinks:
    """What the combinations of one split share in one search: its groups' links, and the fixed
    costs of each combination on them (memory and compute, which do not read the links, live on
    the split itself)."""

    tp_link: GroupLink
    cp_link: GroupLink
    dp_link: GroupLink
    pp_link: GroupLink
    fixed: dict[tuple[str, int, str, int, int, int], tuple[float, float]] = field(
        default_factory=dict)

    @classmethod
    def of(cls, split: Split, cluster: Cluster) -> SplitLinks:
        tp_link, cp_link, dp_link, pp_link, _ = layout_links(cluster, split.tp, split.pp, split.cp,
                                                             split.dp)
        return cls(tp_link, cp_link, dp_link, pp_link)


def search_space(shape: ModelShape, method: str, cluster: Cluster, spec: LayoutSpec,
                 lora_rank: int | None) -> SearchSpace:
    """The splits, their rejections, the combinations best bound first and the unrunnable counts
    by kind."""
    # Nothing in the splits depends on the fabric between nodes unless a fixed tp spans nodes, so
    # one set of splits serves every platform with this GPU and node size.
    plan_cluster = cluster if (spec.tp or 1) > cluster.gpus_per_node else replace(
        cluster, fabric_kind="none", fabric_gbps_per_gpu=0.0)
    found, rejections = splits(shape, method, plan_cluster, spec, lora_rank)
    if any(ep > 1 for split in found for ep in split.expert_parallel):
        # (all-to-all bounds read the fabric)
        rows, unrunnable = ranked_rows(shape, method, cluster, spec, lora_rank, found)
    else:
        rows, unrunnable = fabric_free_rows(shape, method, plan_cluster, spec, lora_rank)
    return SearchSpace(found, rejections, rows, unrunnable)


@lru_cache(maxsize=4096)
def splits(shape: ModelShape, method: str, cluster: Cluster, spec: LayoutSpec, lora_rank: int | None
           ) -> tuple[tuple[Split, ...], tuple[Rejection, ...]]:
    """Every (tp, pp, cp) worth trying with its throughput bound, most promising first; and the
    ones rejected outright."""
    gpus, per_node = cluster.gpus, cluster.gpus_per_node
    rejections: list[Rejection] = []
    default = default_global_batch(method, spec.seq_len, shape.total_params)
    target = spec.global_batch or (min(default, spec.batch_limit) if spec.batch_limit else default)

    def skeleton(tp: int, pp: int, cp: int = 1) -> Layout:
        return Layout(tp=tp, pp=pp, dp=max(1, gpus // (tp * pp * cp)), zero=spec.zero or 0,
                      recompute=spec.recompute or "none", micro_batch=spec.micro_batch or 1,
                      global_batch=target, seq_len=spec.seq_len, precision=spec.precision,
                      sequence_parallel=bool(spec.sequence_parallel), lora_rank=lora_rank,
                      optimizer=spec.optimizer, fused_modules=spec.fused_modules,
                      loss=loss_on(spec, spec.framework),
                      lora_targets=spec.lora_targets, cp=cp, framework=spec.framework or "megatron")

    found: list[Split] = []
    for tp in [spec.tp] if spec.tp else list(divisors(gpus)):
        if tp > per_node and not spec.tp:
            rejections.append(Rejection(skeleton(tp, 1),
                                        f"tp={tp} spans {-(-tp // per_node)} nodes",
                                        "tp spans nodes"))
            continue
        if shape.heads % tp or (tp > shape.kv_heads and tp % shape.kv_heads) or (
                tp < shape.kv_heads and shape.kv_heads % tp):
            rejections.append(Rejection(
                skeleton(tp, 1),
                f"tp={tp} does not divide {shape.heads} heads / {shape.kv_heads} KV heads",
                "tp incompatible with heads"))
            continue
        cps = [spec.cp] if spec.cp else [
            c for c in CONTEXT_PARALLEL
            if c == 1 or (spec.seq_len >= LONG_SEQUENCE and spec.seq_len % c == 0
                          and spec.seq_len // c >= MIN_TOKENS_PER_CP_RANK)]
        for cp in cps:
            if (gpus // tp) % cp:
                continue
            rest = gpus // (tp * cp)
            # (a stated interleaving needs pipeline stages: without pp it is searched among pp > 1)
            interleaved = (spec.virtual_pipeline or 1) > 1
            pps = [spec.pp] if spec.pp else [p for p in divisors(rest)
                                             if p <= shape.layers and (p > 1 or not interleaved)]
            for pp in pps:
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
                    rejections.append(Rejection(skeleton(tp, pp, cp), why,
                                                "global batch too small for dp"))
                    continue
                found.append(_split(shape, method, cluster, spec, lora_rank, tp, pp, cp, dp, gb))
    found.sort(key=lambda split: -split.bound)
    return tuple(found), tuple(rejections)


def _split(shape: ModelShape, method: str, cluster: Cluster, spec: LayoutSpec,
           lora_rank: int | None, tp: int, pp: int, cp: int, dp: int, gb: int) -> Split:
    """One split with its stacks, virtual stages, expert parallelism and throughput bound: each
    stack that runs it is timed once, with the replica batch as one micro-batch."""
    options = framework_options(method, spec, dp * cp, pp)
    stacks = hybrid_options(options, spec, tp, cp, dp * cp, cluster.gpus_per_node)
    hybrid_gap = bool(spec.hybrid_shard and options and not stacks)  # (a stated one it cannot run)
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
    # kernels (fusion, attention) differ by stack; a stack that cannot run this split is not timed
    runnable = (f for f in dict.fromkeys(f for f, _, _ in stacks)
                if not split_gap(method, spec, f, tp, pp, cp, shape.heads))
    for fw in runnable:
        probe = Layout(tp=tp, pp=pp, dp=dp, zero=0, recompute="none", micro_batch=mb,
                       global_batch=gb, seq_len=spec.seq_len, precision=spec.precision,
                       sequence_parallel=sp,
                       lora_rank=lora_rank, optimizer=spec.optimizer,
                       loss=loss_on(spec, fw), fused_modules=spec.fused_modules,
                       lora_targets=spec.lora_targets, flash_attention=spec.flash_attention, cp=cp,
                       framework=fw)
        r = rates(shape, probe, cluster)
        mbc = micro_batch_compute(shape, method, probe, r)
        compute[(fw, mb)] = (r, mbc)
        stage_s[fw] = (stage_lower_bound_s(shape, probe, cluster, tp_link, mbc)
                       * probe.micro_batch_equivalents)
        for rc in recompute_options(spec, fw, method):
            extra[(rc, fw)] = (recompute_s(mbc, r, rc, fw) * probe.micro_batch_equivalents
                               / cluster.speedup)
    # the bubble is at least (pp - 1) / v single-sequence stage times, at the most virtual stages
    bubble = 1 + (pp - 1) / max(vps) / replica if pp > 1 else 1.0
    bound = gb * spec.seq_len / (min(stage_s.values(), default=float("inf")) * bubble)
    if spec.ep:
        eps: tuple[int, ...] = (spec.ep,) if dp % spec.ep == 0 else ()
    elif shape.is_moe and method not in ADAPTER_METHODS:
        eps = tuple(e for e in EXPERT_PARALLEL if dp % e == 0 and shape.moe_experts % e == 0)
    else:
        eps = (1,)
    return Split(tp, pp, cp, dp, gb, sp, stacks, vps, bound, eps, stage_s, extra, compute,
                 hybrid_gap)


def combinations(shape: ModelShape, method: str, cluster: Cluster, spec: LayoutSpec,
                 lora_rank: int | None, found: tuple[Split, ...]
                 ) -> tuple[tuple[Combination, ...], tuple[tuple[str, int], ...]]:
    """`ranked_rows` as combinations (best bound first) and the unrunnable counts by reason."""
    rows, unrunnable = ranked_rows(shape, method, cluster, spec, lora_rank, found)
    return tuple(map(Combination._make, rows)), unrunnable


def ranked_rows(shape: ModelShape, method: str, cluster: Cluster, spec: LayoutSpec,
                lora_rank: int | None, found: tuple[Split, ...]) -> Ranked:
    """Every split x expert parallelism x framework and ZeRO stage x recompute x virtual stages,
    with the most tokens/s it could reach (compute, recomputation, tensor-parallel and all-to-all
    traffic and the smallest bubble), best bound first: the search stops at the first that cannot
    beat the fastest layout found, wherever in the space it lies. Also how many were left out
    because no stack runs them, by reason (a pipelined LoRA outside Megatron; a split of the layers
    no stack makes: stages.py)."""
    ranked: list[tuple[float, Row]] = []  # (-bound, the combination's row)
    unrunnable: Counter[str] = Counter()
    rc_options: dict[str, tuple[str, ...]] = {}  # framework -> recompute_options (read per stage)
    for index, split in enumerate(found):
        replica = split.replica_batch
        a2a: dict[int, tuple[float, float]] = {}  # ep -> all-to-all seconds (`_work_s`)
        # (what every combination of the split shares, worked out once: the same floats)
        stage_vs: dict[str, list[int]] = {}  # framework -> the virtual stages it can split so
        stage = -(-shape.layers // split.pp)
        tokens_step = split.global_batch * spec.seq_len
        bubbles = {v: 1 + (split.pp - 1) / v / replica for v in split.virtual_stages}
        if split.hybrid_gap:
            unrunnable[HYBRID_SPLIT_GAP] += 1
        split_gaps: dict[str, str | None] = {}  # framework -> split_gap (any ZeRO stage or ep)
        for ep, fw, zero, hs in ((e, f, z, h) for e in split.expert_parallel
                                 for f, z, h in split.stacks):
            if hs and ep > 1:  # (hybrid sharding is not combined with expert parallelism)
                continue
            if fw not in split_gaps:
                split_gaps[fw] = split_gap(method, spec, fw, split.tp, split.pp, split.cp,
                                           shape.heads)
            why = (split_gaps[fw]
                   or expert_parallel_gap(fw, method, spec.optimizer, spec.precision, ep)
                   or replicated_split_gap(method, spec, fw, zero, split)
                   or uneven_micro_batch_gap(spec, fw, replica))
            if why:
                unrunnable[why] += 1
                continue
            if fw not in stage_vs:
                stage_vs[fw] = [v for v in split.virtual_stages
                                if split_problem(shape.layers, split.pp, v, fw) is None]
            vs = stage_vs[fw]
            unrunnable["no stack splits the layers so (pipeline stages)"] += (
                len(split.virtual_stages) - len(vs))
            # block recomputation (given, or tried by the search on Megatron's full recomputation)
            # redoes at least `recompute_layers` (or 1) layers of each of the v chunks of the
            # slowest stage
            block = spec.recompute_layers or (
                1 if tries_block(spec) and stack_of(fw).block_recompute else 0)
            if fw not in rc_options:
                rc_options[fw] = recompute_options(spec, fw, method)
            for rc in rc_options[fw]:
                gap = recompute_gap(rc, method, spec, fw, zero, split, hs, ep)
                if gap:
                    unrunnable[gap] += 1
                    continue
                base_s, redone_a2a_s = _work_s(shape, cluster, spec, lora_rank, split, fw, zero, rc,
                                               ep, hs, a2a)
                extra_s = split.recompute_s[(rc, fw)] + redone_a2a_s
                blocked = block and rc == "full"
                for v in vs:
                    # (a chunk of one layer has no block method: all of it or none is recomputed)
                    share = (min(1.0, block * v / stage) if blocked and -(-stage // v) > 1
                             else 1.0)
                    work_s = base_s + extra_s * share
                    bound = tokens_step / (work_s * bubbles[v])
                    ranked.append((-bound, (index, ep, fw, zero, hs, rc, v, bound, work_s)))
    # the search's order: best bound first, then the split's rank and the choices (a tie on the
    # bound compares the combinations' fields in turn, bound and work last)
    ranked.sort()
    return (tuple(row for _, row in ranked),
            tuple((kind, n) for kind, n in unrunnable.items() if n))


def _work_s(shape: ModelShape, cluster: Cluster, spec: LayoutSpec, lora_rank: int | None,
            split: Split, fw: str, zero: int, rc: str, ep: int, hs: int,
            a2a: dict[int, tuple[float, float]]) -> tuple[float, float]:
    """Seconds per step no micro-batch size of the combination avoids before recomputation: the
    split's stage seconds on the framework plus the exposed all-to-all of expert parallelism; and
    the all-to-all seconds that a full recomputation's repeated forward adds. `a2a` holds the
    split's all-to-all seconds by ep (they read no framework, ZeRO stage or recomputation)."""
    base_s = split.stage_s[fw]
    # all-to-all seconds per step do not depend on the micro-batch size; a recomputed forward
    # repeats its dispatch and combine, layer by layer (`redone_a2a_s`, for the share redone)
    redone_a2a_s = 0.0
    if ep > 1:
        if ep not in a2a:
            stage = -(-shape.layers // split.pp)
            whole = split.layout(spec, lora_rank, fw, zero, rc, split.replica_batch, 1, ep, hs)
            link = group_link(cluster, ep, split.tp * split.cp)
            a2a[ep] = (ep_exposed_s(shape, whole, link, stage, 0) / cluster.speedup,
                       ep_exposed_s(shape, whole, link, stage, 1) / cluster.speedup)
        kept, redone = a2a[ep]
        base_s += kept
        if rc == "full":
            redone_a2a_s = redone - kept
    return base_s, redone_a2a_s


@lru_cache(maxsize=4096)
def fabric_free_rows(shape: ModelShape, method: str, plan_cluster: Cluster, spec: LayoutSpec,
                     lora_rank: int | None) -> Ranked:
    """`ranked_rows` of splits without expert parallelism, whose bounds do not read the fabric:
    one ordering serves every platform fabric of the GPU and node size."""
    found, _ = splits(shape, method, plan_cluster, spec, lora_rank)
    return ranked_rows(shape, method, plan_cluster, spec, lora_rank, found)
