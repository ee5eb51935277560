"""Solving real scenarios: every plan is re-checked against domain data, without the solver."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plan.constraints.sensitivity import RULES
from plan.models.loading import load_scenario
from plan.planner.cli.app import app
from plan.planner.session import SolveOptions
from plan.planner.solve import solve
from tests.conftest import REPO
from tests.planner.builders import WALL_NET_S

runner = CliRunner()
MEDICAL = REPO / "scenarios" / "medical_hybrid.yaml"
JOB_KEYS = {
    "job",
    "platform",
    "gpu",
    "gpus",
    "nodes",
    "tp",
    "pp",
    "dp",
    "zero",
    "recompute",
    "micro_batch",
    "billing",
    "start_h",
    "end_h",
    "cost",
    "memory_gib_per_gpu",
    "gpu_memory_gib",
    "tokens_per_s",
    "mfu",
}


@pytest.fixture(scope="module")
def medical():
    loaded = load_scenario(MEDICAL)
    return loaded, solve(loaded, SolveOptions(time_limit_s=WALL_NET_S))


def test_medical_plans_respect_every_rule(medical):
    loaded, result = medical
    s = loaded.scenario
    assert result.status == "optimal" and len(result.plans) >= 2
    owned = {o.id: o for o in s.owned}
    for plan in result.plans:
        assert plan.total_cost <= s.budget
        jobs = {j.job: j for j in plan.jobs}
        reserved = sum(r.cost for r in plan.reservations)
        assert plan.total_cost == pytest.approx(sum(j.cost for j in plan.jobs) + reserved, abs=0.05)
        for j in plan.jobs:
            assert j.memory_gib_per_gpu <= j.gpu_memory_gib  # memory fits
            assert j.tp * j.pp * j.dp == j.gpus
            assert j.end_h <= s.effective_deadline_h(s.job(j.job)) + 1e-6
            for dep in s.job(j.job).after:
                assert j.start_h >= jobs[dep].end_h - 1e-6
        sft = jobs["clinical-sft"]  # regulated, on premises: only the hospital's own A800s
        assert (
            sft.platform in owned
            and owned[sft.platform].site == "hospital-dc"
            and sft.billing == "owned"
        )
        # Owned pool capacity: jobs on it never overlap beyond its 16 GPUs.
        on_pool = [j for j in plan.jobs if j.platform == "hospital-a800"]
        for a in on_pool:
            busy = sum(b.gpus for b in on_pool if b.start_h < a.end_h and a.start_h < b.end_h)
            assert busy <= 16
    costs = [p.total_cost for p in result.plans]
    assert costs == sorted(costs)
    for plan in result.plans:  # within the gap, or flagged as the nearest real change beyond it
        assert (plan.total_cost <= costs[0] * 1.1 + 1) is plan.within_gap
    keys = [tuple((j.platform, j.gpu, j.billing, j.gpus) for j in p.jobs) for p in result.plans]
    assert len(set(keys)) == len(keys)  # alternatives genuinely differ
    for plan, key in zip(result.plans[1:], keys[1:], strict=True):
        # a decision changes, or only counts do, as a trade for time
        decided = [k[:3] for k in keys[0]] != [k[:3] for k in key]
        assert decided or (plan.trade is not None and plan.trade.kind == "count")
    assert any("ruled out by ops_skill/domain-cpt" in line for line in result.plans[0].explanation)
    assert result.plans[0].assumptions  # assumed prices are disclosed


def test_regulated_rule_table_is_strict():
    assert not RULES["regulated"].spot and not RULES["regulated"].shared_nodes
    assert RULES["regulated"].links == ("private_line",)


def test_solve_json_has_documented_keys_and_is_deterministic():
    first = runner.invoke(app, ["solve", str(MEDICAL), "--format", "json", "--time-limit", "60"])
    second = runner.invoke(app, ["solve", str(MEDICAL), "--format", "json", "--time-limit", "60"])
    assert first.exit_code == 0, first.output
    a, b = json.loads(first.stdout), json.loads(second.stdout)
    assert {"scenario", "status", "objective", "currency", "solve_time_s", "plans"} <= set(a)
    plan = a["plans"][0]
    assert {"rank", "total_cost", "makespan_h", "jobs", "explanation", "assumptions"} <= set(plan)
    assert set(plan["jobs"][0]) >= JOB_KEYS
    a.pop("solve_time_s"), b.pop("solve_time_s")
    assert a == b


def test_why_not_names_the_sensitivity_rule():
    result = runner.invoke(app, ["explain", str(MEDICAL), "--why-not",
                                 "job=clinical-sft platform=zhixingyun gpu=a800-80gb gpus=8 "
                                 "billing=hourly",
                                 "--format", "json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["status"] == "infeasible"
    names = {c["constraint"] for c in answer["conflicts"]}
    assert "sensitivity/clinical-sft" in names or "residency/clinical-sft" in names


def test_infeasible_scenario_explains_itself(tmp_path: Path):
    text = MEDICAL.read_text().replace("budget: 400k", "budget: 500")
    path = tmp_path / "poor.yaml"
    path.write_text(text)
    result = runner.invoke(app, ["solve", str(path), "--format", "json", "--time-limit", "60"])
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["status"] == "infeasible"
    assert "budget" in {c["constraint"] for c in data["conflicts"]}
    budget = next(r for r in data["relaxations"] if r["kind"] == "budget")
    assert budget["to"] > 500 and budget["unit"] == "CNY"


def test_solve_bad_input_exit_2(tmp_path: Path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: x\njobs: [{id: a, model: llama9-8b, method: lora, tokens: 1M}]\n")
    result = runner.invoke(app, ["solve", str(path)])
    assert (
        result.exit_code == 2
        and "did you mean" in result.stderr
        and "Traceback" not in result.output
    )
    bad_spec = runner.invoke(app, ["explain", str(MEDICAL), "--why-not", "gpu"])
    assert bad_spec.exit_code == 2 and "--why-not" in bad_spec.stderr
