"""Advice on an estimate: what an expert changes before renting more GPUs; what offloading rests on.

Three parts, shared by `plan estimate` (a layout spec, changed by `MemorySaver.spec`) and the
planner's explanations (`plan solve`: a scenario's job, changed by `MemorySaver.field` = `to`):

- Memory savers: changes to how a job trains that lower its memory, a leaner optimizer
  (`LEANER_OPTIMIZERS`), a fused loss or fused layers (`STACK_SETTINGS`).
- Offload notes: the layout search (and the planner's candidates) offloads the model states to
  host memory only where nothing fits without it, since that speed rests on assumed host figures
  (the CPU optimizer step's memory traffic, the host memory per GPU) and an assumption must not
  silently decide a plan. Where the offloaded layout is estimated clearly faster all the same,
  the user is told, with what it rests on; where it offloaded, which settings fit without it, or
  why the host cannot take the states.
- What would fit: where nothing fits, which flag of `plan estimate` would make a layout fit (a
  searched recomputation, Megatron-FSDP sharding, a leaner optimizer, a fused loss or layers, CPU
  offload), each with the layout it finds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from plan.models.methods import ADAPTER_METHODS, QLORA_METHODS
from plan.models.model_card import ModelCard
from plan.models.scenario import Job
from plan.models.stacks import may_run, stated_has, stated_lacks
from plan.planner.estimate.cluster import Cluster
from plan.planner.estimate.factors import CPU_OPTIMIZER_BYTES_PER_S
from plan.planner.estimate.memory import HOST_MEMORY_GIB_PER_GPU, HOST_SHORTFALL_NOTE
from plan.planner.estimate.search import search_layout
from plan.planner.estimate.types import Estimate, LayoutSpec
from plan.planner.i18n import TABLES
from plan.planner.i18n.said import Said, say

# Memory savers


@dataclass(frozen=True)
class MemorySaver:
    field: str  # the scenario job's field; with dashes, `plan estimate`'s flag
    to: str  # its value, as a scenario and the flag write it
    spec: tuple[tuple[str, object], ...]  # the same change to a LayoutSpec (estimator ids)
    # (method, framework or None when searched, precision, fixed ZeRO stage or None): whether it
    # applies
    applies: Callable[[str, str | None, str, int | None], bool]
    key: str  # the message saying what it is and what it saves (`why` in English)

    @property
    def why(self) -> str:
        """What it is and what it saves, in English (as plans explain it)."""
        return TABLES["en"][self.key]

    @property
    def setting(self) -> str:
        """As `plan estimate` takes it: "--loss fused"."""
        return f"--{self.field.replace('_', '-')} {self.to}"


LEANER_OPTIMIZERS: tuple[MemorySaver, ...] = (
    # full-parameter jobs on Megatron: NeMo's performance recipes run it (its distributed optimizer:
    # ZeRO-1)
    MemorySaver("optimizer", "adamw-precision-aware", (("optimizer", "adam_precision_aware"),),
                lambda method, framework, precision, zero: method not in ADAPTER_METHODS
                and may_run(framework, "distributed_optimizer") and zero in (None, 1),
                "saver.precision_aware"),
    # LoRA and QLoRA: the QLoRA recipe's optimizer (Dettmers et al. 2023), on the PyTorch stacks
    MemorySaver("optimizer", "paged-adamw-8bit", (("optimizer", "paged_adam_8bit"),),
                lambda method, framework, precision, zero: method in ADAPTER_METHODS
                and may_run(framework, "pytorch_optimizers"),
                "saver.paged_adapters"),
    # full-parameter jobs on the PyTorch stacks: torchtune's default training, then its low-memory
    # recipe
    MemorySaver("optimizer", "adamw-bf16", (("optimizer", "adam_bf16"),),
                lambda method, framework, precision, zero: method not in ADAPTER_METHODS
                and may_run(framework, "pytorch_optimizers") and precision == "bf16",
                "saver.adamw_bf16"),
    MemorySaver("optimizer", "paged-adamw-8bit", (("optimizer", "paged_adam_8bit"),),
                lambda method, framework, precision, zero: method not in ADAPTER_METHODS
                and may_run(framework, "pytorch_optimizers"),
                "saver.paged_full"),
)
"""Leaner optimizers than mixed-precision AdamW, from the smallest saving up: `plan estimate`
names the first that fits, an infeasible scenario offers each that does."""

STACK_SETTINGS: tuple[MemorySaver, ...] = (
    # at 128k-152k-token vocabularies a micro-batch's fp32 logits are gigabytes
    MemorySaver(
        "loss",
        "fused",
        (("loss", "fused"),),
        lambda method, framework, precision, zero: may_run(framework, "leaner_losses"),
        "saver.loss_fused",
    ),
    MemorySaver(
        "kernels",
        "fused",
        (("fused_modules", True),),
        lambda method, framework, precision, zero: not stated_has(framework, "fused_layers"),
        "saver.kernels_fused",
    ),
)
"""How a PyTorch stack runs the job: each alone, and where neither alone fits both together, as
Liger and Unsloth run them."""


def applies_to_job(saver: MemorySaver, job: Job) -> bool:
    """Whether the saver applies to a scenario's job and changes it (an optimizer replaces
    mixed-precision AdamW only)."""
    replaces_adamw = saver.field != "optimizer" or job.optimizer == "adamw"
    if getattr(job, saver.field) == saver.to or not replaces_adamw:
        return False
    zero = job.layout.zero if job.layout else None
    return saver.applies(job.method, job.framework, job.precision, zero)


# Offload notes

OFFLOAD_NOTE_GAIN = 0.10
"""How much faster a layout with the model states in host memory must be estimated before it is
said."""


def faster_offloaded(chosen_tokens_per_s: float, offloaded: Estimate | None) -> float | None:
    """The offloaded layout's gain over the chosen one's speed (0.57: 57% faster), where it offloads
    and reaches OFFLOAD_NOTE_GAIN; None otherwise."""
    if offloaded is None or not offloaded.layout.state_offload or chosen_tokens_per_s <= 0:
        return None
    gain = offloaded.tokens_per_s / chosen_tokens_per_s - 1
    return gain if gain >= OFFLOAD_NOTE_GAIN else None


def offload_note(setting: str, gain: float, offloaded: Estimate) -> str:
    """`setting` (as the user would turn it on: "--cpu-offload on", "cpu_offload: true") is
    estimated `gain` faster with `offloaded`'s layout, and why it was left out (plain English, as
    a plan's explanation quotes it; `plan estimate` says `_offload_said`)."""
    return str(_offload_said(setting, gain, offloaded))


