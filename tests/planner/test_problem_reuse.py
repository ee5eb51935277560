"""A batch sweeping the budget builds candidates once: the reused problem equals a fresh build."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml

from plan.models.loading import load_scenario
from plan.planner import candidates
from plan.planner.candidates import build_problem
from tests.conftest import REPO


def _variant(tmp_path: Path, name: str, **changes: object) -> Path:
    data = yaml.safe_load(
        (REPO / "scenarios" / "grant_qlora_compare.yaml").read_text(encoding="utf-8")
    )
    data.update(changes)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def test_a_budget_variant_reuses_the_build_and_equals_a_fresh_one(tmp_path: Path) -> None:
    candidates._BUILT.clear()
    first = build_problem(load_scenario(_variant(tmp_path, "a.yaml", budget="300")))
    assert len(candidates._BUILT) == 1
    reused = build_problem(load_scenario(_variant(tmp_path, "b.yaml", budget="120")))
    assert len(candidates._BUILT) == 1, "the budget variant reused the first build"
    candidates._BUILT.clear()
    fresh = build_problem(load_scenario(_variant(tmp_path, "c.yaml", budget="120")))
    assert dataclasses.asdict(reused) == dataclasses.asdict(fresh)
    assert reused.budget != first.budget and reused.groups["budget"] != first.groups["budget"]
    # a caller's change to its copy never reaches the next one
    reused.candidates[reused.jobs[0]].clear()
    again = build_problem(load_scenario(_variant(tmp_path, "d.yaml", budget="120")))
    assert dataclasses.asdict(again) == dataclasses.asdict(fresh)


def test_other_changes_build_again(tmp_path: Path) -> None:
    candidates._BUILT.clear()
    build_problem(load_scenario(_variant(tmp_path, "a.yaml", deadline="20d")))
    build_problem(load_scenario(_variant(tmp_path, "b.yaml", deadline="10d")))
    assert len(candidates._BUILT) == 2
