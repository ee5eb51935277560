"""Training estimators: memory per GPU, step time and throughput, layout search, whole-run hours.

First principles (parameter and activation accounting, FLOPs per token, ring collectives over the
topology graph, pipeline bubbles, Young/Daly checkpointing) plus the few efficiency factors in
`planner.estimate.factors`, each with its source.
"""

from planner.estimate.cluster import Cluster
from planner.estimate.estimator import estimate
from planner.estimate.flops import ModelShape, shape_of
from planner.estimate.search import SearchResult, default_global_batch, search_layout
from planner.estimate.types import (
    Estimate,
    Layout,
    LayoutSpec,
    MemoryBreakdown,
    Method,
    RunEstimate,
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