def _offload_said(setting: str, gain: float, offloaded: Estimate) -> str:
    host = offloaded.cluster.host_memory_gib_per_gpu
    return say("advice.offload_faster", setting=setting, gain=gain,
               tps=offloaded.tokens_per_s, layout=offloaded.layout.short(),
               cpu_gbps=CPU_OPTIMIZER_BYTES_PER_S / 1e9,
               host_gib=HOST_MEMORY_GIB_PER_GPU if host is None else host)


ROOMY_GPU_GIB = 1e6
"""A card that holds any layout: where what a layout needs from the host is looked up whatever the
GPU."""


def on_roomy_card(cluster: Cluster) -> Cluster:
    """The cluster with cards of ROOMY_GPU_GIB."""
    roomy = cluster.gpu.model_copy(update={"memory_gib": ROOMY_GPU_GIB})
    return dataclasses.replace(cluster, gpu=roomy)


def host_shortfall(offloaded: Estimate | None) -> str | None:
    """The note of an offloaded estimate saying its model states exceed the host memory per GPU
    (FSDP and DeepSpeed then keep them all on the GPU), without its 'CPU offload: ' label; None
    where they fit."""
    note = _shortfall_note(offloaded)
    return note.removeprefix("CPU offload: ") if note else None


def _shortfall_note(offloaded: Estimate | None) -> str | None:
    """The offloaded estimate's note that its model states exceed the host memory per GPU."""
    if offloaded is None:
        return None
    return next((n for n in offloaded.notes if n.startswith(HOST_SHORTFALL_NOTE)), None)


def _shortfall_body(note: str) -> str:
    """The shortfall note without its 'CPU offload: ' label, still in the reader's language where
    it is keyed."""
    if isinstance(note, Said) and note.key == "memory.shortfall":
        return say("memory.shortfall_body", **note.fields)
    return note.removeprefix("CPU offload: ")


def fitting_without_offload(
        applies: Callable[[MemorySaver], bool],
        fits: Callable[[MemorySaver], Estimate | None]) -> list[tuple[MemorySaver, Estimate]]:
    """The settings an expert tries before offloading, in order, with the layout each fits
    without it: each of a PyTorch stack's (a fused loss, fused layers), and of the leaner
    optimizers the least change that fits. `applies`: whether a saver applies to the job and
    changes it; `fits`: the fastest layout with it and nothing in host memory, or None."""
    found: list[tuple[MemorySaver, Estimate]] = []
    for saver in (*STACK_SETTINGS, *LEANER_OPTIMIZERS):
        leaner_optimizer = saver in LEANER_OPTIMIZERS
        has_leaner = any(s in LEANER_OPTIMIZERS for s, _ in found)
        if (leaner_optimizer and has_leaner) or not applies(saver):
            continue
        layout = fits(saver)
        if layout is not None:
            found.append((saver, layout))
    return found


