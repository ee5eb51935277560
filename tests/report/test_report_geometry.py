"""The report's geometry without a browser: the pool's peak by a sweep against a brute force over
time points, Gantt labels that overlap nothing, Pareto axes fitted to the points."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plan.planner.pareto.front import FrontPoint, ParetoFront
from plan.planner.pareto.html import LEFT, RIGHT, WIDTH, fitted_range, front_svg
from plan.planner.plan import Plan
from plan.planner.report_html.bar_labels import PAD_PX, Bar, place_labels, text_width_px
from plan.planner.report_html.colors import contrast, ink_on
from plan.planner.report_html.gantt import COLORS
from plan.planner.report_html.occupancy import peak_concurrent_gpus

Interval = tuple[float, float, int]
intervals = st.lists(st.tuples(st.integers(0, 12), st.integers(0, 6), st.integers(1, 8))
                     .map(lambda t: (t[0] / 2, (t[0] + t[1]) / 2, t[2])), max_size=9)


def brute_force_peak(jobs: list[Interval]) -> int:
    """The GPUs held at every start, end and midpoint between them (each job holds
    [start, end)): independent of the sweep's event order."""
    times = sorted({t for s, e, _ in jobs for t in (s, e)})
    probes = times + [(a + b) / 2 for a, b in itertools.pairwise(times)]
    return max((sum(g for s, e, g in jobs if s <= t < e) for t in probes), default=0)


@settings(max_examples=400, deadline=None)
@given(intervals)
def test_peak_sweep_matches_a_brute_force_over_time_points(jobs):
    assert peak_concurrent_gpus(jobs) == brute_force_peak(jobs)


def test_peak_counts_gpus_held_at_once_not_jobs_overlapping_one_job():
    # one 4-GPU job beside two 4-GPU jobs back to back: 8 at a time, not 12 (issue 50's "11 of 8")
    assert peak_concurrent_gpus([(0, 10, 4), (0, 5, 4), (5, 10, 4)]) == 8
    assert peak_concurrent_gpus([(0, 10, 8), (10, 20, 8)]) == 8  # ends before starts at one instant
    assert peak_concurrent_gpus([(3, 3, 8)]) == 0 and peak_concurrent_gpus([]) == 0


@st.composite
def gantt_rows(draw):
    """Rows of bars that do not overlap (as Lane.place lays them), each with a queue wait."""
    rows = []
    for _ in range(draw(st.integers(1, 3))):
        x, row = 230.0, []
        for _ in range(draw(st.integers(1, 5))):
            lead = x + draw(st.floats(0, 120))
            x0 = lead + draw(st.floats(0, 40))
            x1 = x0 + draw(st.floats(2, 400))
            if x1 > 980:
                break
            name = draw(st.text("abcdefghij-", min_size=3, max_size=18))
            row.append(Bar(f"{name}{len(rows)}.{len(row)}", (f"{name} (8x a800-80gb)", name),
                           lead, x0, x1, size=x1 - x0))
            x = x1
        rows.append(row)
    return rows


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


@settings(max_examples=300, deadline=None)
@given(gantt_rows())
def test_labels_overlap_no_bar_label_or_lane_name(rows):
    labels = place_labels(rows, 230.0, 980.0)
    for row in rows:
        spans = {}
        for bar in row:
            label = labels.get(bar.job)
            if label is None:
                continue
            w = text_width_px(label.text)
            span = (label.x, label.x + w) if label.anchor == "start" else (label.x - w, label.x)
            spans[bar.job] = span
            if label.inside:
                assert bar.x0 <= span[0] and span[1] + PAD_PX <= bar.x1
            else:
                assert span[0] >= 230.0 and span[1] <= 980.0  # never over the lane names
            for other in row:
                if other is not bar:
                    assert not _overlap(span, (other.lead_x, other.x1)), (label, other)
        for a, sa in spans.items():
            assert all(not _overlap(sa, sb) for b, sb in spans.items() if b != a)


def test_the_largest_bar_gets_the_only_free_space():
    # a small bar and a large one too narrow for its name; room for one label between them
    small = Bar("small", ("small-job-name",), 230, 230, 240, size=1)
    large = Bar("large", ("large-job-name",), 340, 340, 350, size=100)
    labels = place_labels([[small, large]], 230.0, 350.0)
    assert set(labels) == {"large"} and labels["large"].anchor == "end"


def test_a_bar_wide_enough_carries_its_label_inside_in_readable_ink():
    bar = Bar("big", ("big (8x h800)", "big"), 300, 300, 700, size=10)
    assert place_labels([[bar]], 230, 980)["big"].inside
    for fill in COLORS:
        assert contrast(ink_on(fill), fill) >= 4.5  # WCAG AA for normal text


def _front(points: list[tuple[float, float]], budget: float | None,
           deadline_h: float | None) -> ParetoFront:
    plan = Plan(rank=1, total_cost=0.0, makespan_h=0.0, jobs=[])
    return ParetoFront("s", "CNY", "cost", "makespan", None, "optimal",
                       [FrontPoint(c, h, plan) for c, h in points], budget=budget,
                       deadline_h=deadline_h)


def _circles_x(svg: str) -> list[float]:
    return [float(x) for x in re.findall(r'<circle cx="([\d.]+)"', svg)]


@pytest.mark.parametrize("budget,deadline_h", [(3000.0, 240.0), (10.0, 0.5), (90.0, 3.0)])
def test_front_axes_fit_the_points_whatever_the_limits(budget, deadline_h):
    svg = front_svg(_front([(59, 5.1), (73, 1.7), (116, 1.1)], budget, deadline_h))
    xs = _circles_x(svg)
    assert min(xs) >= LEFT and max(xs) <= WIDTH - RIGHT
    assert max(xs) - min(xs) >= 0.8 * (WIDTH - LEFT - RIGHT)  # spread over the plot, not at 0
    in_range = 59 <= budget <= 116
    assert ('class="budget"' in svg) == in_range  # a line only inside the axes
    assert ("budget-label edge" in svg) == (not in_range)  # else marked at the edge
    assert ('class="deadline"' in svg) == (1.1 <= deadline_h <= 5.1)
    assert "budget " + f"{budget:,.0f} CNY" in svg  # with its currency


def test_fitted_range_covers_the_values_with_a_margin():
    assert fitted_range([]) == (0.0, 1.0)
    lo, hi = fitted_range([100.0])
    assert lo < 100 < hi
    lo, hi = fitted_range([1.0, 3.0])
    assert 0 <= lo < 1 and 3 < hi < 3.5
