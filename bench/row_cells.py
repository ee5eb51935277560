"""How bench/validate_estimates.py reads the cells of a published row, written as sources print
them.

Numbers with thousands separators or a trailing ".0" ("1,024", "2048.0"), sizes with a suffix ("8k"
tokens of sequence, a "4M"-token batch: binary, as papers mean them, 8k = 8,192 and 4M = 4,194,304),
cells that say nothing ("", "-", "n/a", "auto"), a ZeRO stage or FSDP sharding named in words
("ZeRO-3", "3 (FSDP)", "FULL_SHARD"), a recomputation policy with its explanation beside it
("selective (attention)") and a metric named by its unit ("TFLOPs/GPU", "tokens/s/GPU", "MFU %").
What a cell says that none of these readers knows is the row's problem (RowProblem), reported beside
the other rows, never the end of the run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TypeVar


class RowProblem(Exception):
    """A row the bench cannot state to the estimator: reported beside the others and left out of the
    statistics, never the end of the whole run (the bench is also run on rows it has not seen)."""


UNSTATED = frozenset(
    {
        "",
        "-",
        "--",
        "\u2013",
        "\u2014",
        "?",
        "n/a",
        "na",
        "n.a.",
        "auto",
        "searched",
        "unknown",
        "unstated",
        "not stated",
        "not given",
        "blank",
    }
)
"""Cell texts that state nothing: the bench searches or derives what such a cell would have said."""

DECIMAL_SUFFIX = {"k": 1e3, "m": 1e6, "b": 1e9, "g": 1e9, "t": 1e12}
BINARY_SUFFIX = {"k": 2.0**10, "m": 2.0**20, "g": 2.0**30}
_NUMBER = re.compile(r"([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)\s*([kmbgt]?)", re.IGNORECASE)


def unstated(text: str | None) -> bool:
    """Whether a cell states nothing (UNSTATED)."""
    return " ".join((text or "").lower().split()) in UNSTATED


def _scaled(text: str | None, column: str, suffixes: dict[str, float]) -> float | None:
    if unstated(text):
        return None
    plain = re.sub(r"(?<=\d)[,_ ](?=\d{3}\b)", "", (text or "").strip())
    found = _NUMBER.fullmatch(plain)
    if found is None or (found.group(2) and found.group(2).lower() not in suffixes):
        raise RowProblem(f"{column}: {text!r} is not a number the bench reads")
    return float(found.group(1)) * (suffixes[found.group(2).lower()] if found.group(2) else 1.0)


def number(text: str | None, column: str = "cell") -> float | None:
    """A cell's number ("1,024", "2.5e12", "15T" with decimal k/M/B/T), None where it states
    nothing."""
    return _scaled(text, column, DECIMAL_SUFFIX)


def _whole(value: float | None, text: str | None, column: str) -> int | None:
    if value is None:
        return None
    if value != int(value):
        raise RowProblem(f"{column}: {text!r} is not a whole number")
    return int(value)


def count(text: str | None, column: str = "cell") -> int | None:
    """A cell's whole number (GPUs, layers, a parallel size, a micro-batch), None where it states
    nothing."""
    return _whole(number(text, column), text, column)


def size(text: str | None, column: str = "cell") -> int | None:
    """A sequence length or a batch in tokens, a k/M/G suffix binary ("8k" = 8,192, "4M" =
    4,194,304: papers' "4M-token batch" is 1,024 sequences of 4,096), None where it states
    nothing."""
    return _whole(_scaled(text, column, BINARY_SUFFIX), text, column)


def zero_in_words(text: str) -> int | None:
    """A ZeRO stage a text states: "ZeRO-3", "zero stage 2", FSDP's FULL_SHARD or HYBRID_SHARD (3),
    SHARD_GRAD_OP or _HYBRID_SHARD_ZERO2 (2), NO_SHARD (0); None where it states none."""
    said = re.search(r"zero[- _]?(?:stage[- _]?)?([0-3])\b", text, re.IGNORECASE)
    if said:
        return int(said.group(1))
    words = re.sub(r"[\s-]+", "_", text.upper())

    def named(*constants: str) -> bool:
        return any(
            re.search(rf"(?<![A-Z0-9]){constant}(?![A-Z0-9])", words) for constant in constants
        )

    if named("_?HYBRID_SHARD_ZERO2", "SHARD_GRAD_OP"):
        return 2
    if named("FULL_SHARD", "HYBRID_SHARD"):
        return 3
    return 0 if named("NO_SHARD") else None


SHARDING_ONLY_WORDS = {
    "fsdp": 3,
    "fsdp2": 3,
    "hsdp": 3,
    "fully_shard": 3,
    "ddp": 0,
    "dp": 0,
    "none": 0,
    "no": 0,
}
"""A ZeRO cell that names only a way of data parallelism: FSDP's (and HSDP's) default sharding is
the full shard (FULL_SHARD, ZeRO-3 semantics); DDP and plain data parallelism shard nothing."""


def zero_cell(text: str | None) -> int | None:
    """The ZeRO stage a row's `zero` cell states: a digit ("3", "3 (FSDP)", "3+offload"), the words
    of `zero_in_words`, or a way of data parallelism alone (SHARDING_ONLY_WORDS); None where it
    states nothing."""
    if unstated(text):
        return None
    cell = (text or "").strip()
    leading = re.match(r"([0-3])(?!\d)", cell)
    if leading:
        return int(leading.group(1))
    said = zero_in_words(cell)
    if said is not None:
        return said
    word = re.sub(r"[\s-]+", "_", cell.lower())
    if word in SHARDING_ONLY_WORDS:
        return SHARDING_ONLY_WORDS[word]
    raise RowProblem(f"zero {text!r} is not a ZeRO stage the bench reads (0-3, ZeRO-3, FULL_SHARD, "
                     "FSDP, DDP)")


def main_words(text: str | None) -> str:
    """A setting's words without the explanation a source puts beside them: "selective (attention)"
    and "full, every layer" read as "selective" and "full"."""
    head = re.split(r"[(\[,;]|\s+-\s+", text or "", maxsplit=1)[0]
    return " ".join(head.lower().replace("_", " ").replace("-", " ").split())


_METRIC_WORDS = {
    "tok": "tokens",
    "token": "tokens",
    "toks": "tokens",
    "sec": "s",
    "second": "s",
    "seconds": "s",
    "tflop": "tflops",
    "seq": "sequences",
    "sequence": "sequences",
    "sample": "samples",
    "hour": "hours",
    "hrs": "hours",
    "hr": "hours",
    "iter": "iteration",
    "step": "step",
}
_METRIC_DROP = {"percent", "pct", "bf16", "dense", "avg", "average", "mean"}
METRIC_SYNONYMS = {
    "hardware_tflops_per_gpu": "achieved_tflops_per_gpu",
    "hfu_tflops_per_gpu": "achieved_tflops_per_gpu",
    "model_tflops": "model_tflops_per_gpu",
    "tflops": "tflops_per_gpu",
    "tflops_gpu": "tflops_per_gpu",
    "tokens_per_s_gpu": "tokens_per_s_per_gpu",
    "tokens_per_gpu_per_s": "tokens_per_s_per_gpu",
    "throughput_tokens_per_s_per_gpu": "tokens_per_s_per_gpu",
    "wps_per_gpu": "tokens_per_s_per_gpu",
    "tps_per_gpu": "tokens_per_s_per_gpu",
    "throughput_tokens_per_s": "tokens_per_s",
    "mfu_model": "mfu",
    "model_flops_utilization": "mfu",
    "hardware_flops_utilization": "hfu",
    "step_time": "step_time_s",
    "iteration_time": "iteration_time_s",
    "time_per_step_s": "step_time_s",
    "time_per_iteration_s": "iteration_time_s",
    "gpu_hour": "gpu_hours",
    "total_gpu_hours": "gpu_hours",
    "sequences_per_s_per_gpu": "samples_per_s_per_gpu",
}
"""Metric names as sources and spreadsheets spell them, after `_metric_key`, in the bench's
names."""

AMBIGUOUS_METRICS = {"throughput", "speed", "performance", "value", "result", ""}
"""Metric cells that say only that a speed was measured: the row's unit then says which."""


