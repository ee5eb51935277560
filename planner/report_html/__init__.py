"""A self-contained HTML report of a solve (no network): best plan, alternatives, Gantt chart per
platform and pool, cost by job and billing line, cash paid per period, memory per GPU against the
card, Pareto front, assumptions."""

from plan.planner.report_html.page import report_html

__all__ = ["report_html"]
