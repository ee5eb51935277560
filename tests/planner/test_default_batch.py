"""The default global batch (a published recipe's, by method and model size) never holds more
sequences than the job has: a job smaller than one default step trains in one step of all its
sequences, as a stated global_batch may not exceed the job's tokens either. Where the job is larger
the recipe's batch stands."""

from __future__ import annotations

import json
from typing import Any

import pytest

from plan.planner.estimate import default_global_batch
from plan.planner.solve import solve_session
from tests.conftest import generous_session
from tests.estimate.test_cli import run

SEQ = 4096


def _scenario(base_scenario: dict[str, Any], tokens: str) -> dict[str, Any]:
    base_scenario.update(
        budget="5000",
        deadline="30d",
        ops_skill="expert",
        academic=False,
        policy={},
        sites=[{"id": "site", "jurisdiction": "cn"}],
        owned=[
            {
                "id": "pool",
                "site": "site",
                "gpu": "a100-80gb",
                "count": 8,
                "gpus_per_node": 8,
                "cost_per_gpu_hour": 1.0,
            }
        ],
    )
    base_scenario["jobs"] = [
        {
            "id": "sft",
            "model": "qwen2.5-1.5b",
            "method": "lora",
            "tokens": tokens,
            "seq_len": SEQ,
            "data": {"sensitivity": "regulated", "residency": "on_premises", "at": "site"},
        }
    ]
    return base_scenario


@pytest.mark.parametrize(("tokens", "sequences"), [("200000", 48), ("100M", 24_414)])
def test_the_default_step_holds_at_most_the_jobs_sequences(
    base_scenario, write_scenario, tokens, sequences
):
    result = solve_session(generous_session(write_scenario(_scenario(base_scenario, tokens))))
    assert result.status == "optimal"
    (job,) = result.plans[0].jobs
    batch = job.layout.global_batch
    default = default_global_batch("lora", SEQ)
    assert batch <= sequences  # never a step larger than the data
    if sequences < default:  # a small job: one step of (about) all its sequences
        assert batch > sequences - job.dp
    else:  # the recipe's batch, rounded to whole sequences per replica
        assert abs(batch - default) < job.dp


def test_plan_estimate_limits_it_by_tokens_too():
    args = (
        "--model",
        "qwen2.5-1.5b",
        "--method",
        "lora",
        "--gpu",
        "a100-80gb",
        "--gpus",
        "1",
        "--format",
        "json",
    )
    code, out, _ = run(*args)
    assert code == 0 and json.loads(out)["layout"]["global_batch"] == default_global_batch(
        "lora", SEQ
    )
    code, out, _ = run(*args, "--tokens", "200000")
    assert code == 0 and json.loads(out)["layout"]["global_batch"] == 48
