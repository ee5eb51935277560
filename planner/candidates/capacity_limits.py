"""How many GPUs of an offer one customer can get, and how long until a job can start on them.

Reads the platform's `limits.capacity` entries (most specific wins). Above `max_gpus` an allocation
needs a reservation with the vendor, up to `reservation_max_gpus`, and waits its lead time. Where
the catalog has no entry, one node is assumed (and every plan that relies on it says so).
"""

from __future__ import annotations

from dataclasses import dataclass

from plan.models.platform import Offer, Platform
from plan.planner.i18n.said import say, word


@dataclass(frozen=True)
class Allowance:
    max_gpus: int  # without a reservation
    reservation_max_gpus: int | None
    startup_h: float
    reservation_startup_h: float
    note: str | None  # the assumption behind the figures, if any

    @property
    def ceiling(self) -> int:
        """The largest allocation one customer can get at all."""
        return max(self.max_gpus, self.reservation_max_gpus or 0)

    def needs_reservation(self, gpus: int) -> bool:
        return gpus > self.max_gpus

    def startup_for(self, gpus: int) -> float:
        return self.reservation_startup_h if self.needs_reservation(gpus) else self.startup_h


def allowance(platform: Platform, offer: Offer, gpus_per_node: int) -> Allowance:
    entry = platform.limits.capacity_for(offer.gpu, offer.billing)
    if entry is None:
        return Allowance(gpus_per_node, None, 0.0, 0.0,
                         f"no capacity figure for {offer.gpu} ({offer.billing}) on {platform.id}: "
                         f"assumed one node ({gpus_per_node} GPUs) per customer and no start-up "
                         "delay")
    note = None
    if entry.assumed:
        note = say(
            "note.capacity", gpu=offer.gpu, billing=word("billing", offer.billing),
            platform=platform.id, max=entry.max_gpus,
            reserved=say("note.capacity_reserved", n=entry.reservation_max_gpus)
            if entry.reservation_max_gpus else "",
            startup=entry.startup_h, note=entry.assumption)
    reserve_h = (
        entry.reservation_startup_h if entry.reservation_startup_h is not None else entry.startup_h
    )
    return Allowance(entry.max_gpus, entry.reservation_max_gpus, entry.startup_h, reserve_h, note)
