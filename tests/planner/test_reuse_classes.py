"""The reuse cache decides from what a variant changes, field by field
(planner/candidates/reuse.py): each class is changed here, and a change that reuses gives the
problem a fresh build gives, while a change that reaches the candidates builds again."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
import yaml

from plan.models.loading import load_scenario_data
from plan.models.problem import Problem
from plan.models.scenario import Scenario
from plan.planner import candidates
from plan.planner.candidates import FIELD_USE, build_problem, field_use
from plan.planner.candidates.build import CandidateBuilder
from plan.planner.candidates.reuse import (
    CANDIDATES,
    HORIZON,
    PROBLEM_FIGURE,
    SOLVE_ONLY,
    _with_figures,
)
from tests.conftest import REPO

SCENARIO = REPO / "scenarios" / "grant_qlora_compare.yaml"


def _base() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load(SCENARIO.read_text(encoding="utf-8"))
    return data


def _problem(data: dict[str, Any]) -> Problem:
    return build_problem(load_scenario_data(copy.deepcopy(data), SCENARIO))


def _fresh(data: dict[str, Any]) -> Problem:
    candidates._BUILT.clear()
    return _problem(data)


def _reused_after(first: dict[str, Any], variant: dict[str, Any]) -> tuple[Problem, bool]:
    """The variant's problem built after `first`'s, and whether it reused that build."""
    candidates._BUILT.clear()
    _problem(first)
    problem = _problem(variant)
    return problem, len(candidates._BUILT) == 1


def test_every_scenario_field_is_classed() -> None:
    """A new scenario field must be classed (an unlisted one builds again, which is safe but
    slow)."""
    assert set(FIELD_USE) == set(Scenario.model_fields)
    assert field_use("a field added later") == CANDIDATES


REUSING = [  # (class, field, value): the change reuses the candidates
    (SOLVE_ONLY, "description", "another description"),
    (SOLVE_ONLY, "solver", {"work_limit": 5, "top_k": 1, "gap": 0.05, "seed": 3}),
    (PROBLEM_FIGURE, "budget", "120"),
    (PROBLEM_FIGURE, "objective", "time"),
    (PROBLEM_FIGURE, "value_of_time_per_day", "500"),
    (PROBLEM_FIGURE, "name", "another name"),
]


@pytest.mark.parametrize(("use", "field", "value"), REUSING)
def test_a_change_that_reaches_no_candidate_reuses_and_equals_a_fresh_build(
        use: str, field: str, value: object) -> None:
    assert field_use(field) == use
    variant = {**_base(), field: value}
    reused, was_reused = _reused_after(_base(), variant)
    assert was_reused
    assert dataclasses.asdict(reused) == dataclasses.asdict(_fresh(variant))


def test_a_deadline_within_the_same_horizons_reuses_and_equals_a_fresh_build() -> None:
    """The latest deadline (a job's own 20 days) sets both horizons: the scenario's deadline moves
    the other job's deadline only, a problem figure."""
    assert field_use("deadline_h") == HORIZON
    base = _base()
    base["jobs"][0]["deadline"] = "20d"
    variant = {**copy.deepcopy(base), "deadline": "6d"}
    reused, was_reused = _reused_after(base, variant)
    assert was_reused
    fresh = _fresh(variant)
    assert dataclasses.asdict(reused) == dataclasses.asdict(fresh)
    assert fresh.deadline_min != _fresh(base).deadline_min


def test_a_deadline_that_moves_the_horizon_builds_again() -> None:
    variant = {**_base(), "deadline": "20d"}
    _, was_reused = _reused_after(_base(), variant)
    assert not was_reused
    assert _fresh(variant).horizon_min != _fresh(_base()).horizon_min


def _with_job_tokens(data: dict[str, Any]) -> dict[str, Any]:
    data["jobs"][0]["tokens"] = "300M"
    return data


CHANGING = [  # (field, how): each changes the candidates of this scenario
    ("currency", lambda d: {**d, "currency": "USD"}),
    ("confidence", lambda d: {**d, "confidence": 0.95}),
    ("ops_skill", lambda d: {**d, "ops_skill": "expert"}),
    ("policy", lambda d: {**d, "policy": {"forbid_gpus": ["rtx4090"]}}),
    ("renter_jurisdiction", lambda d: {**d, "renter_jurisdiction": "cn"}),  # US clouds flagged
    ("jobs", _with_job_tokens),
]


@pytest.mark.parametrize(("field", "change"), CHANGING)
def test_a_change_that_reaches_the_candidates_builds_again(field: str, change: Any) -> None:
    assert field_use(field) == CANDIDATES
    variant = change(_base())
    built, was_reused = _reused_after(_base(), variant)
    assert not was_reused
    fresh_base = _fresh(_base())
    # the change does reach the candidates, so a reuse would have answered wrongly
    assert dataclasses.asdict(built)["candidates"] != dataclasses.asdict(fresh_base)["candidates"]
    assert dataclasses.asdict(built) == dataclasses.asdict(_fresh(variant))


def test_a_fresh_build_keeps_its_own_figures() -> None:
    """Setting a build's figures from its own scenario changes nothing (every solve goes through
    `_with_figures`, reused or not)."""
    base = _base()
    base["jobs"][0]["deadline"] = "20d"
    loaded = load_scenario_data(base, SCENARIO)
    built = CandidateBuilder(loaded).build()
    assert dataclasses.asdict(_with_figures(built, loaded.scenario)) == dataclasses.asdict(built)
