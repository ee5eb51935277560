"""The whole-run band (issue 49 item 2): composed from independent mechanisms, calibrated leave one
source out, never unbounded where a held-out source leaves few runs, and an unpublished GPU count
taken as an uncertainty rather than a point."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from typing import Any

import pytest

from plan.models.catalog import builtin_catalog
from plan.planner.estimate import Cluster, LayoutSpec, search_layout
from plan.planner.estimate.band import (
    NEW_STACK_FACTOR,
    WHOLE_RUN_BAND,
    WHOLE_RUN_OVERHEAD,
    WHOLE_RUN_PRIOR_BAND,
    combined,
    run_band,
    whole_run_overhead,
)
from tests.bench_modules import load_bench


def _module(name: str) -> Any:
    return load_bench(name)


@pytest.fixture(scope="module")
def bands() -> Any:
    return _module("scale_bands")


def _half(band: tuple[float, float]) -> float:
    return math.log(band[1] / band[0]) / 2


def test_independent_factors_add_their_widths_in_quadrature() -> None:
    a, b = (0.9, 1.1), (0.8, 1.4)
    both = combined(a, b)
    assert _half(both) == pytest.approx(math.hypot(_half(a), _half(b)))
    # the centres (in log) multiply
    assert math.sqrt(both[0] * both[1]) == pytest.approx(math.sqrt(a[0] * a[1] * b[0] * b[1]))
    assert combined(a, (1.0, 1.0)) == pytest.approx(a)
    # wider than either alone, narrower than the product of their edges
    assert _half(both) > max(_half(a), _half(b))
    assert _half(both) < _half((a[0] * b[0], a[1] * b[1]))


def test_a_band_from_fewer_runs_is_wider_than_the_runs_give() -> None:
    """The prior a held-out source falls back on (the published job uptimes' range) is wider than
    the band the published whole runs calibrate."""
    assert WHOLE_RUN_PRIOR_BAND[0] * WHOLE_RUN_PRIOR_BAND[1] == pytest.approx(1.0)
    assert _half(WHOLE_RUN_PRIOR_BAND) > _half(WHOLE_RUN_BAND)
    assert WHOLE_RUN_PRIOR_BAND[1] / WHOLE_RUN_PRIOR_BAND[0] == pytest.approx(0.988 / 0.59)
    assert WHOLE_RUN_BAND[0] < WHOLE_RUN_OVERHEAD < WHOLE_RUN_BAND[1]


def test_a_run_s_band_holds_its_point_and_both_mechanisms() -> None:
    catalog = builtin_catalog()
    est = search_layout(catalog.model("llama3.1-8b"), "pretrain",
                        Cluster.of(catalog.gpu("h100-sxm"), 64), LayoutSpec()).best
    assert est is not None
    run = est.run(100e9)
    lo, hi = run.hours_range
    assert lo < run.hours < hi
    t_lo, t_hi = est.tokens_per_s_range
    expected = run_band((t_lo / est.tokens_per_s, t_hi / est.tokens_per_s), WHOLE_RUN_OVERHEAD,
                        WHOLE_RUN_BAND)
    assert (lo / run.hours, hi / run.hours) == pytest.approx(expected)
    # wider than the throughput band or the overhead band alone
    assert hi / lo > max(t_hi / t_lo, WHOLE_RUN_BAND[1] / WHOLE_RUN_BAND[0])


def _run(bands: Any, row_id: str, ratio: float) -> Any:
    return bands.Case(row_id, "GPU-hours", "whole runs", 2048, 0.0, ratio, None, "whole run")


def test_a_held_out_run_is_never_unbounded_and_few_others_give_the_wider_prior(bands: Any) -> None:
    # A's two others are too few for a finite conformal band: the prior, never unbounded
    few = [_run(bands, f"WR-{s}-1", r) for s, r in (("A", 1.2), ("B", 1.25), ("C", 1.3))]
    held = {c.id: c for c in bands.loso_whole_runs(few)}
    assert all(not c.unbounded and c.covered is not None for c in held.values())
    a = held["WR-A-1"]
    assert a.band == pytest.approx(WHOLE_RUN_PRIOR_BAND)
    # with enough other sources of the same spread the band is the runs' own, narrower
    many = few + [_run(bands, f"WR-{s}-1", r) for s, r in (("D", 1.22), ("E", 1.28))]
    from_runs = {c.id: c for c in bands.loso_whole_runs(many)}["WR-A-1"]
    assert _half(from_runs.band) < _half(a.band)


def test_the_calibrated_band_holds_each_run_s_distance_from_the_other_sources(bands: Any) -> None:
    runs = [_run(bands, f"WR-{s}-1", r)
            for s, r in (("A", 1.1), ("B", 1.2), ("C", 1.25), ("D", 1.3), ("E", 1.6))]
    lo, hi = bands.loso_calibrated_band(runs)
    centre = 1.25
    assert lo * hi == pytest.approx(centre**2)
    # at 80% with 5 runs the rank is the 5th smallest score: E's distance from the others' median
    others_e = 1.225  # median of 1.1, 1.2, 1.25, 1.3
    assert hi / centre == pytest.approx(1.6 / others_e)
    # three runs are too few for a finite rank: the prior about their median
    assert bands.loso_calibrated_band(runs[:3]) == pytest.approx(
        (1.2 * WHOLE_RUN_PRIOR_BAND[0], 1.2 * WHOLE_RUN_PRIOR_BAND[1]))


def test_an_unpublished_gpu_count_is_each_doubling_of_its_range() -> None:
    bench = _module("validate_estimates")
    row = {"num_gpus": "2048", "gpus_stated": "no", "gpus_range": "2048-16384",
           "metric": "gpu_hours"}
    assert bench.gpu_counts(row) == [2048, 4096, 8192, 16384]
    assert bench.gpu_counts({**row, "gpus_range": ""}) == [2048]
    assert bench.gpu_counts({**row, "gpus_stated": "yes"}) == [2048]  # a published count is one
    with pytest.raises(bench.RowProblem):
        bench.gpu_counts({**row, "gpus_range": "4096-2048"})


def test_a_whole_run_over_a_count_range_is_predicted_between_its_ends() -> None:
    bench = _module("validate_estimates")
    catalog = builtin_catalog()
    row = dict(id="WR-X-08", source="probe", model="llama3-8b", gpu="h100-sxm", num_gpus="2048",
               gpus_stated="no", gpus_range="2048-8192", tp="", pp="", seq_len="8192",
               tokens="1e12", global_batch_tokens="", gpu_hours="100000", notes="")
    ranged = bench._whole_run(catalog, row)
    ends = [bench._whole_run(catalog, {**row, "num_gpus": n, "gpus_range": ""})
            for n in ("2048", "8192")]
    low, high = sorted(e.predicted_gpu_hours for e in ends)
    assert low < ranged.predicted_gpu_hours < high
    assert ranged.predicted_gpu_hours == pytest.approx(math.sqrt(low * high), rel=0.2)
    # the band reaches over both ends' bands
    assert ranged.band_gpu_hours[0] <= min(e.band_gpu_hours[0] for e in ends) * (1 + 1e-9)
    assert ranged.band_gpu_hours[1] >= max(e.band_gpu_hours[1] for e in ends) * (1 - 1e-9)
    assert ranged.count_spread[0] < 1 < ranged.count_spread[1]


def test_a_new_stack_takes_the_published_uptimes_ratio_a_mature_one_the_default() -> None:
    assert pytest.approx(0.90 / 0.59) == NEW_STACK_FACTOR
    point, band = whole_run_overhead("pretrain", "new")
    assert point == pytest.approx(WHOLE_RUN_OVERHEAD * NEW_STACK_FACTOR)
    assert band == pytest.approx((WHOLE_RUN_BAND[0] * NEW_STACK_FACTOR,
                                  WHOLE_RUN_BAND[1] * NEW_STACK_FACTOR))
    assert whole_run_overhead("pretrain", "mature") == whole_run_overhead("pretrain")
    # fine-tuning: no published whole runs, so no maturity factor either
    assert whole_run_overhead("lora", "new") == whole_run_overhead("lora")
    catalog = builtin_catalog()
    cluster = Cluster.of(catalog.gpu("h100-sxm"), 256)
    est = search_layout(catalog.model("llama3.1-8b"), "pretrain", cluster, LayoutSpec()).best
    assert est is not None
    new = replace(est, cluster=replace(cluster, stack_maturity="new"))
    unstated, stated = est.run(1e12), new.run(1e12)
    # the same failures; the whole run and its band scale by the factor
    assert stated.failure_overhead_fraction == unstated.failure_overhead_fraction
    assert stated.hours == pytest.approx(unstated.hours * NEW_STACK_FACTOR)
    assert stated.hours_range == pytest.approx(tuple(h * NEW_STACK_FACTOR
                                                     for h in unstated.hours_range))
    assert any("stack stated new" in n for n in stated.notes)
    assert not any("stack stated" in n for n in unstated.notes)
    # the search does not see it: one search serves both
    assert replace(cluster, stack_maturity="new").layout_search_key() == cluster.layout_search_key()
    assert replace(cluster, stack_maturity="new") != cluster


def test_plan_estimate_says_a_stated_stack_maturity_in_english_and_chinese() -> None:
    from typer.testing import CliRunner

    from plan.planner.cli.app import app

    args = ["estimate", "--model", "llama3.1-8b", "--method", "pretrain", "--gpu", "h100-sxm",
            "--gpus", "64", "--tokens", "100B"]
    env = {"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "LANGUAGE": "", "COLUMNS": "120"}

    def invoke(*more: str) -> Any:
        return CliRunner().invoke(app, [*args, *more], env=env)

    plain = json.loads(invoke("--format", "json").stdout)
    new = json.loads(invoke("--stack-maturity", "new", "--format", "json").stdout)
    assert new["hours"] == pytest.approx(plain["hours"] * NEW_STACK_FACTOR, rel=1e-3)
    assert any("stack stated new" in n for n in new["notes"])
    assert not any("stack stated" in n for n in plain["notes"])
    chinese = invoke("--stack-maturity", "new", "--lang", "zh")
    assert chinese.exit_code == 0 and "训练栈是新的" in chinese.stdout
    assert "stack stated" not in chinese.stdout
    refused = invoke("--stack-maturity", "old")
    assert refused.exit_code == 2 and "--stack-maturity" in refused.stderr


def test_a_whole_run_row_may_state_its_stack_s_maturity() -> None:
    bench = _module("validate_estimates")
    catalog = builtin_catalog()
    row = dict(id="WR-X-08", source="probe", model="llama3-8b", gpu="h100-sxm", num_gpus="512",
               gpus_stated="yes", tp="", pp="", seq_len="8192", tokens="1e11",
               global_batch_tokens="", gpu_hours="100000", notes="")
    mature = bench._whole_run(catalog, row)
    new = bench._whole_run(catalog, {**row, "stack_maturity": "new"})
    assert new.predicted_gpu_hours == pytest.approx(mature.predicted_gpu_hours * NEW_STACK_FACTOR)
    # the overhead it needs is a mature stack's: the factor is the estimator's, not the row's
    assert new.ratio == pytest.approx(mature.ratio / NEW_STACK_FACTOR)
    with pytest.raises(bench.RowProblem):
        bench._whole_run(catalog, {**row, "stack_maturity": "ancient"})
