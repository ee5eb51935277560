"""Layout search: the fastest valid layout that fits, for the fields the user left open.

The global batch is a training hyper-parameter, not a search variable: it comes from the spec, else
from `default_global_batch` (published recipes by model size), and only the layout is searched
under it.

The search walks its space (search_space.py: the splits of the GPUs and the combinations on each,
best throughput bound first) until no combination can beat the fastest layout found; each
combination it tries has its micro-batch sizes found and timed (combination_trial.py). The pruning
rules (pruning.py) skip only what cannot change the answer; stated fields no search can repair are
refused first (spec_check.py). Results are cached per (model, method, cluster, spec), in this
process and across processes through the persistent store (store.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import plan.planner.estimate.stored_search as stored_search
from plan.models.model_card import ModelCard
from plan.planner.estimate.cluster import Cluster
from plan.planner.estimate.combination_trial import (
    Tally,
    cached_memory,
    states_rule_out,
    try_combination,
)
from plan.planner.estimate.estimator import _estimate
from plan.planner.estimate.flops import model_key, shape_of
from plan.planner.estimate.pruning import (
    CANNOT_BEAT,
    cannot_beat,
    dominated,
    states_floor,
)
from plan.planner.estimate.search_space import (
    FINETUNE_SEQUENCES_PER_STEP,
    Choices,
    Combination,
    SearchInputs,
    SplitLinks,
    default_global_batch,
    search_space,
)
from plan.planner.estimate.spec_check import check_spec
from plan.planner.estimate.store import store
from plan.planner.estimate.types import (
    ADAPTER_METHODS,
    PRETRAIN_METHODS,
    Estimate,
    Layout,
    LayoutSpec,
    offloads_states,
)
from plan.planner.i18n import numbers
from plan.planner.i18n.said import Fmt, Joined, say

__all__ = ["SearchResult", "default_global_batch", "search_layout"]


@dataclass(frozen=True)
class SearchResult:
    """The fastest layout that fits (ties: less memory), or None; what was considered and rejected.

    `rejected` keeps the first (layout, reason) pair of each kind as examples (MAX_REJECTED_KEPT;
    `reasons` counts all of them by kind); `closest` is the least-memory layout when nothing fits;
    `searched` names the fields the search chose. `why(tp=8)` answers "why not TP=8?" in one
    sentence.
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
        """The least-memory layout when nothing fits, None otherwise. Worked out on first use: most
        of a large model's searches on a few cards find nothing, and only a few callers ask."""
        key = self._least_key()
        return None if key is None else _least_memory(key)

    @property
    def least_memory_gib(self) -> float | None:
        """The memory per GPU of `closest` (None where it is None), without estimating its time:
        the figure a memory rule's reason cites."""
        key = self._least_key()
        found = None if key is None else _least_found(key)
        return None if found is None else found[0]

    def _least_key(self) -> _Key | None:
        if self.best is not None or self._model is None or self._cluster is None:
            return None
        return _Key(model_key(self._model), self._method, self._cluster, self.spec, self._model)

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
            other = search_layout(self._model, self._method, self._cluster,
                                  replace(self.spec, **spec_fields))
        except ValueError as exc:
            return f"{label} is invalid: {exc}"
        if other.best is None:
            if other.closest is not None:
                c = other.closest
                usable = self.spec.usable_gib(c.gpu_memory_gib)
                return (f"{label} does not fit: even the least-memory layout ({c.layout.short()}) "
                        f"needs {c.memory.total_gib:.1f} GiB > {usable:.1f} GiB usable")
            top = ", ".join(f"{r} ({n})" for r, n in other.reasons.items())
            return f"{label} has no valid layout: {top}"
        alt = other.best
        if best is None:
            return f"{label} fits ({alt.layout.short()}) although the searched spec found none"
        slower = best.tokens_per_s / alt.tokens_per_s - 1
        diffs = {k: alt.time.to_dict()[k] - best.time.to_dict()[k] for k in best.time.to_dict()}
        worst = max(diffs, key=lambda k: diffs[k])
        return (f"{label} is {slower:.0%} slower ({alt.tokens_per_s:,.0f} vs "
                f"{best.tokens_per_s:,.0f} tokens/s with {alt.layout.short()}); most of the "
                f"difference is {worst} (+{diffs[worst]:.3g} s per step)")


@dataclass(frozen=True)
class _Key:
    model_key: tuple[object, ...]
    method: str
    cluster: Cluster
    spec: LayoutSpec
    model: ModelCard = field(compare=False, hash=False)


