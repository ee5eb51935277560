"""Per-job `gpus` (exact), `min_gpus` and a fixed `layout`, honoured in every candidate and plan."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from plan.models.loading import load_scenario
from plan.planner.candidates import build_problem
from plan.planner.cli.app import app
from plan.planner.solve import SolveOptions, solve

runner = CliRunner()


def _scenario(base_scenario, **job_fields):
    base_scenario["owned"] = []
    base_scenario["sites"] = []
    base_scenario["budget"] = "1M"
    base_scenario["ops_skill"] = "expert"
    base_scenario["jobs"] = [{"id": "a", "model": "llama3-8b", "method": "full_finetune", "tokens": "200M",
                              "seq_len": 2048, **job_fields}]
    return base_scenario


def test_exact_count_in_every_candidate_and_plan(base_scenario, write_scenario):
    loaded = load_scenario(write_scenario(_scenario(base_scenario, gpus=12)))
    problem = build_problem(loaded)
    assert problem.candidates["a"] and {c.gpus for c in problem.candidates["a"]} == {12}
    result = solve(loaded, SolveOptions(time_limit_s=30))
    assert result.plans and all(j.gpus == 12 for p in result.plans for j in p.jobs)
    assert any("fixed by the scenario: gpus=12" in line for line in result.plans[0].explanation)


def test_min_gpus_is_a_floor_and_itself_a_candidate(base_scenario, write_scenario):
    problem = build_problem(load_scenario(write_scenario(_scenario(base_scenario, min_gpus=6))))
    counts = {c.gpus for c in problem.candidates["a"]}
    assert counts and min(counts) >= 6 and 6 in counts


def test_fixed_layout_is_honoured(base_scenario, write_scenario):
    loaded = load_scenario(write_scenario(_scenario(base_scenario, layout={"tp": 2, "zero": 1})))
    problem = build_problem(loaded)
    assert problem.candidates["a"]
    for c in problem.candidates["a"]:
        assert c.layout["tp"] == 2 and c.layout["zero"] == 1 and c.gpus % 2 == 0


def test_fixed_layout_the_hardware_cannot_run_is_a_named_removal(base_scenario, write_scenario):
    # Counts that are multiples of 3 exist (24, 48, ...), but tp=3 does not divide llama3-8b's 32 heads.
    loaded = load_scenario(write_scenario(_scenario(base_scenario, layout={"tp": 3})))
    problem = build_problem(loaded)
    assert not problem.candidates["a"]
    assert any(r.rule == "layout" and "tp" in r.reason for r in problem.removed)


@pytest.mark.parametrize(("fields", "expected"), [
    ({"gpus": 4, "min_gpus": 8}, "gpus (4) is below min_gpus (8)"),
    ({"min_gpus": 16, "max_gpus": 8}, "min_gpus (16) is above max_gpus (8)"),
    ({"gpus": 12, "layout": {"tp": 8}}, "layout: tp x pp = 8 does not divide gpus (12)"),
    ({"layout": {"zero": 4}}, "jobs[0].layout.zero: got 4; must be at most 3"),
    ({"layout": {"tp": 2, "dp": 4}}, "jobs[0].layout.dp: unknown field; did you mean 'tp'"),
])
def test_inconsistent_counts_are_bad_input(base_scenario, write_scenario, fields, expected):
    path = write_scenario(_scenario(base_scenario, **fields))
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0] and str(path) in lines[0], result.stderr