# What would fit: `plan estimate`'s hints, each a search of the spec with one change


def _fits_with(flag: str, card: ModelCard, method: str, cluster: Cluster, spec: LayoutSpec,
               **change: Any) -> str | None:
    """"with FLAG it fits: layout at N GiB" where the spec changed so has a layout that fits, else
    None (a combination the search refuses, such as an optimizer the forced stack cannot run,
    included). A change that drops the headroom asks whether it fits the whole card, and is told as
    that."""
    try:
        found = search_layout(card, method, cluster, dataclasses.replace(spec, **change)).best
    except ValueError:
        return None
    if found is None:
        return None
    card_only = change.get("memory_headroom") == 0 < spec.memory_headroom
    fits = say("advice.fits_card") if card_only else say("advice.fits")
    return say("advice.fits_with", flag=flag, fits=fits, layout=found.layout.short(),
               gib=found.memory.total_gib)


def _saver_hint(saver: MemorySaver, card: ModelCard, method: str, cluster: Cluster,
                spec: LayoutSpec) -> str | None:
    flag = say("advice.setting_why", setting=saver.setting, why=say(saver.key))
    return _fits_with(flag, card, method, cluster, spec, **dict(saver.spec))


def _applies(saver: MemorySaver, method: str, spec: LayoutSpec) -> bool:
    """Whether the saver applies to this spec and is not already in it."""
    return (saver.applies(method, spec.framework, spec.precision, spec.zero)
            and not all(getattr(spec, key) == value for key, value in saver.spec))


def _leaner_optimizer_hint(card: ModelCard, method: str, cluster: Cluster,
                           spec: LayoutSpec) -> str | None:
    """When plain mixed-precision Adam fits nowhere, the least change of optimizer an expert
    would try before renting more GPUs that fits (`LEANER_OPTIMIZERS`, from the smallest saving
    up; an infeasible scenario offers the same)."""
    if spec.optimizer != "adam":
        return None
    return next((hint for saver in LEANER_OPTIMIZERS if _applies(saver, method, spec)
                 and (hint := _saver_hint(saver, card, method, cluster, spec))), None)


def without_offload_hints(card: ModelCard, method: str, cluster: Cluster, spec: LayoutSpec,
                          chosen: Estimate) -> list[str]:
    """Where the search offloaded to host memory (the model states or activations: its last
    resort, with a speed that rests on assumed host figures) and the user asked for neither, the
    settings an expert tries first that fit without offloading (a PyTorch stack's fused loss and
    layers, a leaner optimizer), each with its speed beside the offloaded one."""
    lay = chosen.layout
    asked = spec.state_offload is not None or spec.recompute in ("offload", "full_offload")
    if not (lay.state_offload or lay.host_activations) or asked:
        return []

    def fits(saver: MemorySaver) -> Estimate | None:
        change: dict[str, Any] = {"state_offload": False, **dict(saver.spec)}
        try:
            found = search_layout(card, method, cluster, dataclasses.replace(spec, **change)).best
        except ValueError:
            return None
        return None if found is None or found.layout.host_activations else found

    def applies(saver: MemorySaver) -> bool:
        leaner_optimizer = saver in LEANER_OPTIMIZERS
        return _applies(saver, method, spec) and (not leaner_optimizer or spec.optimizer == "adam")

    return [say("advice.without_offload", setting=saver.setting, why=say(saver.key),
                layout=found.layout.short(), gib=found.memory.total_gib,
                tps=found.tokens_per_s, offloaded=chosen.tokens_per_s)
            for saver, found in fitting_without_offload(applies, fits)]


def _setting_hints(card: ModelCard, method: str, cluster: Cluster, spec: LayoutSpec) -> list[str]:
    """When nothing fits, which of a PyTorch stack's settings would (`STACK_SETTINGS`: a fused
    loss, fused layers): each alone, and where none alone does, all together, as Liger and
    Unsloth run them. A flag, not more GPUs."""
    open_ = [saver for saver in STACK_SETTINGS if _applies(saver, method, spec)]
    alone = [hint for saver in open_ if (hint := _saver_hint(saver, card, method, cluster, spec))]
    if alone or len(open_) < 2:
        return alone
    flags = say("advice.both", settings=" ".join(saver.setting for saver in open_))
    changes = {key: value for saver in open_ for key, value in saver.spec}
    together = _fits_with(flags, card, method, cluster, spec, **changes)
    return [together] if together else []


