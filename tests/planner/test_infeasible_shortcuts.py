"""Shortcuts of an infeasible answer's search give the answer the full search gives: a memory saver
that leaves a job with no option unchanged is not built (`stays_without_options`)."""

from __future__ import annotations

from typing import Any

import pytest

from plan.models.loading import load_scenario
from plan.planner.estimate.advice import LEANER_OPTIMIZERS, STACK_SETTINGS
from plan.planner.explain import relaxations
from plan.planner.session import Session, SolveOptions
from plan.planner.solve import solve_session


def _one_job_late(base_scenario: dict[str, Any]) -> dict[str, Any]:
    """A LoRA run no option finishes within the model's horizon (three hours for a one-hour
    deadline), beside a small full fine-tune that some cards cannot hold (so the full fine-tune's
    optimizer swaps name it alone)."""
    base_scenario.update(owned=[], sites=[], budget="1M", deadline="1h")
    base_scenario["jobs"] = [
        {"id": "late-lora", "model": "qwen2.5-7b", "method": "lora", "tokens": "20B",
         "seq_len": 2048},
        {"id": "small-ft", "model": "qwen2.5-1.5b", "method": "full_finetune", "tokens": "2M",
         "seq_len": 2048},
    ]
    return base_scenario


@pytest.fixture
def late_session(base_scenario, write_scenario) -> Session:
    path = write_scenario(_one_job_late(base_scenario))
    return Session.from_loaded(load_scenario(path), SolveOptions(time_limit_s=300))


def test_savers_skipped_only_where_a_job_stays_without_options(late_session, monkeypatch) -> None:
    problem = late_session.problem
    assert not problem.candidates["late-lora"] and problem.candidates["small-ft"]
    pairs = relaxations._savers_for(late_session, LEANER_OPTIMIZERS + STACK_SETTINGS)
    skipped = [p for p in pairs if relaxations.stays_without_options(problem, set(p[1]))]
    assert skipped, "the plant must have a saver that leaves the late job as it is"
    shortcut = [relaxations._saver_relaxation(late_session, [pair]) for pair in pairs]
    # the same savers built and solved from scratch
    monkeypatch.setattr(relaxations, "stays_without_options", lambda *_: False)
    full = [relaxations._saver_relaxation(late_session, [pair]) for pair in pairs]
    assert shortcut == full
    assert all(full[pairs.index(pair)] is None for pair in skipped)


def test_infeasible_answer_same_with_and_without_shortcut(
    base_scenario, write_scenario, monkeypatch
) -> None:
    path = write_scenario(_one_job_late(base_scenario))
    fast = solve_session(Session.from_loaded(load_scenario(path), SolveOptions(time_limit_s=300)))
    monkeypatch.setattr(relaxations, "stays_without_options", lambda *_: False)
    slow = solve_session(Session.from_loaded(load_scenario(path), SolveOptions(time_limit_s=300)))
    assert fast.status == slow.status == "infeasible"
    assert fast.conflicts == slow.conflicts and fast.conflicts
    assert fast.relaxations == slow.relaxations and fast.relaxations
    assert fast.notes == slow.notes
