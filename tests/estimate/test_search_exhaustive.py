"""The layout search's pruning (dominance, memory monotonicity, throughput bounds) never changes the
answer: on a range of cases it returns the fastest fitting layout an exhaustive enumeration finds."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from models.gpu import GPU
from models.model_card import ModelCard
from planner.estimate import Cluster, LayoutSpec, search_layout
from planner.estimate.estimator import estimate
from planner.estimate.search import MICRO_BATCHES, VIRTUAL_STAGES, default_global_batch
from planner.estimate.types import Layout


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def exhaustive_best(card: ModelCard, method: str, cluster: Cluster, seq_len: int) -> float | None:
    """Highest tokens/s over every layout the search may choose from, by plain enumeration."""
    best = None
    lora_rank = 16 if method in ("lora", "qlora") else None
    for tp in _divisors(cluster.gpus):
        if tp > cluster.gpus_per_node or card.num_heads % tp or (
                tp > card.num_kv_heads and tp % card.num_kv_heads) or (
                tp < card.num_kv_heads and card.num_kv_heads % tp):
            continue
        for pp in [p for p in _divisors(cluster.gpus // tp) if p <= card.layers]:
            dp = cluster.gpus // (tp * pp)
            zeros = [0] if dp == 1 else [1] if pp > 1 else [0, 1, 2, 3]
            vps = [v for v in VIRTUAL_STAGES if v == 1 or (pp > 1 and card.layers % (pp * v) == 0)]
            for zero, rc, mb, v in itertools.product(zeros, ["none", "full"], MICRO_BATCHES, vps):
                if mb > 1 and dp * mb > default_global_batch(method, seq_len, 1, 1):
                    continue
                layout = Layout(tp=tp, pp=pp, dp=dp, zero=zero, recompute=rc, micro_batch=mb,
                                global_batch=default_global_batch(method, seq_len, dp, mb), seq_len=seq_len,
                                precision="bf16", sequence_parallel=tp > 1, lora_rank=lora_rank,
                                virtual_pipeline=v)
                est = estimate(card, method, cluster, layout)
                if est.fits and (best is None or est.tokens_per_s > best):
                    best = est.tokens_per_s
    return best


# (model fixture, method, gpu fixture, gpus, fabric Gb/s per GPU or None for the default): single GPUs,
# one node, several nodes, slow Ethernet (data parallelism expensive), pipeline-heavy 70B.
CASES = [(model, method, gpu, gpus, fabric)
         for model, method, gpu, gpus, fabric in itertools.product(
             ("llama8b", "llama70b"), ("pretrain", "full_finetune", "lora", "qlora"), ("a100", "h100", "rtx4090"),
             (1, 8, 24, 64), (None, 25.0))
         if fabric is None or gpus > 8]


@pytest.mark.parametrize(("model", "method", "gpu", "gpus", "fabric"), CASES)
def test_search_equals_exhaustive_enumeration(request, model, method, gpu, gpus, fabric) -> None:
    card: ModelCard = request.getfixturevalue(model)
    device: GPU = request.getfixturevalue(gpu)
    cluster = Cluster.of(device, gpus)
    if fabric is not None:
        cluster = dataclasses.replace(cluster, fabric_kind="ethernet", fabric_gbps_per_gpu=fabric)
    seq_len = 4096
    spec = LayoutSpec(seq_len=seq_len, lora_rank=16)
    found = search_layout(card, method, cluster, spec).best
    expected = exhaustive_best(card, method, cluster, seq_len)
    if expected is None:
        assert found is None
        return
    assert found is not None
    assert found.tokens_per_s == pytest.approx(expected, rel=1e-9)
