"""Published "longest context that fits" tables against the estimator's judgement of fit.

A cell of such a table (bench/data/context_limits.csv) says: with the setting of a memory row
(`setting`, a row of memory_public.csv: model, method, stack, recompute, batch) on a card of
`gpu_memory` GiB, the longest context that ran was `longest_context` tokens, or nothing ran ("OOM").
The estimator is judged as the "published configurations judged to fit" line judges a row
(`Estimate.fits_card`: the peak with the allocator's cache squeezed within the card):
- each published context must fit its card;
- the context the same column publishes for the next larger card ("longest that fits + 1": the
  next published boundary) must not fit the smaller card;
- an out-of-memory cell must not fit the shortest context its column publishes;
and the longest context the estimator says fits each card (a bisection on the context, fit being
monotone in it) is reported as a ratio to the published one, per column of the table.
"""

from __future__ import annotations

import csv
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

FILE_NAME = "context_limits.csv"

Fits = Callable[[str, int, float, bool], bool]
"""Whether the estimator judges the memory row `setting` to fit at a context on a card of GiB: with
the allocator's cache squeezed (`Estimate.fits_card`), or, the last argument False, its reserved
peak (`total_gib`, what torch.cuda.max_memory_reserved() shows with room to spare)."""

LONGEST_CONTEXT_CAP = 1 << 24
"""The longest context the bisection tries (16M tokens): no published table reaches it."""

BISECTION_TOLERANCE = 0.005
"""The bisection stops when its bounds are within 0.5% of each other (the ratio's precision)."""


@dataclass(frozen=True)
class Cell:
    id: str
    column: str  # the table's column: the stack that ran (Unsloth, Hugging Face + FA2)
    table: str
    setting: str  # the memory row whose setting the cell ran
    gpu_gib: float
    longest: int | None  # None: out of memory at any context the column publishes


@dataclass(frozen=True)
class Judged:
    cell: Cell
    fits_published: bool | None  # None for an out-of-memory cell
    beyond: int | None  # the context that must not fit: the next boundary, or the column's least
    fits_beyond: bool | None
    longest_estimated: int  # 0: the estimator fits no context on the card
    longest_reserved: int  # the same with the reserved peak within the card

    @property
    def ratio(self) -> float | None:
        if self.cell.longest is None:
            return None
        return self.longest_estimated / self.cell.longest

    @property
    def reserved_ratio(self) -> float | None:
        if self.cell.longest is None:
            return None
        return self.longest_reserved / self.cell.longest

    @property
    def failed(self) -> list[str]:
        why = []
        if self.fits_published is False:
            why.append(f"{self.cell.longest:,} judged not to fit")
        if self.fits_beyond:
            why.append(f"{self.beyond:,} judged to fit")
        return why


def read_cells(path: Path) -> list[Cell]:
    with path.open(newline="", encoding="utf-8") as f:
        return [
            Cell(row["id"], row["column"], row["table"], row["setting"],
                 float(row["gpu_memory"]),
                 None if row["longest_context"].strip().upper() == "OOM"
                 else int(row["longest_context"]))
            for row in csv.DictReader(f)
        ]


def longest_fitting(fits: Callable[[int], bool], start: int) -> int:
    """The longest context that `fits` (monotone: what fits, fits shorter), to
    BISECTION_TOLERANCE; 0 where not even one token fits."""
    lo, hi = 0, max(1, start)
    if fits(hi):
        lo = hi
        while hi < LONGEST_CONTEXT_CAP and fits(hi := min(LONGEST_CONTEXT_CAP, hi * 2)):
            lo = hi
        if lo == hi:
            return lo
    else:
        while hi > 1 and not fits(half := hi // 2):
            hi = half
        if hi == 1:  # (what does not fit is kept in hi)
            return 0
        lo = hi // 2
    while hi - lo > max(1, int(lo * BISECTION_TOLERANCE)):
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return lo


def _next_boundary(cell: Cell, column: list[Cell]) -> int | None:
    """The context the cell's column publishes for the next larger card; for an out-of-memory cell
    the shortest its column publishes."""
    published = sorted((c for c in column if c.longest is not None), key=lambda c: c.gpu_gib)
    if cell.longest is None:
        return min((c.longest for c in published if c.longest is not None), default=None)
    larger = [c.longest for c in published if c.gpu_gib > cell.gpu_gib and c.longest is not None]
    return larger[0] if larger else None


def judge(cells: list[Cell], fits: Fits) -> list[Judged]:
    out = []
    for cell in cells:
        column = [c for c in cells if (c.table, c.column) == (cell.table, cell.column)]
        beyond = _next_boundary(cell, column)

        def at(context: int, cell: Cell = cell, squeezed: bool = True) -> bool:
            return fits(cell.setting, context, cell.gpu_gib, squeezed)

        def reserved(context: int, cell: Cell = cell) -> bool:
            return at(context, cell, squeezed=False)

        out.append(Judged(
            cell,
            None if cell.longest is None else at(cell.longest),
            beyond,
            None if beyond is None else at(beyond),
            longest_fitting(at, cell.longest or beyond or 1024),
            longest_fitting(reserved, cell.longest or beyond or 1024),
        ))
    return out


def report(judged: list[Judged]) -> None:
    """The lines validate_estimates.py prints."""
    name = f"longest context that fits ({FILE_NAME})"
    ran = [j for j in judged if j.fits_published is not None]
    ok_ran = sum(1 for j in ran if j.fits_published)
    over = [j for j in judged if j.fits_beyond is not None]
    ok_over = sum(1 for j in over if not j.fits_beyond)
    print(f"{name}: published contexts judged to fit: {ok_ran}/{len(ran)}; the next boundary or "
          f"an out-of-memory cell judged not to: {ok_over}/{len(over)}")
    for j in judged:
        if j.failed:
            print(f"  {j.cell.id} ({j.cell.column}, {j.cell.gpu_gib:g} GiB, {j.cell.setting}): "
                  + "; ".join(j.failed))
    for column in dict.fromkeys(j.cell.column for j in judged):
        mine = [j for j in judged if j.cell.column == column and j.cell.longest is not None]
        for label, ratio in (("fits", Judged.ratio), ("reserved peak", Judged.reserved_ratio)):
            ratios = sorted(r for j in mine if (r := ratio.fget(j)) is not None)  # type: ignore
            if ratios:
                print(f"  {column:18} estimated / published longest context ({label:13}): "
                      f"n={len(ratios):2}  median {statistics.median(ratios):.2f}  "
                      f"range {ratios[0]:.2f}-{ratios[-1]:.2f}")
    print(f"  {'':7} {'setting':7} {'column':18} {'card':>9}  {'published':>9}  "
          f"{'fits':>9}        {'reserved peak':>13}")
    for j in judged:
        pub = "OOM" if j.cell.longest is None else f"{j.cell.longest:,}"
        ratio = "" if j.ratio is None else f"x{j.ratio:.2f}"
        held = "" if j.reserved_ratio is None else f"x{j.reserved_ratio:.2f}"
        print(f"  {j.cell.id:7} {j.cell.setting:7} {j.cell.column:18} {j.cell.gpu_gib:5g} GiB  "
              f"{pub:>9}  {j.longest_estimated:>9,} {ratio:>6}  {j.longest_reserved:>9,} {held:>6}")
