"""The report page without a browser: structure, lanes with capacity, one bar per job, CLI
errors."""

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
from tests.planner.builders import WALL_NET_S

runner = CliRunner()
# its best plan buys GPUs: a held lane
FRONTIER = REPO / "scenarios" / "frontier_private_vs_hybrid.yaml"


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
    return loaded, solve(loaded, SolveOptions(time_limit_s=WALL_NET_S))


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
        assert sum(cost for _, cost in billing_lines(plan)) == pytest.approx(
            plan.total_cost, abs=1.0
        )


def test_report_path_must_be_html(tmp_path):
    result = runner.invoke(app, ["report", str(FRONTIER), "-o", str(tmp_path / "r.pdf")])
    assert result.exit_code == 2 and "html" in result.output
    missing = runner.invoke(app, ["report", str(FRONTIER), "-o", str(tmp_path / "no" / "r.html")])
    assert missing.exit_code == 2 and "does not exist" in missing.output


def test_solve_writes_the_report_too(tmp_path):
    out = tmp_path / "r.html"
    result = runner.invoke(
        app, ["solve", str(REPO / "scenarios" / "medical_hybrid.yaml"), "--report", str(out)]
    )
    assert result.exit_code == 0 and out.read_text().startswith("<!doctype html>")


class _Charts(HTMLParser):
    """Each <svg>'s attributes and the text of each element with an id (its <title>s)."""

    def __init__(self) -> None:
        super().__init__()
        self.svgs: list[dict[str, str | None]] = []
        self.texts: dict[str, str] = {}
        self.mains = 0
        self.bar_tips: list[str] = []
        self._open: list[str | None] = []
        self._in_bar = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.svgs += [a] if tag == "svg" else []
        self.mains += tag == "main"
        self._in_bar = self._in_bar or (tag == "rect" and a.get("class") == "job-bar")
        self._open.append(a.get("id"))
        if a.get("id"):
            self.texts[a["id"] or ""] = ""

    def handle_endtag(self, tag):
        self._open.pop() if self._open else None
        self._in_bar = self._in_bar and tag != "rect"

    def handle_data(self, data):
        if self._open and self._open[-1]:
            self.texts[self._open[-1] or ""] += data
        if self._in_bar:
            self.bar_tips.append(data)


def test_charts_are_named_scale_to_their_box_and_sit_in_main(frontier):
    loaded, result = frontier
    page = report_html(result, loaded)
    charts = _Charts()
    charts.feed(page)
    assert charts.mains == 1
    assert len(charts.svgs) == 5  # Gantt, cost by job, cost by billing line, cash per month, memory
    for svg in charts.svgs:
        assert svg.get("role") == "img" and svg.get("width") == "100%" and svg.get("viewbox")
        name = charts.texts.get(svg.get("aria-labelledby") or "", "")
        assert len(name.strip()) > 10, svg  # an accessible name, not an empty title
    assert page.count("<figure>") == 5 and page.count("the chart's figures as a table") == 4
    assert 'name="viewport"' in page and "table-box" in page


def test_every_amount_in_a_tooltip_names_its_currency(frontier):
    loaded, result = frontier
    charts = _Charts()
    charts.feed(report_html(result, loaded))
    assert len(charts.bar_tips) == len(result.plans[0].jobs)
    assert all(tip.endswith(f" {result.currency}") for tip in charts.bar_tips), charts.bar_tips


def test_owned_pool_lanes_show_the_peak_of_gpus_in_use_at_once():
    """lab_six_jobs showed "8x a800-80gb, up to 11 in use" (issue 50): the peak at one instant,
    checked against a brute force over time points, never above the pool."""
    from plan.planner.report_html.gantt import lanes_of
    from tests.report.test_report_geometry import brute_force_peak

    loaded = load_scenario(REPO / "scenarios" / "lab_six_jobs.yaml")
    result = solve(loaded, SolveOptions(time_limit_s=WALL_NET_S))
    checked = 0
    for plan in result.plans:
        lanes = {lane.key: lane for lane in lanes_of(plan, loaded.scenario)}
        for pool in loaded.scenario.owned:
            in_use = int(lanes[pool.id].capacity.rsplit("up to ", 1)[1].split()[0])
            jobs = [(j.start_h, j.end_h, j.gpus) for j in plan.jobs if j.platform == pool.id]
            assert in_use == brute_force_peak(jobs) <= pool.count
            checked += 1
    assert checked >= 1


def test_input_text_on_the_page_is_plain_text(tmp_path):
    """A scenario name carrying a bidi override (a name may hold one; control characters are refused
    on input) reaches the page escaped, as in the terminal and the CSV, never raw: it cannot
    reorder what a PI reads."""
    import yaml

    data = yaml.safe_load((REPO / "scenarios/student_no_ops.yaml").read_text(encoding="utf-8"))
    data["name"] = "lab\u202eTXT.exe <b>"
    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    out = tmp_path / "r.html"
    assert runner.invoke(app, ["report", str(scenario), "-o", str(out)]).exit_code == 0
    page = out.read_text(encoding="utf-8")
    assert "\u202e" not in page and "TXT.exe <b>" not in page
    assert "lab\\u202eTXT.exe &lt;b&gt;" in page
