"""A layout search's result as plain JSON data for the persistent store, and back, checked.

The store keeps data only (no pickle: a row can never run code). What comes back is checked before
it is used: every number finite and within its range, every word from its vocabulary, and the
figures that the estimator derives from one another (step time from its parts, throughput from the
step, margin and fit from the peak, MFU from the throughput) still agreeing. A row that fails any
check is a miss, so the search runs again and its answer replaces the row: a corrupted or edited
row can slow a run down, never change its answer.

The model card, the cluster and the layout constraints are not stored: they are the search's key,
so they come from the caller on the way back.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import fields
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from plan.planner.estimate.types import (
    FRAMEWORKS,
    LORA_TARGETS,
    LOSSES,
    OPTIMIZERS,
    PRECISIONS,
    RECOMPUTE,
    Estimate,
    Layout,
    MemoryBreakdown,
    TimeBreakdown,
)
from plan.planner.i18n import said_data

if TYPE_CHECKING:
    from plan.models.model_card import ModelCard
    from plan.planner.estimate.cluster import Cluster

FORMAT = 2  # bump when the stored shape changes (the code version changes with it anyway)
RELATIVE_TOLERANCE = 1e-9  # derived figures are recomputed with the estimator's own operations
MAX_FIGURE = 1e30  # far above any real memory, time or rate; a stored figure beyond it is forged
MAX_MFU = 10.0

_LAYOUT_FIELDS = tuple(f.name for f in fields(Layout))
_MEMORY_FIELDS = tuple(f.name for f in fields(MemoryBreakdown))
_TIME_FIELDS = tuple(f.name for f in fields(TimeBreakdown))
_WORDS = {"recompute": RECOMPUTE, "precision": PRECISIONS, "optimizer": OPTIMIZERS, "loss": LOSSES,
          "lora_targets": LORA_TARGETS, "framework": FRAMEWORKS}
_FLAGS = ("sequence_parallel", "flash_attention", "fused_modules", "state_offload")
_COUNTS = (
    "tp",
    "pp",
    "dp",
    "micro_batch",
    "global_batch",
    "seq_len",
    "virtual_pipeline",
    "cp",
    "ep",
)
_OPTIONAL_COUNTS = ("lora_rank", "recompute_layers", "shard_group")
_FIGURES = ("gpu_memory_gib", "margin_gib", "flops_per_token", "step_time_s", "tokens_per_s",
            "tokens_per_s_per_gpu", "model_tflops_per_gpu", "mfu", "memory_floor_gib")


def _field_check(name: str) -> Callable[[Any], bool]:
    """What a stored layout's field may hold (JSON's types: a bool is not a count)."""
    if name in _WORDS:
        return _WORDS[name].__contains__
    if name in _FLAGS:
        return lambda v: type(v) is bool
    if name in _COUNTS:
        return lambda v: type(v) is int and v >= 1
    if name in _OPTIONAL_COUNTS:
        return lambda v: v is None or (type(v) is int and v >= 0)
    if name == "zero":
        return lambda v: type(v) is int and 0 <= v <= 3
    if name == "capacity_factor":
        # NaN fails every comparison
        return lambda v: type(v) in (int, float) and 0 < v <= MAX_FIGURE
    # a new field must not go unchecked
    raise AssertionError(f"Layout.{name} has no check here: add one")


_LAYOUT_CHECKS = tuple((index, _field_check(name)) for index, name in enumerate(_LAYOUT_FIELDS))


class Forged(ValueError):
    """A stored row that is not what the estimator would have written."""


def encode(best: Estimate | None, considered: int, rejected: tuple[tuple[Layout, str], ...],
           reasons: dict[str, int], searched: tuple[str, ...]) -> dict[str, Any]:
    """A search's result as JSON-ready data (its model, cluster and spec left out: they are its
    key)."""
    return {
        "format": FORMAT,
        "considered": considered,
        "reasons": [[k, n] for k, n in reasons.items()],
        "searched": list(searched),
        "rejected": [[_layout_row(lay), why] for lay, why in rejected],
        "best": None if best is None else _estimate_row(best),
    }


def decode(data: Any, model: ModelCard, method: str, cluster: Cluster) -> dict[str, Any]:
    """The result's fields (best, considered, rejected, reasons, searched) from `encode`'s data.
    Raises Forged for anything the estimator would not have written for this key."""
    _check(isinstance(data, dict) and data.get("format") == FORMAT, "format")
    considered = data["considered"]
    _check(_is_int(considered) and considered >= 0, "considered")
    reasons = {}
    for pair in data["reasons"]:
        _check(isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str)
               and _is_int(pair[1]) and pair[1] >= 0, "reasons")
        reasons[pair[0]] = pair[1]
    searched = tuple(_words(data["searched"], "searched"))
    rejected = []
    for pair in data["rejected"]:
        _check(isinstance(pair, list) and len(pair) == 2 and isinstance(pair[1], str), "rejected")
        rejected.append((_layout(pair[0]), pair[1]))
    best = None if data["best"] is None else _estimate(data["best"], model, method, cluster)
    return {"best": best, "considered": considered, "rejected": tuple(rejected), "reasons": reasons,
            "searched": searched}


def encode_least(layout: Layout | None) -> dict[str, Any]:
    """The least-memory layout of a search where none fits (None: the search had no layout), as
    JSON-ready data; its memory is not stored but worked out again from it."""
    return {"format": FORMAT, "least": None if layout is None else _layout_row(layout)}


def decode_least(data: Any, gpus: int, seq_len: int) -> Layout | None:
    """`encode_least`'s layout, checked field by field and against the search's GPU count and
    sequence length. Raises Forged for anything else."""
    _check(isinstance(data, dict) and data.get("format") == FORMAT, "format")
    if data["least"] is None:
        return None
    layout = _layout(data["least"])
    _check(layout.gpus == gpus and layout.seq_len == seq_len, "least: another GPU count")
    return layout


def _layout_row(layout: Layout) -> list[Any]:
    return [getattr(layout, name) for name in _LAYOUT_FIELDS]


def _estimate_row(est: Estimate) -> dict[str, Any]:
    row: dict[str, Any] = {name: getattr(est, name) for name in _FIGURES}
    row.update(
        model_id=est.model_id,
        method=est.method,
        fits=est.fits,
        layout=_layout_row(est.layout),
        memory=[getattr(est.memory, n) for n in _MEMORY_FIELDS],
        time=[getattr(est.time, n) for n in _TIME_FIELDS],
        notes=[said_data.to_data(note) for note in est.notes],
        uncalibrated=list(est.uncalibrated),
    )
    return row


def _layout(values: Any) -> Layout:
    _check(type(values) is list, "layout")
    return _checked_layout(tuple(values))  # unhashable (nested) values raise TypeError: a miss


@lru_cache(maxsize=16_384)
def _checked_layout(values: tuple[Any, ...]) -> Layout:
    """The layout of these field values, each checked (the same layouts recur across searches, so
    each distinct one is checked once per process)."""
    _check(len(values) == len(_LAYOUT_FIELDS), "layout")
    for index, allowed in _LAYOUT_CHECKS:
        _check(allowed(values[index]), f"layout.{_LAYOUT_FIELDS[index]}")
    return Layout(*values)


def _estimate(row: Any, model: ModelCard, method: str, cluster: Cluster) -> Estimate:
    _check(type(row) is dict, "best")
    for name in _FIGURES:
        value = row[name]
        _check(type(value) in (int, float) and -MAX_FIGURE <= value <= MAX_FIGURE, f"best.{name}")
        _check(value > 0 or name == "margin_gib" or (name == "memory_floor_gib" and value == 0),
               f"best.{name}")
    memory, time = row["memory"], row["time"]
    for what, values, size in (
        ("memory", memory, len(_MEMORY_FIELDS)),
        ("time", time, len(_TIME_FIELDS)),
    ):
        _check(
            type(values) is list
            and len(values) == size
            and all(type(x) in (int, float) and 0 <= x <= MAX_FIGURE for x in values),
            f"best.{what}",
        )
    est = Estimate(
        model_id=row["model_id"],
        method=row["method"],
        cluster=cluster,
        layout=_layout(row["layout"]),
        memory=MemoryBreakdown(*memory),
        time=TimeBreakdown(*time),
        gpu_memory_gib=row["gpu_memory_gib"],
        fits=row["fits"],
        margin_gib=row["margin_gib"],
        flops_per_token=row["flops_per_token"],
        step_time_s=row["step_time_s"],
        tokens_per_s=row["tokens_per_s"],
        tokens_per_s_per_gpu=row["tokens_per_s_per_gpu"],
        model_tflops_per_gpu=row["model_tflops_per_gpu"],
        mfu=row["mfu"],
        notes=_notes(row["notes"]),
        model=model,
        uncalibrated=tuple(_words(row["uncalibrated"], "best.uncalibrated")),
        memory_floor_gib=row["memory_floor_gib"],
    )
    _consistent(est, model, method, cluster)
    return est


def _consistent(est: Estimate, model: ModelCard, method: str, cluster: Cluster) -> None:
    """The figures the estimator derives from one another agree, as it derives them
    (estimator.py)."""
    lay, total = est.layout, est.memory.total_gib
    _check(est.model_id == model.id and est.method == method, "best: another model or method")
    _check(lay.gpus == cluster.gpus, "best.layout: another GPU count")
    _check(est.gpu_memory_gib == cluster.gpu.memory_gib, "best.gpu_memory_gib")
    _check(est.fits is (total <= est.gpu_memory_gib), "best.fits")
    _check(est.mfu <= MAX_MFU, "best.mfu")
    peak = cluster.gpu.peak_tflops.for_precision(lay.precision) or 1.0
    per_gpu = est.tokens_per_s / cluster.gpus
    for name, stored, derived in (
        ("step_time_s", est.step_time_s, est.time.total_s),
        ("tokens_per_s", est.tokens_per_s, lay.global_batch * lay.seq_len / est.step_time_s),
        ("tokens_per_s_per_gpu", est.tokens_per_s_per_gpu, per_gpu),
        ("model_tflops_per_gpu", est.model_tflops_per_gpu, est.flops_per_token * per_gpu / 1e12),
        ("mfu", est.mfu, est.model_tflops_per_gpu / peak),
        ("margin_gib", est.margin_gib, est.gpu_memory_gib - total),
    ):
        _check(
            math.isclose(stored, derived, rel_tol=RELATIVE_TOLERANCE, abs_tol=1e-12), f"best.{name}"
        )


def _notes(values: Any) -> list[str]:
    """The notes as `said_data` wrote them: keyed ones said again in the reader's language."""
    _check(isinstance(values, list), "best.notes")
    try:
        return [value if type(value) is str else _keyed_note(json.dumps(value))
                for value in values]
    except said_data.Unreadable as exc:
        raise Forged(f"best.notes: {exc}") from exc


@lru_cache(maxsize=16_384)
def _keyed_note(data_text: str) -> str:
    """`said_data.from_data` of a keyed note's data (as JSON text: hashable). The same notes recur
    across a build's rows (lab_six_jobs: 7,190 read back, 1,088 distinct), and reading one back
    renders it again to check its English, so each distinct one is read once per process; one
    that fails raises every time (nothing failed is kept)."""
    return said_data.from_data(json.loads(data_text))


def _words(values: Any, what: str) -> list[str]:
    _check(isinstance(values, list) and all(isinstance(v, str) for v in values), what)
    return list(values)


def _is_int(value: Any) -> bool:
    return type(value) is int


def _check(condition: bool, what: str) -> None:
    if not condition:
        raise Forged(what)
