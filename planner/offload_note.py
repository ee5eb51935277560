"""The note an estimate or a plan carries where offloading the model states would be clearly faster.

The layout search (and the planner, candidates.py) offloads the model states to host memory only where
nothing fits without it: that speed rests on assumed host figures (the CPU optimizer step's memory
traffic, the host memory per GPU), and an assumption must not silently decide a plan. Where the offloaded
layout is estimated clearly faster all the same, the user is told, with what it rests on, and decides
after measuring; and where it offloaded, which settings would fit without it, or why the host cannot take
the states. One wording and one order serve `plan estimate` and `plan solve`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from plan.planner.estimate import Cluster, Estimate
from plan.planner.estimate.factors import CPU_OPTIMIZER_BYTES_PER_S
from plan.planner.estimate.memory import HOST_MEMORY_GIB_PER_GPU, HOST_SHORTFALL_NOTE
from plan.planner.memory_savers import LEANER_OPTIMIZERS, STACK_SETTINGS, MemorySaver

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


ROOMY_GPU_GIB = 1e6
"""A card that holds any layout: where what a layout needs from the host is looked up whatever the GPU."""


def on_roomy_card(cluster: Cluster) -> Cluster:
    """The cluster with cards of ROOMY_GPU_GIB."""
    return dataclasses.replace(cluster, gpu=cluster.gpu.model_copy(update={"memory_gib": ROOMY_GPU_GIB}))


def host_shortfall(offloaded: Estimate | None) -> str | None:
    """The note of an offloaded estimate saying its model states exceed the host memory per GPU (FSDP and
    DeepSpeed then keep them all on the GPU), without its 'CPU offload: ' label; None where they fit."""
    note = next((n for n in offloaded.notes if n.startswith(HOST_SHORTFALL_NOTE)), None) if offloaded else None
    return note.removeprefix("CPU offload: ") if note else None


def fitting_without_offload(applies: Callable[[MemorySaver], bool],
                            fits: Callable[[MemorySaver], Estimate | None]) -> list[tuple[MemorySaver, Estimate]]:
    """The settings an expert tries before offloading, in order, with the layout each fits without it: each of
    a PyTorch stack's (a fused loss, fused layers), and of the leaner optimizers the least change that fits.
    `applies`: whether a saver applies to the job and changes it; `fits`: the fastest layout with it and
    nothing in host memory, or None."""
    found: list[tuple[MemorySaver, Estimate]] = []
    for saver in (*STACK_SETTINGS, *LEANER_OPTIMIZERS):
        leaner_optimizer = saver in LEANER_OPTIMIZERS
        if (leaner_optimizer and any(s in LEANER_OPTIMIZERS for s, _ in found)) or not applies(saver):
            continue
        layout = fits(saver)
        if layout is not None:
            found.append((saver, layout))
    return found