def search_layout(model: ModelCard, method: str, cluster: Cluster,
                  spec: LayoutSpec) -> SearchResult:
    """Fastest layout that fits for the fields `spec` leaves None (cached).

    Raises ValueError (naming the field) when the fixed fields can never run: unknown method or
    precision, a precision the GPU lacks, a lora rank with a full method, a fixed tp/pp/cp that
    does not divide the GPU count or the heads.
    """
    # Offloading only where nothing else fits, the model states' before the activations': CPU
    # offload of ZeRO-3's shards runs on DeepSpeed, FSDP, torchtitan, accelerate and LLaMA-Factory;
    # activation offload on torchtune alone, which `plan export` does not write for.
    states_searched = spec.state_offload is None
    activations_searched = spec.recompute is None and spec.offload
    plain = replace(spec, state_offload=bool(spec.state_offload),
                    offload=spec.offload and not activations_searched)
    passes = [plain]
    if states_searched and not spec.hybrid_shard and (spec.virtual_pipeline or 1) == 1 and (
            offloads_states(spec.framework or "fsdp", 3 if spec.zero is None else spec.zero,
                            spec.tp or 1, spec.pp or 1, spec.optimizer)):
        # (only ZeRO-3 on FSDP or DeepSpeed without tensor or pipeline parallelism offloads: the
        # pass tries those; a stated hybrid shard keeps its shards on the GPUs and a stated
        # interleaving needs pipeline stages, so where they do not fit nothing does)
        passes.append(replace(plain, state_offload=True, tp=1, pp=1, zero=3))
    if activations_searched:
        passes.append(replace(spec, state_offload=bool(spec.state_offload)))
    for spec_pass in passes[:-1]:
        result = _search(_Key(model_key(model), method, cluster, spec_pass, model))
        if result.best is not None:
            return result
    return _search(_Key(model_key(model), method, cluster, passes[-1], model))


def _stored_key(key: _Key) -> str:
    """Everything the search reads, as text: the shape, method, cluster, the GPU's whole catalog
    entry and the layout constraints (the code version is added by the store)."""
    return repr((key.model_key, key.method, key.cluster.key(), key.cluster.gpu.model_dump_json(),
                 key.spec))


@lru_cache(maxsize=4096)
def _search(key: _Key) -> SearchResult:
    """One search per key per process; across processes and runs through the persistent store."""
    persistent = store()
    if persistent is None:
        return _searched(key)
    text = _stored_key(key)
    found = _from_store(persistent.get(text), key)
    if found is not None:
        return found
    result = _searched(key)
    persistent.put(text, stored_search.encode(result.best, result.considered, result.rejected,
                                              result.reasons, result.searched))
    return result


def _from_store(data: Any, key: _Key) -> SearchResult | None:
    """The stored result for the key, or None where there is none or it fails a check (a miss: the
    search runs again and replaces it)."""
    if data is None:
        return None
    try:
        parts = stored_search.decode(data, key.model, key.method, key.cluster)
    except (stored_search.Forged, KeyError, TypeError, ValueError, AttributeError):
        return None
    return SearchResult(**parts, spec=key.spec, _model=key.model, _method=key.method,
                        _cluster=key.cluster)


def _inputs(key: _Key) -> SearchInputs:
    """The key's search inputs; raises ValueError for stated fields no search can repair."""
    shape = shape_of(key.model)
    lora_rank = key.spec.lora_rank if key.method in ADAPTER_METHODS else None
    check_spec(shape, key.method, key.cluster, key.spec, lora_rank)
    cap = key.spec.usable_gib(key.cluster.gpu.memory_gib)  # the card less the headroom kept free
    return SearchInputs(shape, key.method, key.cluster, key.spec, lora_rank, cap)


def _searched(key: _Key) -> SearchResult:
    """The search itself: every combination best bound first, until none can beat the best."""
    inputs = _inputs(key)
    space = search_space(inputs.shape, inputs.method, inputs.cluster, inputs.spec,
                         inputs.lora_rank)
    tally = Tally()
    for layout, reason, kind in space.rejections:
        tally.reject(layout, reason, kind)
    for kind, n in space.unrunnable:
        tally.reasons[kind] += n
    links: dict[int, SplitLinks] = {}
    fits_everything: set[Choices] = set()  # combinations every size of which fits
    rows = space.rows
    for position, row in enumerate(rows):
        # a combination of only the rows the search reaches (search_space.Row); `_make` without
        # its length check, which a row from the space cannot fail
        combo: Combination = tuple.__new__(Combination, row)
        if cannot_beat(combo.bound, tally.best_rate):
            tally.reasons[CANNOT_BEAT] += len(rows) - position
            break
        twin = dominated(inputs.spec, combo, fits_everything)
        if twin:
            tally.reasons[twin] += 1
            continue
        split = space.splits[combo.split]
        if states_rule_out(inputs, split, combo, tally):
            continue
        if combo.split not in links:
            links[combo.split] = SplitLinks.of(split, inputs.cluster)
        if try_combination(inputs, split, links[combo.split], combo, tally):
            fits_everything.add(combo.choices)
    return _result(key, inputs, tally)


