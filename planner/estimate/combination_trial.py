"""One combination of the layout search tried: its micro-batch sizes found, pruned and timed.

The largest micro-batch that fits is found by bisection on memory (`_largest_fitting`); then the few
sizes around the step-time optimum are timed (search_space.micro_batch_candidates), each checked for
memory and offered to the search's tally (`Tally.offer`: the fastest, ties to less memory). A
Megatron layout that fits only with full recomputation tries its block method
(`_block_recompute`). Pruning inside a combination (pruning.py) skips what cannot change the answer.
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any, NamedTuple

from plan.models.stacks import stack_of
from plan.planner.estimate.compute import micro_batch_compute, rates
from plan.planner.estimate.memory import MemoryResult, chunk_layers, memory_per_gpu
from plan.planner.estimate.pruning import (
    CANNOT_BEAT,
    OUT_OF_MEMORY,
    RECOMPUTATION_DOMINATED,
    block_redoes_little,
    bubble_bound,
    cannot_beat,
    fixed_costs_bound,
    fixed_lower_bound_s,
    states_floor,
)
from plan.planner.estimate.search_space import (
    PIPELINE_MICRO_BATCHES,
    Combination,
    SearchInputs,
    Split,
    SplitLinks,
    dividing_sizes,
    micro_batch_candidates,
    tries_block,
)
from plan.planner.estimate.timing import step_time
from plan.planner.estimate.topology import GroupLink, group_link
from plan.planner.estimate.types import Layout, interleaving_refused

MAX_REJECTED_KEPT = 24
"""Rejected layouts a result keeps as examples: the first of each kind (`reasons` counts every one
by kind), at most this many. A sample, not the list: results travel through the persistent store,
where 400 layouts per result made reading a warm cache cost more than the rest of a solve
(medical_hybrid: 0.23 s to unpickle 501 results), and the first 24 of any kind still made a third of
a cold run's writing (medical_hybrid: 501 results, 0.07 -> 0.03 s)."""
INTERLEAVING_REFUSED = "Megatron interleaves only with at least pp micro-batches per step"

# Memory does not depend on the fabric or reliability, so it is shared by every cluster of a GPU.
cached_memory = lru_cache(maxsize=65536)(memory_per_gpu)


class Found(NamedTuple):
    """A timed layout, ordered fastest first (ties: less memory)."""

    neg_rate: float  # -tokens/s
    memory_gib: float
    layout: Layout


@dataclass
class Tally:
    """What one search counts as it walks its space: the layouts considered, the first rejected
    layout of each kind, every skip and rejection by kind, and the fastest layout found."""

    considered: int = 0
    rejected: list[tuple[Layout, str]] = field(default_factory=list)
    reasons: Counter[str] = field(default_factory=Counter)
    best: Found | None = None
    best_rate: float | None = None  # tokens/s of `best`

    def reject(self, layout: Layout, reason: str, kind: str) -> None:
        self.reasons[kind] += 1
        if self.reasons[kind] == 1 and len(self.rejected) < MAX_REJECTED_KEPT:
            self.rejected.append((layout, reason))

    def offer(self, found: Found) -> None:
        """Keep `found` where it is faster than the best (or as fast with less memory)."""
        if self.best is None or found[:2] < (self.best[0], self.best[1]):
            self.best = found
            self.best_rate = -found.neg_rate


@dataclass(slots=True)
class Trial:
    """One combination in one search: its split, the split's links on the search's cluster, and
    its memory by micro-batch (memoised in the split, which every fabric's search shares)."""

    inputs: SearchInputs
    split: Split
    links: SplitLinks
    combo: Combination
    tries_block: bool = field(init=False)
    """Whether Megatron's block recomputation is tried on this combination (read for every size)."""

    def __post_init__(self) -> None:
        self.tries_block = (stack_of(self.combo.framework).block_recompute
                            and self.combo.recompute == "full" and tries_block(self.inputs.spec))

    def fits(self, mb: int, rc: str | None = None) -> tuple[bool, tuple[Layout, MemoryResult]]:
        """Whether the combination (with recomputation `rc` instead of its own, if given) fits at
        micro-batch `mb`, with its layout and memory."""
        c, memo = self.combo, self.split.memo
        key = (c.framework, c.zero, c.recompute if rc is None else rc, mb, c.virtual_stages, c.ep,
               c.shard_group)
        found: tuple[bool, tuple[Layout, MemoryResult]] | None = memo.get(key)
        if found is None:
            inputs = self.inputs
            lay = self.split.layout(inputs.spec, inputs.lora_rank, c.framework, c.zero, key[2],
                                    mb, c.virtual_stages, c.ep, c.shard_group)
            mem = cached_memory(inputs.shape, inputs.method, lay, inputs.cap,
                                inputs.cluster.host_memory_gib_per_gpu)
            found = memo[key] = (mem.breakdown.total_gib <= inputs.cap, (lay, mem))
        return found


