"""Drawing a cost/time Pareto front with matplotlib (PNG or SVG), for someone who never used the
tool.

Each point is numbered on the chart and spelled out in a key beside it ("8x a800-80gb,
zhixingyun-pro, monthly: 12,345 CNY, 3.2 days"); the budget and deadline are dashed lines; the
region every front point beats (dearer and slower) is shaded. matplotlib is an optional extra.
"""

from __future__ import annotations

import io
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plan.models.said import say_as
from plan.planner.atomic_file import write_atomically
from plan.planner.pareto.front import FrontPoint, ParetoFront, time_unit
from plan.planner.pareto.html import front_html

# (the command to type stays as it is typed, in every language)
INSTALL_HINT = say_as("pareto.plot_needs_matplotlib", "plotting PNG/SVG needs matplotlib: "
                      "{command} (or use a .html plot, which needs nothing)",
                      command="pip install 'plan[plot]'")
KEY_WRAP = 58
KEY_ROWS = 40  # lines of key and notes that fit beside the chart at 8 pt
PLOT_SUFFIXES = (".png", ".svg", ".html")


def render_front(front: ParetoFront, fmt: str) -> bytes:
    """The chart as PNG or SVG bytes. Raises ImportError (with INSTALL_HINT) without matplotlib."""
    import matplotlib.pyplot as plt

    fig = draw_front(front)
    buffer = io.BytesIO()
    fig.savefig(buffer, format=fmt, dpi=130)
    plt.close(fig)
    return buffer.getvalue()


def draw_front(front: ParetoFront) -> Any:
    """The matplotlib figure: the front on the left (legend below it, never over a point), the key
    of plans on the right. Raises ImportError (with INSTALL_HINT) without matplotlib."""
    plt = _pyplot()
    unit, per = time_unit(front)
    fig, (ax, key_ax) = plt.subplots(1, 2, figsize=(15, 7.5),
                                     gridspec_kw={"width_ratios": [1.6, 1]})
    fig.suptitle(f"{front.scenario}: what each budget buys in time to finish", x=0.01, ha="left",
                 fontsize=14)
    if front.z:
        ax.set_title("Each point is a plan no other beats on cost, time and risk at once; colour = "
                     "expected interruptions (failures, spot preemptions).", loc="left", fontsize=9,
                     color="#555555")
    else:
        ax.set_title("Each point is the cheapest plan that finishes by its time; anything up and "
                     "to the right (shaded) is worse on both counts.", loc="left", fontsize=9,
                     color="#555555")
    log_x = _draw_chart(fig, ax, front, unit, per)
    ax.set_xlabel(f"total cost ({front.currency})" + (" - log scale" if log_x else ""))
    ax.set_ylabel(f"time to finish every job ({unit})")
    ax.grid(True, alpha=0.3)
    ax.xaxis.set_major_formatter(_thousands())
    _draw_key(key_ax, front, unit, per)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    return fig


def _pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend. Raises ImportError (with INSTALL_HINT) without it."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    return plt


@dataclass(frozen=True)
class _Frame:
    """The chart's extent, and the budget and deadline lines near enough to draw (else None)."""

    log_x: bool
    x_lo: float
    y_lo: float
    x_max: float
    y_max: float
    budget: float | None
    deadline: float | None


def _frame(front: ParetoFront, xs: list[float], ys: list[float], per: float) -> _Frame:
    """A log cost axis where costs span more than 20x; limits far beyond the front would squash
    it into a corner, so they are drawn only when near."""
    x_lo, x_hi = min(xs), max(xs)
    y_lo, y_hi = min(ys), max(ys)
    log_x = x_lo > 0 and x_hi / x_lo > 20
    budget = front.budget if front.budget and front.budget <= x_hi * 1.5 else None
    deadline = (front.deadline_h / per if front.deadline_h and front.deadline_h / per <= y_hi * 1.5
                else None)
    x_max = max([x_hi, *([budget] if budget else [])]) * (1.3 if log_x else 1.08)
    y_max = max([y_hi, *([deadline] if deadline else [])]) * 1.15
    return _Frame(log_x, x_lo, y_lo, x_max, y_max, budget, deadline)


def _draw_chart(fig: Any, ax: Any, front: ParetoFront, unit: str, per: float) -> bool:
    """The points, the dominated region, the limits and the legend; whether the cost axis is
    logarithmic (never without points)."""
    points = sorted(front.points, key=lambda p: p.cost)
    xs = [p.cost for p in points]
    ys = [p.makespan_h / per for p in points]
    if not xs:
        return False
    frame = _frame(front, xs, ys, per)
    if not front.z:  # in 3-D a point above the cost/time staircase can still win on risk
        _draw_dominated(ax, xs, ys, frame)
    _draw_points(fig, ax, front, points, xs, ys)
    _draw_limits(ax, front, frame, unit)
    if frame.log_x:
        ax.set_xscale("log")
    ax.set_xlim(left=(frame.x_lo / 1.3) if frame.log_x else 0, right=frame.x_max)
    ax.set_ylim(bottom=0 if frame.y_lo >= 0 else frame.y_lo, top=frame.y_max)
    # Below the axes, outside the data area: a legend inside could hide a point.
    ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.1), ncol=2, fontsize=8, frameon=False)
    return frame.log_x


