"""A front with many points stays readable (issue 13 item 7): the key and the terminal list stop
with "and N more in the JSON", and the chart's legend never covers a point."""

from __future__ import annotations

import dataclasses

import pytest

from plan.planner.pareto.front import pareto_front
from plan.planner.pareto.plot import KEY_ROWS, _key_text
from tests.planner.builders import session
from tests.planner.test_pareto import _tiny_single_job


def _many_points(count: int):
    front = pareto_front(session(_tiny_single_job()))
    base = front.points
    points = [
        dataclasses.replace(base[i % len(base)], cost=100.0 + 7 * i, makespan_h=200.0 - 2.5 * i)
        for i in range(count)
    ]
    return dataclasses.replace(front, points=points, notes=[*front.notes, "a note"])


@pytest.mark.parametrize("count", [3, 40, 120])
def test_key_fits_and_counts_the_rest(count):
    front = _many_points(count)
    key = _key_text(front, "days", 24.0, KEY_ROWS)
    lines = key.splitlines()
    assert len(lines) <= KEY_ROWS
    listed = sum(1 for line in lines if line[:3].strip().rstrip(".").isdigit())
    if listed < count:
        assert lines[-1] == f"... and {count - listed} more in the JSON (-o front.json)"
    else:
        assert "more in the JSON" not in key


@pytest.mark.parametrize("count", [4, 60])
def test_legend_never_covers_a_point(count):
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from plan.planner.pareto.plot import draw_front

    front = _many_points(count)
    fig = draw_front(front)
    try:
        fig.canvas.draw()
        ax = fig.axes[0]
        legend = ax.get_legend().get_window_extent()
        area = ax.get_window_extent()
        assert not legend.overlaps(area)  # the legend sits outside the data area altogether
        per = 24.0 if max(p.makespan_h for p in front.points) >= 48 else 1.0
        for p in front.points:
            x, y = ax.transData.transform((p.cost, p.makespan_h / per))
            assert not legend.contains(x, y)
        assert legend.y0 >= 0  # and inside the image
    finally:
        plt.close(fig)
