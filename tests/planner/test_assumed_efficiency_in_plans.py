"""A GPU whose efficiency factors are assumed (no published measurement) never decides a plan
silently: every candidate on it carries the assumption, and so does every plan that uses one."""

from __future__ import annotations

from pathlib import Path

from plan.models.loading import load_scenario
from plan.planner.candidates import build_problem
from plan.planner.estimate.factors import MEASURED_GEMM_ARCHITECTURES

ROOT = Path(__file__).resolve().parents[2]


def test_candidates_on_assumed_architectures_say_so() -> None:
    loaded = load_scenario(ROOT / "scenarios" / "domestic_ascend.yaml")
    problem = build_problem(loaded)
    catalog = loaded.catalog
    seen = {"assumed": 0, "measured": 0}
    for candidates in problem.candidates.values():
        for c in candidates:
            arch = catalog.gpu(c.gpu).architecture
            says = any("compute efficiency of" in note for note in c.assumptions)
            # its wider throughput band moves the time scheduled at the scenario's confidence: said
            # too
            band = any(f"{c.job}: throughput band widened" in note and f"{arch} GPUs' compute "
                                                                       "efficiency" in note
                       for note in c.assumptions)
            if arch in MEASURED_GEMM_ARCHITECTURES:
                assert not says and not band, (c.gpu, c.assumptions)
                seen["measured"] += 1
            else:
                assert says and band, (c.gpu, c.assumptions)
                seen["assumed"] += 1
    assert seen["assumed"] > 0
