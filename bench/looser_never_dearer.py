"""Looser constraints never make the optimal plan dearer: a metamorphic check of the whole planner.

Every plan of a scenario stays allowed when the scenario is loosened (a larger budget, a later
deadline, a more skilled team, less sensitive data, spot instances allowed, more owned GPUs, a lower
confidence quantile, no memory headroom), so the cheapest plan's cost can only fall or stay. Where
it rises, a heuristic (candidate pruning, a bound that reads a constraint, a risk term) has cut off
the plan the tighter scenario found, and the planner would tell a user that a larger budget costs
them more. This draws the random scenarios of explained_answers.py, solves each and, where it is
optimal, each loosening of it, and lists every rise with both scenarios.

One rise is by design and counted apart: offloading to host memory is planned only on a place that
holds the job at no GPU count without it (its speed rests on assumed host figures;
candidates/estimating.py `_offload_allowed`). A looser memory rule (confidence 0.5, no headroom) can
make some count fit without offloading, and the place's offloaded options, cheaper on fewer GPUs,
are then withdrawn: 8 RTX 4090s without offloading instead of 2 offloaded.

Usage: python bench/looser_never_dearer.py [--seed 1] [--count 20]
Exit 1 if any loosening raised the optimal cost or lost the plan.
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from explained_answers import scenario

from plan.models.errors import InputError
from plan.models.loading import load_scenario_data
from plan.planner.plan import SolveResult
from plan.planner.session import SolveOptions
from plan.planner.solve import solve

COST_TOLERANCE = 1e-6
"""Relative: the CP-SAT objective is in integer cents, so equal plans cost the same to the cent."""

Loosening = Callable[[dict[str, Any]], dict[str, Any] | None]


def _budget(raw: dict[str, Any]) -> dict[str, Any] | None:
    if raw.get("budget") == "100万元":
        return None
    return {**copy.deepcopy(raw), "budget": "100万元"}


def _deadline(raw: dict[str, Any]) -> dict[str, Any] | None:
    if raw.get("deadline") == "14d":
        return None
    return {**copy.deepcopy(raw), "deadline": "14d"}


def _ops(raw: dict[str, Any]) -> dict[str, Any] | None:
    if raw.get("ops_skill") == "expert":
        return None
    return {**copy.deepcopy(raw), "ops_skill": "expert"}


def _public(raw: dict[str, Any]) -> dict[str, Any] | None:
    changed = copy.deepcopy(raw)
    touched = False
    for job in changed["jobs"]:
        data = job.get("data", {})
        if data.get("sensitivity") != "public" or "residency" in data:
            data["sensitivity"] = "public"
            data.pop("residency", None)
            touched = True
    return changed if touched else None


def _spot(raw: dict[str, Any]) -> dict[str, Any] | None:
    if raw.get("policy", {}).get("allow_spot"):
        return None
    changed = copy.deepcopy(raw)
    changed.setdefault("policy", {})["allow_spot"] = True
    return changed


def _more_owned(raw: dict[str, Any]) -> dict[str, Any] | None:
    """Twice the owned pool's GPUs, in more nodes of the same size: every plan on the smaller
    pool remains."""
    if not raw.get("owned"):
        return None
    changed = copy.deepcopy(raw)
    for pool in changed["owned"]:
        pool["count"] *= 2
    return changed


def _confidence(raw: dict[str, Any]) -> dict[str, Any] | None:
    """Memory and deadlines held at the median of the error band, not the default 80th
    percentile."""
    if raw.get("confidence") == 0.5:
        return None
    return {**copy.deepcopy(raw), "confidence": 0.5}


def _headroom(raw: dict[str, Any]) -> dict[str, Any] | None:
    """No memory kept free beyond the estimate (the default keeps 8% of each card)."""
    changed = copy.deepcopy(raw)
    changed.setdefault("policy", {})["memory_headroom"] = 0.0
    return changed


LOOSENINGS: tuple[tuple[str, Loosening], ...] = (
    ("budget 100万元", _budget),
    ("deadline 14d", _deadline),
    ("ops_skill expert", _ops),
    ("data public, no residency", _public),
    ("spot allowed", _spot),
    ("owned pool twice as large", _more_owned),
    ("confidence 0.5", _confidence),
    ("memory headroom 0", _headroom),
)


def _offloads(result: SolveResult) -> bool:
    """Whether the top plan keeps some job's model states or activations in host memory."""
    return any(
        j.state_offload or j.recompute in ("offload", "full_offload") for j in result.plans[0].jobs
    )


def _solve(raw: dict[str, Any], name: str) -> SolveResult | None:
    try:
        loaded = load_scenario_data(raw, Path(f"{name}.yaml"))
    except InputError:
        return None
    return solve(loaded, SolveOptions())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=20)
    args = parser.parse_args(argv)
    import random

    rng = random.Random(args.seed)
    started = time.perf_counter()
    checked: Counter[str] = Counter()
    dearer: list[str] = []
    by_offload_policy: list[str] = []
    lost: list[str] = []
    optimal = 0
    for index in range(args.count):
        raw = scenario(rng, index)
        base = _solve(raw, f"random-{index}")
        if base is None or base.status != "optimal" or not base.plans:
            continue
        optimal += 1
        cost = base.plans[0].total_cost
        for name, loosen in LOOSENINGS:
            variant = loosen(raw)
            if variant is None:
                continue
            after = _solve(variant, f"random-{index}-looser")
            checked[name] += 1
            if after is None or not after.plans:
                lost.append(f"random-{index}: {name} left "
                            f"{after.status if after else 'a refusal'}: {raw}")
                continue
            new = after.plans[0].total_cost
            if new > cost * (1 + COST_TOLERANCE) + 0.01:
                line = (
                    f"random-{index}: {name}: {cost:,.2f} -> {new:,.2f} {base.currency} "
                    f"({after.status}): {raw}"
                )
                (by_offload_policy if _offloads(base) and not _offloads(after) else dearer).append(
                    line
                )
    print(f"{args.count} random scenarios (seed {args.seed}), {optimal} optimal, in "
          f"{time.perf_counter() - started:.0f} s")
    print(f"{'loosening':28s} {'solved':>6s}")
    for name, _ in LOOSENINGS:
        print(f"{name:28s} {checked[name]:6d}")
    print(f"looser and dearer: {len(dearer)}")
    for line in dearer:
        print("  " + line)
    print("looser and dearer only because the offload policy withdrew offloading (by design, "
          f"above): {len(by_offload_policy)}")
    for line in by_offload_policy:
        print("  " + line)
    print(f"looser and no plan: {len(lost)}")
    for line in lost:
        print("  " + line)
    return 1 if dearer or lost else 0


if __name__ == "__main__":
    sys.exit(main())
