"""CP-SAT against an independent brute force on small random problems (shared pools,
reservations)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plan.models.problem import SCALE, Resource
from tests.planner.builders import Spec, make_problem, solved_as_brute_force

POOL = Resource(key="lab", kind="owned", platform="lab", gpu="a800-80gb", label="lab", capacity=8)
MONTH = Resource(
    key="p:h800:monthly",
    kind="reservation",
    platform="p",
    gpu="h800",
    label="monthly",
    levels=(4, 8),
    period_min=SCALE.minutes(100),
    price_per_gpu_period=SCALE.money(20),
    max_periods=20,
)


@st.composite
def problems(draw):
    jobs = ["a", "b", "c"][: draw(st.integers(1, 3))]
    specs = []
    for job in jobs:
        for _ in range(draw(st.integers(1, 3))):
            kind = draw(st.sampled_from(["hourly", "owned", "monthly"]))
            hours = draw(st.integers(1, 120))
            gpus = draw(st.sampled_from([4, 8]))
            violated = draw(st.booleans()) and draw(st.booleans())
            specs.append(
                Spec(
                    job,
                    {"hourly": "cloud", "owned": "lab", "monthly": "p"}[kind],
                    gpus=gpus,
                    billing=kind,
                    hours=hours,
                    cost=0 if kind == "monthly" else draw(st.integers(1, 500)),
                    resource={"owned": "lab", "monthly": MONTH.key}.get(kind),
                    violations={f"sensitivity/{job}": "rule"} if violated else {},
                )
            )
    after = {"b": ["a"]} if "b" in jobs and draw(st.booleans()) else {}
    deadline = draw(st.one_of(st.none(), st.integers(20, 300)))
    budget = draw(st.one_of(st.none(), st.integers(50, 1500)))
    return make_problem(specs, jobs=jobs, after=after, resources=[POOL, MONTH], budget=budget,
                        deadlines_h={j: deadline for j in jobs} if deadline else None)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems(), st.sampled_from(["cost", "time"]))
def test_cp_sat_matches_brute_force(problem, objective):
    solved_as_brute_force(problem, objective)