def states_rule_out(inputs: SearchInputs, split: Split, combo: Combination, tally: Tally) -> bool:
    """Whether the model states alone do not fit at any micro-batch size, so none fits (counted
    and rejected in the tally): most combinations of a large model on a few cards end here, before
    any activation is counted or any link is looked up. The states are least with the whole
    replica batch as one micro-batch (FSDP's unsharded accumulation buffer exists only with
    several). Not asked where the micro-batch is stated."""
    spec, replica = inputs.spec, split.replica_batch
    if spec.micro_batch:
        return False
    floor = states_floor(inputs, split, combo.framework, combo.zero, combo.ep, replica,
                         combo.shard_group)
    if floor <= inputs.cap:
        return False
    tally.considered += 1
    if not tally.reasons[OUT_OF_MEMORY]:
        tally.reject(combo.layout(split, spec, inputs.lora_rank, replica),
                     f"out of memory: the model states alone take {floor:.1f} GiB > "
                     f"{inputs.cap:g} GiB", OUT_OF_MEMORY)
    else:
        tally.reasons[OUT_OF_MEMORY] += 1
    return True


def try_combination(inputs: SearchInputs, split: Split, links: SplitLinks, combo: Combination,
                    tally: Tally) -> bool:
    """Time the combination's micro-batch sizes that fit, offering each to the tally; whether every
    size fits (False where pruned or where the micro-batch is stated). The caller has asked
    `states_rule_out` first."""
    spec, replica = inputs.spec, split.replica_batch
    trial = Trial(inputs, split, links, combo)
    # The combination's traffic and optimizer time no micro-batch size avoids tighten its bound
    # (the order uses compute alone): skip it when even that cannot beat the fastest found. Worth
    # its cost where data-parallel traffic crosses nodes; elsewhere once the layout fits.
    fixed_s = 0.0
    if tally.best is not None and (spec.micro_batch or trial.links.dp_link.spans_nodes
                                   or trial.fits(1)[0]):
        fixed_s = fixed_lower_bound_s(inputs, split, trial.links, combo)
        tokens_step = split.global_batch * spec.seq_len
        if cannot_beat(fixed_costs_bound(tokens_step, combo.work_s, split.pp,
                                         combo.virtual_stages, replica, fixed_s), tally.best_rate):
            tally.reasons[CANNOT_BEAT] += 1
            return False
    sizes = _sizes(trial, tally)
    if sizes is None:
        return False
    return _time_sizes(trial, tally, *sizes, fixed_s)


