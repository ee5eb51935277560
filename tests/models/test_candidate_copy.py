"""`Candidate.but`, the fast copy the builder renumbers and renames with: `dataclasses.replace`."""

from __future__ import annotations

import dataclasses

import pytest

from plan.models.problem import Candidate
from tests.planner.builders import Spec, make_problem


def _candidate() -> Candidate:
    problem = make_problem([Spec("a", "cloud", violations={"ops_skill/a": "too hard"})])
    return problem.candidates["a"][0]


def test_a_copy_equals_replace_and_leaves_the_original() -> None:
    c = _candidate()
    changes = {"index": 7, "job": "b", "violations": {"ops_skill/b": "too hard"}}
    copied = c.but(**changes)
    assert copied == dataclasses.replace(c, **changes)
    assert copied is not c and copied.job == "b" and c.job == "a" and c.index != 7
    assert copied.violations is not c.violations and c.violations == {"ops_skill/a": "too hard"}
    assert hash(copied.layout) == hash(c.layout)


def test_an_unknown_field_is_refused_as_replace_refuses_it() -> None:
    c = _candidate()
    with pytest.raises(TypeError, match="jobs"):
        c.but(jobs="b")
    with pytest.raises(TypeError):
        dataclasses.replace(c, jobs="b")


def test_a_copy_stays_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        _candidate().but(index=1).index = 2  # type: ignore[misc]