def _recompute_hint(card: ModelCard, method: str, cluster: Cluster, spec: LayoutSpec) -> str | None:
    """When the recomputation the user fixed leaves nothing fitting, whether a searched one (full,
    Megatron's block recomputation of some layers, offload) would, and at what cost in the layout it
    finds."""
    if spec.recompute not in ("none", "selective") or spec.recompute_layers is not None:
        return None
    flag = say("advice.recompute_searched", recompute=spec.recompute)
    return _fits_with(flag, card, method, cluster, spec, recompute=None)


def _sharded_states_hint(card: ModelCard, method: str, cluster: Cluster,
                         spec: LayoutSpec) -> str | None:
    """When nothing fits on Megatron's distributed optimizer (ZeRO-1: every rank keeps whole fp32
    gradient buffers and 16-bit weights), whether Megatron-FSDP sharding the gradients (ZeRO-2),
    then the weights too (ZeRO-3), over the data-parallel ranks would: Llama 3 405B's data
    parallelism sharded its gradients and optimizer states (Llama Team 2024, section 3.3.2).
    Never searched (no calibration row measures that stack), so offered by name; where neither
    fits within the headroom, whether one fits the card itself."""
    if (method in QLORA_METHODS or stated_lacks(spec.framework, "distributed_optimizer")
            or spec.zero not in (None, 0, 1)):
        return None
    for headroom in dict.fromkeys((spec.memory_headroom, 0.0)):
        for zero, sharded in ((2, "advice.sharded_grads"), (3, "advice.sharded_both")):
            flag = say("advice.megatron_fsdp", zero=zero, sharded=say(sharded))
            hint = _fits_with(flag, card, method, cluster, spec, framework="megatron", zero=zero,
                              memory_headroom=headroom)
            if hint:
                return hint
    return None


def _cpu_offload_hint(card: ModelCard, method: str, cluster: Cluster,
                      spec: LayoutSpec) -> str | None:
    """When the user turned CPU offload off and nothing fits, whether ZeRO-3 with the states on
    the host would."""
    if spec.state_offload is not False:
        return None
    flag = say("advice.cpu_offload_flag")
    return _fits_with(flag, card, method, cluster, spec, state_offload=True)


def what_would_fit(card: ModelCard, method: str, cluster: Cluster, spec: LayoutSpec) -> list[str]:
    """Where no layout of `spec` fits, each flag that would give one that does, in the order they
    are told: a searched recomputation, Megatron-FSDP's sharding, a leaner optimizer, a PyTorch
    stack's fused loss or layers, CPU offload."""
    hints = (_cpu_offload_hint(card, method, cluster, spec),
             *_setting_hints(card, method, cluster, spec),
             _leaner_optimizer_hint(card, method, cluster, spec),
             _sharded_states_hint(card, method, cluster, spec),
             _recompute_hint(card, method, cluster, spec))
    return [hint for hint in reversed(hints) if hint]


def offload_refused(card: ModelCard, method: str, cluster: Cluster, spec: LayoutSpec) -> str:
    """Why --cpu-offload on left the layout on the GPU: the host cannot hold the states (FSDP and
    DeepSpeed offload them all or none), or the layout the user fixed cannot offload."""
    cannot = say("advice.cannot_offload")
    if (stated_lacks(spec.framework, "state_offload") or spec.tp not in (None, 1)
            or spec.pp not in (None, 1)
            or spec.zero not in (None, 3)):
        return cannot
    # the offloadable layout on a card that holds anything: what its states need from the host, said
    forced = dataclasses.replace(spec, state_offload=True, framework=spec.framework or "fsdp",
                                 zero=3, tp=1, pp=1)
    try:
        note = _shortfall_note(search_layout(card, method, on_roomy_card(cluster), forced).best)
    except ValueError:
        return cannot
    if note is None:
        return cannot
    return say("advice.host_refused", short=_shortfall_body(note))


def faster_offloaded_hint(card: ModelCard, method: str, cluster: Cluster, spec: LayoutSpec,
                          chosen: Estimate) -> str | None:
    """Where the search left offloading out and ZeRO-3 with the states in host memory is estimated
    clearly faster, say so, with the assumptions it rests on (`offload_note`)."""
    if spec.state_offload is not None or chosen.layout.state_offload:
        return None
    try:
        offloaded = search_layout(card, method, cluster,
                                  dataclasses.replace(spec, state_offload=True)).best
    except ValueError:
        return None
    gain = faster_offloaded(chosen.tokens_per_s, offloaded)
    if gain is None or offloaded is None:
        return None
    return _offload_said("--cpu-offload on", gain, offloaded)