def _sizes(trial: Trial, tally: Tally) -> tuple[tuple[int, ...], set[int], bool] | None:
    """The micro-batch sizes to time (search_space.micro_batch_candidates), those among them added
    for Megatron's block recomputation, and whether the whole replica batch fits at once; None
    where not even one sequence fits (rejected)."""
    inputs, split, combo = trial.inputs, trial.split, trial.combo
    spec, replica = inputs.spec, split.replica_batch
    if spec.micro_batch:
        return (spec.micro_batch,), set(), False
    # (under pipelining memory is not monotone in the size: the sizes are checked one by one)
    top = _largest_fitting(trial.fits, replica, inputs.cap) if split.pp == 1 else (
        min(replica, max(PIPELINE_MICRO_BATCHES)) if trial.fits(1)[0] else 0)
    tally.considered += 1
    if top == 0:
        _, (lay, mem) = trial.fits(1)
        tally.reject(lay, f"out of memory: {mem.breakdown.total_gib:.1f} GiB > {inputs.cap:g} GiB",
                     OUT_OF_MEMORY)
        return None
    exact = stack_of(combo.framework).exact_batch or spec.pytorch_stacks_only
    sizes = micro_batch_candidates(replica, top, split.pp, exact=exact)
    _, (_, largest) = trial.fits(sizes[0])
    if largest.paged_offload_params > 0:
        # a paged optimizer trades the micro-batch against its states: where the largest size pages
        # some of them to host memory, smaller ones (halving, dividing the replica's batch) may
        # keep them all on the GPU
        halvings = dividing_sizes(replica, [top >> i for i in range(1, top.bit_length())])
        sizes += tuple(sorted(halvings - set(sizes), reverse=True))
    block_sizes: set[int] = set()
    if trial.tries_block:
        # Megatron's block recomputation trades the micro-batch against the layers it redoes: a
        # smaller micro-batch (about 1, 2, 4 or 8 sequences, dividing the replica's batch) may need
        # far fewer, so they are timed too (below, only where the largest size redoes more than
        # half of each chunk: less leaves little to save)
        smaller = [k for k in PIPELINE_MICRO_BATCHES if k < sizes[0]]
        block_sizes = dividing_sizes(replica, smaller) - set(sizes)
        sizes += tuple(sorted(block_sizes, reverse=True))
    return sizes, block_sizes, top == replica


