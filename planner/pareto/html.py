"""A self-contained interactive HTML view of a Pareto front: an inline SVG chart (hover a point for
its plan, click it to open its details) and a table of every point. No script or style is fetched
from anywhere, so the file opens offline and can be mailed to a PI."""

from __future__ import annotations

import math
from dataclasses import dataclass

from plan.planner.pareto.front import FrontPoint, ParetoFront, time_unit
from plan.planner.plain_text import html_text

WIDTH, HEIGHT = 900, 520
LEFT, RIGHT, TOP, BOTTOM = 90, 30, 30, 60


def _ticks(lo: float, hi: float, count: int = 6) -> list[float]:
    if hi <= lo:
        return [lo]
    step = tick_step(lo, hi, count)
    first = math.ceil(lo / step) * step
    return [first + k * step for k in range(int((hi - first) / step + 1e-9) + 1)]


def tick_step(lo: float, hi: float, count: int = 6) -> float:
    """A round grid step (1, 2, 2.5 or 5 times a power of ten) giving about `count` steps."""
    raw = (hi - lo) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)


def _decimals(lo: float, hi: float, least: int) -> int:
    """Enough decimals that neighbouring tick labels differ."""
    return max(least, -math.floor(math.log10(tick_step(lo, hi)))) if hi > lo else least


@dataclass(frozen=True)
class _Axes:
    """The chart's data ranges, fitted to the points, and their mapping to SVG coordinates."""

    x_lo: float
    x_hi: float
    y_lo: float
    y_hi: float

    def sx(self, x: float) -> float:
        return LEFT + (x - self.x_lo) / (self.x_hi - self.x_lo) * (WIDTH - LEFT - RIGHT)

    def sy(self, y: float) -> float:
        return HEIGHT - BOTTOM - (y - self.y_lo) / (self.y_hi - self.y_lo) * (HEIGHT - TOP - BOTTOM)


def fitted_range(values: list[float]) -> tuple[float, float]:
    """A range around the values with a margin of 8% of their spread (5% of the value when they
    are all equal), never below zero: the budget and deadline do not stretch it (issue 50)."""
    if not values:
        return 0.0, 1.0
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.08 if hi > lo else max(abs(lo) * 0.05, 1.0)
    return max(0.0, lo - pad), hi + pad


def _axes(pts: list[FrontPoint], per: float) -> _Axes:
    """Ranges spanning the points; a budget or deadline outside them is marked at the edge."""
    x_lo, x_hi = fitted_range([p.cost for p in pts])
    y_lo, y_hi = fitted_range([p.makespan_h / per for p in pts])
    return _Axes(x_lo, x_hi, y_lo, y_hi)


def _grid(ax: _Axes) -> list[str]:
    """The grid lines and tick labels of both axes."""
    sx, sy = ax.sx, ax.sy
    x_dec, y_dec = _decimals(ax.x_lo, ax.x_hi, 0), _decimals(ax.y_lo, ax.y_hi, 1)
    svg: list[str] = []
    for t in _ticks(ax.x_lo, ax.x_hi):
        svg.append(f'<line x1="{sx(t):.1f}" x2="{sx(t):.1f}" y1="{TOP}" y2="{HEIGHT - BOTTOM}" '
                   f'class="grid"/><text x="{sx(t):.1f}" y="{HEIGHT - BOTTOM + 18}" '
                   f'text-anchor="middle">{t:,.{x_dec}f}</text>')
    for t in _ticks(ax.y_lo, ax.y_hi):
        svg.append(f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{sy(t):.1f}" y2="{sy(t):.1f}" '
                   f'class="grid"/><text x="{LEFT - 8}" y="{sy(t) + 4:.1f}" text-anchor="end">'
                   f"{t:,.{y_dec}f}</text>")
    return svg


def _dominated(pts: list[FrontPoint], ax: _Axes, per: float) -> list[str]:
    """The dominated region: everything right of and above the staircase through the front."""
    sx, sy = ax.sx, ax.sy
    corners = []
    for i, p in enumerate(pts):
        nxt = pts[i + 1].cost if i + 1 < len(pts) else ax.x_hi
        corners += [(sx(p.cost), sy(p.makespan_h / per)), (sx(nxt), sy(p.makespan_h / per))]
    poly = [*corners, (sx(ax.x_hi), sy(ax.y_hi)), (sx(pts[0].cost), sy(ax.y_hi))]
    return ['<polygon class="dominated" points="' + " ".join(f"{a:.1f},{b:.1f}" for a, b in poly)
            + '">' "<title>dominated: dearer and slower than a plan on the front</title></polygon>",
            '<polyline class="stairs" points="' + " ".join(f"{a:.1f},{b:.1f}" for a, b in corners)
            + '"/>']


