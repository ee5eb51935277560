"""The longest-context check of the validation bench (bench/context_limits.py): its bisection, its
verdicts, and the published tables it reads, judged by the estimator."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

import pytest

from tests.bench_modules import load_bench

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "bench" / "data"


@pytest.fixture(scope="module")
def bench() -> Any:
    return load_bench("validate_estimates")


@pytest.mark.parametrize("limit", [0, 1, 700, 2972, 100_000, 3_000_000])
@pytest.mark.parametrize("start", [1, 1024, 50_000])
def test_the_bisection_finds_the_longest_fitting_context(bench: Any, limit: int,
                                                         start: int) -> None:
    tried: list[int] = []

    def fits(context: int) -> bool:
        tried.append(context)
        return context <= limit

    found = bench.context_limits.longest_fitting(fits, start)
    assert found <= limit  # never one that does not fit
    assert found >= limit * (1 - bench.context_limits.BISECTION_TOLERANCE) - 1
    assert len(tried) < 60


def _cells(bench: Any) -> list[Any]:
    cell = bench.context_limits.Cell
    return [cell("A", "stack", "t", "S", 8.0, None), cell("B", "stack", "t", "S", 16.0, 1000),
            cell("C", "stack", "t", "S", 24.0, 3000)]


def test_an_estimator_too_generous_or_too_stingy_is_caught(bench: Any) -> None:
    """An estimator whose fixed memory is too small fits the next boundary and the out-of-memory
    cell; one whose memory per token is too large fails the published contexts."""
    def linear(fixed_gib: float, gib_per_token: float) -> Any:
        return lambda _s, context, card, _q: fixed_gib + context * gib_per_token <= card

    right = bench.context_limits.judge(_cells(bench), linear(9.0, 1 / 256))
    assert all(not j.failed for j in right)
    assert [j.beyond for j in right] == [1000, 3000, None]
    assert right[1].ratio == pytest.approx(7 * 256 / 1000, rel=0.01)
    generous = bench.context_limits.judge(_cells(bench), linear(1.0, 1 / 256))
    assert generous[0].fits_beyond and generous[1].fits_beyond
    stingy = bench.context_limits.judge(_cells(bench), linear(9.0, 1 / 64))
    assert stingy[1].fits_published is False and stingy[2].fits_published is False


def test_every_published_cell_is_judged_as_the_table_says(bench: Any) -> None:
    """Issue 49: every published context fits its card, the next one the table publishes for a
    larger card and every out-of-memory cell do not; each cell names a memory row that exists."""
    path = DATA / bench.context_limits.FILE_NAME
    rows = list(csv.DictReader(path.open(encoding="utf-8", newline="")))
    memory_ids = {row["id"] for row in csv.DictReader((DATA / "memory_public.csv").open())}
    assert rows and all(row["setting"] in memory_ids for row in rows)
    assert all(len(row["source"]) > 10 for row in rows)
    cells = bench.context_limits.read_cells(path)
    assert any(c.longest is None for c in cells)  # the out-of-memory cells are read
    judged = bench.context_limits.judge(cells, bench.context_limit_fits(DATA))
    assert [j.cell.id for j in judged if j.failed] == []
    assert all(j.fits_beyond is False for j in judged if j.cell.longest is None)
    # the reserved peak is never below what fits with the allocator's cache squeezed
    assert all(j.longest_reserved <= j.longest_estimated for j in judged)
