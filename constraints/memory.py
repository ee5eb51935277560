"""Memory: only layouts that fit in the card's memory become candidates; the margin is reported.

Nothing is posted: a candidate exists only if the estimator found a fitting layout. Options that
fit in no layout are recorded as removed under this group, so "why not 1x A800?" has an answer.
"""

from __future__ import annotations

GROUP = "memory"


def reason(model_id: str, gpus: int, gpu: str, least_gib: float | None, card_gib: float) -> str:
    if least_gib is None:
        return f"no valid layout of {model_id} on {gpus}x {gpu}"
    return (f"no layout of {model_id} fits on {gpus}x {gpu}: the leanest needs {least_gib:.1f} GiB "
            f"per GPU, the card has {card_gib:.0f} GiB")
