"""Time `search_layout` per call (uncached and cached) for several (model, method, GPU, count).

    .venv/bin/python bench/estimate_speed.py [--repeats N]
    .venv/bin/python bench/estimate_speed.py --cold [--reference PYTHON] [--rounds N]
    .venv/bin/python bench/estimate_speed.py --dump N

The planner calls search_layout for thousands of candidates; the target is well under 50 ms per
uncached call. Uncached figures clear the search's and the topology graph's caches before each call
(the splits, combinations and memory of a split stay: the planner's next fabric reuses them).

`--cold` times each call with every cache of the `plan` package cleared (every functools cache in
it, whatever its name: a search as the planner's first of a model, GPU and count), in worker
processes, in CPU seconds of the worker (a shared machine's load stretches the wall clock).
`--reference PYTHON` names the interpreter of another checkout (its venv's python, e.g. main's),
whose `plan` package the same workers time: workers of the two paths alternate in one run, and the
table gives uncached searches per CPU second for each (median, p10-p90 of the per-call rates),
their ratio, and whether both found the same best layout, memory and time on every case.

`--dump N` prints, one JSON line each, the results of the 8 cases and of N random search pairs
drawn as bench/estimate_invariants.py draws them (seed 1; a free search and one with a field
fixed): best layout, memory, time and notes, layouts considered, skip and rejection counts by
reason. Run it under two checkouts' interpreters and diff the outputs: the same search must answer
the same.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
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


def _clear_every_cache() -> None:
    """Every functools cache of every loaded `plan` module (lru_cache, cache), so that nothing a
    search filled survives: the same rule for both checkouts, whatever their caches are named."""
    for name, module in list(sys.modules.items()):
        if not name.startswith("plan.") or module is None:
            continue
        for value in list(vars(module).values()):
            if callable(getattr(value, "cache_clear", None)) and hasattr(value, "cache_info"):
                value.cache_clear()


def cold_worker(rounds: int) -> int:
    """Print one JSON line per cold call: the case, CPU and wall milliseconds, and the best
    (layout, GiB, seconds per step)."""
    catalog = builtin_catalog()
    for _ in range(rounds):
        for index, (model_id, method, gpu_id, gpus) in enumerate(CASES):
            model, cluster = catalog.model(model_id), Cluster.of(catalog.gpu(gpu_id), gpus)
            _clear_every_cache()
            start, start_cpu = time.perf_counter(), time.process_time()
            result = search_layout(model, method, cluster, LayoutSpec())
            cpu_ms = (time.process_time() - start_cpu) * 1e3
            wall_ms = (time.perf_counter() - start) * 1e3
            best = result.best
            found = best and [best.layout.short(), best.memory.total_gib, best.time.total_s]
            print(json.dumps({"case": index, "ms": cpu_ms, "wall_ms": wall_ms, "best": found}),
                  flush=True)
    return 0


def _rates_text(ms: list[float]) -> str:
    rates = sorted(1e3 / t for t in ms)
    low, high = rates[int(0.1 * (len(rates) - 1))], rates[int(0.9 * (len(rates) - 1))]
    return f"{statistics.median(rates):8.1f} ({low:.1f}-{high:.1f})"


def cold(rounds: int, reference: str | None) -> int:
    """Cold calls of this checkout (and of the reference's, alternating workers): per case and
    overall uncached searches per CPU second, and whether both found the same best."""
    paths = {"this": sys.executable} | ({"reference": reference} if reference else {})
    ms: dict[str, dict[int, list[float]]] = {p: {i: [] for i in range(len(CASES))} for p in paths}
    best: dict[str, dict[int, object]] = {p: {} for p in paths}
    for _ in range(rounds):
        for path, python in paths.items():
            done = subprocess.run([python, __file__, "--cold-worker", "1"], capture_output=True,
                                  text=True, check=True)
            for line in done.stdout.splitlines():
                row = json.loads(line)
                ms[path][row["case"]].append(row["ms"])
                best[path][row["case"]] = row["best"]
    print(f"{'model':14} {'method':18} {'gpus':>5} " + " ".join(
        f"{p + ' /cpu-s (p10-p90)':>26}" for p in paths) + (" ratio same" if reference else ""))
    differ = 0
    for i, (model_id, method, _, gpus) in enumerate(CASES):
        line = f"{model_id:14} {method:18} {gpus:5d} " + " ".join(
            f"{_rates_text(ms[p][i]):>26}" for p in paths)
        if reference:
            ratio = statistics.median(ms["reference"][i]) / statistics.median(ms["this"][i])
            same = _same(best["this"][i], best["reference"][i])
            differ += not same
            line += f" {ratio:5.2f} {'yes' if same else 'NO'}"
        print(line)
    totals = {p: sum(sum(v) for v in ms[p].values()) / 1e3 for p in paths}
    calls = rounds * len(CASES)
    print("\nall cases: " + ", ".join(f"{p} {calls / totals[p]:.1f} searches per CPU s"
                                     for p in paths)
          + (f" ({totals['reference'] / totals['this']:.2f}x)" if reference else ""))
    return 1 if differ else 0


def _same(a: object, b: object) -> bool:
    """The same best layout, and memory and time within 1e-9 relative (or both none)."""
    if not (isinstance(a, list) and isinstance(b, list)):
        return a == b
    return a[0] == b[0] and all(abs(x - y) <= 1e-9 * max(abs(x), abs(y))
                                for x, y in zip(a[1:], b[1:], strict=True))


def _described(result: object) -> dict[str, object]:
    best = result.best  # type: ignore[attr-defined]
    return {"best": best and [repr(best.layout), best.memory.total_gib, best.time.total_s,
                              best.notes],
            "considered": result.considered,  # type: ignore[attr-defined]
            "reasons": result.reasons,  # type: ignore[attr-defined]
            "rejected": [[r.short(), why] for r, why in result.rejected]}  # type: ignore[attr-defined]


def dump(pairs: int) -> int:
    """Every result of the cases and of `pairs` random search pairs, as JSON lines."""
    import random

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from estimate_invariants import search_pair

    catalog = builtin_catalog()
    for model_id, method, gpu_id, gpus in CASES:
        result = search_layout(catalog.model(model_id), method,
                               Cluster.of(catalog.gpu(gpu_id), gpus), LayoutSpec())
        print(json.dumps({"case": [model_id, method, gpu_id, gpus]} | _described(result)))
    rng = random.Random(1)
    done = 0
    while done < pairs:
        drawn = search_pair(rng, catalog)
        if drawn is None:
            continue
        done += 1
        label, free, fixed = drawn
        print(json.dumps({"pair": label, "free": _described(free), "fixed": _described(fixed)}))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--cold", action="store_true", help="time calls with every cache cleared")
    parser.add_argument("--reference", help="python of another checkout, timed alongside (--cold)")
    parser.add_argument("--rounds", type=int, default=5, help="cold calls per case and path")
    parser.add_argument("--cold-worker", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--dump", type=int, default=-1, metavar="N",
                        help="print the results of the cases and of N random search pairs")
    args = parser.parse_args(argv)
    if args.dump >= 0:
        return dump(args.dump)
    if args.cold_worker:
        return cold_worker(args.cold_worker)
    if args.cold:
        return cold(args.rounds, args.reference)
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
