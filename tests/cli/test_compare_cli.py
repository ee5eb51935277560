"""`plan compare` on a small recurring scenario: exit codes, the JSON rows, one line for a bad
job."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from plan.planner.cli.app import app

runner = CliRunner()


def _scenario(base_scenario):
    base_scenario["deadline"] = "30d"
    base_scenario["policy"] = {"allow_platforms": ["autodl"], "allow_gpus": ["rtx4090"]}
    job = base_scenario["jobs"][0]
    job["repeat"] = {"every": "7d", "count": 2}
    base_scenario["jobs"] = [job]
    return base_scenario


def test_compare_recurring_job_json(base_scenario, write_scenario):
    path = write_scenario(_scenario(base_scenario))
    result = runner.invoke(app, ["compare", str(path), "--job", "a", "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["instances"] == ["a-01", "a-02"]
    rows = {(r["platform"], r["billing"]): r for r in data["rows"]}
    assert {("autodl", "hourly"), ("lab-4090", "owned")} <= set(rows)
    solved = [r for r in rows.values() if r["status"] == "feasible"]
    assert solved and sum(r["cheapest"] for r in solved) >= 1
    assert min(r["plan_cost"] for r in solved) == data["best_cost"]
    # every plan row holds both instances; a row without a plan says why
    assert all(r["run_h"] > 0 and r["job_cost"] is not None for r in solved)
    assert all(r["reason"] for r in rows.values() if r["status"] != "feasible")
    # the policy's exclusions are named once, not as rows
    assert ("aws", "hourly") not in rows and any("policy" in n for n in data["notes"])
    table = runner.invoke(app, ["compare", str(path), "--job", "a"])
    assert table.exit_code == 0 and "cheapest" in table.stdout
    markdown = runner.invoke(app, ["compare", str(path), "--job", "a", "--format", "markdown"])
    assert markdown.exit_code == 0 and "| billing | platform |" in markdown.stdout


def test_compare_unknown_job_is_one_line_exit_2(base_scenario, write_scenario):
    path = write_scenario(_scenario(base_scenario))
    result = runner.invoke(app, ["compare", str(path), "--job", "nope"])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --job: unknown job 'nope'; jobs: a")
