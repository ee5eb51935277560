"""`plan estimate`: memory, step time, throughput and run hours of one (model, method, GPU, count).

Fields of the layout that are not given are searched (fastest layout that fits). Bad input prints
one line on stderr and exits 2; a layout that does not fit is still estimated (exit 0, fits false).
Fits means the peak is within the card less `--headroom` (default 8%, as the planner's policy); a layout
that runs on the card but not within the headroom is told apart (`fits_card` in JSON: its peak with the
allocator's cache squeezed, `memory_floor_gib`, within the card), as is one over the card.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from plan.models.catalog import builtin_catalog, load_model_card
from plan.models.errors import InputError, UnknownIdError
from plan.models.limits import MAX_GLOBAL_BATCH, MAX_GPUS, MAX_LORA_RANK, MAX_PARALLEL, MAX_SEQ_LEN, MAX_TOKENS
from plan.models.model_card import ModelCard
from plan.models.platform import Platform
from plan.models.scenario import DEFAULT_MEMORY_HEADROOM, MAX_MEMORY_HEADROOM, loss_not_on_megatron
from plan.models.units import parse_count, parse_seq_len
from plan.planner.cli.common import OutputFormat, console, fail, finite, print_json
from plan.planner.estimate import Cluster, Estimate, LayoutSpec, search_layout
from plan.planner.estimate.types import (
    ADAPTER_METHODS,
    CAUSAL_MFU_NOTE_GAP,
    FRAMEWORKS,
    KERNELS,
    LORA_TARGETS,
    LOSSES,
    METHODS,
    OPTIMIZER_ALIASES,
    OPTIMIZER_NAME_OF,
    OPTIMIZER_NAMES,
    OPTIMIZERS,
    PRECISIONS,
    QLORA_METHODS,
    RECOMPUTE,
    eager_kernels_on_megatron,
)
from plan.planner.memory_savers import LEANER_OPTIMIZERS, STACK_SETTINGS, MemorySaver
from plan.planner.offload_note import (
    faster_offloaded,
    fitting_without_offload,
    host_shortfall,
    offload_note,
    on_roomy_card,
)
from plan.planner.plan import recompute_label

_OPTION_OF_FIELD = {"micro_batch": "--micro-batch", "global_batch": "--global-batch", "seq_len": "--seq-len",
                    "lora_rank": "--lora-rank", "tp x pp x dp": "--tp/--pp", "tp x pp x cp x dp": "--tp/--pp/--cp",
                    "gpus": "--gpus", "virtual_pipeline": "--vpp"}


def _as_cli_message(message: str) -> str:
    """'tp: ...' -> '--tp: ...' so the user sees the option they typed."""
    match = re.match(r"([a-z_ x]+):", message)
    if not match:
        return message
    name = match.group(1)
    option = _OPTION_OF_FIELD.get(name, "--" + name.replace("_", "-"))
    return option + message[len(name):]


def _load_model(wanted: str) -> ModelCard:
    path = Path(wanted)
    if path.suffix.lower() in (".yaml", ".yml") or path.is_file():
        if not path.is_file():
            fail(f"--model: no such model-card file: {wanted}")
        try:
            return load_model_card(path)
        except InputError as exc:
            fail([f"--model: {line}" for line in exc.problems][:1])
    try:
        return builtin_catalog().model(wanted)
    except UnknownIdError as exc:
        fail(f"--model: {exc}")


def _choice(option: str, value: str | None, allowed: tuple[str, ...]) -> None:
    if value is not None and value not in allowed:
        fail(f"{option}: {value!r} is not one of {', '.join(allowed)}")


def estimate_command(
    model: Annotated[str | None, typer.Option(
        "--model", help="catalog model id/alias, or a model-card YAML file")] = None,
    method: Annotated[str | None, typer.Option("--method", help=" | ".join(METHODS))] = None,
    gpu: Annotated[str | None, typer.Option("--gpu", help="catalog GPU id or alias")] = None,
    gpus: Annotated[int | None, typer.Option("--gpus", help="number of GPUs")] = None,
    tp: Annotated[int | None, typer.Option("--tp", help="tensor-parallel size (searched if omitted)")] = None,
    pp: Annotated[int | None, typer.Option("--pp", help="pipeline stages (searched if omitted)")] = None,
    zero: Annotated[int | None, typer.Option("--zero", min=0, max=3,
                                             help="ZeRO stage 0-3 (searched if omitted)")] = None,
    recompute: Annotated[str | None, typer.Option(
        "--recompute", help="none | selective | full | full_offload | offload (selective: Megatron's attention "
                            "core; FSDP's op-level policy, as torchtitan. full_offload: full, with the "
                            "checkpoints in host memory, Unsloth's gradient checkpointing; offload: no "
                            "recomputation, every saved activation in host memory)")] = None,
    framework: Annotated[str | None, typer.Option(
        "--framework", help="megatron | deepspeed | fsdp (searched if omitted)")] = None,
    recompute_layers: Annotated[int | None, typer.Option(
        "--recompute-layers", min=1, help="Megatron block recomputation: layers recomputed per model chunk "
                                          "(implies --recompute full; chosen when needed if omitted)")] = None,
    cp: Annotated[int | None, typer.Option("--cp", help="context-parallel size (searched from 8k tokens)")] = None,
    vpp: Annotated[int | None, typer.Option("--vpp", help="interleaved virtual pipeline stages (searched)")] = None,
    ep: Annotated[int | None, typer.Option(
        "--ep", help="expert-parallel size, MoE models (searched if omitted)")] = None,
    capacity_factor: Annotated[float, typer.Option(
        "--capacity-factor", callback=finite,
        help="MoE: token slots per routed expert relative to an even split, each expert's input padded to them "
             "(GShard-style, Megatron's --moe-expert-capacity-factor with --moe-pad-expert-input-to-capacity): "
             "that many times the experts' FLOPs, activations and all-to-all bytes (default 1: dropless "
             "routing at an even load)")] = 1.0,
    attention: Annotated[str, typer.Option(
        "--attention", help="flash | eager (eager: the s x s scores stored, as Hugging Face's eager attention; "
        "context parallelism then only on DeepSpeed's Ulysses)")] = "flash",
    kernels: Annotated[str | None, typer.Option(
        "--kernels", help="eager | fused: how a PyTorch stack (fsdp, deepspeed) runs the model's layers; eager "
                          "as Hugging Face, torchtune and peft do, fused under torch.compile, Liger or Unsloth "
                          "(fewer saved activations, no host floor); default eager. Megatron is always "
                          "fused")] = None,
    loss: Annotated[str, typer.Option(
        "--loss", help="plain | chunked | fused: how the cross-entropy holds the logits; plain, whole in fp32; "
                       "chunked, the bf16 logits but not their fp32 copy (flash-attn's cross-entropy, "
                       "torchtune's compiled chunked loss); fused, never whole (Liger's fused linear "
                       "cross-entropy, Unsloth's Cut Cross-Entropy). Chunked and fused are a PyTorch stack's "
                       "(fsdp, deepspeed), searched on FSDP when --framework is left out: Megatron's is always "
                       "plain")] = "plain",
    sequence_parallel: Annotated[str | None, typer.Option(
        "--sequence-parallel", help="on | off (default: on when tp > 1)")] = None,
    cpu_offload: Annotated[str | None, typer.Option(
        "--cpu-offload", help="on | off: ZeRO-3 with the parameters, gradients and optimizer states in host "
                              "memory (FSDP/DeepSpeed CPU offload; default: searched where nothing fits without "
                              "it)")] = None,
    hybrid_shard: Annotated[str | None, typer.Option(
        "--hybrid-shard", help="on | off: FSDP hybrid sharding (HSDP: HYBRID_SHARD, torchtitan's "
                               "data_parallel_replicate_degree): ZeRO-2/3 states sharded over one node's GPUs and "
                               "replicated across nodes (default: searched where the data-parallel group spans "
                               "nodes)")] = None,
    optimizer: Annotated[str, typer.Option(
        "--optimizer", help=" | ".join(OPTIMIZER_NAMES))] = "adamw",
    micro_batch: Annotated[int | None, typer.Option("--micro-batch", help="sequences/micro-batch")] = None,
    global_batch: Annotated[int | None, typer.Option("--global-batch", help="sequences per step")] = None,
    seq_len_text: Annotated[str, typer.Option("--seq-len", help="tokens per sequence, e.g. 4096 or 4k")] = "4096",
    precision: Annotated[str, typer.Option("--precision", help="bf16 | fp16 | fp8")] = "bf16",
    lora_rank: Annotated[int | None, typer.Option("--lora-rank", help="LoRA rank (default 16)")] = None,
    lora_targets: Annotated[str | None, typer.Option(
        "--lora-targets", help="all | attention: the linear layers LoRA adapts (default all: q, k, v, o and the "
                               "FFN's; attention: q, k, v, o only)")] = None,
    tokens: Annotated[str | None, typer.Option("--tokens", help="tokens to train on, e.g. 10B")] = None,
    platform: Annotated[str | None, typer.Option(
        "--platform", help="catalog platform: fabric, node size, reliability")] = None,
    output: Annotated[OutputFormat, typer.Option("--format", help="table or json")] = OutputFormat.table,
    headroom: Annotated[float, typer.Option(
        "--headroom", callback=finite, help="fraction of the card kept free; fits means peak <= (1 - headroom) x card"
    )] = DEFAULT_MEMORY_HEADROOM,
    calibration: Annotated[Path | None, typer.Option("--calibration", help="calibration overlay from plan calibrate "
                                                     "(your measured speed)")] = None,
) -> None:
    """Estimate memory per GPU, step time, throughput and (with --tokens) hours and GPU-hours."""
    for option, value, what in (("--model", model, "a catalog model id or name (plan catalog models)"),
                                ("--method", method, f"one of {', '.join(METHODS)}"),
                                ("--gpu", gpu, "a catalog GPU id or name (plan catalog gpus)"),
                                ("--gpus", gpus, "how many GPUs, e.g. --gpus 8")):
        if value is None:
            fail(f"{option}: required: {what}")
    assert model is not None and method is not None and gpu is not None and gpus is not None
    _choice("--method", method, METHODS)
    _choice("--recompute", recompute, RECOMPUTE)
    _choice("--precision", precision, PRECISIONS)
    _choice("--framework", framework, FRAMEWORKS)
    _choice("--attention", attention, ("flash", "eager"))
    _choice("--kernels", kernels, KERNELS)
    _choice("--loss", loss, LOSSES)
    if loss != "plain" and framework == "megatron":
        fail(f"--loss: {loss_not_on_megatron(loss)}")
    _choice("--sequence-parallel", sequence_parallel, ("on", "off"))
    _choice("--cpu-offload", cpu_offload, ("on", "off"))
    _choice("--hybrid-shard", hybrid_shard, ("on", "off"))
    optimizer_id = OPTIMIZER_ALIASES.get(optimizer, optimizer)
    if optimizer_id not in OPTIMIZERS:
        fail(f"--optimizer: {optimizer!r} is not one of {', '.join(OPTIMIZER_NAMES)}")
    if gpus < 1:
        fail(f"--gpus: must be at least 1, got {gpus}")
    try:  # as a scenario's seq_len: 4096, 4k, 32K
        seq_len = parse_seq_len(seq_len_text)
    except ValueError as exc:
        fail(f"--seq-len: {exc}")
    if seq_len < 1:
        fail(f"--seq-len: must be at least 1, got {seq_len_text}")
    for option, value, most in (("--gpus", gpus, MAX_GPUS), ("--tp", tp, MAX_PARALLEL), ("--pp", pp, MAX_PARALLEL),
                                ("--cp", cp, MAX_PARALLEL), ("--vpp", vpp, MAX_PARALLEL), ("--ep", ep, MAX_PARALLEL),
                                ("--micro-batch", micro_batch, MAX_GLOBAL_BATCH),
                                ("--global-batch", global_batch, MAX_GLOBAL_BATCH), ("--seq-len", seq_len, MAX_SEQ_LEN),
                                ("--lora-rank", lora_rank, MAX_LORA_RANK)):
        if value is not None and value > most:  # plan.models.limits: larger values only make the search loop
            fail(f"{option}: at most {most:,}, got {value:,}")
    if not 0 <= headroom <= MAX_MEMORY_HEADROOM:
        fail(f"--headroom: a fraction of the card from 0 to {MAX_MEMORY_HEADROOM:g}, got {headroom:g}")
    if lora_rank is not None and method not in ADAPTER_METHODS:
        fail(f"--lora-rank: only for {', '.join(ADAPTER_METHODS)}, not for {method}")
    _choice("--lora-targets", lora_targets, LORA_TARGETS)
    if lora_targets is not None and method not in ADAPTER_METHODS:
        fail(f"--lora-targets: only for {', '.join(ADAPTER_METHODS)}, not for {method}")
    token_count: float | None = None
    if tokens is not None:
        try:
            token_count = parse_count(tokens)
        except ValueError as exc:
            fail(f"--tokens: {exc}")
        if not 1 <= token_count <= MAX_TOKENS:
            fail(f"--tokens: from 1 to {MAX_TOKENS:g}, got {tokens!r}")
    card = _load_model(model)
    if seq_len > card.max_positions:  # the same cross-check as a scenario's
        fail(f"--seq-len: {seq_len} exceeds {card.id}'s max_positions {card.max_positions}")
    if token_count is not None and token_count < seq_len:
        fail(f"--tokens: {token_count:,.0f} is less than one sequence of --seq-len {seq_len}")
    if token_count is not None and global_batch is not None and global_batch * seq_len > token_count:
        fail(f"--global-batch: one step ({global_batch} x {seq_len} tokens) is more than --tokens ({tokens})")
    catalog = builtin_catalog()
    try:
        gpu_card = catalog.gpu(gpu)
    except UnknownIdError as exc:
        fail(f"--gpu: {exc}")
    plat: Platform | None = None
    if platform is not None:
        try:
            plat = catalog.platform(platform)
        except UnknownIdError as exc:
            fail(f"--platform: {exc}")
    try:
        cluster = Cluster.of(gpu_card, gpus, plat)
    except ValueError as exc:
        fail(_as_cli_message(str(exc)))

    spec = LayoutSpec(tp=tp, pp=pp, zero=zero, recompute=recompute, micro_batch=micro_batch,
                      global_batch=global_batch, seq_len=seq_len, precision=precision,
                      lora_rank=lora_rank if lora_rank is not None else 16, lora_targets=lora_targets or "all",
                      framework=framework, cp=cp,
                      virtual_pipeline=vpp, ep=ep, capacity_factor=capacity_factor,
                      flash_attention=attention == "flash", optimizer=optimizer_id,
                      fused_modules=kernels == "fused", loss=loss,
                      sequence_parallel=None if sequence_parallel is None else sequence_parallel == "on",
                      memory_headroom=headroom, recompute_layers=recompute_layers,
                      batch_limit=max(1, int(token_count // seq_len)) if token_count else None,
                      state_offload=None if cpu_offload is None else cpu_offload == "on",
                      hybrid_shard=None if hybrid_shard is None else hybrid_shard == "on")
    searched: tuple[str, ...] = ()
    nothing_fits = False
    try:
        found = search_layout(card, method, cluster, spec)
        searched = (found.searched + (("cpu_offload",) if cpu_offload is None else ())
                    + (("hybrid_shard",) if hybrid_shard is None else ()))
        result: Estimate | None = found.best
        if result is None:
            nothing_fits = True
            result = found.closest
        if result is None:
            top = "; ".join(f"{r} ({n} layout{'' if n == 1 else 's'})"
                            for r, n in found.reasons.items()) or "no candidates"
            fail(f"--gpus: no valid layout for {card.id} on {gpus} x {gpu_card.id}: {top}")
    except ValueError as exc:
        fail(_as_cli_message(str(exc)))
    assert result is not None
    if calibration is not None:
        from plan.planner.calibrate import Calibration

        try:
            result = Calibration.load(calibration).apply(result, method)
        except InputError as exc:
            fail(exc)
    # Fits, and the margin, against the card less the headroom (what the planner requires).
    usable = spec.usable_gib(result.gpu_memory_gib)
    result = dataclasses.replace(result, fits=result.memory.total_gib <= usable,
                                 margin_gib=usable - result.memory.total_gib)
    notes = list(result.notes)
    if plat is not None and plat.limits.max_gpus_per_job and gpus > plat.limits.max_gpus_per_job:
        notes.insert(0, f"{plat.id} allows at most {plat.limits.max_gpus_per_job} GPUs per job")
    if cpu_offload == "on" and not result.layout.state_offload:
        notes.insert(0, _offload_refused(card, method, cluster, spec))
    if kernels == "eager" and result.layout.framework == "megatron":
        notes.insert(0, eager_kernels_on_megatron("--kernels eager", "--framework fsdp or deepspeed"))
    # (on the uncalibrated estimate: the offloaded one is not calibrated either)
    offload_hint = None if found.best is None else _faster_offloaded_hint(card, method, cluster, spec, found.best)
    if offload_hint:
        notes.append(offload_hint)
    if found.best is not None:
        notes[:0] = _without_offload_hints(card, method, cluster, spec, found.best)
    if result.fits_card and result.memory.total_gib > result.gpu_memory_gib:
        notes.insert(0, f"at the card's limit: the peak PyTorch reserves with room to spare, "
                        f"{result.memory.total_gib:.1f} GiB, is over the {result.gpu_memory_gib:g} GiB card; its "
                        "caching allocator frees cached blocks and retries before failing, so the run needs about "
                        f"{result.memory_floor_gib:.1f} GiB (each retry stalls the GPU: slower; no plan runs there)")
    if nothing_fits:
        for hint in (_cpu_offload_hint(card, method, cluster, spec), *_setting_hints(card, method, cluster, spec),
                     _leaner_optimizer_hint(card, method, cluster, spec),
                     _sharded_states_hint(card, method, cluster, spec), _recompute_hint(card, method, cluster, spec)):
            if hint:
                notes.insert(0, hint)
        within_card = ("; it fits the card itself, which a plan does not run so close to (--headroom)"
                       if result.fits_card else "")
        notes.insert(0, f"nothing fits: the least-memory layout needs {result.memory.total_gib:.1f} GiB "
                        f"of {usable:.1f} GiB usable ({result.gpu_memory_gib:g} GiB less {headroom:.0%} headroom)"
                        f"{within_card}")
    if output is OutputFormat.json:
        data = result.to_dict(token_count)
        data["notes"] = notes
        data["searched"] = list(searched)
        data["memory_headroom"] = headroom
        data["usable_memory_gib"] = round(usable, 3)
        if plat is not None:
            data["platform"] = plat.id
        print_json(data)
        return
    _print_table(result, searched, token_count, notes, plat, headroom)


def _fits_with(flag: str, card: ModelCard, method: str, cluster: Cluster, spec: LayoutSpec,
               **change: Any) -> str | None:
    """"with FLAG it fits: layout at N GiB" where the spec changed so has a layout that fits, else None (a
    combination the search refuses, such as an optimizer the forced stack cannot run, included). A change
    that drops the headroom asks whether it fits the whole card, and is told as that."""
    try:
        found = search_layout(card, method, cluster, dataclasses.replace(spec, **change)).best
    except ValueError:
        return None
    if found is None:
        return None
    card_only = change.get("memory_headroom") == 0 < spec.memory_headroom
    fits = "fits the card, not its headroom" if card_only else "fits"
    return f"with {flag} it {fits}: {found.layout.short()} at {found.memory.total_gib:.1f} GiB"


def _saver_hint(saver: MemorySaver, card: ModelCard, method: str, cluster: Cluster,
                spec: LayoutSpec) -> str | None:
    return _fits_with(f"{saver.setting} ({saver.why})", card, method, cluster, spec, **dict(saver.spec))


def _applies(saver: MemorySaver, method: str, spec: LayoutSpec) -> bool:
    """Whether the saver applies to this spec and is not already in it."""
    return (saver.applies(method, spec.framework, spec.precision, spec.zero)
            and not all(getattr(spec, key) == value for key, value in saver.spec))


def _leaner_optimizer_hint(card: ModelCard, method: str, cluster: Cluster, spec: LayoutSpec) -> str | None:
    """When plain mixed-precision Adam fits nowhere, the least change of optimizer an expert would try before
    renting more GPUs that fits (`memory_savers.LEANER_OPTIMIZERS`, from the smallest saving up; an infeasible
    scenario offers the same)."""
    if spec.optimizer != "adam":
        return None
    return next((hint for saver in LEANER_OPTIMIZERS if _applies(saver, method, spec)
                 and (hint := _saver_hint(saver, card, method, cluster, spec))), None)


def _without_offload_hints(card: ModelCard, method: str, cluster: Cluster, spec: LayoutSpec,
                           chosen: Estimate) -> list[str]:
    """Where the search offloaded to host memory (the model states or activations: its last resort, with a
    speed that rests on assumed host figures) and the user asked for neither, the settings an expert tries
    first that fit without offloading (`memory_savers`: a PyTorch stack's fused loss and layers, a leaner
    optimizer), each with its speed beside the offloaded one."""
    lay = chosen.layout
    if not (lay.state_offload or lay.host_activations) or spec.state_offload is not None or (
            spec.recompute in ("offload", "full_offload")):
        return []
    def fits(saver: MemorySaver) -> Estimate | None:
        change: dict[str, Any] = {"state_offload": False, **dict(saver.spec)}
        try:
            found = search_layout(card, method, cluster, dataclasses.replace(spec, **change)).best
        except ValueError:
            return None
        return None if found is None or found.layout.host_activations else found

    def applies(saver: MemorySaver) -> bool:
        return _applies(saver, method, spec) and (saver not in LEANER_OPTIMIZERS or spec.optimizer == "adam")

    return [f"without offloading, {saver.setting} ({saver.why}) fits: {found.layout.short()} at "
            f"{found.memory.total_gib:.1f} GiB, {found.tokens_per_s:,.0f} tokens/s against the offloaded "
            f"layout's {chosen.tokens_per_s:,.0f}" for saver, found in fitting_without_offload(applies, fits)]


def _setting_hints(card: ModelCard, method: str, cluster: Cluster, spec: LayoutSpec) -> list[str]:
    """When nothing fits, which of a PyTorch stack's settings would (`memory_savers.STACK_SETTINGS`: a fused loss,
    fused layers): each alone, and where none alone does, all together, as Liger and Unsloth run them. A flag,
    not more GPUs."""
    open_ = [saver for saver in STACK_SETTINGS if _applies(saver, method, spec)]
    alone = [hint for saver in open_ if (hint := _saver_hint(saver, card, method, cluster, spec))]
    if alone or len(open_) < 2:
        return alone
    together = _fits_with(" ".join(saver.setting for saver in open_) + " (Liger or Unsloth, which run both)", card,
                          method, cluster, spec, **{key: value for saver in open_ for key, value in saver.spec})
    return [together] if together else []


def _recompute_hint(card: ModelCard, method: str, cluster: Cluster, spec: LayoutSpec) -> str | None:
    """When the recomputation the user fixed leaves nothing fitting, whether a searched one (full, Megatron's
    block recomputation of some layers, offload) would, and at what cost in the layout it finds."""
    if spec.recompute not in ("none", "selective") or spec.recompute_layers is not None:
        return None
    return _fits_with(f"recomputation searched (without --recompute {spec.recompute})", card, method, cluster,
                      spec, recompute=None)


def _sharded_states_hint(card: ModelCard, method: str, cluster: Cluster, spec: LayoutSpec) -> str | None:
    """When nothing fits on Megatron's distributed optimizer (ZeRO-1: every rank keeps whole fp32 gradient
    buffers and 16-bit weights), whether Megatron-FSDP sharding the gradients (ZeRO-2), then the weights too
    (ZeRO-3), over the data-parallel ranks would: Llama 3 405B's data parallelism sharded its gradients and
    optimizer states (Llama Team 2024, section 3.3.2). Never searched (no calibration row measures that stack),
    so offered by name; where neither fits within the headroom, whether one fits the card itself."""
    if method in QLORA_METHODS or spec.framework not in (None, "megatron") or spec.zero not in (None, 0, 1):
        return None
    for headroom in dict.fromkeys((spec.memory_headroom, 0.0)):
        for zero, sharded in ((2, "gradients"), (3, "gradients and weights")):
            hint = _fits_with(f"--framework megatron --zero {zero} (Megatron-FSDP: {sharded} sharded over the "
                              "data-parallel ranks; Llama 3 405B's data parallelism sharded its gradients and "
                              "optimizer states)",
                              card, method, cluster, spec, framework="megatron", zero=zero,
                              memory_headroom=headroom)
            if hint:
                return hint
    return None


def _cpu_offload_hint(card: ModelCard, method: str, cluster: Cluster, spec: LayoutSpec) -> str | None:
    """When the user turned CPU offload off and nothing fits, whether ZeRO-3 with the states on the host would."""
    if spec.state_offload is not False:
        return None
    return _fits_with("--cpu-offload on (ZeRO-3 states in host memory)", card, method, cluster, spec,
                      state_offload=True)


def _offload_refused(card: ModelCard, method: str, cluster: Cluster, spec: LayoutSpec) -> str:
    """Why --cpu-offload on left the layout on the GPU: the host cannot hold the states (FSDP and DeepSpeed
    offload them all or none), or the layout the user fixed cannot offload."""
    cannot = ("--cpu-offload on: the layout found cannot offload (it needs ZeRO-3 on FSDP or DeepSpeed, tp = pp = 1 "
              "and an optimizer with a CPU step); estimated without it")
    if spec.framework == "megatron" or spec.tp not in (None, 1) or spec.pp not in (None, 1) or spec.zero not in (
            None, 3):
        return cannot
    # the offloadable layout on a card that holds anything: what its states need from the host, said
    forced = dataclasses.replace(spec, state_offload=True, framework=spec.framework or "fsdp", zero=3, tp=1, pp=1)
    try:
        short = host_shortfall(search_layout(card, method, on_roomy_card(cluster), forced).best)
    except ValueError:
        return cannot
    if short is None:
        return cannot
    return (f"--cpu-offload on: {short}, so no offloaded layout fits (a platform or pool with more RAM per GPU may; "
            "an owned pool's host_memory_gib_per_gpu says what its servers have); estimated without it")


def _faster_offloaded_hint(card: ModelCard, method: str, cluster: Cluster, spec: LayoutSpec,
                           chosen: Estimate) -> str | None:
    """Where the search left offloading out and ZeRO-3 with the states in host memory is estimated clearly
    faster, say so, with the assumptions it rests on (plan.planner.offload_note)."""
    if spec.state_offload is not None or chosen.layout.state_offload:
        return None
    try:
        offloaded = search_layout(card, method, cluster, dataclasses.replace(spec, state_offload=True)).best
    except ValueError:
        return None
    gain = faster_offloaded(chosen.tokens_per_s, offloaded)
    return None if gain is None or offloaded is None else offload_note("--cpu-offload on", gain, offloaded)


def _print_table(est: Estimate, searched: tuple[str, ...], tokens: float | None, notes: list[str],
                 plat: Platform | None, headroom: float) -> None:
    c = est.cluster
    where = f" on {plat.id}" if plat else ""
    verdict = ("[green]fits[/green]" if est.fits else
               "[red]does NOT fit the card[/red]" if not est.fits_card else
               f"[yellow]fits the card, not its {headroom:.0%} headroom[/yellow]"
               if est.memory.total_gib <= est.gpu_memory_gib else "[yellow]runs only at the card's limit[/yellow]")
    fabric = f"{c.fabric_kind} {c.fabric_gbps_per_gpu:g} Gb/s per GPU"
    console.print(f"[bold]{escape(est.model_id)}[/bold] {est.method} on {c.gpus} x {c.gpu.id}"
                  f" ({c.gpus_per_node} per node, {fabric}){where}: {verdict} "
                  f"({est.memory.total_gib:.1f} of {est.gpu_memory_gib:g} GiB; "
                  f"{est.gpu_memory_gib * (1 - headroom):.1f} usable with {headroom:.0%} headroom)")
    lay = est.layout
    layout_table = Table(title="layout", title_justify="left")
    layout_table.add_column("field")
    layout_table.add_column("value", justify="right")
    layout_table.add_column("")
    rows: list[tuple[str, Any]] = [("framework", lay.framework), ("tp", lay.tp), ("pp", lay.pp), ("cp", lay.cp),
                                   ("dp", lay.dp), ("zero", lay.zero),
                                   ("recompute", recompute_label(lay.recompute, lay.recompute_layers)),
                                   ("micro_batch", lay.micro_batch),
                                   ("global_batch", lay.global_batch), ("seq_len", lay.seq_len),
                                   ("precision", lay.precision), ("sequence_parallel", lay.sequence_parallel)]
    rows.append(("virtual_pipeline", lay.virtual_pipeline))
    if lay.ep > 1 or "ep" in searched:
        rows.append(("ep", lay.ep))
    if lay.capacity_factor != 1.0:
        rows.append(("capacity_factor", f"{lay.capacity_factor:g}"))
    rows.append(("attention", "flash" if lay.flash_attention else "eager"))
    rows.append(("kernels", lay.kernels))
    rows.append(("loss", lay.loss))
    rows.append(("optimizer", OPTIMIZER_NAME_OF.get(lay.optimizer, lay.optimizer)))  # as --optimizer takes it
    if lay.state_offload:
        rows.append(("cpu_offload", "on"))
    if lay.shard_group:
        rows.append(("hybrid_shard", f"on ({lay.shard_group} per group, {lay.replicas} replicas)"))
    if lay.lora_rank is not None:
        rows.append(("lora_rank", lay.lora_rank))
        rows.append(("lora_targets", lay.lora_targets))
    for name, value in rows:
        how = "searched" if name in searched else ("derived" if name == "dp" else "")
        layout_table.add_row(name, str(value), how)
    console.print(layout_table)

    mem = _breakdown(f"memory per GPU (GiB) against {est.gpu_memory_gib:g} GiB", ("GiB", "% of card"),
                     est.memory.to_dict(), est.gpu_memory_gib, ".2f")
    mem.add_row(f"margin to usable ({headroom:.0%} headroom)", f"{est.margin_gib:.2f}", "")
    console.print(mem)
    console.print(_breakdown(f"step time {est.step_time_s:.3f} s", ("s", "share"), est.time.to_dict(),
                             est.step_time_s, ".4f"))

    lo, hi = est.tokens_per_s_range
    mem_lo, mem_hi = est.memory_gib_range
    console.print(f"throughput: {est.tokens_per_s:,.0f} tokens/s (p10-p90 {lo:,.0f}-{hi:,.0f}; "
                  f"{est.tokens_per_s_per_gpu:,.0f} per GPU); memory p10-p90 {mem_lo:.1f}-{mem_hi:.1f} GiB; "
                  f"{est.model_tflops_per_gpu:.0f} model TFLOP/s per GPU; MFU {est.mfu:.1%}"
                  + (f" ({est.mfu_causal:.1%} counting only the causal half of attention)"
                     if est.mfu - est.mfu_causal >= CAUSAL_MFU_NOTE_GAP else "") + "; "
                  f"{est.flops_per_token / 1e9:.1f} GFLOP per token")
    if tokens is not None:
        run = est.run(tokens)
        console.print(f"run of {tokens:,.3g} tokens: {run.hours:,.1f} h wall (p10-p90 {run.hours_range[0]:,.1f}-"
                      f"{run.hours_range[1]:,.1f}), {run.gpu_hours:,.0f} GPU-hours "
                      f"(failure overhead {run.failure_overhead_fraction:.1%}, checkpoint every "
                      f"{run.checkpoint_interval_h:.2f} h, ~{run.expected_interruptions:.1f} interruptions)")
    for note in notes:
        console.print(escape(f"- {note}"))


def _breakdown(title: str, columns: tuple[str, str], parts: dict[str, float], whole: float, fmt: str) -> Table:
    """A table of parts, each with its value and its share of `whole`."""
    table = Table(title=title, title_justify="left")
    table.add_column("part")
    for column in columns:
        table.add_column(column, justify="right")
    for name, value in parts.items():
        table.add_row(name, format(value, fmt), f"{value / whole:.0%}")
    return table
