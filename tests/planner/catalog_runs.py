"""Scenarios run against the built-in catalog: the base scenario with given fields and jobs, its
problem (the candidates and what was removed) and its solve."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from plan.models.loading import LoadedScenario, load_scenario
from plan.models.problem import Problem
from plan.planner.candidates import build_problem
from plan.planner.plan import SolveResult
from plan.planner.session import SolveOptions
from plan.planner.solve import solve
from tests.planner.builders import WALL_NET_S


def run_catalog_scenario(
    base: dict[str, Any],
    write: Callable[[Any], Path],
    jobs: list[dict[str, Any]],
    *,
    top_k: int = 1,
    **fields: Any,
) -> tuple[LoadedScenario, Problem, SolveResult]:
    """`base` (no owned pools or sites unless given) with `fields` and `jobs`: loaded, built and
    solved."""
    base.update({"owned": [], "sites": [], **fields})
    base["jobs"] = jobs
    loaded = load_scenario(write(base))
    return loaded, build_problem(loaded), solve(loaded,
        SolveOptions(top_k=top_k, time_limit_s=WALL_NET_S))
