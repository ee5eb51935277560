"""Training estimators: memory per GPU, step time and throughput, layout search, whole-run hours.

First principles (parameter and activation accounting, FLOPs per token, ring collectives over the
topology graph, pipeline bubbles, Young/Daly checkpointing) plus the few efficiency factors in
`plan.planner.estimate.factors`, each with its source.
"""

from plan.planner.estimate.cluster import Cluster
from plan.planner.estimate.estimator import estimate
from plan.planner.estimate.flops import ModelShape, shape_of
from plan.planner.estimate.reliability import RunEstimate
from plan.planner.estimate.search import SearchResult, default_global_batch, search_layout
from plan.planner.estimate.types import (
    Estimate,
    Layout,
    LayoutSpec,
    MemoryBreakdown,
    Method,
    TimeBreakdown,
)

__all__ = [
    "Cluster",
    "Estimate",
    "Layout",
    "LayoutSpec",
    "MemoryBreakdown",
    "Method",
    "ModelShape",
    "RunEstimate",
    "SearchResult",
    "TimeBreakdown",
    "default_global_batch",
    "estimate",
    "search_layout",
    "shape_of",
]
