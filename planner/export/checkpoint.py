"""How often an export saves a checkpoint: the plan's checkpoint interval in optimizer steps.

The reliability model (planner/estimate/reliability.py) computes the Young/Daly interval from the
job's MTBF and the time to write one checkpoint; the estimate gives the time of one optimizer step.
Megatron-LM needs the number: `--save` without `--save-interval` fails `validate_args` (`assert
args.save_interval is not None`, megatron/training/arguments.py).
"""

from __future__ import annotations

from plan.planner.export.layout import ExportLayout

FALLBACK_CHECKPOINTS = 10
"""Checkpoints per run when the plan carries no interval (assumed: a hand-built plan, or free
checkpoints)."""


def save_interval_steps(layout: ExportLayout) -> tuple[int, str]:
    """(optimizer steps between checkpoints, the sentence that says where the number comes from)."""
    steps = layout.train_steps
    if layout.checkpoint_interval_h > 0 and layout.step_time_s > 0:
        every = max(1, min(steps, round(layout.checkpoint_interval_h * 3600 / layout.step_time_s)))
        return every, (
            f"checkpoint every {every} steps: the plan's checkpoint interval of "
            f"{layout.checkpoint_interval_h:.2f} h (Young/Daly optimum from the job's MTBF and "
            f"checkpoint write time) at {layout.step_time_s:.2f} s per step"
        )
    every = max(1, -(-steps // FALLBACK_CHECKPOINTS))
    return every, (
        f"checkpoint every {every} steps (assumed: the plan carries no checkpoint interval, so "
        f"{FALLBACK_CHECKPOINTS} checkpoints over the run's {steps} steps)"
    )
