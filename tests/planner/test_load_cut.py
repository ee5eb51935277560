"""An answer the wall-clock safety net cut is never labelled optimal or complete (issue 48 item 1),
and the work limit, not the clock, decides what a front holds."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from plan.planner.cli.app import app
from plan.planner.pareto.front import pareto_front
from plan.planner.solve import solve_session
from tests.conftest import REPO, generous_session

STUDENT = REPO / "scenarios/student_no_ops.yaml"
runner = CliRunner()


def test_a_solve_the_safety_net_stopped_says_cut_and_keeps_its_plans():
    session = generous_session(STUDENT)
    session.wall_stopped = True  # as `Session.run` records when CP-SAT stopped on the wall clock
    result = solve_session(session)
    assert result.status == "cut" and result.plans
    assert any("wall-clock safety net" in note for note in result.notes)


def test_an_uncut_solve_keeps_its_proven_status():
    result = solve_session(generous_session(STUDENT))
    assert result.status == "optimal"


def test_a_front_the_safety_net_stopped_is_cut_and_incomplete():
    session = generous_session(STUDENT)
    session.wall_stopped = True
    front = pareto_front(session)
    assert front.status == "cut" and front.complete is False
    assert front.to_dict()["complete"] is False


def test_a_whole_front_is_complete():
    front = pareto_front(generous_session(STUDENT))
    assert front.status == "optimal" and front.complete is True and front.points


def test_a_front_short_of_work_is_the_same_every_time_and_says_unproven(tmp_path: Path):
    """A small work limit (deterministic) leaves points unproven: the front says feasible, not
    optimal, and the same limit gives the same front, point for point, on every run."""
    out = tmp_path / "front.json"
    # (1 unit: 28 points found, six of them unproven, and the next one not found within the
    # limit, so the front also says it is incomplete and exits 3; at 2.5 the whole front proves)
    args = ["pareto", str(REPO / "scenarios/lab_six_jobs.yaml"), "-q", "--work-limit", "1",
            "-o", str(out)]
    first = runner.invoke(app, args)
    front = json.loads(out.read_text(encoding="utf-8"))
    assert front["status"] == "feasible"
    assert first.exit_code == (0 if front["complete"] else 3)
    assert any("not proven optimal within the work limit" in note for note in front["notes"])
    again = runner.invoke(app, args)
    assert again.exit_code == first.exit_code
    assert json.loads(out.read_text(encoding="utf-8"))["points"] == front["points"]
