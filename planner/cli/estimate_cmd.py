"""`plan estimate`: memory, step time, throughput and run hours of (model, method, GPU, count).

Fields of the layout that are not given are searched (fastest layout that fits). Bad input prints
one line on stderr and exits 2; a layout that does not fit is still estimated (exit 0, fits
false). Fits means the peak is within the card less `--headroom` (default 8%, as the planner's
policy); a layout that runs on the card but not within the headroom is told apart (`fits_card` in
JSON: its peak with the allocator's cache squeezed, `memory_floor_gib`, within the card), as is
one over the card.

The command parses its flags into a request (`_request`: each flag checked, in the order its
refusal is told), asks the estimator and the advice on it (`_report`,
`plan.planner.estimate.advice`) and prints the answer (JSON, or the table of `estimate_table.py`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from plan.models.catalog import builtin_catalog, load_model_card
from plan.models.errors import InputError, UnknownIdError
from plan.models.fields import DEFAULT_MEMORY_HEADROOM, MAX_MEMORY_HEADROOM
from plan.models.layout import (
    Framework,
    Kernels,
    LoraTargets,
    Loss,
    Optimizer,
    Precision,
    Recompute,
    words,
)
from plan.models.limits import (
    MAX_GLOBAL_BATCH,
    MAX_GPUS,
    MAX_LORA_RANK,
    MAX_PARALLEL,
    MAX_SEQ_LEN,
    MAX_TOKENS,
)
from plan.models.model_card import ModelCard
from plan.models.platform import Platform
from plan.models.stacks import loss_not_on_megatron, stack_of, stated_lacks
from plan.models.units import parse_count, parse_seq_len
from plan.models.validation_words import listed
from plan.planner.cli.common import OutputFormat, fail, finite, print_json
from plan.planner.cli.estimate_refusal import refusal_line
from plan.planner.cli.estimate_table import no_layout_line, print_table
from plan.planner.cli.lang_option import Language, lang_option
from plan.planner.estimate import Cluster, Estimate, LayoutSpec, SearchResult, search_layout
from plan.planner.estimate.advice import (
    faster_offloaded_hint,
    offload_refused,
    what_would_fit,
    without_offload_hints,
)
from plan.planner.estimate.band import STACK_MATURITIES, stack_maturity_note
from plan.planner.estimate.types import (
    ADAPTER_METHODS,
    FRAMEWORKS,
    KERNELS,
    LORA_TARGETS,
    LOSSES,
    METHODS,
    OPTIMIZER_NAMES,
    OPTIMIZERS,
    PRECISIONS,
    RECOMPUTE,
    eager_kernels_on_megatron,
)
from plan.planner.i18n.said import say, say_as

# The flags, as typer reads them (help texts as `plan estimate --help` prints them)


def _listed(vocabulary: type[StrEnum]) -> str:
    """A vocabulary's words as a flag's help lists them: "bf16 | fp16 | fp8"."""
    return " | ".join(words(vocabulary))


_RECOMPUTE_HELP = (
    f"{_listed(Recompute)} (selective: Megatron's attention core; FSDP's op-level policy, as "
    "torchtitan. full_offload: full, with the checkpoints in host memory, Unsloth's gradient "
    "checkpointing; offload: no recomputation, every saved activation in host memory)")
_RECOMPUTE_LAYERS_HELP = (
    "Megatron block recomputation: layers recomputed per model chunk (implies --recompute full; "
    "chosen when needed if omitted)")
_CAPACITY_FACTOR_HELP = (
    "MoE: token slots per routed expert relative to an even split, each expert's input padded to "
    "them (GShard-style, Megatron's --moe-expert-capacity-factor with "
    "--moe-pad-expert-input-to-capacity): that many times the experts' FLOPs, activations and "
    "all-to-all bytes (default 1: dropless routing at an even load)")
_ATTENTION_HELP = (
    "flash | eager (eager: the s x s scores stored, as Hugging Face's eager attention; context "
    "parallelism then only on DeepSpeed's Ulysses)")
_KERNELS_HELP = (
    f"{_listed(Kernels)}: how a PyTorch stack (fsdp, deepspeed) runs the model's layers; eager as "
    "Hugging Face, torchtune and peft do, fused under torch.compile, Liger or Unsloth (fewer "
    "saved activations, no host floor); default eager. Megatron is always fused")
_LOSS_HELP = (
    f"{_listed(Loss)}: how the cross-entropy holds the logits; plain, whole in fp32; chunked, the "
    "bf16 logits but not their fp32 copy (flash-attn's cross-entropy, torchtune's compiled "
    "chunked loss); fused, never whole (Liger's fused linear cross-entropy, Unsloth's Cut "
    "Cross-Entropy). Chunked and fused are a PyTorch stack's (fsdp, deepspeed), searched on FSDP "
    "when --framework is left out: Megatron's is always plain")
_CPU_OFFLOAD_HELP = (
    "on | off: ZeRO-3 with the parameters, gradients and optimizer states in host memory "
    "(FSDP/DeepSpeed CPU offload; default: searched where nothing fits without it)")
_HYBRID_SHARD_HELP = (
    "on | off: FSDP hybrid sharding (HSDP: HYBRID_SHARD, torchtitan's "
    "data_parallel_replicate_degree): ZeRO-2/3 states sharded over one node's GPUs and replicated "
    "across nodes (default: searched where the data-parallel group spans nodes)")
_LORA_TARGETS_HELP = (
    f"{_listed(LoraTargets)}: the linear layers LoRA adapts (default all: q, k, v, o and the "
    "FFN's; attention: q, k, v, o only)")

_Model = Annotated[str | None, typer.Option(
    "--model", help="catalog model id/alias, or a model-card YAML file")]
_Method = Annotated[str | None, typer.Option("--method", help=" | ".join(METHODS))]
_Gpu = Annotated[str | None, typer.Option("--gpu", help="catalog GPU id or alias")]
_Gpus = Annotated[int | None, typer.Option("--gpus", help="number of GPUs")]
_Tp = Annotated[int | None, typer.Option("--tp", help="tensor-parallel size (searched if omitted)")]
_Pp = Annotated[int | None, typer.Option("--pp", help="pipeline stages (searched if omitted)")]
_Zero = Annotated[int | None, typer.Option(
    "--zero", min=0, max=3, help="ZeRO stage 0-3 (searched if omitted)")]
_Recompute = Annotated[str | None, typer.Option("--recompute", help=_RECOMPUTE_HELP)]
_Framework = Annotated[str | None, typer.Option(
    "--framework", help=f"{_listed(Framework)} (searched if omitted)")]
_RecomputeLayers = Annotated[int | None, typer.Option(
    "--recompute-layers", min=1, help=_RECOMPUTE_LAYERS_HELP)]
_Cp = Annotated[int | None, typer.Option(
    "--cp", help="context-parallel size (searched from 8k tokens)")]
_Vpp = Annotated[int | None, typer.Option(
    "--vpp", help="interleaved virtual pipeline stages (searched)")]
_Ep = Annotated[int | None, typer.Option(
    "--ep", help="expert-parallel size, MoE models (searched if omitted)")]
_CapacityFactor = Annotated[float, typer.Option(
    "--capacity-factor", callback=finite, help=_CAPACITY_FACTOR_HELP)]
_Attention = Annotated[str, typer.Option("--attention", help=_ATTENTION_HELP)]
_Kernels = Annotated[str | None, typer.Option("--kernels", help=_KERNELS_HELP)]
_Loss = Annotated[str, typer.Option("--loss", help=_LOSS_HELP)]
_SequenceParallel = Annotated[str | None, typer.Option(
    "--sequence-parallel", help="on | off (default: on when tp > 1)")]
_CpuOffload = Annotated[str | None, typer.Option("--cpu-offload", help=_CPU_OFFLOAD_HELP)]
_HybridShard = Annotated[str | None, typer.Option("--hybrid-shard", help=_HYBRID_SHARD_HELP)]
_Optimizer = Annotated[str, typer.Option("--optimizer", help=" | ".join(OPTIMIZER_NAMES))]
_MicroBatch = Annotated[int | None, typer.Option("--micro-batch", help="sequences/micro-batch")]
_GlobalBatch = Annotated[int | None, typer.Option("--global-batch", help="sequences per step")]
_SeqLen = Annotated[str, typer.Option("--seq-len", help="tokens per sequence, e.g. 4096 or 4k")]
_Precision = Annotated[str, typer.Option("--precision", help=_listed(Precision))]
_LoraRank = Annotated[int | None, typer.Option("--lora-rank", help="LoRA rank (default 16)")]
_LoraTargets = Annotated[str | None, typer.Option("--lora-targets", help=_LORA_TARGETS_HELP)]
_Tokens = Annotated[str | None, typer.Option("--tokens", help="tokens to train on, e.g. 10B")]
_StackMaturity = Annotated[str | None, typer.Option(
    "--stack-maturity", help=f"{' | '.join(STACK_MATURITIES)}: the training stack at this scale, "
    "for a pre-training run's hours (default: timed as the published runs of mature stacks)")]
_PlatformId = Annotated[str | None, typer.Option(
    "--platform", help="catalog platform: fabric, node size, reliability")]
_Format = Annotated[OutputFormat, typer.Option("--format", help="table or json")]
_Headroom = Annotated[float, typer.Option(
    "--headroom", callback=finite,
    help="fraction of the card kept free; fits means peak <= (1 - headroom) x card")]
_Calibration = Annotated[Path | None, typer.Option(
    "--calibration", help="calibration overlay from plan calibrate (your measured speed)")]


@dataclass(frozen=True)
class Flags:
    """The flags as typed: None where left out (a layout field then searched)."""

    model: str | None
    method: str | None
    gpu: str | None
    gpus: int | None
    tp: int | None
    pp: int | None
    zero: int | None
    recompute: str | None
    framework: str | None
    recompute_layers: int | None
    cp: int | None
    vpp: int | None
    ep: int | None
    capacity_factor: float
    attention: str
    kernels: str | None
    loss: str
    sequence_parallel: str | None
    cpu_offload: str | None
    hybrid_shard: str | None
    optimizer: str
    micro_batch: int | None
    global_batch: int | None
    seq_len_text: str
    precision: str
    lora_rank: int | None
    lora_targets: str | None
    tokens: str | None
    platform: str | None
    headroom: float
    calibration: Path | None
    stack_maturity: str | None = None


@dataclass(frozen=True)
class EstimateRequest:
    """What the flags ask, checked: the model, method and cluster, the layout spec (None fields
    searched), the platform, the tokens to train on, and the stated flags the answer's notes
    repeat."""

    card: ModelCard
    method: str
    cluster: Cluster
    spec: LayoutSpec
    platform: Platform | None
    tokens: float | None
    calibration: Path | None
    cpu_offload: str | None  # "on", "off", or None: searched
    hybrid_shard: str | None  # "on", "off", or None: searched
    kernels: str | None  # "eager", "fused", or None: eager on a PyTorch stack


@dataclass(frozen=True)
class EstimateReport:
    """The answer: the estimate (calibrated where asked; fits and margin against the usable memory),
    the fields searched, the notes in the order they are printed, and the usable GiB per card."""

    estimate: Estimate
    searched: tuple[str, ...]
    notes: list[str]
    usable_gib: float


def estimate_command(
    model: _Model = None,
    method: _Method = None,
    gpu: _Gpu = None,
    gpus: _Gpus = None,
    tp: _Tp = None,
    pp: _Pp = None,
    zero: _Zero = None,
    recompute: _Recompute = None,
    framework: _Framework = None,
    recompute_layers: _RecomputeLayers = None,
    cp: _Cp = None,
    vpp: _Vpp = None,
    ep: _Ep = None,
    capacity_factor: _CapacityFactor = 1.0,
    attention: _Attention = "flash",
    kernels: _Kernels = None,
    loss: _Loss = "plain",
    sequence_parallel: _SequenceParallel = None,
    cpu_offload: _CpuOffload = None,
    hybrid_shard: _HybridShard = None,
    optimizer: _Optimizer = "adamw",
    micro_batch: _MicroBatch = None,
    global_batch: _GlobalBatch = None,
    seq_len_text: _SeqLen = "4096",
    precision: _Precision = "bf16",
    lora_rank: _LoraRank = None,
    lora_targets: _LoraTargets = None,
    tokens: _Tokens = None,
    platform: _PlatformId = None,
    output: _Format = OutputFormat.table,
    headroom: _Headroom = DEFAULT_MEMORY_HEADROOM,
    calibration: _Calibration = None,
    stack_maturity: _StackMaturity = None,
    lang: Annotated[Language | None, lang_option()] = None,
) -> None:
    """Estimate memory per GPU, step time, throughput and (with --tokens) hours and GPU-hours."""
    flags = Flags(
        model=model, method=method, gpu=gpu, gpus=gpus, tp=tp, pp=pp, zero=zero,
        recompute=recompute, framework=framework, recompute_layers=recompute_layers, cp=cp,
        vpp=vpp, ep=ep, capacity_factor=capacity_factor, attention=attention, kernels=kernels,
        loss=loss, sequence_parallel=sequence_parallel, cpu_offload=cpu_offload,
        hybrid_shard=hybrid_shard, optimizer=optimizer, micro_batch=micro_batch,
        global_batch=global_batch, seq_len_text=seq_len_text, precision=precision,
        lora_rank=lora_rank, lora_targets=lora_targets, tokens=tokens, platform=platform,
        headroom=headroom, calibration=calibration, stack_maturity=stack_maturity)
    request = _request(flags)
    report = _report(request)
    if output is OutputFormat.json:
        _print_json(request, report)
    else:
        print_table(report.estimate, report.searched, request.tokens, report.notes,
                    request.platform, request.spec.memory_headroom)


# Parse: the flags into a request, or one line on stderr and exit 2 at the first problem. The
# checks that a scenario's Job or the layout search also make stay here where their refusal reads
# otherwise (a Job names its field: `lora_rank is only for ...`) or would come in another order (the
# search runs last, after the catalog look-ups), so each refusal reads as `plan estimate` tells it.

def _request(flags: Flags) -> EstimateRequest:
    """The flags checked in the order their refusals are told, then the model, GPU and platform
    looked up and the layout spec built."""
    model, method, gpu, gpus = _required(flags)
    _check_words(flags, method)
    seq_len = _check_numbers(flags, method, gpus)
    token_count = _token_count(flags.tokens)
    card = _load_model(model)
    _check_against_model(card, seq_len, token_count, flags)
    cluster, plat = _cluster(gpu, gpus, flags.platform)
    cluster = dataclasses.replace(cluster, stack_maturity=flags.stack_maturity)
    return EstimateRequest(card=card, method=method, cluster=cluster,
                           spec=_spec(flags, seq_len, token_count), platform=plat,
                           tokens=token_count, calibration=flags.calibration,
                           cpu_offload=flags.cpu_offload, hybrid_shard=flags.hybrid_shard,
                           kernels=flags.kernels)


def _required(flags: Flags) -> tuple[str, str, str, int]:
    """--model, --method, --gpu and --gpus, each refused with what it takes where left out."""
    model, gpu, gpus = flags.model, flags.gpu, flags.gpus
    method = flags.method.lower() if flags.method else None  # a method in any case, as a model
    for option, value, what in (
            ("--model", model, say_as("cli.need_model",
                                      "a catalog model id or name (plan catalog models)")),
            ("--method", method, say_as("cli.need_one_of", "one of {names}",
                                        names=listed(METHODS))),
            ("--gpu", gpu, say_as("cli.need_gpu", "a catalog GPU id or name (plan catalog gpus)")),
            ("--gpus", gpus, say_as("cli.need_gpus", "how many GPUs, e.g. --gpus 8"))):
        if value is None:
            fail(say_as("cli.required", "{option}: required: {what}", option=option, what=what))
    assert model is not None and method is not None and gpu is not None and gpus is not None
    return model, method, gpu, gpus


def _choice(option: str, value: str | None, allowed: tuple[str, ...]) -> None:
    if value is not None and value not in allowed:
        fail(say_as("cli.not_one_of", "{option}: {value} is not one of {names}", option=option,
                    value=repr(value), names=listed(allowed)))


def _check_words(flags: Flags, method: str) -> None:
    """Each flag that takes a word: one of its words; a PyTorch stack's loss not on Megatron; an
    optimizer by name or alias."""
    _choice("--method", method, METHODS)
    _choice("--recompute", flags.recompute, RECOMPUTE)
    _choice("--precision", flags.precision, PRECISIONS)
    _choice("--framework", flags.framework, FRAMEWORKS)
    _choice("--attention", flags.attention, ("flash", "eager"))
    _choice("--kernels", flags.kernels, KERNELS)
    _choice("--loss", flags.loss, LOSSES)
    if flags.loss != "plain" and stated_lacks(flags.framework, "leaner_losses"):
        fail(say_as("cli.option_problem", "{option}: {problem}", option="--loss",
                    problem=loss_not_on_megatron(flags.loss)))
    _choice("--sequence-parallel", flags.sequence_parallel, ("on", "off"))
    _choice("--cpu-offload", flags.cpu_offload, ("on", "off"))
    _choice("--hybrid-shard", flags.hybrid_shard, ("on", "off"))
    _choice("--stack-maturity", flags.stack_maturity, STACK_MATURITIES)
    if Optimizer.id_of(flags.optimizer) not in OPTIMIZERS:
        fail(say_as("cli.not_one_of", "{option}: {value} is not one of {names}",
                    option="--optimizer", value=repr(flags.optimizer),
                    names=listed(OPTIMIZER_NAMES)))


def _check_numbers(flags: Flags, method: str, gpus: int) -> int:
    """The sequence length (as a scenario's: 4096, 4k, 32K), each number within its range
    (plan.models.limits: larger values only make the search loop), and the adapter's flags only for
    an adapter method."""
    if gpus < 1:
        fail(say_as("cli.at_least_one", "{option}: must be at least 1, got {value}",
                    option="--gpus", value=gpus))
    try:
        seq_len = parse_seq_len(flags.seq_len_text)
    except ValueError as exc:
        fail(say_as("cli.option_problem", "{option}: {problem}", option="--seq-len",
                    problem=exc.args[0]))
    if seq_len < 1:
        fail(say_as("cli.at_least_one", "{option}: must be at least 1, got {value}",
                    option="--seq-len", value=flags.seq_len_text))
    for option, value, most in (
            ("--gpus", gpus, MAX_GPUS), ("--tp", flags.tp, MAX_PARALLEL),
            ("--pp", flags.pp, MAX_PARALLEL), ("--cp", flags.cp, MAX_PARALLEL),
            ("--vpp", flags.vpp, MAX_PARALLEL), ("--ep", flags.ep, MAX_PARALLEL),
            ("--micro-batch", flags.micro_batch, MAX_GLOBAL_BATCH),
            ("--global-batch", flags.global_batch, MAX_GLOBAL_BATCH),
            ("--seq-len", seq_len, MAX_SEQ_LEN), ("--lora-rank", flags.lora_rank, MAX_LORA_RANK)):
        if value is not None and value > most:
            fail(say_as("cli.at_most", "{option}: at most {most:,}, got {value:,}",
                        option=option, most=most, value=value))
    if not 0 <= flags.headroom <= MAX_MEMORY_HEADROOM:
        fail(say_as("cli.headroom", "--headroom: a fraction of the card from 0 to {most:g}, "
                    "got {value:g}", most=MAX_MEMORY_HEADROOM, value=flags.headroom))
    adapters = listed(ADAPTER_METHODS)
    if flags.lora_rank is not None and method not in ADAPTER_METHODS:
        fail(say_as("cli.only_for", "{option}: only for {methods}, not for {method}",
                    option="--lora-rank", methods=adapters, method=method))
    _choice("--lora-targets", flags.lora_targets, LORA_TARGETS)
    if flags.lora_targets is not None and method not in ADAPTER_METHODS:
        fail(say_as("cli.only_for", "{option}: only for {methods}, not for {method}",
                    option="--lora-targets", methods=adapters, method=method))
    return seq_len


def _token_count(tokens: str | None) -> float | None:
    """--tokens as a count (10B, 1e9), from 1 to MAX_TOKENS; None where left out."""
    if tokens is None:
        return None
    try:
        token_count = parse_count(tokens)
    except ValueError as exc:
        fail(say_as("cli.option_problem", "{option}: {problem}", option="--tokens",
                    problem=exc.args[0]))
    if not 1 <= token_count <= MAX_TOKENS:
        fail(say_as("cli.tokens_range", "--tokens: from 1 to {most:g}, got {value}",
                    most=MAX_TOKENS, value=repr(tokens)))
    return token_count


def _load_model(wanted: str) -> ModelCard:
    path = Path(wanted)
    if path.suffix.lower() in (".yaml", ".yml") or path.is_file():
        if not path.is_file():
            fail(say("cli.no_card_file", wanted=wanted))
        try:
            return load_model_card(path)
        except InputError as exc:
            fail([say("cli.option_problem", option="--model", problem=line)
                  for line in exc.problems][:1])
    try:
        return builtin_catalog().model(wanted)
    except UnknownIdError as exc:
        fail(say("cli.option_problem", option="--model", problem=exc.message))


def _check_against_model(card: ModelCard, seq_len: int, token_count: float | None,
                         flags: Flags) -> None:
    """The same cross-checks as a scenario's: the sequence within the model's positions, the tokens
    at least one sequence, and one step no more than the tokens."""
    if seq_len > card.max_positions:
        fail(say_as("cli.seq_len_positions",
                    "--seq-len: {seq_len} exceeds {model}'s max_positions {positions}",
                    seq_len=seq_len, model=card.id, positions=card.max_positions))
    if token_count is None:
        return
    if token_count < seq_len:
        fail(say_as("cli.tokens_short",
                    "--tokens: {tokens:,.0f} is less than one sequence of --seq-len {seq_len}",
                    tokens=token_count, seq_len=seq_len))
    global_batch = flags.global_batch
    if global_batch is not None and global_batch * seq_len > token_count:
        fail(say_as("cli.step_over_tokens", "--global-batch: one step ({batch} x {seq_len} "
                    "tokens) is more than --tokens ({tokens})", batch=global_batch,
                    seq_len=seq_len, tokens=flags.tokens))


def _cluster(gpu: str, gpus: int, platform: str | None) -> tuple[Cluster, Platform | None]:
    """The catalog GPU, the catalog platform (if named) and the cluster of `gpus` of them."""
    catalog = builtin_catalog()
    try:
        gpu_card = catalog.gpu(gpu)
    except UnknownIdError as exc:
        fail(say_as("cli.option_problem", "{option}: {problem}", option="--gpu",
                    problem=exc.message))
    plat: Platform | None = None
    if platform is not None:
        try:
            plat = catalog.platform(platform)
        except UnknownIdError as exc:
            fail(say_as("cli.option_problem", "{option}: {problem}", option="--platform",
                        problem=exc.message))
    try:
        return Cluster.of(gpu_card, gpus, plat), plat
    except ValueError as exc:
        fail(refusal_line(exc))


def _on_off(value: str | None) -> bool | None:
    return None if value is None else value == "on"


def _spec(flags: Flags, seq_len: int, token_count: float | None) -> LayoutSpec:
    """The layout the flags fix (None: searched), in the estimator's ids."""
    batch_limit = max(1, int(token_count // seq_len)) if token_count else None
    return LayoutSpec(
        tp=flags.tp, pp=flags.pp, zero=flags.zero, recompute=flags.recompute,
        micro_batch=flags.micro_batch, global_batch=flags.global_batch, seq_len=seq_len,
        precision=flags.precision,
        lora_rank=flags.lora_rank if flags.lora_rank is not None else 16,
        lora_targets=flags.lora_targets or "all", framework=flags.framework, cp=flags.cp,
        virtual_pipeline=flags.vpp, ep=flags.ep, capacity_factor=flags.capacity_factor,
        flash_attention=flags.attention == "flash",
        optimizer=Optimizer.id_of(flags.optimizer),
        fused_modules=flags.kernels == "fused", loss=flags.loss,
        sequence_parallel=_on_off(flags.sequence_parallel), memory_headroom=flags.headroom,
        recompute_layers=flags.recompute_layers, batch_limit=batch_limit,
        state_offload=_on_off(flags.cpu_offload), hybrid_shard=_on_off(flags.hybrid_shard))


# Report: the estimate of the fastest layout that fits (else the least-memory one), with its notes


def _report(request: EstimateRequest) -> EstimateReport:
    """Search, calibrate where asked, judge the fit against the card less the headroom (what the
    planner requires), and add the notes and the advice."""
    found, result = _search(request)
    searched = (found.searched + (("cpu_offload",) if request.cpu_offload is None else ())
                + (("hybrid_shard",) if request.hybrid_shard is None else ()))
    if request.calibration is not None:
        from plan.planner.calibrate import Calibration

        try:
            result = Calibration.load(request.calibration).apply(result, request.method)
        except InputError as exc:
            fail(exc)
    usable = request.spec.usable_gib(result.gpu_memory_gib)
    result = dataclasses.replace(result, fits=result.memory.total_gib <= usable,
                                 margin_gib=usable - result.memory.total_gib)
    return EstimateReport(result, searched, _notes(request, found.best, result, usable), usable)


def _search(request: EstimateRequest) -> tuple[SearchResult, Estimate]:
    """The layout search and the estimate it answers with: the best layout, else the closest; a spec
    the search refuses, or one with no valid layout at all, ends here (exit 2)."""
    cluster = request.cluster
    try:
        found = search_layout(request.card, request.method, cluster, request.spec)
    except ValueError as exc:
        fail(refusal_line(exc))
    result = found.best if found.best is not None else found.closest
    if result is None:
        fail(no_layout_line(request.card.id, cluster.gpus, cluster.gpu.id, found.reasons))
    return found, result


def _notes(request: EstimateRequest, best: Estimate | None, result: Estimate,
           usable: float) -> list[str]:
    """The estimate's notes, after what the stated flags and the fit call for (first the ones most
    read: nothing fits, and what would)."""
    card, method, cluster, spec = request.card, request.method, request.cluster, request.spec
    notes = list(result.notes)
    plat = request.platform
    most = plat.limits.max_gpus_per_job if plat is not None else None
    if plat is not None and most and cluster.gpus > most:
        notes.insert(0, say("enote.platform_limit", platform=plat.id, most=most))
    if request.cpu_offload == "on" and not result.layout.state_offload:
        notes.insert(0, offload_refused(card, method, cluster, spec))
    if request.kernels == "eager" and stack_of(result.layout.framework).fused_layers:
        keep = say("enote.keep_eager")
        notes.insert(0, eager_kernels_on_megatron("--kernels eager", keep, keyed=True))
    # (on the uncalibrated estimate: the offloaded one is not calibrated either)
    if best is not None:
        offload_hint = faster_offloaded_hint(card, method, cluster, spec, best)
        if offload_hint:
            notes.append(offload_hint)
        notes[:0] = without_offload_hints(card, method, cluster, spec, best)
    if result.fits_card and result.memory.total_gib > result.gpu_memory_gib:
        notes.insert(0, _at_the_limit(result))
    if best is None:
        notes[:0] = what_would_fit(card, method, cluster, spec)
        notes.insert(0, _nothing_fits(result, usable, spec.memory_headroom))
    maturity = stack_maturity_note(method, cluster.stack_maturity)
    if maturity is not None and request.tokens is not None:
        notes.append(maturity)
    return notes


def _at_the_limit(est: Estimate) -> str:
    return say("enote.at_limit", total=est.memory.total_gib, card=est.gpu_memory_gib,
               floor=est.memory_floor_gib)


def _nothing_fits(est: Estimate, usable: float, headroom: float) -> str:
    return say("enote.nothing_fits", total=est.memory.total_gib, usable=usable,
               card=est.gpu_memory_gib, headroom=headroom,
               within=say("enote.within_card") if est.fits_card else "")


# Print: JSON (the table: estimate_table.py)


def _print_json(request: EstimateRequest, report: EstimateReport) -> None:
    data = report.estimate.to_dict(request.tokens)
    data["notes"] = report.notes
    data["searched"] = list(report.searched)
    data["memory_headroom"] = request.spec.memory_headroom
    data["usable_memory_gib"] = round(report.usable_gib, 3)
    if request.platform is not None:
        data["platform"] = request.platform.id
    print_json(data)