def _metric_key(text: str) -> str:
    spaced = text.strip().lower().replace("%", " percent ").replace("/", " per ")
    words = [_METRIC_WORDS.get(word, word) for word in re.split(r"[^a-z0-9]+", spaced) if word]
    key = "_".join(word for word in words if word not in _METRIC_DROP)
    return key.replace("tflops_per_s", "tflops")


def metric_name(metric: str, unit: str = "") -> str:
    """A row's metric in the bench's names (METRIC_SYNONYMS); one that says only "throughput" takes
    the row's unit's ("tok/s" per GPU, "TFLOP/s" per GPU, "%" as MFU)."""
    key = _metric_key(metric)
    if key in AMBIGUOUS_METRICS:
        by_unit = _metric_key(unit)
        if by_unit.startswith("tokens_per_s"):
            key = (
                "tokens_per_s"
                if "cluster" in by_unit or "total" in by_unit
                else "tokens_per_s_per_gpu"
            )
        elif by_unit.startswith("tflops"):
            key = "tflops_per_gpu"
        elif "%" in unit or by_unit == "mfu":
            key = "mfu"
    return METRIC_SYNONYMS.get(key, key)


N = TypeVar("N", int, float)


def required(row: Mapping[str, str], column: str, read: Callable[[str | None, str], N | None]) -> N:
    """A cell the row must state, read by `read` (`number`, `count` or `size`): its value, or the
    row's problem."""
    value = read(row[column], column)
    if value is None:
        raise RowProblem(f"{column} is blank; the bench needs it")
    return value
