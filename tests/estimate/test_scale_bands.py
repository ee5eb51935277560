"""bench/scale_bands.py: every case falls in one scale band, a source is its rows' paper or table,
and leave-one-source-out never lets a row's own source set the band that judges it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.bench_modules import load_bench


@pytest.fixture(scope="module")
def bands() -> Any:
    return load_bench("scale_bands")


@pytest.mark.parametrize("gpus, band", [(1, "1-8"), (8, "1-8"), (9, "9-256"), (256, "9-256"),
                                        (257, "257-4,096"), (4096, "257-4,096"),
                                        (16384, "4,097+")])
def test_each_gpu_count_has_the_issue_s_band(bands: Any, gpus: int, band: str) -> None:
    assert bands.scale_band(gpus) == band


@pytest.mark.parametrize("row_id, source", [("MEG21-01", "MEG21"), ("LLMF-P07", "LLMF-P"),
                                            ("WR-L2-07", "WR-L2"), ("WR-L31-405", "WR-L31"),
                                            ("TTU-01t", "TTU"), ("ZERO-04", "ZERO")])
def test_a_source_is_the_id_less_its_row_number(bands: Any, row_id: str, source: str) -> None:
    assert bands.source_of(row_id) == source


def _case(bands: Any, row_id: str, ratio: float) -> Any:
    return bands.Case(row_id, "throughput", "f", 8, abs(1 / ratio - 1), ratio, (0.5, 2.0), "fsdp")


def test_leave_one_source_out_judges_a_source_by_the_others_alone(bands: Any) -> None:
    # one source far off the others: in-sample bands are wide enough to cover it, the held-out
    # band (from the other source's ratios) is not
    cases = [_case(bands, f"A-0{i}", r) for i, r in enumerate((0.95, 1.0, 1.05, 1.0), start=1)]
    cases += [_case(bands, f"B-0{i}", r) for i, r in enumerate((1.6, 1.7, 1.8), start=1)]
    held = {c.id: c for c in bands.loso_bands(cases)}
    assert all(c.covered for c in cases)
    assert not any(held[f"B-0{i}"].covered for i in (1, 2, 3))
    # the held-out band reaches no further than A's farthest ratio from its median, mirrored in log
    # (conformal_band: |log 0.95| on either side of 1.0)
    assert all(held[c.id].band[1] <= 1 / 0.95 * (1 + 1e-12) for c in cases
               if c.id.startswith("B"))
    # the errors are the estimate's own: holding a band out does not change them
    assert [held[c.id].error for c in cases] == [c.error for c in cases]


def test_a_held_out_whole_run_takes_the_others_median_overhead(bands: Any) -> None:
    runs = [bands.Case(f"WR-{s}-1", "GPU-hours", "whole runs", 2048, 0.0, ratio, (1.1, 1.5), "w")
            for s, ratio in (("A", 1.2), ("B", 1.3), ("C", 2.0))]
    held = {c.id: c for c in bands.loso_whole_runs(runs)}
    # C needed 2.0; the others' median is 1.25: predicted 1.25 / 2.0 of the published hours
    assert held["WR-C-1"].error == pytest.approx(abs(1.25 / 2.0 - 1))
    assert held["WR-A-1"].error == pytest.approx(abs(1.65 / 1.2 - 1))
    assert not held["WR-C-1"].covered


def test_a_conformal_band_holds_its_rows_and_widens_as_they_thin(bands: Any) -> None:
    """Split conformal at 80%: at least ceil((n + 1) 0.8) of n rows inside, the band centred (in
    log) on the median, no wider with more rows of the same spread, unbounded under 4 rows."""
    ratios = [0.85, 0.9, 0.95, 0.98, 1.0, 1.02, 1.05, 1.1, 1.2, 1.3]
    lo, hi = bands.conformal_band(ratios)
    inside = sum(lo <= r <= hi for r in ratios)
    assert inside >= -(-(len(ratios) + 1) * 8 // 10)
    assert lo * hi == pytest.approx(1.01**2)  # the median of the ten ratios is 1.01
    more = bands.conformal_band(ratios * 3)  # more rows of the same spread: no wider
    assert lo <= more[0] <= more[1] <= hi
    assert bands.conformal_band([0.9, 1.0, 1.1]) == bands.UNBOUNDED
    assert bands.conformal_band([0.9, 1.0, 1.1, 1.2])[1] < float("inf")


def test_an_unbounded_band_is_counted_apart_not_as_covered(bands: Any) -> None:
    case = bands.Case("A-01", "memory", "f", 8, 0.1, 1.5, bands.UNBOUNDED, "memory")
    assert case.unbounded and case.covered is None
