"""The report page without a browser: structure, lanes with capacity, one bar per job, CLI errors."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from typer.testing import CliRunner

from plan.models.loading import load_scenario
from plan.planner.cli.app import app
from plan.planner.report_html import report_html
from plan.planner.report_html.charts import billing_lines
from plan.planner.session import SolveOptions
from plan.planner.solve import solve
from tests.conftest import REPO

runner = CliRunner()
FRONTIER = REPO / "scenarios" / "frontier_private_vs_hybrid.yaml"  # its best plan buys GPUs: a held lane


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.bars: list[dict[str, str | None]] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "rect" and a.get("class") == "job-bar":
            self.bars.append(a)
        if a.get("id"):
            self.ids.add(a["id"])


@pytest.fixture(scope="module")
def frontier():
    loaded = load_scenario(FRONTIER)
    return loaded, solve(loaded, SolveOptions(time_limit_s=60))


def test_gantt_has_one_bar_per_job_and_a_lane_per_pool(frontier):
    loaded, result = frontier
    page = report_html(result, loaded)
    tags = _Tags()
    tags.feed(page)
    best = result.plans[0]
    assert sorted(b["data-job"] for b in tags.bars) == sorted(j.job for j in best.jobs)
    for bar in tags.bars:
        job = next(j for j in best.jobs if j.job == bar["data-job"])
        assert float(bar["data-start-h"]) == job.start_h and float(bar["data-end-h"]) == job.end_h
    for res in best.reservations:  # a reservation or purchase is a lane with its capacity
        assert res.label in page and f"{res.gpus} GPUs reserved" in page
    assert "gantt" in tags.ids and "Assumptions" in page and "Memory per GPU" in page


def test_billing_lines_add_up_to_the_plan_cost(frontier):
    _, result = frontier
    for plan in result.plans:
        assert sum(cost for _, cost in billing_lines(plan)) == pytest.approx(plan.total_cost, abs=1.0)


def test_report_path_must_be_html(tmp_path):
    result = runner.invoke(app, ["report", str(FRONTIER), "-o", str(tmp_path / "r.pdf")])
    assert result.exit_code == 2 and "html" in result.output
    missing = runner.invoke(app, ["report", str(FRONTIER), "-o", str(tmp_path / "no" / "r.html")])
    assert missing.exit_code == 2 and "does not exist" in missing.output


def test_solve_writes_the_report_too(tmp_path):
    out = tmp_path / "r.html"
    result = runner.invoke(app, ["solve", str(REPO / "scenarios" / "medical_hybrid.yaml"), "--report", str(out)])
    assert result.exit_code == 0 and out.read_text().startswith("<!doctype html>")
