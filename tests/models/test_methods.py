"""Methods in scenarios and on the command line: sft, dpo, lora_dpo, qlora_dpo."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from plan.models.errors import InputError
from plan.models.loading import load_scenario
from plan.planner.cli.app import app


@pytest.mark.parametrize(
    ("method", "rank"), [("sft", None), ("dpo", None), ("lora_dpo", 16), ("qlora_dpo", 64)]
)
def test_scenario_jobs_accept_the_new_methods(base_scenario, write_scenario, method, rank):
    job = base_scenario["jobs"][1]
    job["method"] = method
    job.pop("lora_rank", None)
    if rank is not None:
        job["lora_rank"] = rank
    loaded = load_scenario(write_scenario(base_scenario))
    assert loaded.scenario.jobs[1].method == method


def test_full_dpo_refuses_a_lora_rank_in_one_line(base_scenario, write_scenario):
    base_scenario["jobs"][1]["method"] = "dpo"
    base_scenario["jobs"][1]["lora_rank"] = 8
    with pytest.raises(InputError) as err:
        load_scenario(write_scenario(base_scenario))
    assert len(err.value.problems) == 1 and "lora_rank" in err.value.problems[0]


def test_plan_estimate_runs_dpo_and_names_the_reference():
    result = CliRunner().invoke(
        app,
        [
            "estimate",
            "--model",
            "qwen3-8b",
            "--method",
            "dpo",
            "--gpu",
            "a800-80gb",
            "--gpus",
            "8",
            "--seq-len",
            "2048",
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    best = data.get("best", data)
    assert best["method"] == "dpo" and any("reference" in n for n in best["notes"])
