"""The report's cash-flow chart, read back from its SVG: one bar per month the plan pays in, bar and
part heights proportional to `plan.cash_flow`'s amounts, the budget mark at the budget's height,
a period over its budget outlined and labelled, and no budget mark where the scenario sets none."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from typer.testing import CliRunner

from plan.models.loading import load_scenario
from plan.planner.cash_flow import CashFlow, PeriodCash
from plan.planner.cli.app import app
from plan.planner.report_html import report_html
from plan.planner.report_html.cash_chart import PLOT_H, TOP, cash_section
from plan.planner.session import SolveOptions
from plan.planner.solve import solve
from tests.conftest import REPO

runner = CliRunner()
BASELINE = TOP + PLOT_H
SVG = "{http://www.w3.org/2000/svg}"


def chart(page: str, css: str) -> ET.Element | None:
    """The chart of class `css` on the page, parsed as XML (it is written as well-formed SVG)."""
    match = re.search(rf'<svg class="{css}".*?</svg>', page, re.S)
    return ET.fromstring(match.group(0)) if match else None


def shapes(svg: ET.Element, tag: str, css: str) -> list[ET.Element]:
    return [e for e in svg.iter() if e.tag in (tag, SVG + tag)
            and css in (e.get("class") or "").split()]


def units_per_px(svg: ET.Element) -> list[float]:
    """Amount per pixel of height of every bar with a height: all equal when heights are
    proportional to amounts."""
    return [float(b.get("data-amount")) / float(b.get("height"))
            for b in shapes(svg, "rect", "cash-bar") if float(b.get("height")) > 0]


def assert_proportional(svg: ET.Element, rows: list[PeriodCash]) -> float:
    bars = shapes(svg, "rect", "cash-bar")
    assert [b.get("data-period") for b in bars] == [r.period for r in rows]
    for bar, row in zip(bars, rows, strict=True):
        assert float(bar.get("data-amount")) == pytest.approx(row.amount, abs=0.01)
        bottom = float(bar.get("y")) + float(bar.get("height"))
        assert bottom == pytest.approx(BASELINE, abs=0.02)  # every bar stands on the axis
    ratios = units_per_px(svg)
    assert ratios and max(ratios) == pytest.approx(min(ratios), rel=1e-3)
    parts = shapes(svg, "rect", "cash-part")  # the stacked parts fill each bar exactly
    assert sum(float(p.get("height")) for p in parts) == pytest.approx(
        sum(float(b.get("height")) for b in bars), abs=0.02 * len(parts) + 0.01)
    assert len(parts) == sum(len(r.by_line) for r in rows)
    return ratios[0]


@pytest.fixture(scope="module")
def finance_year():
    loaded = load_scenario(REPO / "scenarios" / "finance_year.yaml")
    result = solve(loaded, SolveOptions(time_limit_s=600))  # a loaded machine builds slowly
    return result, report_html(result, loaded)


def test_finance_year_has_a_bar_per_paying_month_and_its_yearly_budget(finance_year):
    result, page = finance_year
    flow = result.plans[0].cash_flow
    assert flow is not None and flow.months and flow.budgets
    months = chart(page, "cash-month")
    assert months is not None
    assert all(m.amount > 0 for m in flow.months)
    per_px = assert_proportional(months, flow.months)
    assert not shapes(months, "line", "cash-budget-mark")  # a yearly budget: no mark per month
    budget_chart = chart(page, "cash-budget")
    assert budget_chart is not None
    assert_proportional(budget_chart, flow.budgets)
    marks = shapes(budget_chart, "line", "cash-budget-mark")
    assert [m.get("data-period") for m in marks] == [b.period for b in flow.budgets]
    bar_ratio = units_per_px(budget_chart)[0]
    for mark, row in zip(marks, flow.budgets, strict=True):
        assert row.budget is not None and float(mark.get("y1")) == float(mark.get("y2"))
        height = BASELINE - float(mark.get("y1"))
        assert row.budget / height == pytest.approx(bar_ratio, rel=1e-3)
    over = [b.period for b in flow.over_budget()]
    assert [b.get("data-period") for b in shapes(budget_chart, "rect", "over")] == over
    assert per_px > 0 and "Cash flow" in page


def test_no_periodic_budget_still_gets_the_chart_without_a_budget_mark(write_scenario,
                                                                        base_scenario, tmp_path):
    page = tmp_path / "report.html"
    result = runner.invoke(app, ["report", str(write_scenario(base_scenario)), "-o", str(page)])
    assert result.exit_code == 0, result.output
    html = page.read_text(encoding="utf-8")
    months = chart(html, "cash-month")
    assert months is not None and shapes(months, "rect", "cash-bar")
    assert chart(html, "cash-budget") is None and not shapes(months, "line", "cash-budget-mark")
    key = "".join(months.itertext())
    assert "over budget" not in key  # the key of budget marks is drawn only beside marks


def flow_with_monthly_budget() -> CashFlow:
    """Three months under a monthly budget of 1,000, the second over it by 500."""
    def row(label: str, paid: dict[str, float], budget: float | None) -> PeriodCash:
        return PeriodCash(label, sum(paid.values()), budget, {"a": sum(paid.values())}, paid)

    lines = [{"hourly on cloud-x": 400.0}, {"hourly on cloud-x": 900.0, "monthly: <res>": 600.0},
             {"monthly: <res>": 200.0}]
    months = [row(f"2027-0{i + 1}", paid, None) for i, paid in enumerate(lines)]
    budgets = [row(f"2027-0{i + 1}", paid, 1000.0) for i, paid in enumerate(lines)]
    return CashFlow(months, [row("2027", {"hourly on cloud-x": 2100.0}, None)], budgets)


def test_a_month_over_its_budget_is_outlined_and_labelled():
    flow = flow_with_monthly_budget()
    html = "".join(cash_section(flow, "CNY"))
    months = chart(html, "cash-month")
    assert months is not None and chart(html, "cash-budget") is None  # the months carry the marks
    per_px = assert_proportional(months, flow.months)
    marks = shapes(months, "line", "cash-budget-mark")
    assert len(marks) == 3
    for mark in marks:
        assert 1000.0 / (BASELINE - float(mark.get("y1"))) == pytest.approx(per_px, rel=1e-3)
    assert [b.get("data-period") for b in shapes(months, "rect", "over")] == ["2027-02"]
    over_text = shapes(months, "text", "cash-over")
    assert len(over_text) == 1 and "500" in "".join(over_text[0].itertext())
    assert "&lt;res&gt;" in html and "<res>" not in html  # a label from the scenario is escaped
    assert "over budget" in html and "budget of 2027-02: 1,000 CNY" in html


def test_years_get_their_own_chart_when_the_plan_spans_more_than_one():
    flow = flow_with_monthly_budget()
    flow.years = [PeriodCash("2027", 1000.0, None, {}, {"hourly on cloud-x": 1000.0}),
                  PeriodCash("2028", 1100.0, None, {}, {"monthly: <res>": 1100.0})]
    years = chart("".join(cash_section(flow, "CNY")), "cash-year")
    assert years is not None
    assert_proportional(years, flow.years)
    assert not shapes(years, "line", "cash-budget-mark")
