"""Memory: only layouts that fit in the card's memory, less the headroom kept free, become candidates.

Nothing is posted: a candidate exists only if the estimator found a fitting layout. Options that
fit in no layout are recorded as removed under this group, so "why not 1x A800?" has an answer.
"""

from __future__ import annotations

GROUP = "memory"


def usable_gib(card_gib: float, headroom: float) -> float:
    """What a layout may use of a card: (1 - headroom) x its memory, in GiB."""
    return card_gib * (1.0 - headroom)


def reason(model_id: str, gpus: int, gpu: str, least_gib: float | None, card_gib: float,
           headroom: float = 0.0) -> str:
    if least_gib is None:
        return f"no valid layout of {model_id} on {gpus}x {gpu}"
    kept = f" less {headroom:.0%} headroom = {usable_gib(card_gib, headroom):.1f} GiB usable" if headroom else ""
    return (f"no layout of {model_id} fits on {gpus}x {gpu}: the leanest needs {least_gib:.1f} GiB "
            f"per GPU, the card has {card_gib:.0f} GiB{kept}")
