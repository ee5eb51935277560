"""Layout search: the fastest valid layout that fits, for the fields the user left open.

Candidates: tp over the divisors of the GPU count that fit in one node and divide the attention
heads (and are compatible with the KV heads); pp over the divisors of the rest (at most one layer per
stage; stages may be uneven); dp = gpus / (tp pp); ZeRO 0-3 (only 0 when dp = 1); recompute none or
full ("selective" only when asked: with FlashAttention it stores what "none" stores); micro-batch
1, 2, 4, 8, 16; interleaved pipeline with 1, 2, 3, 4, 6 or 8 virtual stages when they divide the layers.

Default global batch (sequences) when not given: pre-training and continued pre-training ~4M
tokens per step (2^22 tokens, as Llama 2/3 and most published runs), fine-tuning, LoRA and QLoRA 128
sequences; rounded up to a multiple of dp x micro_batch (never below it).

ZeRO stages searched: 2 and 3 without pipelining (in this model ZeRO-2 moves the same bytes as 0
and 1 with less memory, so it dominates them); 1 with pipelining (Megatron's distributed optimizer and
DeepSpeed support only ZeRO-1 with pipeline parallelism); 0 when dp = 1.

Pruning (dominance; none of it changes the answer): memory before time, and time only for layouts
that fit; memory grows with micro-batch and virtual stages, so once the least-memory option
(highest ZeRO stage, full recompute) runs out, larger ones are not tried; recompute "full" is skipped
where "none" fits (it only adds time); ZeRO-3 where ZeRO-2 fits with the same recompute (it only
adds communication).
Results are cached per (model, method, cluster, spec).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from models.model_card import ModelCard
from planner.estimate.cluster import Cluster
from planner.estimate.estimator import _estimate, layout_problems
from planner.estimate.flops import ModelShape, model_key, shape_of
from planner.estimate.memory import memory_per_gpu
from planner.estimate.timing import dp_lower_bound_s, p2p_s, stage_lower_bound_s, step_time
from planner.estimate.topology import group_link
from planner.estimate.types import (
    ADAPTER_METHODS,
    FULL_METHODS,
    Estimate,
    Layout,
    LayoutSpec,
)

PRETRAIN_TOKENS_PER_STEP = 2**22
FINETUNE_SEQUENCES_PER_STEP = 128
MICRO_BATCHES = (1, 2, 4, 8, 16)
VIRTUAL_STAGES = (1, 2, 3, 4, 6, 8)
MAX_REJECTED_KEPT = 400


def default_global_batch(method: str, seq_len: int, dp: int, micro_batch: int) -> int:
    """Sequences per step (module docstring), a multiple of dp x micro_batch."""
    if method in ("pretrain", "continued_pretrain"):
        target = max(1, round(PRETRAIN_TOKENS_PER_STEP / seq_len))
    else:
        target = FINETUNE_SEQUENCES_PER_STEP
    unit = dp * micro_batch
    return max(unit, -(-target // unit) * unit)


@dataclass(frozen=True)
class SearchResult:
    """The fastest layout that fits (ties: less memory), or None; what was considered and rejected.

    `rejected` keeps (layout, reason) pairs (at most MAX_REJECTED_KEPT; `reasons` counts all of them
    by kind); `closest` is the least-memory layout when nothing fits; `searched` names the fields the
    search chose. `why(tp=8)` answers "why not TP=8?" in one sentence.
    """

    best: Estimate | None
    considered: int
    rejected: tuple[tuple[Layout, str], ...]
    reasons: dict[str, int]
    searched: tuple[str, ...]
    closest: Estimate | None = None
    spec: LayoutSpec = field(default_factory=LayoutSpec)
    _model: ModelCard | None = field(default=None, repr=False, compare=False)
    _method: str = field(default="pretrain", repr=False, compare=False)
    _cluster: Cluster | None = field(default=None, repr=False, compare=False)

    @property
    def least_memory(self) -> Estimate | None:
        """The least-memory layout when nothing fits (alias of `closest`)."""
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
    precision, a precision the GPU lacks, a lora rank with a full method, a fixed tp/pp that does
    not divide the GPU count or the heads.
    """
    return _search(_Key(model_key(model), method, cluster, spec, model))


