"""Memory headroom: every candidate (so every chosen plan) peaks within (1 - headroom) x its
card."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from plan.models.loading import load_scenario
from plan.planner.candidates import build_problem
from plan.planner.cli.app import app
from plan.planner.session import SolveOptions
from plan.planner.solve import solve
from tests.conftest import SCENARIOS
from tests.planner.builders import WALL_NET_S

runner = CliRunner()


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.name)
def test_every_candidate_of_every_shipped_scenario_keeps_the_default_headroom(path):
    loaded = load_scenario(path)
    headroom = loaded.scenario.policy.memory_headroom
    assert headroom == pytest.approx(0.08)
    problem = build_problem(loaded)
    for c in problem.all_candidates():
        assert c.memory_gib_per_gpu <= (1 - headroom) * c.gpu_memory_gib + 1e-9, c.name


@pytest.mark.parametrize("headroom", [0.0, 0.25])
def test_chosen_plans_respect_the_scenario_headroom(base_scenario, write_scenario, headroom):
    base_scenario["policy"] = {"memory_headroom": headroom}
    loaded = load_scenario(write_scenario(base_scenario))
    result = solve(loaded, SolveOptions(time_limit_s=WALL_NET_S))
    assert result.plans
    for plan in result.plans:
        for j in plan.jobs:
            assert j.memory_gib_per_gpu <= (1 - headroom) * j.gpu_memory_gib + 1e-9
        assert any(f"memory headroom {headroom:.0%}" in line for line in plan.explanation)


def test_more_headroom_never_adds_options(base_scenario, write_scenario):
    # (compared before dominance pruning, which ranks options against each other: the options memory
    # removes, the same option being the same job, platform, GPU, count and billing)
    def out_of_memory(headroom: float) -> set[tuple[str, str, str, int, str]]:
        base_scenario["policy"] = {"memory_headroom": headroom}
        problem = build_problem(load_scenario(write_scenario(base_scenario)))
        return {
            (r.job, r.platform, r.gpu, r.gpus, r.billing)
            for r in problem.removed
            if r.rule == "memory"
        }

    loose, tight = out_of_memory(0.0), out_of_memory(0.3)
    assert loose < tight  # strictly more removed: some layouts only fit without the headroom


def test_headroom_out_of_range_is_bad_input(base_scenario, write_scenario):
    base_scenario["policy"] = {"memory_headroom": 0.9}
    result = runner.invoke(app, ["validate", str(write_scenario(base_scenario))])
    assert result.exit_code == 2 and "policy.memory_headroom" in result.stderr


def _estimate(*extra: str) -> dict:
    result = runner.invoke(
        app,
        [
            "estimate",
            "--model",
            "llama3-8b",
            "--method",
            "lora",
            "--gpu",
            "rtx4090",
            "--gpus",
            "1",
            "--seq-len",
            "4096",
            "--micro-batch",
            "1",
            "--cpu-offload",
            "off",
            "--format",
            "json",
            *extra,
        ],
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_estimate_reports_fits_against_the_headroom():
    default = _estimate()
    assert default["memory_headroom"] == pytest.approx(0.08)
    verdicts = set()
    for headroom in (0.0, 0.08, 0.3, 0.5):
        data = _estimate("--headroom", str(headroom))
        usable = data["usable_memory_gib"]
        assert usable == pytest.approx(data["gpu_memory_gib"] * (1 - headroom), abs=1e-3)
        assert data["fits"] is (data["memory_gib"]["total"] <= usable)
        verdicts.add(data["fits"])
    assert verdicts == {True, False}  # the same layout fits or not depending on the headroom alone


def test_estimate_headroom_bad_value_is_one_line():
    result = runner.invoke(
        app,
        [
            "estimate",
            "--model",
            "llama3-8b",
            "--method",
            "lora",
            "--gpu",
            "rtx4090",
            "--gpus",
            "1",
            "--headroom",
            "0.9",
        ],
    )
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: --headroom: a fraction of the card from 0 to 0.5, got 0.9"]
