"""The unit of batch work (one scenario variant) and the content hash that makes resume safe."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from plan.models.errors import InputError
from plan.models.loading import is_model_file
from plan.models.yaml_io import read_bounded, read_yaml
from plan.planner import __version__
from plan.planner.batch.inputs import Input
from plan.planner.batch.rows import Row
from plan.planner.batch.sweep import Assignment, Variant, apply
from plan.planner.session import SolveOptions

HASH_SCHEME = "plan-batch-2"  # bump when what a row means changes without a package version bump


@dataclass(frozen=True)
class Task:
    """One scenario variant to solve; picklable, so the same value goes to a process pool or to
    Ray."""

    index: int  # position in the batch: rows are reported in this order, whatever finishes first
    path: Path
    variant: str
    assignments: tuple[Assignment, ...]
    overlays: tuple[Path, ...]
    options: SolveOptions
    hash: str


def _file_bytes(path: Path) -> bytes:
    """The file's bytes (regular files within the size cap only: a FIFO or a device is never
    read)."""
    try:
        return read_bounded(path)
    # the worker reports the file's problem; the hash only needs to be stable
    except (InputError, OSError) as exc:
        return f"<unreadable: {type(exc).__name__}: {exc}>".encode()


def _referenced_files(raw: Any, base_dir: Path) -> list[Path]:
    """Files the scenario data points at (its catalog overlay, model-card files): their bytes
    change the result."""
    if not isinstance(raw, dict):
        return []
    refs: list[str] = [raw[k] for k in ("catalog", "calibration") if isinstance(raw.get(k), str)]
    jobs = raw.get("jobs")
    for job in jobs if isinstance(jobs, list) else []:
        model = job.get("model") if isinstance(job, dict) else None
        if isinstance(model, str) and is_model_file(model):
            refs.append(model)
    # as the loader resolves them
    return [Path(r) if Path(r).is_absolute() else base_dir / r for r in refs]


def content_hash(
    scenario_bytes: bytes,
    variant: str,
    referenced: Sequence[Path],
    overlays: Sequence[Path],
    options: SolveOptions,
) -> str:
    """SHA-256 (first 16 hex digits) of everything a row depends on: the scenario file's bytes, the
    variant, the bytes of the files it references and of the --catalog overlays, the solve options
    and the package version (which covers the built-in catalog and the solver code)."""
    digest = hashlib.sha256()
    parts: list[bytes] = [
        HASH_SCHEME.encode(),
        __version__.encode(),
        scenario_bytes,
        variant.encode(),
        json.dumps(dataclasses.asdict(options), sort_keys=True).encode(),
    ]
    for path in (*referenced, *overlays):
        parts += [str(path).encode(), _file_bytes(path)]
    # length-prefixed, so no two different inputs run together into the same stream
    for part in parts:
        digest.update(len(part).to_bytes(8, "big") + part)
    return digest.hexdigest()[:16]


def input_error_row(item: Input, index_hash: str = "") -> Row:
    return Row(
        file=str(item.path),
        variant="",
        status="error",
        total_cost=None,
        currency="",
        makespan_h=None,
        plan="",
        solve_time_s=0.0,
        error=item.problem or "",
        hash=index_hash,
    )


def build_tasks(inputs: Sequence[Input], variants: Sequence[Variant], overlays: tuple[Path, ...],
                options: SolveOptions) -> Iterator[Task | Row]:
    """A Task per (file, variant) in input order (a file's variants together, in grid order); an
    Input that named no file gives its error Row directly, in its place."""
    index = 0
    for item in inputs:
        if item.problem is not None:
            yield input_error_row(item)
            index += 1
            continue
        data = _file_bytes(item.path)
        try:
            raw: Any = read_yaml(item.path, what="scenario file")
        except InputError:
            raw = None  # the worker reports it; the hash is over the bytes anyway
        for variant in variants:
            refs = _referenced_files(_with(raw, variant.assignments), item.path.parent)
            yield Task(
                index=index,
                path=item.path,
                variant=variant.label,
                assignments=variant.assignments,
                overlays=overlays,
                options=options,
                hash=content_hash(data, variant.label, refs, overlays, options),
            )
            index += 1


def _with(raw: Any, assignments: tuple[Assignment, ...]) -> Any:
    if not assignments or not isinstance(raw, dict):
        return raw
    # a deep copy; only reference fields are read from it
    copy = json.loads(json.dumps(raw, default=str))
    list(apply(copy, assignments))
    return copy