def _result(key: _Key, inputs: SearchInputs, tally: Tally) -> SearchResult:
    """The search's result: the fastest layout estimated in full, with notes on what was searched
    and on a default global batch."""
    model, method, cluster, spec = key.model, key.method, key.cluster, key.spec
    shape, best = inputs.shape, tally.best
    searched = spec.searched_fields() + (("ep",) if shape.is_moe and spec.ep is None else ())
    best_est = (_estimate(model, shape, method, cluster, best.layout, paging_limit_gib=inputs.cap)
                if best else None)
    if best_est is not None:
        if searched:
            best_est.notes.insert(0, say("enote.searched", fields=Joined(searched, "list_comma"),
                                         n=tally.considered, layout=best_est.layout.short()))
        if not spec.global_batch:
            rule = (say("enote.rule_tokens", tokens=Fmt(numbers.millions, (
                        best_est.layout.global_batch * spec.seq_len,)))
                    if method in PRETRAIN_METHODS
                    else say("enote.rule_sequences", n=FINETUNE_SEQUENCES_PER_STEP))
            best_est.notes.append(say("enote.global_batch", batch=best_est.layout.global_batch,
                                      rule=rule))
    return SearchResult(best=best_est, considered=tally.considered, rejected=tuple(tally.rejected),
                        reasons=dict(tally.reasons.most_common()), searched=searched, spec=spec,
                        _model=model, _method=method, _cluster=cluster)


@lru_cache(maxsize=256)
def _least_memory(key: _Key) -> Estimate | None:
    """The least-memory layout of a search where none fits, estimated in full."""
    found = _least_found(key)
    if found is None:
        return None
    return _estimate(key.model, shape_of(key.model), key.method, key.cluster, found[1],
                     paging_limit_gib=key.spec.usable_gib(key.cluster.gpu.memory_gib))


@lru_cache(maxsize=4096)
def _least_found(key: _Key) -> tuple[float, Layout] | None:
    """`_least_scan`'s memory and layout, across processes through the persistent store: only the
    layout is stored, its memory is worked out again on the way back (a warm solve asked this of
    every option nothing fits on, and the scan was 40% of it: rubin_buy_or_rent)."""
    persistent = store()
    if persistent is None:
        return _least_scan(key)
    text = f"least memory of {_stored_key(key)}"
    data = persistent.get(text)
    if data is not None:
        try:
            layout = stored_search.decode_least(data, key.cluster.gpus, key.spec.seq_len)
            return None if layout is None else (_layout_memory_gib(key, layout), layout)
        except (stored_search.Forged, ArithmeticError, KeyError, TypeError, ValueError,
                IndexError, AttributeError):
            pass  # a miss: scanned again, and the put replaces the row
    found = _least_scan(key)
    persistent.put(text, stored_search.encode_least(None if found is None else found[1]))
    return found


def _layout_memory_gib(key: _Key, layout: Layout) -> float:
    """A layout's memory per GPU as the scan (and the estimate) work it out."""
    cap = key.spec.usable_gib(key.cluster.gpu.memory_gib)
    return cached_memory(shape_of(key.model), key.method, layout, cap,
                         key.cluster.host_memory_gib_per_gpu).breakdown.total_gib


def _least_scan(key: _Key) -> tuple[float, Layout] | None:
    """The least memory per GPU of a search where none fits, and its layout: every combination the
    search tried, each at the micro-batch it starts from (the fixed one, else one sequence)."""
    inputs = SearchInputs(shape_of(key.model), key.method, key.cluster, key.spec,
                          key.spec.lora_rank if key.method in ADAPTER_METHODS else None,
                          key.spec.usable_gib(key.cluster.gpu.memory_gib))
    space = search_space(inputs.shape, inputs.method, inputs.cluster, inputs.spec,
                         inputs.lora_rank)
    mb = inputs.spec.micro_batch or 1
    # the model states bound each combination's memory from below: those whose states exceed the
    # least total found cannot hold the least memory, so the exact memory of few is computed
    bounded = sorted((states_floor(inputs, space.splits[c.split], c.framework, c.zero, c.ep, mb,
                                   c.shard_group), order, c)
                     for order, c in enumerate(map(Combination._make, space.rows)))
    least: tuple[float, Layout] | None = None
    for floor, _, combo in bounded:
        if least is not None and floor >= least[0]:
            break
        layout = combo.layout(space.splits[combo.split], inputs.spec, inputs.lora_rank, mb)
        total = cached_memory(inputs.shape, inputs.method, layout, inputs.cap,
                              inputs.cluster.host_memory_gib_per_gpu).breakdown.total_gib
        if least is None or total < least[0]:
            least = (total, layout)
    return least


def searches_asked() -> int:
    """How many searches this process was asked, held in memory or not (candidates/
    searches_ahead.py: whether a probe has reached a search yet)."""
    info = _search.cache_info()
    return info.hits + info.misses


def searches_missed() -> int:
    """How many searches this process was asked that it did not hold in memory (with the store off,
    each was searched): candidates/searches_ahead.py's test of whether a build is cold."""
    return _search.cache_info().misses
