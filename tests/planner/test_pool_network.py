"""An owned pool of several nodes that declares no network between them keeps each job on one node:
the answer says so and names the field that declares it, whether the scenario is then infeasible or
not; a pool that declares its network is planned on it, and no plan says a network was assumed for
it."""

from __future__ import annotations

from typing import Any

import pytest

from plan.models.loading import load_scenario
from plan.planner.session import SolveOptions
from plan.planner.solve import solve
from tests.planner.builders import WALL_NET_S


def _pod(
    base_scenario: dict[str, Any], deadline: str, fabric: dict[str, Any] | None
) -> dict[str, Any]:
    pool: dict[str, Any] = {
        "id": "pod",
        "site": "site",
        "gpu": "h100-sxm",
        "count": 64,
        "gpus_per_node": 8,
        "cost_per_gpu_hour": 10,
    }
    if fabric is not None:
        pool["fabric"] = fabric
    base_scenario.update(
        budget="100000",
        deadline=deadline,
        ops_skill="expert",
        academic=False,
        policy={},
        sites=[{"id": "site", "jurisdiction": "cn"}],
        owned=[pool],
    )
    base_scenario["jobs"] = [
        {
            "id": "pre8b",
            "model": "llama3.1-8b",
            "method": "pretrain",
            "tokens": "5B",
            "seq_len": 4096,
            "global_batch": 128,
            "framework": "fsdp",
            "data": {"sensitivity": "regulated", "residency": "on_premises", "at": "site"},
        }
    ]
    return base_scenario


@pytest.mark.parametrize("deadline", ["12h", "40h"])  # one node cannot make 12 h; it makes 40
def test_a_pool_without_a_declared_network_is_said_to_keep_jobs_on_one_node(
    base_scenario, write_scenario, deadline
):
    result = solve(
        load_scenario(write_scenario(_pod(base_scenario, deadline, None))),
        SolveOptions(time_limit_s=WALL_NET_S),
    )
    assert result.status == ("infeasible" if deadline == "12h" else "optimal")
    (note,) = [n for n in result.notes if n.startswith("owned pool pod has 8 nodes")]
    assert "pre8b can use one node at most" in note and "owned[pod].fabric" in note
    for plan in result.plans:
        assert all(job.gpus <= 8 for job in plan.jobs)


def test_a_declared_network_is_used_and_nothing_is_assumed_for_it(base_scenario, write_scenario):
    data = _pod(base_scenario, "12h", {"kind": "infiniband", "gbps_per_gpu": 400})
    result = solve(load_scenario(write_scenario(data)), SolveOptions(time_limit_s=WALL_NET_S))
    assert result.plans and result.plans[0].jobs[0].gpus > 8
    assert not any(n.startswith("owned pool pod has") for n in result.notes)
    assert not any("no platform given" in a for a in result.plans[0].assumptions)
