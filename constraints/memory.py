"""Memory: only layouts that fit in the card's memory, less the headroom kept free, become
candidates.

Nothing is posted: a candidate exists only if the estimator found a fitting layout. Options that
fit in no layout are recorded as removed under this group, so "why not 1x A800?" has an answer.
"""

from __future__ import annotations

from plan.models.said import say_as

GROUP = "memory"


def usable_gib(card_gib: float, headroom: float, band_factor: float = 1.0) -> float:
    """What a layout's estimate may use of a card: (1 - headroom) x its memory, in GiB, divided by
    the error band's factor at the scenario's confidence (1 for the point estimate)."""
    return card_gib * (1.0 - headroom) / band_factor


def reason(model_id: str, gpus: int, gpu: str, least_gib: float | None, card_gib: float,
           headroom: float = 0.0, band_factor: float = 1.0) -> str:
    if least_gib is None:
        return say_as("rule.memory_no_layout", "no valid layout of {model} on {gpus}x {gpu}",
                      model=model_id, gpus=gpus, gpu=gpu)
    less = (say_as("rule.memory_headroom", " less {headroom:.0%} headroom", headroom=headroom)
            if headroom else "")
    band = (say_as("rule.memory_band", ", with the estimate's band at x{factor:.2f}",
                   factor=band_factor) if band_factor != 1.0 else "")
    usable = (say_as("rule.memory_usable", " = {gib:.1f} GiB usable",
                     gib=usable_gib(card_gib, headroom, band_factor)) if less or band else "")
    return say_as("rule.memory", "no layout of {model} fits on {gpus}x {gpu}: the leanest needs "
                  "{least:.1f} GiB per GPU, the card has {card:.0f} GiB{less}{band}{usable}",
                  model=model_id, gpus=gpus, gpu=gpu, least=least_gib, card=card_gib, less=less,
                  band=band, usable=usable)
