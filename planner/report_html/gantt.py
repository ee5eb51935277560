"""The Gantt chart of a plan as inline SVG: one lane per platform and pool (owned pools and reservations
with their capacity), one bar per job at its start and end hour, queue/provisioning waits shaded."""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from plan.models.scenario import Scenario
from plan.planner.plan import JobPlan, Plan

WIDTH = 1000
LEFT, RIGHT, TOP = 230, 20, 30
ROW_H, LANE_PAD = 26, 10
COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f")


@dataclass
class Lane:
    key: str
    label: str
    capacity: str
    window: tuple[float, float] | None = None  # reservation: the hours it is held
    rows: list[list[JobPlan]] = field(default_factory=list)

    def place(self, job: JobPlan) -> None:
        """Put the job in the first row where it overlaps nothing (jobs sharing a pool in parallel)."""
        for row in self.rows:
            if all(job.start_h >= other.end_h or job.end_h <= other.start_h for other in row):
                row.append(job)
                return
        self.rows.append([job])


def lanes_of(plan: Plan, scenario: Scenario) -> list[Lane]:
    lanes: dict[str, Lane] = {}
    for pool in scenario.owned:
        lanes[pool.id] = Lane(pool.id, f"{pool.id} (owned)", f"{pool.count}x {pool.gpu}")
    for res in plan.reservations:
        end = res.start_h + res.periods * res.period_h
        lanes[res.key] = Lane(res.key, f"{res.label} ({res.kind})", f"{res.gpus} GPUs reserved",
                              (res.start_h, end))
    for pool in scenario.owned:  # how much of each owned pool the plan uses at its busiest
        busy = max((sum(o.gpus for o in plan.jobs if o.platform == pool.id and o.start_h < j.end_h
                        and j.start_h < o.end_h) for j in plan.jobs if j.platform == pool.id), default=0)
        lanes[pool.id].capacity += f", up to {busy} in use"
    for job in plan.jobs:
        key = job.reservation or (job.platform if job.billing == "owned" else f"{job.platform}/{job.billing}")
        if key not in lanes:
            lanes[key] = Lane(key, f"{job.platform} ({job.billing})", "rented on demand")
        lanes[key].place(job)
    return list(lanes.values())


def horizon_h(plan: Plan, lanes: list[Lane]) -> float:
    ends = [plan.makespan_h, *(j.end_h for j in plan.jobs), *(lane.window[1] for lane in lanes if lane.window)]
    return max(1.0, max(ends))


def gantt_svg(plan: Plan, scenario: Scenario) -> str:
    lanes = lanes_of(plan, scenario)
    span = horizon_h(plan, lanes) * 1.03
    per_h = (WIDTH - LEFT - RIGHT) / span
    in_days = span > 72
    colors = {job.job: COLORS[i % len(COLORS)] for i, job in enumerate(plan.jobs)}
    height = TOP + sum(max(1, len(lane.rows)) * ROW_H + LANE_PAD for lane in lanes) + 30
    out = [f'<svg id="gantt" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" height="{height}" role="img" '
           f'data-left="{LEFT}" data-px-per-h="{per_h:.6f}" aria-label="jobs over time per platform and pool">']
    step = _tick_step(span / 24 if in_days else span) * (24 if in_days else 1)
    t = 0.0
    while t <= span:
        x = LEFT + t * per_h
        label = f"day {t / 24:g}" if in_days else f"{t:g} h"
        out.append(f'<line class="grid" x1="{x:.1f}" x2="{x:.1f}" y1="{TOP - 6}" y2="{height - 30}"/>'
                   f'<text class="tick" x="{x:.1f}" y="{TOP - 10}" text-anchor="middle">{label}</text>')
        t += step
    y = TOP
    for lane in lanes:
        lane_h = max(1, len(lane.rows)) * ROW_H
        out.append(f'<rect class="lane" x="0" y="{y}" width="{WIDTH}" height="{lane_h + LANE_PAD - 2}"/>'
                   f'<text class="lane-label" x="8" y="{y + 16}">{html.escape(lane.label)}</text>'
                   f'<text class="lane-cap" x="8" y="{y + 30}">{html.escape(lane.capacity)}</text>')
        if lane.window:
            x0, x1 = LEFT + lane.window[0] * per_h, LEFT + lane.window[1] * per_h
            out.append(f'<rect class="held" x="{x0:.1f}" y="{y + 2}" width="{max(1.0, x1 - x0):.1f}" '
                       f'height="{lane_h}"><title>{html.escape(lane.label)}: held hours {lane.window[0]:,.1f} '
                       f'to {lane.window[1]:,.1f}</title></rect>')
        for r, row in enumerate(lane.rows):
            top = y + 4 + r * ROW_H
            for job in row:
                startup = job.figures.time.startup_h if job.figures else 0.0
                if startup > 0:
                    w0 = max(0.0, job.start_h - startup)
                    out.append(f'<rect class="wait" x="{LEFT + w0 * per_h:.1f}" y="{top + 4}" '
                               f'width="{max(1.0, (job.start_h - w0) * per_h):.1f}" height="{ROW_H - 14}">'
                               f'<title>{html.escape(job.job)}: {startup:,.1f} h queue/provisioning</title></rect>')
                x0 = LEFT + job.start_h * per_h
                width = max(2.0, (job.end_h - job.start_h) * per_h)
                tip = (f"{job.job}: {job.gpus}x {job.gpu} on {job.platform} ({job.billing}), hours "
                       f"{job.start_h:,.1f} to {job.end_h:,.1f}, {job.cost:,.0f}")
                out.append(f'<rect class="job-bar" data-job="{html.escape(job.job)}" data-start-h="{job.start_h}" '
                           f'data-end-h="{job.end_h}" x="{x0:.2f}" y="{top}" width="{width:.2f}" '
                           f'height="{ROW_H - 6}" fill="{colors[job.job]}"><title>{html.escape(tip)}</title></rect>')
                text_x = x0 + width + 4 if x0 + width + 160 < WIDTH else x0 - 4
                anchor = "start" if text_x > x0 else "end"
                out.append(f'<text class="bar-label" x="{text_x:.1f}" y="{top + 15}" text-anchor="{anchor}">'
                           f'{html.escape(job.job)} ({job.gpus}x {html.escape(job.gpu)})</text>')
        y += lane_h + LANE_PAD
    unit = "days" if in_days else "hours"
    out.append(f'<text class="axis" x="{(LEFT + WIDTH) / 2}" y="{height - 8}" text-anchor="middle">time from '
               f'the start of the plan ({unit}); shaded: waiting for a queue or provisioning</text></svg>')
    return "".join(out)


def _tick_step(span: float) -> float:
    for step in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000):
        if span / step <= 10:
            return float(step)
    return 10000.0
