"""What a pipeline stage holds at its peak under Megatron's (and torch pipelining's) schedules."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from plan.models.model_card import ModelCard
from plan.planner.estimate import shape_of
from plan.planner.estimate.memory import (
    activation_bytes_per_token_layer,
    in_flight_micro_batches,
    memory_per_gpu,
    pipeline_peak_note,
    stage_layers,
)
from plan.planner.estimate.schedule import held_peak, stage_chunk_layers
from plan.planner.estimate.types import Layout
from tests.estimate.test_memory_phases import one_gpu


def _brute_force_peak(chunk_bytes: list[float], pp: int, m: int, rank: int) -> float:
    """Every op of the step in order, no shortcut: the warm-up forwards, then one forward and one
    backward in turn, then the cool-down backwards (Megatron-LM schedules.py)."""
    v = len(chunk_bytes)
    # megatron-core's get_schedule_table: (micro-batch, chunk) pairs, groups of pp micro-batches per
    # chunk
    table = []
    for first in range(0, m, pp):
        last = m if first + pp >= m else first + pp
        table += [(mb, chunk) for chunk in range(v) for mb in range(first, last)]
        if last == m:
            break
    total = len(table)
    assert total == m * v and len(set(table)) == total
    warm = min(2 * (pp - rank - 1) + (v - 1) * pp if v > 1 else pp - rank - 1, total)
    fwd = [chunk_bytes[chunk] for _, chunk in table]
    bwd = [chunk_bytes[v - 1 - chunk] for _, chunk in table]
    ops = [("f", k) for k in range(warm)]
    for i in range(total - warm):
        ops += [("f", warm + i), ("b", i)]
    ops += [("b", i) for i in range(total - warm, total)]
    held = peak = 0.0
    for kind, k in ops:
        held += fwd[k] if kind == "f" else -bwd[k]
        peak = max(peak, held)
    assert held == pytest.approx(0.0, abs=1e-9)  # every forward is run backward once
    return peak


def test_the_peak_matches_a_step_run_op_by_op() -> None:
    rng = random.Random(7)
    for _ in range(400):
        pp, v = rng.choice([2, 3, 4, 8, 16]), rng.choice([1, 2, 3, 4, 8])
        # whole rounds of pp micro-batches, a last partial round, and steps far beyond the warm-up
        m = (rng.choice([pp, 2 * pp, 3 * pp + 1, 8 * pp, 8 * pp + pp // 2, 20 * pp + 1]) if v > 1
             else rng.randint(1, 24 * pp))
        rank = rng.randrange(pp)
        if rng.random() < 0.5:
            chunks = [float(rng.randint(0, 4)) for _ in range(v)]
        else:  # what stage_chunk_layers gives: one edge chunk lighter than the rest
            chunks = [2.0] * v
            chunks[rng.choice([0, v - 1])] = rng.choice([0.0, 1.0, 1.5])
        assert held_peak(tuple(chunks), pp, m, rank) == pytest.approx(
            _brute_force_peak(chunks, pp, m, rank)
        )


def test_equal_chunks_hold_the_warm_up_plus_one() -> None:
    for pp, v, m, rank in [
        (8, 1, 32, 0),
        (8, 1, 3, 0),
        (8, 2, 32, 0),
        (8, 4, 8, 1),
        (16, 8, 32, 15),
    ]:
        lay = replace(one_gpu(mb=1, pp=pp, gb=m, framework="megatron"), virtual_pipeline=v)
        # one chunk of 1/v of a stage of 8 layers: in micro-batches of the stage, as memory.py
        # counts them
        assert held_peak((8.0 / v,) * v, pp, m, rank) == pytest.approx(
            8.0 * in_flight_micro_batches(lay, rank)
        )


def test_llama3_405b_first_chunk_holds_only_the_embedding() -> None:
    # 126 layers over 16 stages of 8 chunks: the embedding and the loss take a layer's slot each, so
    # the first stage's first chunk and the last stage's last chunk hold no layer
    first, mid, last = stage_layers(126, 16)
    assert stage_chunk_layers(first, mid, 8, "first") == (0.0,) + (1.0,) * 7
    assert stage_chunk_layers(last, mid, 8, "last") == (1.0,) * 7 + (0.0,)
    assert stage_chunk_layers(mid, mid, 8, "middle") == (1.0,) * 8
    # 32 micro-batches (Meta's 8,192-GPU layout): the first stage's warm-up is 142 chunk-forwards,
    # the 16 micro-batches of every chunk and 15 more of the embedding-only chunk: 112 layers, not
    # 143 x 7 / 8
    assert held_peak(stage_chunk_layers(first, mid, 8, "first"), 16, 32, 0) == 16 * 7
    # a stage that does not split into equal chunks is charged even shares
    assert stage_chunk_layers(7, 7, 2, "first") == (3.5, 3.5)


def test_interleaved_last_stage_holds_its_warm_up(llama8b: ModelCard) -> None:
    # The last stage runs (v - 1) pp warm-up forwards before its first backward when interleaved
    # (one micro-batch with 1F1B): with a large vocabulary and a small stage it can be the peak.
    shape = shape_of(llama8b)
    p, m = 4, 8
    base = one_gpu(mb=1, seq=4096, pp=p, gb=m, framework="megatron", recompute="none")
    per_layer = activation_bytes_per_token_layer(shape, base) * base.seq_len
    layers = stage_layers(shape.layers, p)[2]
    for v in (1, 2, 4):
        lay: Layout = replace(base, virtual_pipeline=v)
        chunk = layers / v * per_layer
        expected = ((v - 1) * p + 1) * chunk if v > 1 else layers * per_layer
        assert held_peak(
            stage_chunk_layers(layers, layers, v, "last") if v > 1 else (layers * 1.0,), p, m, p - 1
        ) * per_layer == pytest.approx(expected)
        # and the memory estimate charges at least that on the last stage
        assert (
            memory_per_gpu(shape, "pretrain", lay, 80.0).breakdown.activations_gib * 2**30
            >= expected
        )


def test_the_estimate_names_the_stage_that_peaks_and_what_it_holds(llama70b: ModelCard) -> None:
    shape = shape_of(llama70b)  # 80 layers
    lay = one_gpu(mb=1, seq=4096, pp=4, gb=8, framework="megatron", recompute="none")
    mem = memory_per_gpu(shape, "pretrain", lay, 80.0)
    assert mem.peak_stage == (0, 20)
    assert (
        "stage 1 of 4 peaks, 20 of the 80 layers, holding the activations of 4 micro-batches"
        in (pipeline_peak_note(shape.layers, lay, mem.peak_stage))
    )
    # interleaved, two chunks: the first stage's warm-up is 2 (4 - 1) + 4 = 10 chunk-forwards, 11
    # held
    inter = replace(lay, virtual_pipeline=2)
    mem = memory_per_gpu(shape, "pretrain", inter, 80.0)
    assert mem.peak_stage is not None
    assert "stage 1 of 4 peaks" in pipeline_peak_note(shape.layers, inter, mem.peak_stage)
    assert "of 5.5 micro-batches" in pipeline_peak_note(shape.layers, inter, mem.peak_stage)
    assert (
        memory_per_gpu(shape, "pretrain", replace(lay, pp=1, global_batch=1), 80.0).peak_stage
        is None
    )