def _limits(front: ParetoFront, ax: _Axes, unit: str, per: float) -> list[str]:
    """The budget's vertical line and the deadline's horizontal one, each labelled, where they
    fall inside the axes; outside, an arrow at the edge they lie beyond."""
    sx, sy = ax.sx, ax.sy
    svg: list[str] = []
    if front.budget:
        text = f"budget {front.budget:,.0f} {html_text(front.currency)}"
        if ax.x_lo <= front.budget <= ax.x_hi:
            svg.append(f'<line class="budget" x1="{sx(front.budget):.1f}" '
                       f'x2="{sx(front.budget):.1f}" y1="{TOP}" y2="{HEIGHT - BOTTOM}"/><text '
                       f'class="budget-label" x="{sx(front.budget) - 4:.1f}" y="{TOP + 12}" '
                       f'text-anchor="end">{text}</text>')
        elif front.budget > ax.x_hi:
            svg.append(f'<text class="budget-label edge" x="{WIDTH - RIGHT}" y="{TOP + 12}" '
                       f'text-anchor="end">{text}, right of the chart →</text>')
        else:
            svg.append(f'<text class="budget-label edge" x="{LEFT + 4}" y="{TOP + 12}">← {text}: '
                       "every plan is over it</text>")
    if front.deadline_h:
        d = front.deadline_h / per
        text = f"deadline {d:,.1f} {unit}"
        if ax.y_lo <= d <= ax.y_hi:
            svg.append(f'<line class="deadline" x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{sy(d):.1f}" '
                       f'y2="{sy(d):.1f}"/><text class="deadline-label" x="{LEFT + 6}" '
                       f'y="{sy(d) - 5:.1f}">{text}</text>')
        elif d > ax.y_hi:
            svg.append(f'<text class="deadline-label edge" x="{LEFT + 6}" y="{TOP - 8}">'
                       f"↑ {text}, above the chart</text>")
        else:
            svg.append(f'<text class="deadline-label edge" x="{LEFT + 6}" '
                       f'y="{HEIGHT - BOTTOM - 6}">↓ {text}: every plan finishes after it</text>')
    return svg


def _marks(front: ParetoFront, pts: list[FrontPoint], ax: _Axes, unit: str,
           per: float) -> list[str]:
    """Each point as a circle with its number and a tooltip of its plan, cost and time."""
    sx, sy = ax.sx, ax.sy
    numbers = {id(p): n for n, p in enumerate(front.points, start=1)}
    svg: list[str] = []
    for p in pts:
        n = numbers[id(p)]
        cls = "pt" if p.within_budget and p.meets_deadlines else "pt beyond"
        tip = f"{n}. {p.label()}: {p.cost:,.0f} {front.currency}, {p.makespan_h / per:,.1f} {unit}"
        svg.append(f'<g class="{cls}" data-n="{n}"><circle cx="{sx(p.cost):.1f}" '
                   f'cy="{sy(p.makespan_h / per):.1f}" '
                   f'r="6"><title>{html_text(tip)}</title></circle><text '
                   f'x="{sx(p.cost) + 8:.1f}" y="{sy(p.makespan_h / per) - 7:.1f}">{n}</text></g>')
    return svg


def _axis_titles(front: ParetoFront, unit: str) -> str:
    """The two axes' titles, and the SVG's end."""
    return (f'<text x="{(LEFT + WIDTH - RIGHT) / 2}" y="{HEIGHT - 15}" text-anchor="middle" '
            f'class="axis">total cost ({html_text(front.currency)})</text><text '
            f'transform="translate(22,{(TOP + HEIGHT - BOTTOM) / 2}) rotate(-90)" '
            f'text-anchor="middle" class="axis">time to finish every job ({unit})</text></svg>')


