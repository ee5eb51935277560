"""Memory: only layouts that fit in the card's memory, less the headroom kept free, become
candidates.

Nothing is posted: a candidate exists only if the estimator found a fitting layout. Options that
fit in no layout are recorded as removed under this group, so "why not 1x A800?" has an answer.
"""

from __future__ import annotations

GROUP = "memory"


def usable_gib(card_gib: float, headroom: float, band_factor: float = 1.0) -> float:
    """What a layout's estimate may use of a card: (1 - headroom) x its memory, in GiB, divided by
    the error band's factor at the scenario's confidence (1 for the point estimate)."""
    return card_gib * (1.0 - headroom) / band_factor


def reason(model_id: str, gpus: int, gpu: str, least_gib: float | None, card_gib: float,
           headroom: float = 0.0, band_factor: float = 1.0) -> str:
    if least_gib is None:
        return f"no valid layout of {model_id} on {gpus}x {gpu}"
    kept = (f" less {headroom:.0%} headroom" if headroom else "") + (
        f", with the estimate's band at x{band_factor:.2f}" if band_factor != 1.0 else "")
    if kept:
        kept += f" = {usable_gib(card_gib, headroom, band_factor):.1f} GiB usable"
    return (f"no layout of {model_id} fits on {gpus}x {gpu}: the leanest needs {least_gib:.1f} GiB "
            f"per GPU, the card has {card_gib:.0f} GiB{kept}")
