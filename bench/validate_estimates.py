"""Run the estimator over every published row in bench/data/*.csv and report the errors.

    .venv/bin/python bench/validate_estimates.py [--validation-dir DIR] [--csv OUT.csv]

It reads every `throughput*.csv`, `memory*.csv` and `whole_runs*.csv` of the folder (the columns of
bench/data's files), and its `context_limits.csv` where there is one (published "longest context
that fits" tables, each cell judged with the setting of a memory row: bench/context_limits.py). A
row it cannot state to the estimator (a model neither in the catalog nor shaped by the row's
columns, an unknown GPU or metric, an empty cell, a layout that does not divide the GPUs) is listed
as not estimated, with why, and left out of the statistics; the other rows still run. An exception
from the estimator itself is listed the same way as a bug, and the bench then exits 1.

Unit conversions (bench/data/README.md):
- achieved_tflops_per_gpu (Megatron 2021) counts recomputation FLOPs: compared with the predicted
  model FLOP/s plus the recomputed forward FLOP/s ("hardware" FLOPs, Narayanan et al. 2021 eq. 3);
- mfu (Korthikanti 2022) and model_tflops_per_gpu (Megatron 2024) are model FLOPs against the BF16
peak;
- tokens_per_s_per_gpu (NeMo FP8, LLaMA) compared directly;
- memory rows: GB (10^9) or GiB as printed; ZeRO rows are model states only (weights + gradients
  + optimizer); QLORA-01 is an upper bound ("fits in 48 GB"): its error is how far above it we are;
  torchtune rows are PyTorch allocator statistics, which exclude the CUDA context and NCCL's own
  buffers (subtracted).
- the torchtune tok/s figures in the memory rows' notes are reported separately, not in the
  calibration statistics: under the settings the rows state (full activation checkpointing) they
  would need 90-100% of the cards' dense BF16 peak, so some setting differs from the row.

What the CSV leaves blank is searched (micro-batch, and the whole layout for the LLaMA row) or set
by the estimator's default rule (global batch), never fitted per row. A run whose stated layout the
estimator judges not to fit is listed as such, and its speed is taken on the fastest layout it
states, as if memory were no limit (it ran). Framework facts that the rows imply are applied as
such: no sequence parallelism in sources dated before 2022 (it did not exist yet), unfused attention
(the s x s scores stored) in sources dated before 2023 that name no fused kernel
(FUSED_ATTENTION_YEAR), context parallelism approximated as data parallelism (same token split),
torchtune's chunked loss, pure BF16 AdamW (its low-memory 8-bit one where the row leaves the
optimizer unstated), CPU offload where the notes say so and LoRA rank (8 on one GPU, 16 on several),
NeMo's LoRA on attention (rank 32), QLoRA's rank 64 on all layers, NeMo's distributed Adam with BF16
gradients and FP32 master weights kept as 16-bit remainders (NEMO_OPTIMIZER).
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import re
import statistics
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
# The estimator is timed cold: the persistent estimate cache is off unless PLAN_CACHE_DIR names one.
os.environ.setdefault("PLAN_CACHE_DIR", "off")

import context_limits
import scale_bands
from row_cells import (
    RowProblem,
    count,
    main_words,
    metric_name,
    number,
    required,
    size,
    unstated,
    zero_cell,
    zero_in_words,
)

from plan.models.catalog import Catalog, builtin_catalog
from plan.models.errors import UnknownIdError
from plan.models.gpu import GPU
from plan.models.model_card import ModelCard
from plan.planner.estimate import Cluster, Estimate, LayoutSpec, estimate, search_layout, shape_of
from plan.planner.estimate.band import (
    MEMORY_BAND,
    STACK_MATURITIES,
    THROUGHPUT_BAND,
    band_class,
    throughput_band,
    whole_run_overhead,
)
from plan.planner.estimate.cluster import (
    DEFAULT_CHECKPOINT_WRITE_MIN,
    DEFAULT_GPU_MTBF_H,
    DEFAULT_RESTART_MIN,
    EFFECTIVE_TRAINING_TIME,
)
from plan.planner.estimate.factors import CUDA_CONTEXT_GIB, GIB, NCCL_BUFFERS_GIB
from plan.planner.estimate.reliability import failure_overhead_fraction
from plan.planner.estimate.types import Layout, framework_zero

T = TypeVar("T")

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DIR = REPO / "bench" / "data"  # the published rows, each with its source, in the repository


@dataclass
class Row:
    id: str
    kind: str  # throughput | memory
    metric: str
    published: float
    predicted: float | None
    unit: str
    layout: str
    note: str = ""
    bound: bool = False
    implausible: str = ""  # why the source row's own figures cannot all hold (computed, not judged)
    family: str = ""
    estimate: Estimate | None = None
    # why the row was not estimated (an unknown model or GPU, a missing column, a layout that does
    # not add up); "bug: ..." when the estimator itself raised, which makes the bench exit 1
    problem: str = ""

    @property
    def error(self) -> float | None:
        if self.predicted is None:
            return None
        if self.bound:
            return max(0.0, self.predicted - self.published) / self.published
        return (self.predicted - self.published) / self.published


def _card(row: dict[str, str], name: str) -> ModelCard:
    """Catalog card for a named open model, else one built from the row's columns."""
    base = re.sub(r"\s+(SFT|LoRA|QLoRA|DPO)$", "", name).strip()
    try:
        return builtin_catalog().model(base)
    except UnknownIdError as unknown:
        shape_columns = ("layers", "hidden", "heads", "vocab", "params_b")
        if not all((row.get(column) or "").strip() for column in shape_columns):
            raise RowProblem(f"{unknown}; the row does not give the shape "
                             f"({', '.join(shape_columns)})") from None
    hidden = required(row, "hidden", count)
    heads = required(row, "heads", count)
    same = _same_shape(row, hidden, heads)
    if same is not None:
        return same
    llama = base.lower().startswith("llama")
    ffn = (int(8 * hidden / 3 + 255) // 256) * 256 if llama else 4 * hidden
    return ModelCard(
        id=base.lower(),
        params=required(row, "params_b", number) * 1e9,
        layers=required(row, "layers", count),
        hidden_size=hidden,
        ffn_hidden_size=ffn,
        ffn_type="swiglu" if llama else "gelu",
        num_heads=heads,
        num_kv_heads=heads,
        vocab_size=required(row, "vocab", count),
        max_positions=required(row, "seq_len", size),
        tied_embeddings=not llama,
        source=f"validation row {row['id']}",
        params_note="the row's published count; the shape is rebuilt from the row's columns",
    )


SAME_SHAPE_PARAMS = 0.03
"""How near a catalog card's parameter count must be to a row's for `_same_shape` to take its
architecture."""


def _same_shape(row: dict[str, str], hidden: int, heads: int) -> ModelCard | None:
    """The catalog card of a row's unnamed architecture: the same layers, hidden size, heads and
    vocabulary, and a parameter count within SAME_SHAPE_PARAMS of the row's (Llama 3.3 70B has Llama
    3.1 70B's shape, Qwen2 72B Qwen2.5 72B's, Vicuna 13B Llama 2 13B's). Its FFN width, KV heads,
    gating and experts are what the row's columns do not give; rebuilt from the columns, such a
    model would get multi-head attention and an 8h/3 FFN. None where no card matches."""
    layers, vocab = required(row, "layers", count), required(row, "vocab", count)
    params = required(row, "params_b", number) * 1e9
    for card in builtin_catalog().models.values():
        if (card.layers, card.hidden_size, card.num_heads, card.vocab_size) == (
            layers,
            hidden,
            heads,
            vocab,
        ) and abs(card.params / params - 1) <= SAME_SHAPE_PARAMS:
            return card
    return None


UNLIMITED_MEMORY_GIB = 1e6
"""A card no layout outgrows: where the estimator judges a run's stated layout not to fit, its speed
is estimated as if memory were no limit (`_run`)."""


def _run(card: ModelCard, method: str, cluster: Cluster, spec: LayoutSpec, dp: int | None,
         speed: bool = False) -> Estimate:
    """The estimate of a row's layout: the fastest that fits within what the row states. Where none
    fits, the least-memory one for a memory row; for a speed (`speed`), the fastest as if memory
    were no limit, on the row's own cards: the run ran, so whatever memory it needed it had; the
    verdict "judged not to fit" is reported apart, and a speed taken on the least-memory layout (no
    interleaving, the most recomputation) would count the memory error twice."""
    result = search_layout(card, method, cluster, spec)
    est = (
        result.best
        or (_fastest_ignoring_memory(card, method, cluster, spec) if speed else None)
        or result.closest
    )
    if est is None:
        reasons = (
            ", ".join(f"{why} ({n})" for why, n in sorted(result.reasons.items()))
            or "none considered"
        )
        raise RowProblem(f"no layout the estimator accepts: {reasons}")
    if dp is not None and est.layout.dp != dp:
        raise RowProblem(f"layout search gave dp={est.layout.dp}, the row says {dp}")
    return est


def _fastest_ignoring_memory(
    card: ModelCard, method: str, cluster: Cluster, spec: LayoutSpec
) -> Estimate | None:
    """The fastest layout within `spec` on cards of unlimited memory, estimated on the real ones
    (its `fits` then says whether it fits them)."""
    roomy = replace(
        cluster, gpu=cluster.gpu.model_copy(update={"memory_gib": UNLIMITED_MEMORY_GIB})
    )
    found = search_layout(card, method, roomy, spec).best
    return None if found is None else estimate(card, method, cluster, found.layout)


def _each_row(
    path: Path, kind: str, value_column: str, one: Callable[[dict[str, str]], list[Row]]
) -> list[Row]:
    """The rows of one CSV file, each estimated by `one`; one that fails is reported as not
    estimated (`_attempt`) and the other rows still run."""
    out: list[Row] = []
    with path.open(newline="") as f:
        for row in _with_sources(csv.DictReader(f)):
            done = _attempt(lambda row=row: one(row))  # type: ignore[misc]
            out.extend(
                [_not_estimated(row, kind, value_column, done)] if isinstance(done, str) else done
            )
    return out


def _attempt(work: Callable[[], T]) -> T | str:
    """`work()`, or why it failed: a RowProblem, or an empty, unparsable or missing cell (KeyError,
    ValueError), is the row's; any other exception is the estimator's, "bug: ..." (the bench then
    exits 1)."""
    try:
        return work()
    except RowProblem as problem:
        return str(problem)
    except (KeyError, ValueError) as problem:
        return f"{type(problem).__name__}: {problem}"
    except Exception as error:  # one row's estimator failure must not hide the other rows
        return f"bug: {type(error).__name__}: {error}"


def _not_estimated(row: dict[str, str], kind: str, value_column: str, why: str) -> Row:
    try:
        published = number(row.get(value_column), value_column)
    except RowProblem:  # the value itself is what the row cannot state
        published = None
    return Row(
        row.get("id") or "?",
        kind,
        row.get("metric") or "",
        published if published is not None else float("nan"),
        None,
        row.get("unit") or "",
        "-",
        f"not estimated: {why}",
        family=family(row.get("id") or "", row.get("source") or ""),
        problem=why,
    )


def _rows_of(vdir: Path, stem: str, read: Callable[[Path], list[Row]]) -> list[Row]:
    """Every `<stem>*.csv` of the folder, in name order (throughput_public.csv, and any other file
    of the same columns)."""
    return [row for path in sorted(vdir.glob(f"{stem}*.csv")) for row in read(path)]


FAMILIES = (("MEG21", "Megatron"), ("MEG24", "Megatron"), ("KOR", "Megatron"), ("NEMO", "NeMo"),
            ("LLMF", "FSDP"), ("TTT", "torchtitan"), ("TTM", "torchtitan"), ("TTU", "torchtune"),
            ("ZERO", "ZeRO states"), ("QLORA", "QLoRA"), ("LL1", "whole runs"))


SOURCE_FAMILIES = (
    ("llm-foundry", "FSDP"),
    ("torchtitan", "torchtitan"),
    ("torchtune", "torchtune"),
    ("NeMo", "NeMo"),
    ("Megatron", "Megatron"),
    ("Korthikanti", "Megatron"),
    ("ZeRO", "ZeRO states"),
    ("QLoRA", "QLoRA"),
)
"""The stack a row ran, from its source text (so rows of other files are read the same way)."""


def _with_sources(rows: csv.DictReader[str]) -> list[dict[str, str]]:
    """Rows with a source of "same" (or "same (...)") given the source of the row they refer back
    to."""
    out, last = [], ""
    for row in rows:
        if (row.get("source") or "").startswith("same"):
            row = {**row, "source": last + " " + row["source"]}
        else:
            last = row.get("source") or ""
        out.append(row)
    return out


def family(row_id: str, source: str = "") -> str:
    by_id = next((name for prefix, name in FAMILIES if row_id.startswith(prefix)), None)
    if by_id:
        return by_id
    return next((name for key, name in SOURCE_FAMILIES if key.lower() in source.lower()), "other")


FUSED_LOSS_FAMILIES = ("FSDP", "torchtune")
"""Stacks whose loss never holds the full fp32 logits: llm-foundry's MPT uses flash-attn's fused
cross-entropy, torchtune a chunked one (8 chunks); both are run as the "chunked" loss."""


STACK_NAMES = ("unsloth", "liger", "hugging face", "torch.compile")
"""Stacks a row's notes may name as the one that ran it. Where the notes name one, they decide
(`stack_text`): a table in Unsloth's README has a Hugging Face column, whose rows ran eager modules
and PyTorch's cross-entropy although their source names Unsloth."""

COMPILED_LOSS_WORDS = ("compiled loss", "compile_loss", "compiled cross-entropy", "chunked loss",
                       "chunked cross-entropy", "fused loss", "fused cross-entropy")
"""Wording of a loss that never holds the fp32 logits whole: torch.compile fuses the upcast, the
log-softmax and the gradient of a compiled loss into kernels that save only the bf16 logits and one
log-sum-exp per row (OLMo-core's `compile_loss`, torchtune's `compile: True`), as the chunked loss
does (factors.py LOGIT_BYTES)."""

COMPILED_LOSS = re.compile(r"compil\w*[^.;]{0,40}\bloss|\bloss[^.;]{0,40}compil")
"""The same said in other words: "torch.compile on the model and the loss", "loss compiled"."""


def stack_text(row: dict[str, str]) -> str:
    """What the row says about the stack that ran it, lower case: the first of STACK_NAMES its notes
    name (notes that go on to compare it with another stack name that one later), else its source
    and notes."""
    notes = (row.get("notes") or "").lower()
    named = [(notes.find(name), name) for name in STACK_NAMES if name in notes]
    if named:
        return min(named)[1]
    return (row.get("source", "") + " " + notes).lower()


def loss_of(row: dict[str, str], fam: str) -> str:
    """The loss a row's stack ran: a fused linear cross-entropy where the row names Liger or
    Unsloth, the chunked one where it names a compiled, chunked or fused loss
    (COMPILED_LOSS_WORDS) or for FUSED_LOSS_FAMILIES, else PyTorch's or Megatron's plain one."""
    stack = stack_text(row)
    if "liger" in stack or "unsloth" in stack:
        return "fused"
    text = (row.get("source", "") + " " + (row.get("notes") or "")).lower()
    if any(words in text for words in COMPILED_LOSS_WORDS) or COMPILED_LOSS.search(text):
        return "chunked"
    return "chunked" if fam in FUSED_LOSS_FAMILIES else "plain"


def compiled(row: dict[str, str]) -> bool:
    """Rows whose stack ran torch.compile (torchtitan's, the torchtune rows that say so) or Liger's
    or Unsloth's
    kernels: fused modules, which save what the fused activation formula counts (memory.py); the
    others ran eager PyTorch modules."""
    text = stack_text(row)
    return "torch.compile" in text or any(name in text for name in ("liger", "unsloth"))


def stated_lora_targets(notes: str) -> str:
    """The layers a row's adapters target: "attention" where its notes name the q, k and v
    projections and no FFN layer (torchtune's "rank 16 on q, k and v"), else all linear layers."""
    text = notes.lower()
    ffn = any(word in text for word in ("mlp", "ffn", "gate", "all linear", "up_proj"))
    attention = bool(re.search(r"\bq\b.*\bk\b.*\bv\b|q_proj|qkv", text))
    return "attention" if attention and not ffn else "all"


FRAMEWORK_OF_FAMILY = {
    "Megatron": "megatron",
    "NeMo": "megatron",
    "FSDP": "fsdp",
    "torchtitan": "fsdp",
    "torchtune": "fsdp",
    "QLoRA": "fsdp",
}
"""The stack each family ran: Megatron-LM/NeMo (distributed optimizer),
Composer/torchtitan/torchtune FSDP, QLoRA's Hugging Face + peft; rows of other stacks have theirs
searched."""

FRAMEWORK_NAMES = (
    ("fsdp", "fsdp"),
    ("fully sharded", "fsdp"),
    ("fully_shard", "fsdp"),
    ("deepspeed", "deepspeed"),
    ("megatron", "megatron"),
    ("nemo", "megatron"),
    ("hugging face", "fsdp"),
    ("unsloth", "fsdp"),
    ("liger", "fsdp"),
    ("torchtune", "fsdp"),
)
"""Stacks a row of no known family may name in its source or notes, in the estimator's framework ids
(the first named wins: Megatron-DeepSpeed runs DeepSpeed's engine). Hugging Face (transformers and
peft under its Trainer), Unsloth, Liger and torchtune run PyTorch: with one GPU and no sharding, the
PyTorch stack's rules (`fsdp`); named with DeepSpeed, DeepSpeed's."""


def framework_of(row: dict[str, str], fam: str) -> str | None:
    """The stack a row ran: its family's (FRAMEWORK_OF_FAMILY), else one its text names (its source,
    notes or ZeRO cell), else None (searched). A stack that cannot run the ZeRO stage the row states
    is not the row's: the stated stage wins, and the stack is searched among those that run it (FSDP
    has no ZeRO-1)."""
    text = " ".join(row.get(column) or "" for column in ("source", "notes", "zero")).lower()
    named = FRAMEWORK_OF_FAMILY.get(fam) or next(
        (framework for name, framework in FRAMEWORK_NAMES if name in text), None
    )
    zero = stated_zero(row)
    if (
        named is not None
        and zero is not None
        and zero not in framework_zero(named, count(row.get("pp"), "pp") or 1)
    ):
        return None
    return named


def stated_zero(row: dict[str, str]) -> int | None:
    """The row's ZeRO stage: its `zero` cell, else one its notes state (ZeRO-3, ZeRO stage 2, FSDP's
    FULL_SHARD or SHARD_GRAD_OP), else None."""
    cell = zero_cell(row.get("zero"))
    return cell if cell is not None else zero_in_words(row.get("notes") or "")


def stated_hybrid_shard(row: dict[str, str], gpus: int, gpus_per_node: int) -> bool:
    """Whether the row's run sharded hybrid: where its notes or ZeRO cell name FSDP's hybrid
    sharding (HYBRID_SHARD, HSDP, "hybrid shard") over more than one node. Every stack shards over
    all ranks unless told otherwise, so a row that does not say so ran the full shard."""
    text = (row.get("notes") or "") + " " + (row.get("zero") or "")
    named = re.search(r"hybrid[_ ]shard|\bHSDP\b", text, re.IGNORECASE)
    return bool(named) and gpus > gpus_per_node


CONTEXT_PARALLEL_WORDS = r"context[-_ ]parallel(?:ism)?(?:[-_ ]size)?|cp"
"""How a row's notes state its context-parallel size ("context parallel 2", "CP 16", "cp=2")."""


def stated_count(notes: str, name: str) -> int | None:
    """A count the row's notes give after `name` (a regular expression): "micro batch 4", "global
    batch 512 sequences", "mbs=2"; None where they give none, or give tokens ("global batch 4M
    tokens", "4,194,304 tokens")."""
    said = re.search(
        rf"\b(?:{name})\s*[=:]?\s*(\d+)\b(?![.,]\d|\s*(?:[kKMB]\b|tokens))", notes, re.IGNORECASE
    )
    return int(said.group(1)) if said else None


def stated_accumulation(notes: str) -> int:
    """Gradient-accumulation steps the row's notes state ("gradient accumulation 16", "grad accum
    3", "gradient_accumulation_steps: 4"), else 1."""
    return max(1, stated_count(notes, r"grad(?:ient)?[_ ]accum(?:ulation)?(?:[_ ]steps)?") or 1)


def stated_lora_rank(notes: str) -> int | None:
    """An adapter rank the row's notes state ("rank 16", "r=16", "lora_rank: 16"), else None."""
    return stated_count(notes, r"lora[_ ]rank|lora[_ ]r|rank|r")


NEMO_OPTIMIZER = "adam_precision_aware"
"""NeMo's full-parameter runs: the NeMo 24.07 container (NeMo 2.0.0rc1) gives Apex's distributed
Adam `store_param_remainders=True` whenever the optimizer is FP32 and the model BF16
(nemo/collections/nlp/models/language_modeling/megatron_base_model.py, setup_optimization), and
NeMo's performance configurations reduce gradients in BF16 (NeMo 2.3.0: `grad_reduce_in_fp32 =
False` in the performance mode of 18 recipes, llama2_7b, llama3_8b, llama3_70b and llama31_70b among
them, for pre-training and fine-tuning alike). Both together are the estimator's precision-aware
optimizer."""

H100_96GB_GIB = 94.0
"""torchtitan's H100 96 GB (HBM2e, 500 W) parts: usable memory ~94 GiB (assumed from the 96 GB
label)."""
H100_96GB_PEAK = {"bf16": (989 + 835) / 2, "fp16": (989 + 835) / 2, "fp8": (1979 + 1671) / 2}
"""The same parts' dense peaks: the source says "between SXM and NVL" (989 and 835 TFLOP/s BF16,
1979 and 1671 FP8, NVIDIA datasheets); the midpoint is taken (computed, not published)."""


def _gpu_of_row(catalog: Catalog, row: dict[str, str]) -> GPU:
    try:
        gpu = catalog.gpu(row["gpu"])
    except UnknownIdError as unknown:
        raise RowProblem(str(unknown)) from None
    if "H100 96GB" in row["source"] or "H100 96GB" in row.get("notes", ""):
        peak = gpu.peak_tflops.model_copy(update=H100_96GB_PEAK)
        gpu = gpu.model_copy(update={"memory_gib": H100_96GB_GIB, "peak_tflops": peak})
    return gpu


UNSTATED_INTERLEAVING = 2
"""Virtual stages per rank for an interleaved schedule whose count the source does not state: two,
the smallest interleaving (torchtitan splits the model into two stages per rank by default)."""


def pipeline_schedule(row: dict[str, str], notes: str) -> int | None:
    """Virtual stages per rank a row's schedule fixes, or None (searched): UNSTATED_INTERLEAVING
    where its notes say interleaved without a count; 1 where they name a 1F1B schedule, or where its
    stack pipelines on DeepSpeed's engine (Megatron-DeepSpeed: BLOOM, MT-NLG), whose schedule has no
    interleaved stages (deepspeed/runtime/pipe/schedule.py TrainSchedule)."""
    if "interleaved" in notes:
        return UNSTATED_INTERLEAVING
    if "1F1B schedule" in notes or "deepspeed" in ((row.get("source") or "") + " " + notes).lower():
        return 1
    return None


def whole_replicas_batch(sequences: int | None, dp: int | None) -> int | None:
    """A global batch of `sequences` that every one of `dp` replicas can take a whole share of: the
    nearest multiple of dp (at least dp) where a source's batch is a round figure in tokens ("2M
    tokens") that dp does not divide; the batch itself otherwise."""
    if sequences is None or not dp or sequences % dp == 0:
        return sequences
    return max(dp, round(sequences / dp) * dp)


def _torchtitan_stages_per_rank(notes: str) -> int:
    """Pipeline stages per rank of a torchtitan row: UNSTATED_INTERLEAVING when its schedule is
    interleaved."""
    return UNSTATED_INTERLEAVING if "interleaved" in notes else 1


def _torchtitan_micro_batch(replica: int, pp: int | None, notes: str) -> int:
    """torchtitan (Dec 2024) runs the local batch as one micro-batch without pipelining, and splits
    it into as many micro-batches as pipeline stages with it, all stages counted (its default: pp x
    the stages per rank of an interleaved schedule; torchtitan/parallelisms/pipelining_utils.py
    build_pipeline_schedule)."""
    return (
        max(1, replica // (pp * _torchtitan_stages_per_rank(notes))) if pp and pp > 1 else replica
    )


FUSED_ATTENTION_YEAR = 2023
"""FlashAttention (Dao et al., arXiv 2205.14135, May 2022) reached the training stacks in 2023:
PyTorch 2.0's scaled_dot_product_attention (March 2023), Megatron-LM's `--use-flash-attn`. Before,
Megatron-LM, Megatron-DeepSpeed and their kin stored and re-read the s x s attention scores (the
5as/h term of Korthikanti et al. 2022, whose selective recomputation exists to drop it)."""

FUSED_ATTENTION_NAMES = (
    "flashattention",
    "flash attention",
    "flash-attn",
    "xformers",
    "memory-efficient attention",
)
"""A row whose text names one of these ran a fused attention whatever its date (LLaMA used
xformers' kernel)."""

SEQUENCE_PARALLEL_YEAR = 2022
"""Sequence parallelism came with Korthikanti et al. 2022 (Megatron-LM); stacks described before
had none."""


def source_year(row: dict[str, str]) -> int | None:
    """The year a row's source is dated by: the earliest four-digit year in its source text."""
    years = [int(y) for y in re.findall(r"\b(?:19|20)\d\d\b", row.get("source") or "")]
    return min(years) if years else None


def before(row: dict[str, str], year: int) -> bool:
    """Whether the row's source is dated before `year` (a source without a date is not)."""
    dated = source_year(row)
    return dated is not None and dated < year


def fused_attention(row: dict[str, str]) -> bool:
    """Whether a row's stack ran a fused attention that stores no s x s scores: any row that names
    one, and every row not dated before FUSED_ATTENTION_YEAR."""
    text = ((row.get("source") or "") + " " + (row.get("notes") or "")).lower()
    return any(name in text for name in FUSED_ATTENTION_NAMES) or not before(
        row, FUSED_ATTENTION_YEAR
    )


RECOMPUTE_WORDS = {
    "none": ("none", "no", "off", "false", "disabled", "without", "no ac", "no checkpointing"),
    "full": (
        "full",
        "yes",
        "on",
        "true",
        "ac",
        "full ac",
        "activation checkpointing",
        "gradient checkpointing",
        "checkpointing",
        "block",
        "uniform",
    ),
    "selective": ("selective", "sac", "op", "op level", "selective ac", "selective op", "partial"),
    "offload": ("offload", "activation offload"),
    "full_offload": ("full offload", "checkpoint offload"),
}
"""The words a row's recompute cell may use, by the estimator's policy: AC and gradient
checkpointing are full recomputation, torchtitan's op-level SAC is the selective policy."""


def recompute_of(cell: str | None) -> str | None:
    """The estimator's recompute policy for a row's cell (RECOMPUTE_WORDS); blank is searched. A
    cell the bench cannot read is the row's problem."""
    if unstated(cell):
        return None
    text = main_words(cell)
    found = next((policy for policy, words in RECOMPUTE_WORDS.items() if text in words), None)
    if found is None:
        raise RowProblem(f"recompute {cell!r} is not a policy the bench reads "
                         f"({', '.join(RECOMPUTE_WORDS)})")
    return found


def precision_of(cell: str | None) -> str:
    """The training precision a row's cell names: FP8 (Transformer Engine, torchao), FP16 (mixed or
    pure), else BF16 (QLoRA's "nf4 + bf16" included)."""
    text = (cell or "").lower()
    if "fp8" in text or "float8" in text:
        return "fp8"
    return "fp16" if "fp16" in text or ("float16" in text and "bfloat16" not in text) else "bf16"


def memory_unit_per_gib(unit: str) -> float:
    """How many of the row's memory unit one GiB is: GiB and MiB as binary, GB and MB as decimal."""
    per_gib = {"gib": 1.0, "gb": GIB / 1e9, "mib": 1024.0, "mb": GIB / 1e6}
    key = unit.strip().lower()
    if key not in per_gib:
        raise RowProblem(f"memory unit {unit!r} is not one the bench reads (GiB, GB, MiB, MB)")
    return per_gib[key]


WHOLE_RUN_ASSUMED_GPUS = 2048
"""The GPU count of a whole run's GPU-hours row that does not give one: LLaMA-65B's published 2048
A100s (Touvron et al. 2023, section 2.4), as bench/data/whole_runs.csv assumes for the Llama 2 and 3
runs. GPU-hours depend on the count only through the layout's efficiency at that scale; wall-clock
hours would depend on it wholly, so an `hours` row must give it."""


def gpus_of(row: dict[str, str]) -> int:
    """The row's GPU count: its cell; else tp x pp x dp x cp where the row gives tp, pp and dp;
    else, for a whole run's GPU-hours, WHOLE_RUN_ASSUMED_GPUS."""
    cell = count(row.get("num_gpus"), "num_gpus")
    if cell is not None:
        return cell
    tp, pp, dp = (count(row.get(name), name) for name in ("tp", "pp", "dp"))
    if tp and pp and dp:
        return tp * pp * dp * (stated_count(row.get("notes") or "", CONTEXT_PARALLEL_WORDS) or 1)
    if row_metric(row) == "gpu_hours":
        return WHOLE_RUN_ASSUMED_GPUS
    raise RowProblem("num_gpus is blank and the row gives neither tp, pp and dp nor a GPU-hours "
                     "figure")


def method_of(row: dict[str, str]) -> str:
    """The training method of a throughput row: its `method` cell where the file has one
    (MEMORY_METHODS' words), else what its model name's last word or its notes say (QLoRA, or an NF4
    precision; LoRA; DPO; SFT or fine-tuning), else pre-training."""
    cell = (row.get("method") or "").strip().lower()
    if cell:
        if cell not in MEMORY_METHODS:
            raise RowProblem(f"method {cell!r} is not one of {', '.join(MEMORY_METHODS)}")
        return MEMORY_METHODS[cell]
    name = (row.get("model") or "").split()
    last = name[-1].lower() if len(name) > 1 else ""
    notes = (row.get("notes") or "").lower()
    if last == "qlora" or "qlora" in notes or "nf4" in (row.get("precision") or "").lower():
        return "qlora"
    if last == "lora" or re.search(r"\blora\b", notes):
        return "lora"
    if last == "dpo" or re.search(r"\bdpo\b", notes):
        return "dpo"
    if last == "sft" or "fine-tun" in notes or "finetun" in notes:
        return "full_finetune"
    return "pretrain"


def throughput_rows(path: Path) -> list[Row]:
    catalog = builtin_catalog()
    return _each_row(path, "throughput", "value", lambda row: [_throughput_row(catalog, row)])


EXPERT_PARALLEL_WORDS = r"ep|expert[-_ ]parallel(?:ism)?(?:[-_ ]size)?"
"""How a row's notes may state its expert parallelism: "EP64", "ep=8", "expert parallel 8"."""


def stated_expert_parallel(row: dict[str, str], notes: str) -> int | None:
    """A MoE row's expert-parallel size: its `ep` cell where its file has one, else its notes'
    (None: searched)."""
    return count(row.get("ep"), "ep") or stated_count(notes, EXPERT_PARALLEL_WORDS)


def _context_parallel(
    notes: str, gpus: int, tp: int | None, pp: int | None, dp: int | None
) -> int | None:
    """The row's context-parallel size: stated in its notes, else what its GPUs leave over tp x pp x
    dp when all three are given (Llama 3's CP 16 rows), else 1 where the row states tp (the older
    stacks had none), else searched."""
    stated = stated_count(notes, CONTEXT_PARALLEL_WORDS)
    if stated:
        return stated
    if tp and pp and dp:
        cp, rest = divmod(gpus, tp * pp * dp)
        if rest or cp < 1:
            raise RowProblem(f"tp x pp x dp = {tp * pp * dp} does not divide the row's {gpus} GPUs")
        return cp
    return 1 if tp else None


def _throughput_row(catalog: Catalog, row: dict[str, str]) -> Row:
    name = row["model"]
    method = method_of(row)
    card = _card(row, name)
    gpu = _gpu_of_row(catalog, row)
    gpus = gpus_of(row)
    seq = required(row, "seq_len", size)
    notes = row.get("notes") or ""
    fam = family(row["id"], row["source"])
    framework = framework_of(row, fam)
    vpp = stated_count(notes, r"virtual pipeline|virtual stages|vpp")
    tp, pp, dp = count(row["tp"], "tp"), count(row["pp"], "pp"), count(row["dp"], "dp")
    gbt = size(row["global_batch_tokens"], "global_batch_tokens")
    stated_gb = int(gbt // seq) if gbt else stated_count(notes, r"global[_ ]batch(?:[_ ]size)?")
    gb = whole_replicas_batch(stated_gb, dp)
    mb = count(row.get("micro_batch"), "micro_batch") or stated_count(notes, r"micro[-_ "
                                                                             r"]?batch(?:[_ "
                                                                             r"]size)?|mbs")
    zero = stated_zero(row)
    if fam == "torchtitan":
        if mb is None and gb and dp:
            mb = _torchtitan_micro_batch(gb // dp, pp, notes)
        if pp and pp > 1 and zero == 3:
            # torchtitan keeps parameters gathered under pipelining (no reshard after forward)
            zero = 2
    hybrid = stated_hybrid_shard(row, gpus, Cluster.of(gpu, gpus).gpus_per_node)
    spec = LayoutSpec(
        tp=tp,
        pp=pp,
        zero=zero,
        recompute=recompute_of(row["recompute"]),
        global_batch=gb,
        seq_len=seq,
        micro_batch=mb,
        precision=precision_of(row["precision"]),
        lora_rank=stated_lora_rank(notes) or 32,
        lora_targets="attention" if method == "lora" else "all",
        sequence_parallel=False if before(row, SEQUENCE_PARALLEL_YEAR) else None,
        flash_attention=fused_attention(row),
        loss=loss_of(row, fam),
        fused_modules=compiled(row),
        virtual_pipeline=vpp or pipeline_schedule(row, notes),
        framework=framework,
        cp=_context_parallel(notes, gpus, tp, pp, dp),
        ep=stated_expert_parallel(row, notes),
        optimizer=NEMO_OPTIMIZER
        if fam == "NeMo" and method != "lora" and zero in (None, 1)
        else "adam",
        hybrid_shard=hybrid,
    )
    est = _run(card, method, Cluster.of(gpu, gpus), spec, dp, speed=True)
    metric, value = row_metric(row), required(row, "value", number)
    whole_run = re.search(r"([\d.]+)T tokens in about (\d+) days", notes)
    if whole_run and metric == "tokens_per_s_per_gpu":
        # a whole run's average (tokens over wall days): compared with the run estimate, failures
        # and the whole-run overhead included, not with the steady-state step rate
        tokens = float(whole_run.group(1)) * 1e12
        pred = tokens / (est.run(tokens).hours * 3600.0) / gpus
    elif metric in ("gpu_hours", "hours"):  # a whole run: the tokens it trained on are in its notes
        pred = getattr(est.run(_run_tokens(notes)), metric)
    else:
        pred = _metric(
            est,
            metric,
            card,
            gpu,
            "fp8" if spec.precision == "fp8" and "fp8 peak" in notes.lower() else "bf16",
        )
        if metric in ("mfu", "hfu") and row["unit"].strip() != "%" and value <= 1.0:
            pred /= 100.0  # a utilization given as a fraction
    note = f"{fam}; " + (f"vpp={vpp}; " if vpp else "")
    if gb != stated_gb:
        note += f"global batch {stated_gb} sequences taken as {gb}, a multiple of dp={dp}; "
    if not est.fits_card:
        note += "estimated OOM"
    elif not est.fits:
        note += "at the card's limit"
    return Row(
        row["id"],
        "throughput",
        metric,
        value,
        pred,
        row["unit"],
        est.layout.short(),
        note,
        family=fam,
        estimate=est,
    )


def _run_tokens(notes: str) -> float:
    """The tokens of a whole-run row, from its notes ("15T tokens", "300B tokens", "2.0e12
    tokens")."""
    found = re.search(r"([\d.]+(?:e\d+)?)\s*([TB]?)\s*tokens", notes)
    if not found:
        raise RowProblem("a GPU-hours or hours row needs its tokens in the notes (e.g. '15T "
                         "tokens')")
    return float(found.group(1)) * {"T": 1e12, "B": 1e9, "": 1.0}[found.group(2)]


def _metric(est: Estimate, metric: str, card: ModelCard, gpu: GPU, peak_of: str = "bf16") -> float:
    """`metric` of the estimate; utilizations against the `peak_of` dense peak (BF16 unless the
    row says FP8)."""
    if metric == "achieved_tflops_per_gpu":
        shape = shape_of(card)
        lin, attn, _ = shape.forward_flops_per_token(est.layout.seq_len)
        extra = (lin + attn) if est.layout.recompute == "full" else (
            attn if est.layout.recompute == "selective" else 0.0)
        return (est.flops_per_token + extra) * est.tokens_per_s_per_gpu / 1e12
    if metric == "mfu":
        peak = gpu.peak_tflops.for_precision(peak_of) or 1.0
        return 100.0 * est.model_tflops_per_gpu / peak
    # hardware FLOPs: the recomputed forward counted too (Korthikanti et al. 2022)
    if metric == "hfu":
        peak = gpu.peak_tflops.for_precision(peak_of) or 1.0
        return 100.0 * _metric(est, "achieved_tflops_per_gpu", card, gpu) / peak
    if metric == "model_tflops_per_gpu":
        return est.model_tflops_per_gpu
    if metric == "tokens_per_s_per_gpu":
        return est.tokens_per_s_per_gpu
    if metric == "tokens_per_s":  # the whole cluster's
        return est.tokens_per_s
    if metric in ("samples_per_s", "sequences_per_s"):
        return est.tokens_per_s / est.layout.seq_len
    if metric == "samples_per_s_per_gpu":
        return est.tokens_per_s_per_gpu / est.layout.seq_len
    if metric in ("step_time_s", "iteration_time_s"):
        return est.step_time_s
    raise RowProblem(f"metric {metric!r} is not one the bench converts (achieved_tflops_per_gpu, "
                     "tflops_per_gpu, mfu, hfu, model_tflops_per_gpu, tokens_per_s_per_gpu, "
                     "tokens_per_s, samples_per_s, samples_per_s_per_gpu, step_time_s, gpu_hours "
                     "or hours with the tokens in the notes)")


def row_metric(row: dict[str, str]) -> str:
    """The row's metric in `_metric`'s names: an unqualified `tflops_per_gpu` counts the recomputed
    forward where the source is of the years that reported "achieved" FLOP/s (before 2023: Narayanan
    et al. 2021's formula, used by the Megatron-DeepSpeed runs of 2022) and the run recomputed,
    model FLOP/s otherwise."""
    metric = metric_name(row.get("metric") or "", row.get("unit") or "")
    if metric == "tflops_per_gpu":
        old = before(row, FUSED_ATTENTION_YEAR) and recompute_of(row.get("recompute")) == "full"
        return "achieved_tflops_per_gpu" if old else "model_tflops_per_gpu"
    return metric


def _states_gb(est: Estimate) -> float:
    m = est.memory
    return (m.weights_gib + m.gradients_gib + m.optimizer_gib) * GIB / 1e9


IMPLAUSIBLE_MFU = 0.85
"""Above this model-FLOPs utilization a single-GPU fine-tuning speed is not physically credible: the
best published large-scale runs reach 40-60% MFU (Megatron rows in throughput_public.csv)."""


MEMORY_METHODS = {
    "full": "full_finetune",
    "full_finetune": "full_finetune",
    "sft": "full_finetune",
    "pretrain": "pretrain",
    "continued_pretrain": "continued_pretrain",
    "lora": "lora",
    "qlora": "qlora",
    "dpo": "dpo",
    "lora_dpo": "lora_dpo",
    "qlora_dpo": "qlora_dpo",
}
"""A row's `method` column, in the estimator's names."""

_LLAMA1 = (
    "LLaMA paper (Touvron et al. 2023) table 2; SwiGLU of 2/3 x 4d rounded up to a multiple of 256"
)
ROW_SHAPES: dict[str, dict[str, Any]] = {
    "llama-7b": dict(
        params=6.7e9,
        layers=32,
        hidden_size=4096,
        ffn_hidden_size=11008,
        num_heads=32,
        num_kv_heads=32,
        vocab_size=32000,
        max_positions=2048,
        ffn_type="swiglu",
        source=_LLAMA1,
    ),
    "llama-13b": dict(
        params=13.0e9,
        layers=40,
        hidden_size=5120,
        ffn_hidden_size=13824,
        num_heads=40,
        num_kv_heads=40,
        vocab_size=32000,
        max_positions=2048,
        ffn_type="swiglu",
        source=_LLAMA1,
    ),
    "llama-33b": dict(
        params=32.5e9,
        layers=60,
        hidden_size=6656,
        ffn_hidden_size=17920,
        num_heads=52,
        num_kv_heads=52,
        vocab_size=32000,
        max_positions=2048,
        ffn_type="swiglu",
        source=_LLAMA1,
    ),
    "llama-65b": dict(
        params=65.2e9,
        layers=80,
        hidden_size=8192,
        ffn_hidden_size=22016,
        num_heads=64,
        num_kv_heads=64,
        vocab_size=32000,
        max_positions=2048,
        ffn_type="swiglu",
        source=_LLAMA1,
    ),
    "bloom-176b": dict(
        params=176.2e9,
        layers=70,
        hidden_size=14336,
        ffn_hidden_size=4 * 14336,
        num_heads=112,
        num_kv_heads=112,
        vocab_size=250680,
        max_positions=2048,
        ffn_type="gelu",
        tied_embeddings=True,
        source="BLOOM paper (BigScience Workshop 2022) table 3 (176,247M parameters; FFN 4h, GELU)",
    ),
    "opt-175b": dict(
        params=175e9,
        layers=96,
        hidden_size=12288,
        ffn_hidden_size=4 * 12288,
        num_heads=96,
        num_kv_heads=96,
        vocab_size=50272,
        max_positions=2048,
        ffn_type="gelu",
        tied_embeddings=True,
        source="OPT paper (Zhang et al. 2022) table 1 (FFN 4h with ReLU: the two-matrix FFN the "
        "card calls gelu); vocabulary of the released OPT configs",
    ),
}
"""Shapes of models that rows name and the catalog lacks (the older open models of published whole
runs and memory rows), by their names lower-cased with spaces as dashes ("LLaMA 65B" is
llama-65b)."""


def row_shape_card(name: str) -> ModelCard | None:
    """The ROW_SHAPES card a row's model name names, else None."""
    key = re.sub(r"[\s_]+", "-", name.strip().lower())
    shape = ROW_SHAPES.get(key)
    return None if shape is None else ModelCard(id=key, **shape)


def memory_rows(path: Path) -> list[Row]:
    catalog = builtin_catalog()
    return _each_row(path, "memory", "peak_memory", lambda row: _memory_row(catalog, row))


def _row_model_card(row: dict[str, str]) -> ModelCard:
    """A ROW_SHAPES card (at the row's parameter count where it gives one), else the catalog's or
    one from the row's shape columns (`_card`)."""
    card = row_shape_card(row["model"])
    if card is None:
        return _card(row, row["model"])
    params = (row.get("params_b") or "").strip()
    return card.model_copy(update={"params": number(params, "params_b") * 1e9}) if params else card


DEFAULT_ZERO_OF_FRAMEWORK = {"fsdp": 3, "megatron": 1}
"""A multi-GPU memory row's sharding where the row leaves it blank: FSDP's default FULL_SHARD
(torchtune, torchtitan and llm-foundry reshard after forward unless told not to), Megatron's
distributed optimizer (NeMo's recipes turn it on); other stacks none."""


def _lora_rank(torchtune: bool, gpus: int) -> int:
    """The adapter rank of a memory row: torchtune's single-device recipes use rank 8, its
    distributed ones rank 16 (0.3.1 recipes/configs/llama3_1/8B_lora_single_device.yaml,
    70B_lora.yaml, 405B_qlora.yaml); the QLoRA paper rank 64."""
    if torchtune:
        return 8 if gpus == 1 else 16
    return 64


def _named_optimizer(stated: str) -> str | None:
    """A low-memory optimizer the row's optimizer cell names (bitsandbytes' 8-bit AdamW, paged or
    not, Adafactor, SGD), in the estimator's ids; None for AdamW/Adam and what the cell leaves
    unstated."""
    text = stated.lower().replace("_", " ").replace("-", " ")
    if "8 bit" in text or "8bit" in text:
        return "paged_adam_8bit" if "paged" in text else "adam_8bit"
    return next((name for name in ("adafactor", "sgd") if name in text), None)


def _memory_row_optimizer(stated: str, fam: str, state_offload: bool) -> str:
    """The optimizer a memory row ran. torchtune trains in pure BF16 (dtype bf16, no mixed
    precision: its AdamW keeps BF16 moments and no fp32 master), and its single-device low-memory
    recipes, whose optimizer the rows leave unstated, run bitsandbytes' paged 8-bit AdamW inside the
    backward pass (torchtune 0.3.1 recipes/configs/llama3_1/8B_full_single_device.yaml); its
    CPU-offload recipe steps a fused torch AdamW on the CPU (70B_full.yaml), which an 8-bit GPU
    optimizer cannot. Other stacks: mixed-precision AdamW, or the low-memory optimizer where the row
    leaves it unstated."""
    named = _named_optimizer(stated)
    if named:
        return named
    if fam == "torchtune" and ("not stated" not in stated or state_offload):
        return "adam_bf16"
    return "paged_adam_8bit" if "not stated" in stated else "adam"


def _memory_row(catalog: Catalog, row: dict[str, str], card_gib: float | None = None) -> list[Row]:
    """The row's estimate; `card_gib`: on a card of that memory instead of the row's (the
    longest-context tables, context_limits.py)."""
    rid = row["id"]
    unit = row["unit"]
    published = required(row, "peak_memory", number)
    if row["method"] not in MEMORY_METHODS:
        raise RowProblem(f"method {row['method']!r} is not one of {', '.join(MEMORY_METHODS)}")
    method = MEMORY_METHODS[row["method"]]
    if rid.startswith("ZERO"):
        card = ModelCard(id="gpt-7.5b", params=7.5e9, layers=36, hidden_size=4096,
                         ffn_hidden_size=16384, ffn_type="gelu", num_heads=32, num_kv_heads=32,
                         vocab_size=51200,
                         max_positions=2048, source="ZeRO paper 7.5B")
        cluster = Cluster.of(catalog.gpu("a100-80gb"), 64)
        stage = required(row, "zero", lambda text, _: zero_cell(text))
        layout = Layout(tp=1, pp=1, dp=64, zero=stage, recompute="none", micro_batch=1,
                        global_batch=64, seq_len=1024, precision="fp16", sequence_parallel=False,
                        lora_rank=None)
        est = estimate(card, method, cluster, layout)
        return [Row(rid, "memory", "model states", published, _states_gb(est), unit,
                    layout.short(), "model states only", family=family(rid), estimate=est)]
    card = _row_model_card(row)
    bound = rid == "QLORA-01"
    gpu = catalog.gpu("rtx-a6000") if row["gpu"] == "48gb-class" else _gpu_of_row(catalog, row)
    if card_gib is not None:
        gpu = gpu.model_copy(update={"memory_gib": card_gib})
    fam = family(rid, row["source"])
    torchtune = fam == "torchtune"  # (by the row's id or its source)
    notes = row.get("notes") or ""
    state_offload = "cpu offload" in notes.lower() or None
    optimizer = _memory_row_optimizer(row["optimizer"], fam, bool(state_offload))
    tp, pp = count(row["tp"], "tp") or 1, count(row["pp"], "pp") or 1
    gpus = required(row, "num_gpus", count)
    cp = _context_parallel(notes, gpus, tp, pp, None) or 1
    if gpus % (tp * pp * cp):
        raise RowProblem(f"tp x pp x cp = {tp * pp * cp} does not divide the row's {gpus} GPUs")
    dp = gpus // (tp * pp * cp)
    mb = count(row["micro_batch"], "micro_batch") or 1
    # the column is per GPU: each data-parallel rank runs one micro-batch per accumulation step, and
    # as many steps as the notes state (FSDP SHARD_GRAD_OP holds unsharded gradients across them)
    gb = mb * dp * stated_accumulation(notes)
    framework = framework_of(row, fam)
    zero = stated_zero(row)
    # unstated: the stack's default sharding (a memory figure depends on it too much to search)
    if zero is None:
        zero = 0 if dp * cp == 1 else DEFAULT_ZERO_OF_FRAMEWORK.get(framework or "", 0)
    vpp: int | None = 1
    # the column is torchtitan's local batch (per data-parallel rank), split over pp
    if fam == "torchtitan":
        mb = _torchtitan_micro_batch(mb, pp, notes)
        if pp > 1 and zero == 3:
            zero = 2  # torchtitan keeps parameters gathered under pipelining
        vpp = _torchtitan_stages_per_rank(notes)
    spec = LayoutSpec(
        tp=tp,
        pp=pp,
        zero=zero,
        cp=cp,
        recompute=recompute_of(row["recompute"]),
        micro_batch=mb,
        global_batch=gb,
        seq_len=size(row["seq_len"], "seq_len") or 512,
        precision="fp8" if precision_of(row["precision"]) == "fp8" else "bf16",
        lora_rank=stated_lora_rank(notes) or _lora_rank(torchtune, gpus),
        lora_targets=stated_lora_targets(notes),
        optimizer=optimizer,
        loss=loss_of(row, fam),
        fused_modules=compiled(row),
        framework=framework,
        virtual_pipeline=vpp,
        state_offload=state_offload,
        flash_attention=fused_attention(row),
        sequence_parallel=False if before(row, SEQUENCE_PARALLEL_YEAR) else None,
        hybrid_shard=stated_hybrid_shard(row, gpus, Cluster.of(gpu, gpus).gpus_per_node),
    )
    est = _run(card, method, Cluster.of(gpu, gpus), spec, None)
    total_gib = est.memory.total_gib
    if torchtune:
        # torchtune logs torch.cuda memory stats: the caching allocator's, without the CUDA context
        # or the buffers NCCL allocates for itself
        total_gib -= CUDA_CONTEXT_GIB + (NCCL_BUFFERS_GIB if gpus > 1 else 0.0)
    pred = total_gib * memory_unit_per_gib(unit)
    note = "upper bound" if bound else ""
    tok = re.search(r"(\d+) tok/s", notes)
    implausible = ""
    if tok:
        # Model FLOPs only (no recomputation counted): a floor on the work the stated speed needs.
        implied_mfu = (
            float(tok.group(1)) * est.flops_per_token / ((gpu.peak_tflops.bf16 or 1.0) * 1e12)
        )
        note += f"published speed implies MFU {implied_mfu:.0%}"
        if implied_mfu > IMPLAUSIBLE_MFU:
            implausible = (f"its published {tok.group(1)} tok/s needs {implied_mfu:.0%} of the "
                           f"{gpu.id} BF16 peak even without recomputation")
    out = [Row(rid, "memory", "peak memory", published, pred, unit, est.layout.short(), note,
               bound, implausible, family=fam, estimate=est)]
    if tok:
        out.append(
            Row(
                rid + "t",
                "throughput",
                "tokens_per_s_per_gpu (notes)",
                float(tok.group(1)),
                est.tokens_per_s_per_gpu,
                "tok/s",
                est.layout.short(),
                "from the row's notes",
                implausible=implausible,
            )
        )
    return out


def _stats(rows: list[Row]) -> tuple[float, float, Row | None]:
    errs = [abs(r.error) for r in rows if r.error is not None]
    if not errs:
        return float("nan"), float("nan"), None
    errs_sorted = sorted(errs)
    p90 = errs_sorted[min(len(errs_sorted) - 1, round(0.9 * (len(errs_sorted) - 1)))]
    worst = max((r for r in rows if r.error is not None), key=lambda r: abs(r.error or 0.0))
    return statistics.median(errs), p90, worst


def _calibration(rows: list[Row]) -> list[Row]:
    """Rows that calibrate: the CSV rows (not the torchtune speeds from notes) with an estimate."""
    return [
        r
        for r in rows
        if r.error is not None
        and not r.id.endswith("t")
        and r.estimate is not None
        and not r.implausible
    ]


def _report_families(rows: list[Row]) -> None:
    print(f"{'family':14} {'kind':10} {'n':>3} {'median |err|':>13} {'p90 |err|':>10}")
    for fam in dict.fromkeys(r.family for r in rows if r.family):
        for kind in ("throughput", "memory"):
            group = [r for r in _calibration(rows) if r.family == fam and r.kind == kind]
            if group:
                med, p90, _ = _stats(group)
                print(f"{fam:14} {kind:10} {len(group):3} {med:13.1%} {p90:10.1%}")


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _conformal(ratios: list[float]) -> str:
    lo, hi = scale_bands.conformal_band(ratios)
    return f"({lo:.3f}, {hi:.3f})"


def _report_bands(rows: list[Row]) -> None:
    """Derive the p10-p90 bands of planner/estimate/band.py from the residuals, and report how many
    published values fall inside the bands the estimator now uses."""
    cal = _calibration(rows)
    print("error bands (published / predicted, p10-p90) derived from these rows (interpolated "
          "quantiles; split-conformal at 80%, band.py's rule):")
    for cls in ("megatron", "fsdp"):
        ratios = [r.published / r.predicted for r in cal if r.kind == "throughput" and r.predicted
                  and band_class(r.estimate.layout) == cls]  # type: ignore[union-attr]
        if ratios:
            print(f"  throughput {cls:9} n={len(ratios):2}  ({_quantile(ratios, 0.1):.2f}, "
                  f"{_quantile(ratios, 0.9):.2f})   conformal {_conformal(ratios)}   in band.py: "
                  f"{THROUGHPUT_BAND[cls]}")
    mem = [r.published / r.predicted for r in cal if r.kind == "memory" and r.predicted
           and not r.id.startswith("ZERO") and not r.bound]
    if mem:
        print(f"  memory              n={len(mem):2}  ({_quantile(mem, 0.1):.2f}, "
              f"{_quantile(mem, 0.9):.2f})   conformal {_conformal(mem)}   in band.py: "
              f"{MEMORY_BAND}")
    inside = total = 0
    for r in cal:
        if r.id.startswith("ZERO") or r.bound or not r.predicted:
            continue
        band = (throughput_band(r.estimate.layout, r.estimate.uncalibrated)  # type: ignore[union-attr]
                if r.kind == "throughput" else MEMORY_BAND)
        total += 1
        inside += band[0] * r.predicted <= r.published <= band[1] * r.predicted
    print(f"band coverage: {inside}/{total} = {inside / max(1, total):.0%} of published values "
          "inside p10-p90 (target 70-90%)")


LLAMA3_RUN_GPUS = 16_384
"""H100s of the Llama 3 405B run whose interruptions and goodput the failure model follows."""


@dataclass
class WholeRun:
    id: str
    published_gpu_hours: float
    predicted_gpu_hours: float
    # steady-state steps plus the failure model, before the whole-run overhead
    steady_gpu_hours: float
    layout: str
    note: str
    gpus: int = 0
    # the estimate's p10-p90 GPU-hours (run_estimate's hours_range x GPUs; over an unpublished
    # count's range, the lowest and highest of them)
    band_gpu_hours: tuple[float, float] = (0.0, 0.0)
    # p10-p90 of the throughput as multiples of the estimate's (band.throughput_band)
    throughput_band: tuple[float, float] = (1.0, 1.0)
    # the steady-state GPU-hours at the range's counts as multiples of the geometric mean's (1, 1
    # where the count is published or fixed)
    count_spread: tuple[float, float] = (1.0, 1.0)

    @property
    def error(self) -> float:
        return (self.predicted_gpu_hours - self.published_gpu_hours) / self.published_gpu_hours

    @property
    def ratio(self) -> float:
        """What the whole-run overhead would have to be for this run alone."""
        return self.published_gpu_hours / self.steady_gpu_hours


def whole_runs(path: Path) -> tuple[list[WholeRun], list[tuple[str, str]]]:
    """Published GPU-hours of whole pre-training runs against `run_estimate` (steady-state steps at
    the searched layout, the failure model and the whole-run overhead of planner/estimate/band.py),
    and the (id, why) of each row that could not be estimated."""
    if not path.is_file():
        return [], []
    catalog = builtin_catalog()
    out: list[WholeRun] = []
    failed: list[tuple[str, str]] = []
    with path.open(newline="") as f:
        for row in _with_sources(csv.DictReader(f)):
            done = _attempt(lambda row=row: _whole_run(catalog, row))  # type: ignore[misc]
            if isinstance(done, str):
                failed.append((row.get("id") or "?", done))
            else:
                out.append(done)
    return out, failed


def gpu_counts(row: dict[str, str]) -> list[int]:
    """The GPU counts a whole run is estimated at: its own; where the count is not published and
    the row's `gpus_range` gives the range its team's published counts allow ("2048-16384"), each
    doubling of the low end up to the high end, taken as equally likely (a log-uniform count)."""
    stated = gpus_of(row)
    span = (row.get("gpus_range") or "").replace(",", "").split("-")
    if len(span) != 2 or (row.get("gpus_stated") or "").strip().lower() == "yes":
        return [stated]
    lo, hi = (required({"n": end}, "n", count) for end in span)
    if not 0 < lo <= hi:
        raise RowProblem(f"gpus_range: {row['gpus_range']!r} is not low-high")
    counts = [lo]
    while counts[-1] * 2 <= hi:
        counts.append(counts[-1] * 2)
    return counts


def _geometric_mean(values: list[float]) -> float:
    return math.exp(statistics.fmean(math.log(v) for v in values))


def _whole_run(catalog: Catalog, row: dict[str, str]) -> WholeRun:
    """A whole run at each of its GPU counts (`gpu_counts`): the prediction is the geometric mean
    of their GPU-hours, the band reaches from the lowest count's p10 to the highest's p90."""
    overhead, _ = whole_run_overhead("pretrain")
    runs = [_whole_run_at(catalog, row, n) for n in gpu_counts(row)]
    steady = [gpu_hours / overhead for _, gpu_hours, _ in runs]
    mid = _geometric_mean(steady)
    est, _, _ = runs[0]
    layouts = est.layout.short() + (f" (at {runs[0][0].cluster.gpus:,}; {len(runs)} counts to "
                                     f"{runs[-1][0].cluster.gpus:,})" if len(runs) > 1 else "")
    lo, hi = throughput_band(est.layout, est.uncalibrated)
    return WholeRun(row["id"], required(row, "gpu_hours", number),
                    _geometric_mean([g for _, g, _ in runs]), mid, layouts, row.get("notes") or "",
                    gpus_of(row), (min(b[0] for _, _, b in runs), max(b[1] for _, _, b in runs)),
                    (lo, hi), (min(steady) / mid, max(steady) / mid))


def _whole_run_at(
    catalog: Catalog, row: dict[str, str], gpus: int
) -> tuple[Estimate, float, tuple[float, float]]:
    """The estimate of a whole run on `gpus` GPUs, its GPU-hours and their p10-p90."""
    # a stated stack maturity (a `stack_maturity` column: mature, new) times the whole run as the
    # estimator does; the needed overhead stays a mature stack's (the steady state is divided by
    # the mature overhead alone)
    maturity = (row.get("stack_maturity") or "").strip().lower() or None
    if maturity is not None and maturity not in STACK_MATURITIES:
        raise RowProblem(f"stack_maturity: {maturity!r} is not one of {STACK_MATURITIES}")
    cluster = replace(Cluster.of(_gpu_of_row(catalog, row), gpus), stack_maturity=maturity)
    seq = required(row, "seq_len", size)
    gbt = size(row["global_batch_tokens"], "global_batch_tokens")
    notes = row.get("notes") or ""
    # what the row's optional columns or its notes state: the precision (DeepSeek-V3 trained in
    # FP8), context and expert parallelism
    spec = LayoutSpec(
        tp=count(row["tp"], "tp"),
        pp=count(row["pp"], "pp"),
        seq_len=seq,
        global_batch=int(gbt // seq) if gbt else None,
        flash_attention=fused_attention(row),
        sequence_parallel=False if before(row, SEQUENCE_PARALLEL_YEAR) else None,
        hybrid_shard=False,
        precision=precision_of(row.get("precision") or notes),
        virtual_pipeline=pipeline_schedule(row, notes),
        cp=count(row.get("cp"), "cp") or stated_count(notes, CONTEXT_PARALLEL_WORDS),
        ep=stated_expert_parallel(row, notes),
    )
    est = _run(_row_model_card(row), "pretrain", cluster, spec, None, speed=True)
    run = est.run(required(row, "tokens", number))
    return est, run.gpu_hours, (run.hours_range[0] * gpus, run.hours_range[1] * gpus)


def _report_whole_runs(runs: list[WholeRun], failed: list[tuple[str, str]]) -> None:
    for rid, why in failed:
        print(f"{rid:11} not estimated: {why}")
    if not runs:
        return
    print(f"{'id':11} {'published GPU-h':>16} {'predicted':>12} {'error':>7} "
          f"{'needed overhead':>16}  layout / note")
    for r in runs:
        print(f"{r.id:11} {r.published_gpu_hours:16,.0f} {r.predicted_gpu_hours:12,.0f} "
              f"{r.error:+7.1%} {r.ratio:16.2f}  {r.layout}; {r.note}")
    errs = sorted(abs(r.error) for r in runs)
    ratios = sorted(r.ratio for r in runs)
    overhead, band = whole_run_overhead("pretrain")
    print(f"whole runs (whole_runs.csv): n={len(runs)}  median |err| "
          f"{statistics.median(errs):.1%}  worst {max(runs, key=lambda r: abs(r.error)).id}")
    print(f"  the overhead these runs imply: median {statistics.median(ratios):.2f} (range "
          f"{ratios[0]:.2f}-{ratios[-1]:.2f}); in band.py: {overhead:g} with p10-p90 {band}")
    # The failure model's defaults against the one published goodput figure
    # (reference/reliability.md).
    mtbf_h = DEFAULT_GPU_MTBF_H / LLAMA3_RUN_GPUS
    f = failure_overhead_fraction(
        DEFAULT_CHECKPOINT_WRITE_MIN / 60, DEFAULT_RESTART_MIN / 60, mtbf_h
    )
    print(f"  failure model at Llama 3's 16,384 GPUs (job MTBF {mtbf_h:.1f} h): effective training "
          f"time {1 / (1 + f):.1%} (published: >{EFFECTIVE_TRAINING_TIME:.0%})")


OWN_MEASUREMENTS = DEFAULT_DIR / "measured_h200.csv"
"""This project's own training steps on one H200 (bench/device/README.md): Hugging Face Llama-family
models run eagerly (FSDP2 on one rank for full fine-tuning, peft LoRA under autocast). Reported
apart from the published rows; not in the calibration statistics or the bands."""


def own_rows(path: Path) -> tuple[list[Row], list[tuple[str, bool]], list[tuple[str, bool]]]:
    """Throughput and memory rows of the own measurements, each out-of-memory run with whether the
    estimate also judges it not to fit the card, and each run that ran with whether it is judged to.
    Memory counts only runs measured in a clean process ("clean"; runs after an out-of-memory error
    or the saved-activation probes held 2-12 GiB more, README)."""
    catalog = builtin_catalog()
    rows: list[Row] = []
    ooms: list[tuple[str, bool]] = []
    ran: list[tuple[str, bool]] = []
    with path.open(newline="") as f:
        for row in csv.DictReader(f):
            mb = int(row["micro_batch"])
            spec = LayoutSpec(
                tp=1,
                pp=1,
                cp=1,
                zero=0,
                recompute=row["recompute"],
                micro_batch=mb,
                global_batch=mb,
                seq_len=int(row["seq_len"]),
                lora_rank=16,
                framework="fsdp",
            )
            found = _run(catalog.model(row["model"]), row["method"],
                         Cluster.of(catalog.gpu(row["gpu"]), int(row["num_gpus"])), spec, 1)
            assert found is not None, row["id"]
            est = found
            layout = est.layout.short()
            if row["memory"] == "oom":
                ooms.append((row["id"], not est.fits_card))
                continue
            ran.append((row["id"], est.fits_card))
            rows.append(
                Row(
                    row["id"],
                    "throughput",
                    "tokens_per_s",
                    float(row["tokens_per_s"]),
                    est.tokens_per_s,
                    "tok/s",
                    layout,
                    row["notes"],
                    family="own H200",
                    estimate=est,
                )
            )
            if row["memory"] == "clean":
                rows.append(
                    Row(
                        row["id"] + "m",
                        "memory",
                        "GPU memory in use at the peak",
                        float(row["device_used_gib"]),
                        est.memory.total_gib,
                        "GiB",
                        layout,
                        f"{float(row['peak_allocated_gib']):.1f} GiB allocated",
                        family="own H200",
                        estimate=est,
                    )
                )
    return rows, ooms, ran


def _print_rows(rows: list[Row]) -> None:
    for r in rows:
        pred = "-" if r.predicted is None else f"{r.predicted:10.1f}"
        err = "-" if r.error is None else f"{r.error:+7.1%}"
        print(f"{r.id:10} {r.metric[:30]:30} {r.published:10.1f} {pred:>10} {r.unit:7} {err:>7}  "
              f"{r.layout} {r.note}")


def _print_stats(label: str, group: list[Row], width: int = 44) -> None:
    med, p90, worst = _stats(group)
    worst_text = f"worst {worst.id} {worst.error:+.1%}" if worst and worst.error is not None else ""
    print(
        f"{label:{width}} n={len(group):2}  median |err| {med:6.1%}  p90 {p90:6.1%}  {worst_text}"
    )


def _report_own(path: Path) -> None:
    rows, ooms, ran = own_rows(path)
    print(f"own measurements ({path.name}; not in the statistics above):")
    _print_rows(rows)
    for kind in ("throughput", "memory"):
        _print_stats(f"  {kind}", [r for r in rows if r.kind == kind], width=12)
    print(f"  out-of-memory runs judged not to fit: {sum(ok for _, ok in ooms)}/{len(ooms)}")
    tight = [run_id for run_id, ok in ran if not ok]
    print(f"  runs that ran judged to fit the card: {len(ran) - len(tight)}/{len(ran)}"
          + (f" (not: {', '.join(tight)})" if tight else ""))


def context_limit_fits(vdir: Path) -> context_limits.Fits:
    """Whether a memory row of the folder (by id), at a context on a card of a memory, is judged
    to fit the card (`Estimate.fits_card`, as the "judged to fit" line judges the rows), or its
    reserved peak is within it (`squeezed` False)."""
    catalog = builtin_catalog()
    settings = {
        row["id"]: row
        for path in sorted(vdir.glob("memory*.csv"))
        for row in _with_sources(csv.DictReader(path.open(newline="", encoding="utf-8")))
    }

    def fits(setting: str, context: int, card_gib: float, squeezed: bool) -> bool:
        row = dict(settings[setting], seq_len=str(context))
        est = _memory_row(catalog, row, card_gib)[0].estimate
        if est is None:
            return False
        return est.fits_card if squeezed else est.memory.total_gib <= card_gib

    return fits


def _report_context_limits(vdir: Path) -> None:
    path = vdir / context_limits.FILE_NAME
    if path.is_file():
        cells = context_limits.read_cells(path)
        context_limits.report(context_limits.judge(cells, context_limit_fits(vdir)))


def public_rows(vdir: Path) -> list[Row] | None:
    """Every throughput and memory row of the validation folder with its estimate; None, having said
    why on stderr, when `vdir` is not a folder (the benches then exit 2)."""
    if not vdir.is_dir():
        print(f"error: --validation-dir: {vdir} is not a directory", file=sys.stderr)
        return None
    return _rows_of(vdir, "throughput", throughput_rows) + _rows_of(vdir, "memory", memory_rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--validation-dir", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--csv", type=Path, default=None, help="also write the per-row table here")
    args = parser.parse_args(argv)
    vdir: Path = args.validation_dir
    rows = public_rows(vdir)
    if rows is None:
        return 2
    print(f"{'id':10} {'metric':30} {'published':>10} {'predicted':>10} {'unit':7} {'error':>7}  "
          "layout / note")
    _print_rows(rows)
    print()
    groups = {
        "throughput (throughput*.csv)": [
            r for r in rows if r.kind == "throughput" and not r.id.endswith("t")
        ],
        "throughput (+ torchtune tok/s from notes)": [r for r in rows if r.kind == "throughput"],
        "memory (memory*.csv)": [r for r in rows if r.kind == "memory"],
        "memory, rows with MFU-consistent figures": [
            r for r in rows if r.kind == "memory" and not r.implausible
        ],
    }
    for label, group in groups.items():
        _print_stats(label, group)
    for r in rows:
        if r.implausible and r.kind == "memory":
            print(f"  {r.id}: the source's figures are not consistent with its stated settings: "
                  f"{r.implausible} (max {IMPLAUSIBLE_MFU:.0%} here), so some unstated setting "
                  "differs")
    print()
    stated = [
        r
        for r in rows
        if r.estimate is not None
        and not r.id.endswith("t")
        and not r.id.startswith("ZERO")
        and not r.bound
    ]
    # (runs at all: the peak with the allocator's cache squeezed within the card,
    # Estimate.fits_card)
    too_big = [r.id for r in stated if not r.estimate.fits_card]  # type: ignore[union-attr]
    print(f"published configurations judged to fit: {len(stated) - len(too_big)}/{len(stated)}"
          + (f" (not: {', '.join(too_big)})" if too_big else ""))
    skipped = [r for r in rows if r.problem]
    if skipped:
        print(f"rows not estimated: {len(skipped)} ({', '.join(r.id for r in skipped)}; why: in "
              "the table above)")
    _report_context_limits(vdir)
    print()
    _report_families(rows)
    print()
    _report_bands(rows)
    print()
    runs: list[WholeRun] = []
    runs_failed: list[tuple[str, str]] = []
    for path in sorted(vdir.glob("whole_runs*.csv")):
        more, failed = whole_runs(path)
        runs += more
        runs_failed += failed
    _report_whole_runs(runs, runs_failed)
    print()
    scale_bands.report(_calibration(rows), runs)
    if OWN_MEASUREMENTS.is_file():
        print()
        _report_own(OWN_MEASUREMENTS)
    if args.csv:
        with args.csv.open("w", newline="") as f:
            w = csv.writer(f)
            w.writerow(
                ["id", "metric", "published", "predicted", "unit", "error", "layout", "note"]
            )
            for r in rows:
                w.writerow(
                    [r.id, r.metric, r.published, r.predicted, r.unit, r.error, r.layout, r.note]
                )
    bugs = [r.id for r in rows if r.problem.startswith("bug:")]
    bugs += [rid for rid, why in runs_failed if why.startswith("bug:")]
    if bugs:
        print(f"the estimator raised on {len(bugs)} rows: {', '.join(bugs)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