def _chart(front: ParetoFront, unit: str, per: float) -> list[str]:
    """The inline SVG chart, in pieces to join."""
    pts = sorted(front.points, key=lambda p: p.cost)
    ax = _axes(pts, per)
    svg: list[str] = [f'<svg id="front" viewBox="0 0 {WIDTH} {HEIGHT}" width="100%" role="img" '
                      'aria-labelledby="front-title"><title id="front-title">cost and time of '
                      "each plan on the front</title>"]
    svg += _grid(ax)
    if pts:
        svg += _dominated(pts, ax, per)
    svg += _limits(front, ax, unit, per)
    svg += _marks(front, pts, ax, unit, per)
    svg.append(_axis_titles(front, unit))
    return svg


def _rows(front: ParetoFront, per: float) -> list[str]:
    """The table's row of each point, its plan's explanation and assumptions folded inside."""
    rows = []
    for n, p in enumerate(front.points, start=1):
        where = "" if p.within_budget and p.meets_deadlines else " (beyond the budget or deadline)"
        detail = "".join(f"<li>{html_text(line)}</li>" for line in p.plan.explanation)
        assumptions = "".join(f"<li>{html_text(line)}</li>" for line in p.plan.assumptions)
        risk = f"<td>{p.risk:.3f}</td>" if p.risk is not None else ""
        rows.append(f'<tr id="row{n}" data-n="{n}"><td>{n}</td><td>{p.cost:,.0f}</td>'
                    f"<td>{p.makespan_h / per:,.2f}</td>{risk}<td>{html_text(p.label())}{where}"
                    f"<details><summary>why this plan</summary><ul>{detail}</ul>"
                    + (f"<p>assumptions</p><ul>{assumptions}</ul>" if assumptions else "")
                    + "</details></td></tr>")
    return rows


def front_svg(front: ParetoFront) -> str:
    """The chart alone (the report puts it in its page)."""
    unit, per = time_unit(front)
    return "".join(_chart(front, unit, per))


def front_html(front: ParetoFront) -> str:
    """The whole page: the chart, the front's notes and the table of every point."""
    unit, per = time_unit(front)
    svg = _chart(front, unit, per)
    rows = _rows(front, per)
    risk_head = "<th>risk (expected interruptions)</th>" if front.z == "risk" else ""
    notes = "".join(f"<p class='note'>{html_text(n)}</p>" for n in front.notes)
    title = html_text(front.scenario)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}: cost / time front</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 24px; color: #222; max-width: 1100px; }}
svg text {{ font-size: 12px; fill: #333; }} .axis {{ font-size: 13px; }}
.grid {{ stroke: #eee; }} .dominated {{ fill: #d9d9d9; opacity: 0.6; }}
.stairs {{ fill: none; stroke: #888; }}
.budget {{ stroke: #d62728; stroke-dasharray: 6 4; }} .budget-label {{ fill: #d62728; }}
.deadline {{ stroke: #2ca02c; stroke-dasharray: 6 4; }} .deadline-label {{ fill: #2ca02c; }}
.pt circle {{ fill: #1f77b4; cursor: pointer; }}
.pt.beyond circle {{ fill: #fff; stroke: #d62728; stroke-width: 2; }}
.pt.on circle {{ fill: #ff7f0e; }} tr.on {{ background: #fff3e0; }}
table {{ border-collapse: collapse; width: 100%; margin-top: 16px; }}
td, th {{ border-bottom: 1px solid #ddd; padding: 4px 8px; text-align: left; vertical-align: top;
  font-size: 14px; }} .note {{ color: #666; }}
</style></head><body>
<h1>{title}: what each budget buys in time to finish</h1>
<p>Each point is the cheapest plan that finishes by its time; anything up and to the right of the
line is worse on both counts (shaded). Hover a point to see its plan, click it to open its details
below.</p>
{"".join(svg)}
{notes}
<table><thead><tr><th>#</th><th>cost ({html_text(front.currency)})</th>
<th>time ({unit})</th>{risk_head}
<th>plan</th></tr></thead><tbody>{"".join(rows)}</tbody></table>
<script>
for (const g of document.querySelectorAll('g.pt')) {{
  g.addEventListener('click', () => {{
    document.querySelectorAll('.on').forEach(e => e.classList.remove('on'));
    const row = document.getElementById('row' + g.dataset.n);
    g.classList.add('on'); row.classList.add('on');
    row.querySelector('details').open = true;
    row.scrollIntoView({{behavior: 'smooth', block: 'center'}});
  }});
}}
</script></body></html>
"""
