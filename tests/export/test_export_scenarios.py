"""Every plan of every shipped scenario: each stack either exports files that parse and keep the
layout identities, or refuses with one reason naming the stack and the capability it lacks."""

from __future__ import annotations

import pytest

from plan.models.loading import load_scenario
from plan.planner.export import STACKS, ExportError, build_layout, render_stack
from plan.planner.session import SolveOptions
from plan.planner.solve import solve
from tests.conftest import SCENARIOS
from tests.export.helpers import check_identities
from tests.planner.builders import WALL_NET_S


@pytest.fixture(scope="module", params=SCENARIOS, ids=[p.stem for p in SCENARIOS])
def solved(request):
    loaded = load_scenario(request.param)
    return loaded, solve(loaded, SolveOptions(time_limit_s=WALL_NET_S))


def test_every_plan_exports_consistently_or_names_what_is_missing(solved):
    loaded, result = solved
    jobs = {j.id: j for j in loaded.scenario.jobs}
    for plan in result.plans:
        for jp in plan.jobs:
            exported, reasons = 0, []
            layout = build_layout(jp, jobs[jp.job], loaded.models[jp.job])
            assert not layout.identities()
            for stack in STACKS:
                try:
                    files, notes = render_stack(layout, stack)
                except ExportError as exc:
                    message = str(exc)
                    reasons.append(message)
                    assert "\n" not in message and message.split(":")[0] in (
                        stack,
                        "accelerate",
                        "torchrun-fsdp",
                    )
                    continue
                exported += 1
                check_identities(stack, layout, files)
                assert all(isinstance(n, str) and n for n in notes)
            # Every job exports to some stack, except one that keeps activations in host memory
            # without recomputing them (torchtune's policy): none of the six stacks has it, and each
            # says so.
            if layout.recompute != "offload":
                assert exported >= 1, f"{jp.job} of plan {plan.rank} exports to no stack: {reasons}"
            elif exported == 0:
                assert all("offload" in r or "LoRA" in r for r in reasons), reasons
