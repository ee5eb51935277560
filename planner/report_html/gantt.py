"""The Gantt chart of a plan as inline SVG: one lane per platform and pool (owned pools and
reservations with their capacity), one bar per job at its start and end hour, queue/provisioning
waits shaded."""

from __future__ import annotations

from dataclasses import dataclass, field

from plan.models.scenario import Scenario
from plan.planner import i18n
from plan.planner.i18n.numbers import money
from plan.planner.plain_text import html_text
from plan.planner.plan import JobPlan, Plan
from plan.planner.report_html.bar_labels import Bar, Label, place_labels, text_width_px
from plan.planner.report_html.colors import ink_on
from plan.planner.report_html.occupancy import peak_concurrent_gpus

WIDTH = 1000
LEFT, RIGHT, TOP = 230, 20, 30
LANE_TEXT_X = 8
ROW_H, LANE_PAD = 26, 10
COLORS = (
    "#4e79a7",
    "#f28e2b",
    "#59a14f",
    "#e15759",
    "#76b7b2",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
)


@dataclass
class Lane:
    key: str
    label: str
    capacity: str
    window: tuple[float, float] | None = None  # reservation: the hours it is held
    rows: list[list[JobPlan]] = field(default_factory=list)

    def place(self, job: JobPlan) -> None:
        """Put the job in the first row where it and its queue wait overlap nothing (jobs sharing
        a pool in parallel)."""
        for row in self.rows:
            if all(_lead_h(job) >= other.end_h or job.end_h <= _lead_h(other) for other in row):
                row.append(job)
                return
        self.rows.append([job])


def lanes_of(plan: Plan, scenario: Scenario) -> list[Lane]:
    lanes: dict[str, Lane] = {}
    for pool in scenario.owned:
        busy = peak_concurrent_gpus((j.start_h, j.end_h, j.gpus) for j in plan.jobs
                                    if j.platform == pool.id)
        lanes[pool.id] = Lane(pool.id, i18n.t("html.gantt.owned", pool=pool.id),
                              i18n.t("html.gantt.owned_cap", count=pool.count, gpu=pool.gpu,
                                     busy=busy))
    for res in plan.reservations:
        end = res.start_h + res.periods * res.period_h
        lanes[res.key] = Lane(res.key, i18n.t("html.gantt.reserved", label=res.label,
                                              kind=i18n.word("kind", res.kind)),
                              i18n.t("html.gantt.reserved_cap", gpus=res.gpus),
                              (res.start_h, end))
    for job in plan.jobs:
        key = job.reservation or (job.platform if job.billing == "owned"
                                  else f"{job.platform}/{job.billing}")
        if key not in lanes:
            lanes[key] = Lane(key, i18n.t("html.gantt.rented", platform=job.platform,
                                          billing=i18n.word("billing", job.billing)),
                              i18n.t("html.gantt.rented_cap"))
        lanes[key].place(job)
    return list(lanes.values())


def horizon_h(plan: Plan, lanes: list[Lane]) -> float:
    ends = [plan.makespan_h, *(j.end_h for j in plan.jobs),
            *(lane.window[1] for lane in lanes if lane.window)]
    return max(1.0, max(ends))


@dataclass(frozen=True)
class GanttChart:
    """The chart's SVG, and the jobs too small for a label on it (the key under it names them)."""

    svg: str
    unlabelled: list[JobPlan]
    colors: dict[str, str]


@dataclass(frozen=True)
class _Scale:
    per_h: float
    span_h: float
    height: int

    def x(self, hours: float) -> float:
        return LEFT + hours * self.per_h


def gantt_chart(plan: Plan, scenario: Scenario, currency: str) -> GanttChart:
    """One lane per pool, one bar per job, each label placed where it overlaps nothing."""
    lanes = lanes_of(plan, scenario)
    span = horizon_h(plan, lanes) * 1.03
    height = TOP + sum(max(1, len(lane.rows)) * ROW_H + LANE_PAD for lane in lanes) + 30
    scale = _Scale((WIDTH - LEFT - RIGHT) / span, span, height)
    colors = {job.job: COLORS[i % len(COLORS)] for i, job in enumerate(plan.jobs)}
    name = html_text(i18n.t("html.gantt.name"))
    out = [f'<svg id="gantt" viewBox="0 0 {WIDTH} {height}" width="100%" role="img" '
           f'aria-labelledby="gantt-title" data-left="{LEFT}" data-px-per-h="{scale.per_h:.6f}">'
           f'<title id="gantt-title">{name}</title>', *_time_grid(scale)]
    unlabelled: list[JobPlan] = []
    y = TOP
    for lane in lanes:
        out += _lane(lane, y, scale)
        labels = place_labels([[_bar(job, scale) for job in row] for row in lane.rows],
                              LEFT, WIDTH - RIGHT)
        for r, row in enumerate(lane.rows):
            for job in row:
                out += _job(job, y + 4 + r * ROW_H, scale, colors[job.job], currency)
                label = labels.get(job.job)
                if label is None:
                    unlabelled.append(job)
                else:
                    out.append(_label_text(label, job.job, y + 4 + r * ROW_H, colors[job.job]))
        y += max(1, len(lane.rows)) * ROW_H + LANE_PAD
    unit = i18n.t("html.unit.days" if span > 72 else "html.unit.hours")
    out.append(f'<text class="axis" x="{(LEFT + WIDTH) / 2}" y="{height - 8}" '
               f'text-anchor="middle">{html_text(i18n.t("html.gantt.axis", unit=unit))}'
               "</text></svg>")
    return GanttChart("".join(out), unlabelled, colors)