def _draw_dominated(ax: Any, xs: list[float], ys: list[float], frame: _Frame) -> None:
    """The dominated region: right of and above the staircase through the front."""
    step_x, step_y = [], []
    for i, (x, y) in enumerate(zip(xs, ys, strict=True)):
        step_x += [x, xs[i + 1] if i + 1 < len(xs) else frame.x_max]
        step_y += [y, y]
    ax.fill_between(step_x, step_y, frame.y_max, color="#d9d9d9", alpha=0.6,
                    label="dominated: dearer and slower than a plan on the front")
    ax.plot(step_x, step_y, color="#888888", linewidth=1)


def _draw_points(fig: Any, ax: Any, front: ParetoFront, points: list[FrontPoint], xs: list[float],
                 ys: list[float]) -> None:
    """The plans within the limits (coloured by risk in 3-D), those beyond, and their numbers."""
    inside = [i for i, p in enumerate(points) if p.within_budget and p.meets_deadlines]
    outside = [i for i in range(len(points)) if i not in inside]
    if front.z:
        marks = ax.scatter([xs[i] for i in inside], [ys[i] for i in inside], s=60, zorder=3,
                           cmap="viridis", c=[points[i].risk or 0.0 for i in inside],
                           label="plan on the front")
        fig.colorbar(marks, ax=ax, label="expected interruptions during the plan")
    else:
        ax.scatter([xs[i] for i in inside], [ys[i] for i in inside], s=60, color="#1f77b4",
                   zorder=3, label="plan on the front")
    if outside:
        ax.scatter([xs[i] for i in outside], [ys[i] for i in outside], s=60, facecolors="white",
                   edgecolors="#d62728", zorder=3, label="plan beyond the budget or deadline")
    numbers = {id(p): n for n, p in enumerate(front.points, start=1)}
    for k, (p, x, y) in enumerate(zip(points, xs, ys, strict=True)):
        ax.annotate(str(numbers[id(p)]), (x, y), textcoords="offset points",
                    xytext=(6, 6 if k % 2 == 0 else -13), fontsize=9)


def _draw_limits(ax: Any, front: ParetoFront, frame: _Frame, unit: str) -> None:
    """The budget and deadline as dashed lines, or as legend entries where they are far off."""
    far = []
    if frame.budget:
        ax.axvline(frame.budget, color="#d62728", linestyle="--", linewidth=1.2,
                   label=f"budget {frame.budget:,.0f} {front.currency}")
    elif front.budget:
        far.append(f"budget {front.budget:,.0f} {front.currency} is far right of the chart")
    if frame.deadline:
        ax.axhline(frame.deadline, color="#2ca02c", linestyle="--", linewidth=1.2,
                   label=f"deadline {frame.deadline:,.1f} {unit}")
    elif front.deadline_h:
        far.append(f"deadline {front.deadline_h / 24:,.1f} days is far above the chart")
    for line in far:
        ax.plot([], [], " ", label=line)  # a legend entry without a mark


def _draw_key(key_ax: Any, front: ParetoFront, unit: str, per: float) -> None:
    """The key of plans, shrunk to fit, and the front's notes below it."""
    key_ax.axis("off")
    key_ax.set_title("the plans", loc="left", fontsize=12)
    notes = "\n".join(textwrap.fill(n, KEY_WRAP) for n in front.notes)
    key = _key_text(front, unit, per, KEY_ROWS - (notes.count("\n") + 2 if notes else 0))
    rows = key.count("\n") + 1
    key_ax.text(0, 1, key, va="top", ha="left", fontsize=min(8.0, 8.0 * 48 / rows),
                family="monospace", transform=key_ax.transAxes)
    if front.notes:
        key_ax.text(0, 0, notes, va="bottom", fontsize=8, color="#555555",
                    transform=key_ax.transAxes)


def _key_text(front: ParetoFront, unit: str, per: float, max_rows: int = 48) -> str:
    """One entry per point, in the chart's numbering, within `max_rows` lines; the rest are counted
    ("and N more in the JSON")."""
    lines: list[str] = []
    shown = 0
    for n, p in enumerate(front.points, start=1):
        entry = _key_entry(front, p, n, unit, per)
        if len(lines) + len(entry) > max_rows - 1 and n < len(front.points):
            break
        lines += entry
        shown = n
    if shown < len(front.points):
        lines.append(more_line(len(front.points) - shown))
    return "\n".join(lines)


def more_line(hidden: int) -> str:
    return f"... and {hidden} more in the JSON (-o front.json)"


def _key_entry(front: ParetoFront, p: Any, n: int, unit: str, per: float) -> list[str]:
    lines: list[str] = []
    head = f"{n:>2}. {p.cost:,.0f} {front.currency}, {p.makespan_h / per:,.1f} {unit}"
    if p.risk is not None:
        head += f", {p.risk:,.1f} interruptions"
    if not (p.within_budget and p.meets_deadlines):
        head += " (beyond limits)"
    if len(head) + len(p.label()) + 2 <= KEY_WRAP + 8:
        lines.append(f"{head}: {p.label()}")
    else:
        lines.append(head)
        lines += ["    " + row for row in textwrap.wrap(p.label(), KEY_WRAP)]
    return lines


def _thousands() -> Any:
    from matplotlib.ticker import FuncFormatter

    return FuncFormatter(lambda value, _pos: f"{value:,.0f}")


def write_plot(front: ParetoFront, path: Path) -> None:
    """By suffix: .png, .svg (matplotlib) or .html (self-contained, interactive)."""
    suffix = path.suffix.lower()
    if suffix == ".html":
        write_atomically(path, front_html(front))
    elif suffix in (".png", ".svg"):
        write_atomically(path, render_front(front, suffix[1:]))
    else:
        raise ValueError(f"--plot: {path.name}: use a {', '.join(PLOT_SUFFIXES)} file")
