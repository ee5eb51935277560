"""What spot capacity costs beyond its price: preemptions, and waiting for capacity to come back.

The estimator's run already holds the work lost since the last checkpoint and the restart time of
every interruption (failures and preemptions alike, Young/Daly). What it cannot know is the market:
after a preemption the job waits until the platform has spot capacity again. Per job:

    preemptions = nodes x preemptions_per_node_day / 24 x run hours
    wait_h      = preemptions x capacity_return_h                (added to the duration)
    held_h      = wait_h x (nodes - 1) / nodes                   (added to the billed hours)

`held_h` bills the surviving nodes of a multi-node job, which stay allocated while the lost one is
replaced; a one-node job pays nothing while it waits.
"""

from __future__ import annotations

from dataclasses import dataclass

from plan.models.figures import SpotFigures
from plan.models.platform import Platform


@dataclass(frozen=True)
class SpotRisk:
    preemptions: float
    wait_h: float
    held_h: float  # per GPU, billed on top of the run
    assumption: str

    def figures(self) -> SpotFigures:
        """The figures a plan shows (to 0.01)."""
        return SpotFigures(preemptions=round(self.preemptions, 2),
                           capacity_wait_h=round(self.wait_h, 2), held_h=round(self.held_h, 2))


def spot_risk(
    platform: Platform, nodes: int, preemptions_per_node_day: float, run_hours: float
) -> SpotRisk:
    """Raises ValueError when the platform sells no spot (the catalog forbids such offers)."""
    market = platform.spot
    if market is None:
        raise ValueError(f"{platform.id} sells no spot capacity")
    preemptions = nodes * preemptions_per_node_day / 24.0 * run_hours
    wait_h = preemptions * market.capacity_return_h
    held_h = wait_h * (nodes - 1) / nodes
    rule = market.assumption if market.assumed and market.assumption else market.source
    note = (f"spot on {platform.id}: {preemptions_per_node_day:g} preemption(s) per node per day "
            f"(no platform publishes a rate); {market.capacity_return_h:g} h to get capacity back "
            f"after each: {rule}")
    return SpotRisk(preemptions, wait_h, held_h, note)
