"""The validation bench's targets (issue 49) per family and per scale band, with band coverage.

Called by bench/validate_estimates.py on its rows; it prints, for throughput, memory and whole-run
GPU-hours: n, median and p90 |error|, and the band coverage (the published value inside the
estimate's p10-p90) overall, per family and per scale band (1-8, 9-256, 257-4,096 GPUs, and above).

Where the bench fits anything, it is also held out one source at a time (leave-one-source-out): the
p10-p90 bands of planner/estimate/band.py come from these rows' published / predicted ratios by the
split-conformal rule (`conformal_band`), and the whole-run overhead is the median of the whole runs'
needed overheads, its band by the same rule. Each source's rows are checked against the band, or
predicted with the overhead, that the other sources' rows give. Where the other sources hold too
few rows for a finite band at 80%, a throughput or memory band is unbounded: such rows count apart
(`unbounded`), not as covered; a whole run's overhead takes the stated prior spread instead
(band.WHOLE_RUN_PRIOR_BAND, wider than the runs give). The estimator's own constants are not
refitted here:
they were set against the same rows, so its errors are in-sample (a weak test by construction).

A source is a row id less its row number (MEG21, LLMF-P, WR-L2, ...): one paper or one table.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any

from plan.planner.estimate.band import (
    MEMORY_BAND,
    THROUGHPUT_BAND,
    WHOLE_RUN_PRIOR_BAND,
    band_class,
    run_band,
    throughput_band,
    whole_run_overhead,
    widened,
)

SCALE_BANDS = ((1, 8), (9, 256), (257, 4096), (4097, 10**9))
"""GPU counts the issue names (1-8, 9-256, 257-4,096); the last holds the runs above them."""
# (metric, median target, p90 target) of issue 49; every scale band's median <= SCALE_MEDIAN_TARGET
TARGETS = (("throughput", 0.08, 0.25), ("memory", 0.08, 0.20), ("GPU-hours", 0.15, 0.35))
SCALE_MEDIAN_TARGET = 0.12
COVERAGE_TARGET = (0.70, 0.90)
QUANTILES = (0.1, 0.9)
BAND_COVERAGE = QUANTILES[1] - QUANTILES[0]
UNBOUNDED = (0.0, math.inf)


@dataclass(frozen=True)
class Case:
    """One published figure against its estimate: |error|, and the estimate's p10-p90 as ratios of
    published / predicted (None where no band applies: analytic model states, an upper bound)."""

    id: str
    metric: str  # throughput | memory | GPU-hours
    family: str
    gpus: int
    error: float  # |predicted - published| / published
    ratio: float  # published / predicted
    band: tuple[float, float] | None
    band_class: str = ""  # the class whose band it uses ("memory", "whole run", or a stack's)
    mechanisms: int = 0  # uncalibrated mechanisms that widen its throughput band
    # a whole run's: its throughput band (published / estimated tokens per second), and its
    # steady-state GPU-hours over an unpublished GPU count's range as multiples of the point's
    throughput_band: tuple[float, float] = (1.0, 1.0)
    count_spread: tuple[float, float] = (1.0, 1.0)

    @property
    def source(self) -> str:
        return source_of(self.id)

    @property
    def unbounded(self) -> bool:
        """Whether its band is unbounded: too few calibration rows for a finite one."""
        return self.band == UNBOUNDED

    @property
    def covered(self) -> bool | None:
        """Whether the published value is inside the band; None without a finite band."""
        if self.band is None or self.unbounded:
            return None
        return self.band[0] <= self.ratio <= self.band[1]


def source_of(row_id: str) -> str:
    """MEG21-01 -> MEG21, LLMF-P07 -> LLMF-P, WR-L2-07 -> WR-L2, TTU-01t -> TTU."""
    return re.sub(r"-?\d+[a-z]?$", "", row_id)


def scale_band(gpus: int) -> str:
    lo, hi = next(b for b in SCALE_BANDS if b[0] <= gpus <= b[1])
    return f"{lo:,}-{hi:,}" if hi < SCALE_BANDS[-1][1] else f"{lo:,}+"


def quantile(values: list[float], q: float) -> float:
    """Linear interpolation between order statistics (validate_estimates' band rule)."""
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def conformal_band(
    ratios: list[float], centre: float | None = None, coverage: float = BAND_COVERAGE
) -> tuple[float, float]:
    """The band that holds a new ratio with probability >= `coverage` when the calibration ratios
    and the new one are exchangeable (split conformal prediction: Vovk, Gammerman & Shafer 2005,
    Algorithmic Learning in a Random World; Angelopoulos & Bates 2021, A Gentle Introduction to
    Conformal Prediction, arXiv:2107.07511, section 1). The score is |log(ratio / centre)|, centre
    the ratios' median unless given; the width is the ceil((n + 1) coverage)-th smallest score, so
    few rows give honestly wider bands, and fewer than coverage / (1 - coverage) rows (4 at 80%)
    give UNBOUNDED."""
    if not ratios:
        return UNBOUNDED
    mid = math.log(statistics.median(ratios) if centre is None else centre)
    scores = sorted(abs(math.log(r) - mid) for r in ratios)
    rank = math.ceil((len(scores) + 1) * coverage)
    if rank > len(scores):
        return UNBOUNDED
    width = scores[rank - 1]
    return math.exp(mid - width), math.exp(mid + width)


def p90(values: list[float]) -> float:
    """The nearest-rank p90 validate_estimates reports."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]


def row_cases(rows: Iterable[Any]) -> list[Case]:
    """Cases of validate_estimates' calibration rows (its `_calibration`); ZeRO model-state rows
    and upper bounds count in the errors but carry no band."""
    out = []
    for r in rows:
        est = r.estimate
        no_band = r.id.startswith("ZERO") or r.bound or not r.predicted
        if r.kind == "throughput":
            band, cls = throughput_band(est.layout, est.uncalibrated), band_class(est.layout)
        else:
            band, cls = MEMORY_BAND, "memory"
        out.append(Case(r.id, r.kind, r.family, est.cluster.gpus, abs(r.error),
                        r.published / r.predicted if r.predicted else 0.0,
                        None if no_band else band, cls, len(est.uncalibrated)))
    return out


def whole_run_cases(runs: Iterable[Any]) -> list[Case]:
    """Cases of whole runs: GPU-hours against steady state x overhead; the band the estimator
    gives (band.run_band: the throughput's and the overhead's, independent), reaching over the
    GPU counts an unpublished count may be (validate_estimates.gpu_counts)."""
    overhead, band = whole_run_overhead("pretrain")
    out = []
    for r in runs:
        case = Case(r.id, "GPU-hours", "whole runs", r.gpus, abs(r.error), r.ratio, None,
                    "whole run", throughput_band=r.throughput_band, count_spread=r.count_spread)
        out.append(replace(case, band=whole_run_band(case, overhead, band)))
    return out


def whole_run_band(
    case: Case, overhead: float, overhead_band: tuple[float, float]
) -> tuple[float, float]:
    """The p10-p90 of a whole run's needed overhead (published / steady-state GPU-hours) that an
    overhead of `overhead`, spread `overhead_band`, gives it, with its throughput band and GPU-count
    range."""
    lo, hi = run_band(case.throughput_band, overhead, overhead_band)
    return overhead * lo * case.count_spread[0], overhead * hi * case.count_spread[1]


def _cells(cases: list[Case]) -> str:
    errors = [c.error for c in cases]
    banded = [c.covered for c in cases if c.covered is not None]
    cover = f"{sum(banded)}/{len(banded)} {sum(banded) / len(banded):4.0%}" if banded else "-"
    unbounded = sum(c.unbounded for c in cases)
    return (f"{len(cases):3} {statistics.median(errors):7.1%} {p90(errors):7.1%}  "
            f"{cover:>12}" + (f"  (+{unbounded} unbounded)" if unbounded else ""))


def _print_groups(cases: list[Case], key: Callable[[Case], str], label: str) -> None:
    for metric, _, _ in TARGETS:
        mine = [c for c in cases if c.metric == metric]
        for name in dict.fromkeys(key(c) for c in mine):
            group = [c for c in mine if key(c) == name]
            print(f"{metric:11} {f'{label} {name}'.strip():26} {_cells(group)}")


def loso_bands(cases: list[Case]) -> list[Case]:
    """Each banded case with the band its class gets from the other sources' ratios
    (`conformal_band`, the rule band.py's constants come from; a throughput band widened for its
    uncalibrated mechanisms as band.py widens it); cases whose class has too few other-source
    ratios get UNBOUNDED."""
    out = []
    for c in cases:
        if c.band is None:
            continue
        others = [o.ratio for o in cases if o.band is not None and o.band_class == c.band_class
                  and o.source != c.source]
        band = conformal_band(others)
        if c.metric == "throughput" and band != UNBOUNDED:
            band = widened(band, c.mechanisms)
        out.append(Case(c.id, c.metric, c.family, c.gpus, c.error, c.ratio, band, c.band_class))
    return out


def loso_whole_runs(cases: list[Case]) -> list[Case]:
    """Each whole run predicted with the overhead (median) and band (`conformal_band` around it) of
    the needed overheads of the other sources' runs: its error is |steady x overhead / published -
    1|. Where the others are too few for a finite band, the overhead's spread is the stated prior
    (band.WHOLE_RUN_PRIOR_BAND, the published job uptimes' range), never none; the run's throughput
    band and GPU-count range widen it as in-sample (`whole_run_band`)."""
    out = []
    for c in cases:
        others = [o.ratio for o in cases if o.source != c.source]
        if not others:
            continue
        overhead = statistics.median(others)
        lo, hi = conformal_band(others, overhead)
        spread = (overhead * WHOLE_RUN_PRIOR_BAND[0], overhead * WHOLE_RUN_PRIOR_BAND[1])
        if not math.isinf(hi):
            spread = (lo, hi)
        band_lo, band_hi = whole_run_band(c, overhead, spread)
        ratio = c.ratio / overhead  # published / (steady x overhead)
        out.append(replace(c, error=abs(1 / ratio - 1), ratio=ratio,
                           band=(band_lo / overhead, band_hi / overhead)))
    return out


def loso_calibrated_band(cases: list[Case]) -> tuple[float, float]:
    """The whole-run overhead's p10-p90 calibrated leave-one-source-out (jackknife+, Barber et al.
    2021, Predictive inference with the jackknife+, Ann. Statist. 49(1)): the conformal rank of
    each run's |log(needed overhead / the other sources' median)| about the median of all; the
    prior (band.WHOLE_RUN_PRIOR_BAND) where the runs are too few."""
    centre = statistics.median(c.ratio for c in cases)
    scores = sorted(
        abs(math.log(c.ratio / statistics.median(o.ratio for o in cases if o.source != c.source)))
        for c in cases if any(o.source != c.source for o in cases)
    )
    rank = math.ceil((len(scores) + 1) * BAND_COVERAGE)
    if rank > len(scores):
        return centre * WHOLE_RUN_PRIOR_BAND[0], centre * WHOLE_RUN_PRIOR_BAND[1]
    return centre * math.exp(-scores[rank - 1]), centre * math.exp(scores[rank - 1])


def _targets(cases: list[Case], label: str) -> None:
    for metric, median_target, p90_target in TARGETS:
        mine = [c for c in cases if c.metric == metric]
        if not mine:
            continue
        errors = [c.error for c in mine]
        med, tail = statistics.median(errors), p90(errors)
        banded = [c.covered for c in mine if c.covered is not None]
        share = sum(banded) / len(banded) if banded else float("nan")
        unbounded = sum(c.unbounded for c in mine)
        lo, hi = COVERAGE_TARGET
        print(f"  {label:9} {metric:11} median {med:6.1%} (<= {median_target:.0%}: "
              f"{_met(med <= median_target)})  p90 {tail:6.1%} (<= {p90_target:.0%}: "
              f"{_met(tail <= p90_target)})  coverage {share:4.0%} ({lo:.0%}-{hi:.0%}: "
              f"{_met(lo <= share <= hi)})"
              + (f" of {len(banded)}; {unbounded} unbounded" if unbounded else ""))
    for band in dict.fromkeys(scale_band(c.gpus) for c in sorted(cases, key=lambda c: c.gpus)):
        errors = [c.error for c in cases if scale_band(c.gpus) == band]
        med = statistics.median(errors)
        print(f"  {label:9} GPUs {band:11} median {med:6.1%} over every metric (n={len(errors)}; "
              f"<= {SCALE_MEDIAN_TARGET:.0%}: {_met(med <= SCALE_MEDIAN_TARGET)})")


def _met(ok: bool) -> str:
    return "met" if ok else "MISSED"


def report(rows: Iterable[Any], runs: Iterable[Any]) -> None:
    """Print the per-family and per-scale-band tables, leave-one-source-out, and the targets."""
    cases = row_cases(rows) + whole_run_cases(runs)
    if not cases:
        return
    print("issue 49 targets by family and scale band (coverage: published value inside the "
          "estimate's p10-p90)")
    print(f"{'metric':11} {'group':26} {'n':>3} {'median':>7} {'p90':>7}  {'coverage':>12}")
    _print_groups(cases, lambda c: "all", "")
    _print_groups(cases, lambda c: c.family, "family")
    ordered = sorted(cases, key=lambda c: c.gpus)
    _print_groups(ordered, lambda c: scale_band(c.gpus), "GPUs")
    held = loso_bands([c for c in cases if c.metric != "GPU-hours"])
    held += [c for c in cases if c.metric != "GPU-hours" and c.band is None]
    held += loso_whole_runs([c for c in cases if c.metric == "GPU-hours"])
    print("leave-one-source-out (bands, and the whole-run overhead, from the other sources' rows):")
    _print_groups(held, lambda c: "all", "")
    _print_groups(sorted(held, key=lambda c: c.gpus), lambda c: scale_band(c.gpus), "GPUs")
    print("targets (issue 49):")
    _targets(cases, "in-sample")
    _targets(held, "LOSO")
    print(f"  (band.py: throughput {THROUGHPUT_BAND}, memory {MEMORY_BAND}, whole run "
          f"{whole_run_overhead('pretrain')})")
    runs = [c for c in cases if c.metric == "GPU-hours"]
    if runs:
        lo, hi = loso_calibrated_band(runs)
        print(f"  whole-run overhead from these runs: median "
              f"{statistics.median(c.ratio for c in runs):.3f}, p10-p90 calibrated "
              f"leave-one-source-out ({lo:.3f}, {hi:.3f})")
