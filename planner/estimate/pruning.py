"""The search's pruning rules: each skips work that cannot change the answer.

Every combination of the search space has a throughput bound (`Combination.bound`: compute,
recomputation and tensor-parallel traffic at the largest micro-batch, the smallest bubble, no
data-parallel traffic); combinations are tried best bound first and the search stops at the first
that cannot beat the best found. Before a combination's micro-batches are timed, its model states
alone may rule it out (`states_floor`), and so may the traffic and optimizer time no micro-batch
size avoids (`fixed_lower_bound_s`); within one, micro-batch sizes whose bubble alone rules them
out are skipped, and a heavier recomputation or ZeRO-3 is skipped where the lighter one fits every
size. Each skip is counted under its reason (the constants below) in `SearchResult.reasons`.
"""

from __future__ import annotations

from plan.planner.estimate.flops import ModelShape
from plan.planner.estimate.memory import states_floor_gib
from plan.planner.estimate.search_space import (
    Choices,
    Combination,
    SearchInputs,
    Split,
    SplitLinks,
)
from plan.planner.estimate.split_comm import p2p_s
from plan.planner.estimate.timing import (
    dp_exposed_s,
    optimizer_and_paging_s,
    sharding_links,
    stage_recompute_s,
)
from plan.planner.estimate.types import LayoutSpec

CANNOT_BEAT = "cannot beat the fastest layout found"
RECOMPUTATION_DOMINATED = "dominated (recomputation only adds time where none is needed)"
ZERO3_DOMINATED = "dominated (ZeRO-3 only adds traffic where ZeRO-2 fits)"
OUT_OF_MEMORY = "out of memory"


def cannot_beat(rate_bound: float, best_rate: float | None) -> bool:
    """Whether a bound on tokens/s falls short of the fastest layout found (None: none yet). The
    bound is never below what any layout it covers reaches, so what it covers is slower."""
    return best_rate is not None and rate_bound < best_rate


def dominated(spec: LayoutSpec, combo: Combination, fits_everything: set[Choices]) -> str | None:
    """Why a lighter twin of the combination makes it pointless (the reason it is counted under),
    or None. Its twin fits at every micro-batch size (`fits_everything`), so memory is not the
    limit, and the combination only adds time over it:
    - recomputation, where the same choices without recomputation fit (RECOMPUTATION_DOMINATED;
      not where the spec states the policy);
    - ZeRO-3's weight gathers, where ZeRO-2 without recomputation fits (ZERO3_DOMINATED; not where
      the spec states the stage)."""
    if (spec.recompute is None and combo.recompute != "none"
            and (combo.split, combo.ep, combo.framework, combo.zero, combo.shard_group, "none",
                 combo.virtual_stages) in fits_everything):
        return RECOMPUTATION_DOMINATED
    if (spec.zero is None and combo.zero == 3
            and (combo.split, combo.ep, combo.framework, 2, combo.shard_group, "none",
                 combo.virtual_stages) in fits_everything):
        return ZERO3_DOMINATED
    return None


def fixed_costs_bound(tokens_step: int, work_s: float, pp: int, v: int, replica: int,
                      fixed_s: float) -> float:
    """Tokens/s no micro-batch size of a combination beats: its work with the smallest bubble (one
    sequence per micro-batch) plus the seconds no size avoids (`fixed_lower_bound_s`)."""
    return tokens_step / (work_s * (1 + (pp - 1) / v / replica) + fixed_s)


def bubble_bound(tokens_step: int, work_s: float, pp: int, v: int, mb: int, replica: int,
                 fixed_s: float) -> float:
    """Tokens/s a micro-batch of `mb` sequences does not beat under pipelining: it leaves a bubble
    of at least (pp - 1) / v of its share of the replica's batch."""
    return tokens_step / (work_s * (1 + (pp - 1) / v * mb / replica) + fixed_s)


def states_floor(inputs: SearchInputs, split: Split, fw: str, zero: int, ep: int, mb: int,
                 hs: int = 0) -> float:
    """`states_floor_gib` of the split's layouts at this micro-batch: the model states alone, which
    no layout of them goes below; where they pass the card, no size fits (memoised in the split:
    recomputation and virtual stages do not change it)."""
    key = ("states", fw, zero, ep, mb, hs)
    if key not in split.memo:
        layout = split.layout(inputs.spec, inputs.lora_rank, fw, zero, "none", mb, 1, ep, hs)
        split.memo[key] = states_floor_gib(inputs.shape, inputs.method, layout)
    floor: float = split.memo[key]
    return floor


def fixed_lower_bound_s(inputs: SearchInputs, split: Split, links: SplitLinks,
                        combo: Combination) -> float:
    """Seconds per step of data-parallel traffic, pipeline transfers and the optimizer step that no
    micro-batch size of this combination goes below: they are timed with the whole replica batch as
    one micro-batch, which has the most compute (and recomputation) to hide data-parallel traffic
    behind, the fewest gathers and transfers, and no paged optimizer states (all terms that only
    grow as the micro-batch shrinks)."""
    shape: ModelShape = inputs.shape
    spec, cluster = inputs.spec, inputs.cluster
    fw, zero, rc, v, ep = (combo.framework, combo.zero, combo.recompute, combo.virtual_stages,
                           combo.ep)
    # virtual stages multiply the transfers and change nothing else, except which layers a block
    # recomputation redoes
    key = (fw, zero, rc, ep, combo.shard_group, v if spec.recompute_layers else 1)
    if key not in links.fixed:
        whole = spec.micro_batch or split.global_batch // split.dp
        layout = split.layout(spec, inputs.lora_rank, fw, zero, rc, whole, key[-1], ep,
                              combo.shard_group)
        r, mbc = split.compute[(fw, whole)]  # (the split's own probe: it bounds the stage there)
        dp_link, replicate_link = sharding_links(cluster, layout, links.dp_link)
        dp_s = dp_exposed_s(shape, inputs.method, layout, dp_link, zero, mbc.compute_s,
                            stage_recompute_s(shape, layout, r, mbc), replicate_link)
        optimizer_s = optimizer_and_paging_s(shape, inputs.method, layout, r, 0.0, mbc.layers)
        links.fixed[key] = ((dp_s + optimizer_s) / cluster.speedup,
                            p2p_s(shape, layout, links.pp_link) / cluster.speedup)
    traffic_s, transfer_s = links.fixed[key]
    return traffic_s + v * transfer_s


def block_redoes_little(redone: int | None, chunk: int) -> bool:
    """A smaller micro-batch tried for Megatron's block recomputation is skipped where the largest
    size redoes at most half of each chunk (`redone` layers; None: none fits): less leaves little
    to save."""
    return redone is not None and 2 * redone <= chunk
