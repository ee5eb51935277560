"""Candidate pruning: an option is dropped only when another on the same offer is no dearer, starts
no later, runs no longer and (on shared capacity) holds no more GPUs."""

from __future__ import annotations

from types import SimpleNamespace

from plan.models.problem import Candidate
from plan.planner.candidates import CandidateBuilder
from tests.planner.builders import LAYOUT


def _option(index: int, gpus: int, cost: int, duration_min: int, startup_min: int = 0) -> Candidate:
    return Candidate(
        index=index,
        job="cpt",
        platform="cloud",
        gpu="h800",
        gpus=gpus,
        nodes=gpus // 8,
        billing="hourly",
        duration_min=duration_min,
        transfer_min=0,
        cost=cost,
        resource=None,
        layout=LAYOUT,
        memory_gib_per_gpu=60.0,
        gpu_memory_gib=80.0,
        tokens_per_s=1.0,
        mfu=0.4,
        hours=duration_min / 60,
        gpu_hours=gpus * duration_min / 60,
        startup_min=startup_min,
    )


def _prune(options: list[Candidate]) -> tuple[list[Candidate], list[str]]:
    builder = SimpleNamespace(removed=[])
    kept = CandidateBuilder._prune(builder, options)  # type: ignore[arg-type]
    return kept, [r.reason for r in builder.removed]


def test_a_larger_count_that_waits_days_for_capacity_does_not_dominate_one_that_starts_now() -> (
    None
):
    # 64 GPUs start within the hour; 256 run 3.4x faster for the same money but wait five days to be
    # provisioned: a deadline of a day needs the 64, so both stay
    now = _option(0, 64, cost=510_910, duration_min=226, startup_min=60)
    later = _option(1, 256, cost=510_910, duration_min=66, startup_min=7200)
    kept, reasons = _prune([now, later])
    assert kept == [now, later] and not reasons


def test_a_count_no_dearer_no_later_and_faster_dominates() -> None:
    slow = _option(0, 64, cost=510_910, duration_min=226, startup_min=60)
    fast = _option(1, 128, cost=510_910, duration_min=120, startup_min=60)
    kept, reasons = _prune([slow, fast])
    assert kept == [fast]
    (reason,) = reasons
    assert (
        reason.startswith("128x h800 on the same offer is as cheap or cheaper")
        and "starts as soon" in reason
    )
