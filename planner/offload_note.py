"""The note an estimate or a plan carries where offloading the model states would be clearly faster.

The layout search (and the planner, candidates.py) offloads the model states to host memory only where
nothing fits without it: that speed rests on assumed host figures (the CPU optimizer step's memory
traffic, the host memory per GPU), and an assumption must not silently decide a plan. Where the offloaded
layout is estimated clearly faster all the same, the user is told, with what it rests on, and decides
after measuring. One wording serves `plan estimate` and `plan solve`.
"""

from __future__ import annotations

from plan.planner.estimate import Estimate
from plan.planner.estimate.factors import CPU_OPTIMIZER_BYTES_PER_S
from plan.planner.estimate.memory import HOST_MEMORY_GIB_PER_GPU

OFFLOAD_NOTE_GAIN = 0.10
"""How much faster a layout with the model states in host memory must be estimated before it is said."""


def faster_offloaded(chosen_tokens_per_s: float, offloaded: Estimate | None) -> float | None:
    """The offloaded layout's gain over the chosen one's speed (0.57: 57% faster), where it offloads and
    reaches OFFLOAD_NOTE_GAIN; None otherwise."""
    if offloaded is None or not offloaded.layout.state_offload or chosen_tokens_per_s <= 0:
        return None
    gain = offloaded.tokens_per_s / chosen_tokens_per_s - 1
    return gain if gain >= OFFLOAD_NOTE_GAIN else None


def offload_note(setting: str, gain: float, offloaded: Estimate) -> str:
    """`setting` (as the user would turn it on: "--cpu-offload on", "cpu_offload: true") is estimated `gain`
    faster with `offloaded`'s layout, and why it was left out."""
    host = offloaded.cluster.host_memory_gib_per_gpu
    host_gib = HOST_MEMORY_GIB_PER_GPU if host is None else host
    return (f"{setting} (ZeRO-3 with the states in host memory) is estimated {gain:.0%} faster: "
            f"{offloaded.tokens_per_s:,.0f} tokens/s with {offloaded.layout.short()}; left out because the search "
            f"offloads only where nothing fits without it: that speed rests on assumed host figures (the CPU "
            f"optimizer step at {CPU_OPTIMIZER_BYTES_PER_S / 1e9:g} GB/s of host memory traffic per GPU, "
            f"{host_gib:g} GiB of host memory per GPU, no measurement); measure a step before relying on it")