def _time_sizes(trial: Trial, tally: Tally, sizes: tuple[int, ...], block_sizes: set[int],
                all_fit: bool, fixed_s: float) -> bool:
    """Time each size that fits and is not pruned; whether all of them fit (and `all_fit`)."""
    inputs, split, combo = trial.inputs, trial.split, trial.combo
    replica, v = split.replica_batch, combo.virtual_stages
    tokens_step = split.global_batch * inputs.spec.seq_len
    ep_link = group_link(inputs.cluster, combo.ep, split.tp * split.cp)
    for mb in sizes:
        if interleaving_refused(combo.framework, v, -(-replica // mb), split.pp):
            tally.reasons[INTERLEAVING_REFUSED] += 1
            all_fit = False
            continue
        if tally.best is not None and split.pp > 1 and cannot_beat(
                bubble_bound(tokens_step, combo.work_s, split.pp, v, mb, replica, fixed_s),
                tally.best_rate):
            tally.reasons[CANNOT_BEAT] += 1
            all_fit = False
            continue
        if trial.tries_block and trial.fits(mb, rc="none")[0]:
            # no recomputation fits this size: it is faster, and timed in its own combination
            tally.reasons[RECOMPUTATION_DOMINATED] += 1
            all_fit = False
            continue
        if mb in block_sizes:
            block_key = ("block", combo.framework, combo.zero, sizes[0], v, combo.ep)
            redone = split.memo.get(block_key, 0)
            chunk = chunk_layers(inputs.shape.layers,
                                 combo.layout(split, inputs.spec, inputs.lora_rank, mb))
            if block_redoes_little(redone, chunk):
                continue
        ok, (layout, mem) = trial.fits(mb)
        tally.considered += 1
        all_fit = all_fit and ok
        if not ok:
            tally.reject(layout, f"out of memory: {mem.breakdown.total_gib:.1f} GiB > "
                                 f"{inputs.cap:g} GiB", OUT_OF_MEMORY)
            continue
        tally.offer(_timed(trial, tally, layout, mem, mb, ep_link))
    return all_fit


def _timed(trial: Trial, tally: Tally, layout: Layout, mem: MemoryResult, mb: int,
           ep_link: GroupLink) -> Found:
    """The layout timed; where Megatron's block recomputation is tried, the fewest recomputed
    layers that fit instead, when faster."""
    inputs, split, links = trial.inputs, trial.split, trial.links
    shape, method, cluster = inputs.shape, inputs.method, inputs.cluster
    fw = trial.combo.framework
    if (fw, mb) not in split.compute:  # the same for every ZeRO stage, recompute, v and ep
        r = rates(shape, layout, cluster)
        split.compute[(fw, mb)] = (r, micro_batch_compute(shape, method, layout, r))
    times = step_time(shape, method, layout, cluster, links.tp_link, links.dp_link, links.pp_link,
                      mem.paged_offload_params, links.cp_link, ep_link, split.compute[(fw, mb)])
    tokens_step = split.global_batch * inputs.spec.seq_len
    candidate = Found(-(tokens_step / times.total_s), mem.breakdown.total_gib, layout)
    if trial.tries_block:
        # block recomputation redoes at least one layer of each of the v chunks: try it only where
        # that could beat the fastest layout found. Timed at one layer a chunk, the fastest it can
        # be: fewer recomputed layers also mean fewer tensor-parallel collectives and a shorter
        # bubble
        fastest_s = step_time(shape, method, replace(layout, recompute_layers=1), cluster,
                              links.tp_link, links.dp_link, links.pp_link,
                              mem.paged_offload_params, links.cp_link, ep_link,
                              split.compute[(fw, mb)]).total_s
        best_rate = tally.best_rate
        if best_rate is None or tokens_step / fastest_s > best_rate:
            candidate, tried = _block_recompute(trial, candidate, ep_link)
            tally.considered += tried
    return candidate


def _block_recompute(trial: Trial, best: Found, ep_link: GroupLink) -> tuple[Found, int]:
    """A Megatron layout that fits only with every layer recomputed may fit with fewer: Megatron's
    block method recomputes the first N layers of each model chunk and keeps the rest. Memory falls
    as N grows and time rises, so the fewest layers that fit (bisection) is the fastest; it replaces
    the full recomputation when it is faster. Returns the best and the number of layouts tried. The
    split's memo (shared by the searches of every fabric) keeps the fewest count per layout: memory
    reads no fabric; the step is timed on the search's links with the layout's compute, as the
    split already holds them."""
    inputs, split, links = trial.inputs, trial.split, trial.links
    shape, method, cluster = inputs.shape, inputs.method, inputs.cluster
    layout = best.layout
    chunk = chunk_layers(shape.layers, layout)
    if not stack_of(layout.framework).block_recompute or layout.recompute != "full" or chunk <= 1:
        return best, 0
    tried = 0

    def fits(n: int) -> tuple[bool, Layout, Any]:
        nonlocal tried
        tried += 1
        lay = replace(layout, recompute_layers=n)
        mem = cached_memory(shape, method, lay, inputs.cap, cluster.host_memory_gib_per_gpu)
        return mem.breakdown.total_gib <= inputs.cap, lay, mem

    key = ("block", layout.framework, layout.zero, layout.micro_batch, layout.virtual_pipeline,
           layout.ep)
    if key not in split.memo:
        # the fewest layers in [1, chunk - 1] that fit (memory falls as the count grows), or none
        split.memo[key] = (1 + bisect.bisect_left(range(1, chunk - 1), True,
                                                  key=lambda n: fits(n)[0])
                           if fits(chunk - 1)[0] else None)
    fewest = split.memo[key]
    if fewest is None:
        return best, tried
    _, lay, mem = fits(fewest)
    t = step_time(shape, method, lay, cluster, links.tp_link, links.dp_link, links.pp_link,
                  mem.paged_offload_params, links.cp_link, ep_link,
                  split.compute[(layout.framework, layout.micro_batch)]).total_s
    rate = lay.global_batch * inputs.spec.seq_len / t
    if (-rate, mem.breakdown.total_gib) < (best[0], best[1]):
        return Found(-rate, mem.breakdown.total_gib, lay), tried
    return best, tried


def _largest_fitting(fits: Any, upper: int, cap: float) -> int:
    """Largest micro-batch in [1, upper] that fits (0 if none). Memory grows about linearly with
    the micro-batch, so the line through sizes 1 and 2 predicts it; the guess is checked, and
    bisection (memory being monotone) finishes the search when the line misses. The whole replica
    batch as one micro-batch is tried first: without gradient accumulation FSDP holds no unsharded
    gradient buffer, so it can fit where a single sequence per micro-batch does not."""
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
