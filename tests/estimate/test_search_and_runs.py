"""Layout search, whole-run hours with failures, and the cluster defaults."""

from __future__ import annotations

import math

import pytest

from models.gpu import GPU
from models.model_card import ModelCard
from planner.estimate import Cluster, LayoutSpec, search_layout
from planner.estimate.reliability import checkpoint_interval_h, failure_overhead_fraction
from planner.estimate.search import default_global_batch


def test_search_returns_fastest_fitting_layout_and_explains(llama70b: ModelCard, h100: GPU) -> None:
    result = search_layout(llama70b, "pretrain", Cluster.of(h100, 64), LayoutSpec())
    best = result.best
    assert best is not None and best.fits
    assert best.layout.tp * best.layout.pp * best.layout.dp == 64
    assert result.considered > 10 and result.reasons.get("tp spans nodes", 0) >= 1
    assert any("spans" in reason for _, reason in result.rejected)
    assert result.searched == ("tp", "pp", "zero", "recompute", "micro_batch", "global_batch")
    assert "tp=1" in result.why(tp=1) and ("slower" in result.why(tp=1) or "does not fit" in result.why(tp=1))
    assert "invalid" in result.why(tp=3)
    assert result.why(tp=best.layout.tp, pp=best.layout.pp) == (
        f"tp={best.layout.tp} pp={best.layout.pp} is the chosen layout")


def test_fixed_fields_are_kept(llama8b: ModelCard, h100: GPU) -> None:
    spec = LayoutSpec(tp=2, zero=3, recompute="full", micro_batch=2, global_batch=64)
    best = search_layout(llama8b, "pretrain", Cluster.of(h100, 8), spec).best
    assert best is not None
    lay = best.layout
    assert (lay.tp, lay.zero, lay.recompute, lay.micro_batch, lay.global_batch) == (2, 3, "full", 2, 64)


def test_nothing_fits_gives_the_closest_layout(llama70b: ModelCard, rtx4090: GPU) -> None:
    result = search_layout(llama70b, "full_finetune", Cluster.of(rtx4090, 1), LayoutSpec())
    assert result.best is None
    assert result.closest is not None and not result.closest.fits
    assert result.closest.memory.total_gib > 24
    assert "does not fit" in result.why(recompute="full")


def test_search_is_cached(llama70b: ModelCard, h100: GPU) -> None:
    # speed is measured in bench/estimate_speed.py; here only that an equal cluster hits the cache
    from planner.estimate import search

    search._search.cache_clear()
    first = search_layout(llama70b, "pretrain", Cluster.of(h100, 512), LayoutSpec())
    again = search_layout(llama70b, "pretrain", Cluster.of(h100, 512), LayoutSpec())
    assert again is first and search._search.cache_info().hits == 1


def test_default_global_batch_rule() -> None:
    assert default_global_batch("pretrain", 4096, 8, 1) == 1024  # 4M tokens
    assert default_global_batch("lora", 2048, 1, 1) == 128
    assert default_global_batch("full_finetune", 4096, 48, 2) == 192  # rounded up to dp x mb
    assert default_global_batch("qlora", 4096, 256, 1) == 256  # never below dp x mb


def test_young_daly_interval_and_overhead() -> None:
    delta_h, mtbf_h = 2 / 60, 50_700 / 1024
    tau = checkpoint_interval_h(delta_h, mtbf_h)
    assert tau == pytest.approx(math.sqrt(2 * delta_h * mtbf_h) - delta_h)
    f = failure_overhead_fraction(delta_h, 0.5, mtbf_h)
    assert f == pytest.approx(delta_h / tau + (tau / 2 + 0.5) / mtbf_h)


def test_run_hours_include_failures_and_spot(llama8b: ModelCard, h100: GPU) -> None:
    spec = LayoutSpec()
    on_demand = search_layout(llama8b, "pretrain", Cluster.of(h100, 64), spec).best
    spot = search_layout(llama8b, "pretrain", Cluster.of(h100, 64, spot=True), spec).best
    assert on_demand is not None and spot is not None
    run = on_demand.run(10e9)
    assert run.failure_free_hours == pytest.approx(10e9 / on_demand.tokens_per_s / 3600)
    assert run.hours > run.failure_free_hours
    assert run.gpu_hours == pytest.approx(run.hours * 64)
    assert spot.run(10e9).hours > run.hours
    assert spot.run(10e9).expected_interruptions > run.expected_interruptions > 0


def test_cluster_defaults_are_stated(h100: GPU) -> None:
    cluster = Cluster.of(h100, 16)
    assert cluster.gpu_mtbf_h == 50_700 and cluster.nodes == 2
    assert cluster.fabric_kind == "infiniband" and cluster.fabric_gbps_per_gpu == 400
    assert any("MTBF" in note for note in cluster.assumptions)
    with pytest.raises(ValueError, match="gpus"):
        Cluster.of(h100, 0)