def _time_grid(scale: _Scale) -> list[str]:
    in_days = scale.span_h > 72
    step = _tick_step(scale.span_h / 24 if in_days else scale.span_h) * (24 if in_days else 1)
    out: list[str] = []
    t = 0.0
    while t <= scale.span_h:
        x = scale.x(t)
        label = (i18n.t("html.gantt.day", n=f"{t / 24:g}") if in_days
                 else i18n.t("html.gantt.hour", n=f"{t:g}"))
        out.append(f'<line class="grid" x1="{x:.1f}" x2="{x:.1f}" y1="{TOP - 6}" '
                   f'y2="{scale.height - 30}"/><text class="tick" x="{x:.1f}" y="{TOP - 10}" '
                   f'text-anchor="middle">{label}</text>')
        t += step
    return out


def _lane(lane: Lane, y: int, scale: _Scale) -> list[str]:
    """The lane's box, its name and capacity (cut to the space left of the bars) and held window."""
    lane_h = max(1, len(lane.rows)) * ROW_H
    out = [f'<rect class="lane" x="0" y="{y}" width="{WIDTH}" height="{lane_h + LANE_PAD - 2}"/>',
           _fitted(lane.label, "lane-label", y + 16, font_px=12.0, bold=True),
           _fitted(lane.capacity, "lane-cap", y + 30, font_px=11.0, bold=False)]
    if lane.window:
        x0, x1 = scale.x(lane.window[0]), scale.x(lane.window[1])
        out.append(f'<rect class="held" x="{x0:.1f}" y="{y + 2}" width="{max(1.0, x1 - x0):.1f}" '
                   f'height="{lane_h}"><title>'
                   + html_text(i18n.t("html.gantt.held", label=lane.label,
                                      start=f"{lane.window[0]:,.1f}",
                                      end=f"{lane.window[1]:,.1f}"))
                   + "</title></rect>")
    return out


def _fitted(text: str, css: str, y: int, font_px: float, bold: bool) -> str:
    """A lane's text, shortened with an ellipsis (the whole of it in a tooltip) to stay left of
    the bars."""
    short = text
    while len(short) > 1 and text_width_px(short, font_px, bold) > LEFT - 2 * LANE_TEXT_X:
        short = short[:-2] + "…"
    return (f'<text class="{css}" x="{LANE_TEXT_X}" y="{y}">{html_text(short)}'
            f"<title>{html_text(text)}</title></text>")


def _lead_h(job: JobPlan) -> float:
    """The hour the job's queue or provisioning wait starts (its start when it has none)."""
    return max(0.0, job.start_h - (job.figures.time.startup_h if job.figures else 0.0))


def _bar(job: JobPlan, scale: _Scale) -> Bar:
    x0 = scale.x(job.start_h)
    named = i18n.t("html.gantt.bar", job=job.job, gpus=job.gpus, gpu=job.gpu)
    return Bar(job.job, (named, job.job), scale.x(_lead_h(job)),
               x0, x0 + _width(job, scale), job.gpus * (job.end_h - job.start_h))


def _width(job: JobPlan, scale: _Scale) -> float:
    return max(2.0, (job.end_h - job.start_h) * scale.per_h)


def _job(job: JobPlan, top: int, scale: _Scale, color: str, currency: str) -> list[str]:
    """The job's queue wait (shaded) and its bar, each with a tooltip."""
    out = []
    startup = (job.figures.time.startup_h if job.figures else 0.0)
    if startup > 0:
        w0 = _lead_h(job)
        out.append(f'<rect class="wait" x="{scale.x(w0):.1f}" y="{top + 4}" '
                   f'width="{max(1.0, (job.start_h - w0) * scale.per_h):.1f}" '
                   f'height="{ROW_H - 14}"><title>'
                   + html_text(i18n.t("html.gantt.wait", job=job.job, h=f"{startup:,.1f}"))
                   + "</title></rect>")
    tip = i18n.t("html.gantt.tip", job=job.job, gpus=job.gpus, gpu=job.gpu,
                 platform=job.platform, billing=i18n.word("billing", job.billing),
                 start=f"{job.start_h:,.1f}", end=f"{job.end_h:,.1f}",
                 cost=money(job.cost, currency))
    out.append(f'<rect class="job-bar" data-job="{html_text(job.job)}" '
               f'data-start-h="{job.start_h}" data-end-h="{job.end_h}" data-gpus="{job.gpus}" '
               f'x="{scale.x(job.start_h):.2f}" y="{top}" width="{_width(job, scale):.2f}" '
               f'height="{ROW_H - 6}" fill="{color}"><title>{html_text(tip)}</title></rect>')
    return out


def _label_text(label: Label, job: str, top: int, color: str) -> str:
    fill = f' style="fill: {ink_on(color)}"' if label.inside else ""  # beats the page's svg text
    where = "inside" if label.inside else "beside"
    return (f'<text class="bar-label" data-job="{html_text(job)}" data-place="{where}" '
            f'x="{label.x:.1f}" y="{top + 14}" text-anchor="{label.anchor}"{fill}>'
            f"{html_text(label.text)}</text>")


def _tick_step(span: float) -> float:
    for step in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000):
        if span / step <= 10:
            return float(step)
    return 10000.0