@lru_cache(maxsize=4096)
def _search(key: _Key) -> SearchResult:
    model, method, cluster, spec = key.model, key.method, key.cluster, key.spec
    shape = shape_of(model)
    per_node = cluster.gpus_per_node
    lora_rank = spec.lora_rank if method in ADAPTER_METHODS else None
    _check_spec(shape, method, cluster, spec, lora_rank)

    rejected: list[tuple[Layout, str]] = []
    reasons: Counter[str] = Counter()

    def reject(layout: Layout, reason: str, kind: str) -> None:
        reasons[kind] += 1
        if len(rejected) < MAX_REJECTED_KEPT:
            rejected.append((layout, reason))

    cap = spec.usable_gib(cluster.gpu.memory_gib)  # the card less the headroom kept free
    considered = 0
    best: tuple[float, float, Layout, float] | None = None  # (step tokens/s neg, mem, layout, paged)
    closest: tuple[float, Layout] | None = None

    # Nothing in the plan depends on the fabric between nodes unless a fixed tp spans nodes, so one
    # plan serves every platform with this GPU and node size.
    plan_cluster = cluster if (spec.tp or 1) > per_node else replace(
        cluster, fabric_kind="none", fabric_gbps_per_gpu=0.0)
    pairs, rejections = _plan(shape, method, plan_cluster, spec, lora_rank)
    for layout, reason, kind in rejections:
        reject(layout, reason, kind)

    for pair in pairs:
        zeros, recomputes, vps = pair.zeros, pair.recomputes, pair.virtual_stages
        if best is not None and max(bound for _, _, bound, _ in pair.micro_batches) < -best[0]:
            reasons["cannot beat the fastest layout found"] += len(pair.micro_batches)
            continue  # (an early exit would do; counting keeps the reasons complete)
        tp_link = group_link(cluster, pair.tp, 1)
        dp_link = group_link(cluster, pair.dp, pair.tp)
        pp_link = group_link(cluster, min(pair.pp, 2), pair.tp * pair.dp)

        def make(zero: int, rc: str, mb: int, v: int, gb: int, pair: _Pair = pair) -> Layout:
            return Layout(tp=pair.tp, pp=pair.pp, dp=pair.dp, zero=zero, recompute=rc, micro_batch=mb,
                          global_batch=gb, seq_len=spec.seq_len, precision=spec.precision,
                          sequence_parallel=pair.sequence_parallel, lora_rank=lora_rank,
                          optimizer=spec.optimizer, virtual_pipeline=v, chunked_loss=spec.chunked_loss,
                          lora_targets=spec.lora_targets, flash_attention=spec.flash_attention)

        for mb, gb, bound, stage_s in pair.micro_batches:
            tokens = gb * spec.seq_len
            if best is not None and bound < -best[0]:
                reasons["cannot beat the fastest layout found"] += 1
                continue
            # Tighter, per virtual-stage count: the bubble at v stages, the pipeline transfers and the
            # data-parallel traffic no ZeRO stage avoids (terms of `step_time`, see timing.py).
            probe = make(zeros[0], "none", mb, 1, gb)
            micro = probe.micro_batches
            dp_s = (dp_lower_bound_s(shape, method, probe, cluster, dp_link, zeros)
                    if best is not None and pair.dp > 1 else 0.0)
            transfer_s = micro * p2p_s(shape, probe, pp_link) / cluster.speedup
            fits_at_some_v = skipped_v = False
            for v in vps:
                if best is not None and tokens / ((micro + (pair.pp - 1) / v) * stage_s + dp_s + v * transfer_s
                                                  ) < -best[0]:
                    reasons["cannot beat the fastest layout found"] += 1
                    skipped_v = True
                    continue
                # Memory grows with the micro-batch and the virtual stages: if the least-memory
                # option does not fit here, nothing with a larger mb or v will.
                lowest = make(max(zeros), recomputes[-1], mb, v, gb)
                considered += 1
                lowest_mem = _memory(shape, method, lowest, cap)
                lowest_total = lowest_mem.breakdown.total_gib
                if closest is None or lowest_total < closest[0]:
                    closest = (lowest_total, lowest)
                if lowest_total > cap:
                    reject(lowest, f"out of memory: {lowest_total:.1f} GiB > {cap:g} GiB", "out of memory")
                    break
                fits_at_some_v = True
                fitted_rc: set[str] = set()
                for rc in recomputes:
                    if rc == "full" and "none" in fitted_rc and not spec.recompute:
                        continue  # dominated: recompute only adds time where none fits
                    for zero in zeros:
                        if zero == 3 and rc in fitted_rc and spec.zero is None:
                            continue  # dominated: ZeRO-3 only adds communication
                        if zero == lowest.zero and rc == lowest.recompute:
                            layout, mem = lowest, lowest_mem
                        else:
                            layout = make(zero, rc, mb, v, gb)
                            considered += 1
                            mem = _memory(shape, method, layout, cap)
                        total = mem.breakdown.total_gib
                        if total > cap:
                            reject(layout, f"out of memory: {total:.1f} GiB > {cap:g} GiB", "out of memory")
                            continue
                        fitted_rc.add(rc)
                        t = step_time(shape, method, layout, cluster, tp_link, dp_link, pp_link,
                                      mem.paged_offload_params).total_s
                        rate = gb * spec.seq_len / t
                        if best is None or (-rate, total) < (best[0], best[1]):
                            best = (-rate, total, layout, 0.0)
            if not fits_at_some_v and not skipped_v:
                break  # nothing fit at this micro-batch, so no larger one will
    best_est = _estimate(model, shape, method, cluster, best[2]) if best else None
    closest_est = None
    if best is None and closest is not None:
        closest_est = _estimate(model, shape, method, cluster, closest[1])
    if best_est is not None:
        searched = spec.searched_fields()
        if searched:
            best_est.notes.insert(0, f"searched {', '.join(searched)} over {considered} layouts; chose "
                                     f"{best_est.layout.short()}")
        if not spec.global_batch:
            best_est.notes.append(f"global batch {best_est.layout.global_batch} sequences by the default "
                                  "rule " + ("(~4M tokens per step)" if method in FULL_METHODS[:2]
                                     else f"({FINETUNE_SEQUENCES_PER_STEP} sequences per step)"))
    return SearchResult(best=best_est, considered=considered, rejected=tuple(rejected),
                        reasons=dict(reasons.most_common()), searched=spec.searched_fields(),
                        closest=closest_est, spec=spec, _model=model, _method=method, _cluster=cluster)



