"""Time `search_layout` per call (uncached and cached) for several (model, method, GPU, count).

    .venv/bin/python bench/estimate_speed.py [--repeats N]

The planner calls search_layout for thousands of candidates; the target is well under 50 ms per
uncached call. Uncached figures clear every estimator cache before each call (the topology-graph
cache included), so they are the worst case.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# The estimator is timed cold: the persistent estimate cache is off unless PLAN_CACHE_DIR names one.
os.environ.setdefault("PLAN_CACHE_DIR", "off")

from plan.models.catalog import builtin_catalog
from plan.planner.estimate import Cluster, LayoutSpec, search_layout, topology
from plan.planner.estimate import search as search_mod

CASES = [
    ("llama3.1-8b", "qlora", "rtx4090", 1),
    ("llama3.1-8b", "full_finetune", "a800-80gb", 8),
    ("qwen2.5-14b", "lora", "l40s", 4),
    ("qwen2.5-72b", "continued_pretrain", "h800", 64),
    ("llama3.1-70b", "pretrain", "h100-sxm", 512),
    ("llama3.1-405b", "pretrain", "h100-sxm", 2048),
    ("mixtral-8x7b", "full_finetune", "a100-80gb", 16),
    ("deepseek-v3", "pretrain", "h800", 2048),
]


def _clear() -> None:
    search_mod._search.cache_clear()
    topology._group_link.cache_clear()
    topology._graph.cache_clear()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args(argv)
    catalog = builtin_catalog()
    print(f"{'model':14} {'method':18} {'gpu':10} {'gpus':>5} {'layouts':>7} {'median ms':>9} "
          f"{'p90 ms':>7} {'cached us':>9}  best")
    all_ms: list[float] = []
    for model_id, method, gpu_id, gpus in CASES:
        model, gpu = catalog.model(model_id), catalog.gpu(gpu_id)
        cluster = Cluster.of(gpu, gpus)
        spec = LayoutSpec()
        times = []
        result = None
        for _ in range(args.repeats):
            _clear()
            start = time.perf_counter()
            result = search_layout(model, method, cluster, spec)
            times.append((time.perf_counter() - start) * 1e3)
        start = time.perf_counter()
        for _ in range(1000):
            search_layout(model, method, cluster, spec)
        cached_us = (time.perf_counter() - start) * 1e3
        assert result is not None
        times.sort()
        all_ms += times
        best = result.best.layout.short() if result.best else "nothing fits"
        print(f"{model_id:14} {method:18} {gpu_id:10} {gpus:5d} {result.considered:7d} "
              f"{statistics.median(times):9.2f} {times[int(0.9 * (len(times) - 1))]:7.2f} "
              f"{cached_us:9.2f}  {best}")
    all_ms.sort()
    print(f"\nall uncached calls: median {statistics.median(all_ms):.2f} ms, "
          f"p90 {all_ms[int(0.9 * (len(all_ms) - 1))]:.2f} ms, max {all_ms[-1]:.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