@dataclass(frozen=True)
class _Pair:
    """One (tp, pp) of the search: the choices left open, and per micro-batch (micro_batch,
    global_batch, the most tokens/s any layout of it could reach)."""

    tp: int
    pp: int
    dp: int
    sequence_parallel: bool
    zeros: tuple[int, ...]
    recomputes: tuple[str, ...]
    virtual_stages: tuple[int, ...]
    micro_batches: tuple[tuple[int, int, float, float], ...]


@lru_cache(maxsize=4096)
def _plan(shape: ModelShape, method: str, cluster: Cluster, spec: LayoutSpec, lora_rank: int | None
          ) -> tuple[tuple[_Pair, ...], tuple[tuple[Layout, str, str], ...]]:
    """Every (tp, pp, micro-batch) worth trying, each with the throughput no layout of it can beat,
    most promising first (so the bound skips most of the rest); and the (tp, pp) rejected outright."""
    gpus, per_node = cluster.gpus, cluster.gpus_per_node
    rejections: list[tuple[Layout, str, str]] = []

    def reject(layout: Layout, reason: str, kind: str) -> None:
        rejections.append((layout, reason, kind))

    def skeleton(tp: int, pp: int) -> Layout:
        return Layout(tp=tp, pp=pp, dp=max(1, gpus // (tp * pp)), zero=spec.zero or 0,
                      recompute=spec.recompute or "none", micro_batch=spec.micro_batch or 1,
                      global_batch=spec.global_batch or 1, seq_len=spec.seq_len, precision=spec.precision,
                      sequence_parallel=bool(spec.sequence_parallel), lora_rank=lora_rank,
                      optimizer=spec.optimizer, chunked_loss=spec.chunked_loss,
                      lora_targets=spec.lora_targets)

    pairs: list[_Pair] = []
    for tp in [spec.tp] if spec.tp else list(_divisors(gpus)):
        if tp > per_node and not spec.tp:
            reject(skeleton(tp, 1), f"tp={tp} spans {-(-tp // per_node)} nodes", "tp spans nodes")
            continue
        if shape.heads % tp or (tp > shape.kv_heads and tp % shape.kv_heads) or (
                tp < shape.kv_heads and shape.kv_heads % tp):
            reject(skeleton(tp, 1),
                   f"tp={tp} does not divide {shape.heads} heads / {shape.kv_heads} KV heads",
                   "tp incompatible with heads")
            continue
        rest = gpus // tp
        for pp in [spec.pp] if spec.pp else [p for p in _divisors(rest) if p <= shape.layers]:
            pair = _pair(shape, method, cluster, spec, lora_rank, tp, pp, reject)
            if pair.micro_batches:
                pairs.append(pair)
    pairs.sort(key=lambda pr: -max(bound for _, _, bound, _ in pr.micro_batches))
    return tuple(pairs), tuple(rejections)


def _pair(shape: ModelShape, method: str, cluster: Cluster, spec: LayoutSpec, lora_rank: int | None,
          tp: int, pp: int, reject: Callable[[Layout, str, str], None]) -> _Pair:
    dp = cluster.gpus // (tp * pp)
    if spec.zero is not None:
        zeros = [spec.zero]
    elif dp == 1:
        zeros = [0]
    elif pp > 1:
        zeros = [1]  # Megatron's distributed optimizer / DeepSpeed: pipelining with ZeRO-1 only
    else:
        zeros = [2, 3]  # ZeRO-2 dominates 0 and 1: same traffic, less memory
    recomputes = [spec.recompute] if spec.recompute else ["none", "full"]
    vps = ([spec.virtual_pipeline] if spec.virtual_pipeline else
           [v for v in VIRTUAL_STAGES if v == 1 or (pp > 1 and shape.layers % (pp * v) == 0)])
    sp = spec.sequence_parallel if spec.sequence_parallel is not None else tp > 1
    tp_link = group_link(cluster, tp, 1)
    bounds: list[tuple[int, int, float, float]] = []
    for mb in [spec.micro_batch] if spec.micro_batch else list(MICRO_BATCHES):
        if spec.global_batch:
            gb = spec.global_batch
            if gb % (dp * mb):
                reject(Layout(tp=tp, pp=pp, dp=dp, zero=spec.zero or 0, recompute=spec.recompute or "none",
                              micro_batch=mb, global_batch=gb, seq_len=spec.seq_len, precision=spec.precision,
                              sequence_parallel=sp, lora_rank=lora_rank),
                       f"global_batch {gb} is not a multiple of dp x micro_batch = {dp} x {mb}",
                       "global batch not divisible")
                continue
        else:
            if mb > 1 and dp * mb > default_global_batch(method, spec.seq_len, 1, 1):
                continue  # the default batch would have to grow just to fit this micro-batch
            gb = default_global_batch(method, spec.seq_len, dp, mb)
        probe = Layout(tp=tp, pp=pp, dp=dp, zero=0, recompute="none", micro_batch=mb, global_batch=gb,
                       seq_len=spec.seq_len, precision=spec.precision, sequence_parallel=sp,
                       lora_rank=lora_rank, optimizer=spec.optimizer, chunked_loss=spec.chunked_loss,
                       lora_targets=spec.lora_targets, flash_attention=spec.flash_attention)
        stage_s = stage_lower_bound_s(shape, method, probe, cluster, tp_link)
        lower_s = (probe.micro_batches + (pp - 1) / max(vps)) * stage_s
        bounds.append((mb, gb, gb * spec.seq_len / lower_s, stage_s))
    return _Pair(tp, pp, dp, sp, tuple(zeros), tuple(recomputes), tuple(vps), tuple(bounds))


# Memory does not depend on the fabric or reliability, so it is shared by every cluster of a GPU.
_memory = lru_cache(maxsize=65536)(memory_per_gpu)


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
    for name in ("micro_batch", "global_batch", "virtual_pipeline"):
        value = getattr(spec, name)
        if value is not None and value < 1:
            problems.append(f"{name}: must be at least 1, got {value}")
    if spec.seq_len < 1:
        problems.append(f"seq_len: must be at least 1, got {spec.seq_len}")
    if problems:
        raise ValueError("; ".join(problems))
    dp = gpus // (tp * pp)
    probe = Layout(tp=tp, pp=pp, dp=dp, zero=spec.zero or 0, recompute=spec.recompute or "none",
                   micro_batch=spec.micro_batch or 1, global_batch=dp * (spec.micro_batch or 1),
                   seq_len=spec.seq_len, precision=spec.precision, sequence_parallel=False,
                   lora_rank=lora_rank, optimizer=spec.optimizer, lora_targets=spec.lora_targets,
                   virtual_pipeline=spec.virtual_pipeline or 1)
    if method in ADAPTER_METHODS and spec.lora_rank < 1:
        raise ValueError(f"lora_rank: must be at least 1, got {spec.lora_rank}")
    fixed_problems = [p for p in layout_problems(shape, method, cluster, probe)
                      if not p.startswith(("global_batch", "tp:" if spec.tp is None else "\0",
                                           "pp:" if spec.pp is None else "\0", "virtual_pipeline"
                                           if spec.virtual_pipeline is None else "\0"))]
    if fixed_problems:
        raise ValueError("; ".join(fixed_problems))


@lru_cache(maxsize=1024)
def _divisors(n: int) -> tuple[int, ...]:
    return tuple(d for d in range(1, n + 1) if n % d == 0)
