"""Reading the user's measured runs in any of the forms `plan calibrate` takes.

- CSV or JSONL rows: model, method, gpu, gpus, layout (or tp/pp/dp/... columns), seq_len, framework,
  tokens_per_s or step_time_s (with global_batch), peak_memory_gib, and optionally steps (the steady
  iterations the figures are measured over).
- A Hugging Face Trainer `trainer_state.json` with the run's description beside it (`run.yaml`):
  throughput from `train_samples_per_second` (or log_history) x seq_len.
- Megatron-LM logs ("elapsed time per iteration (ms)", "global batch size", "max reserved" memory)
and
  torchtitan logs ("tps" per GPU, "memory: ...GiB"), each with `run.yaml` beside it.

A log's description is the file `<log>.run.yaml`, or `run.yaml` in the same folder. A model named
by a card file (`my-model.yaml`) is read relative to the file that names it, as a scenario's are.

A log's figures are the median over the iterations after the warm-up (WARMUP_STEPS); a log with
fewer than MIN_STEADY_STEPS of them is refused: its figure would be the warm-up's, not the run's.
"""

from __future__ import annotations

import csv
import io
import math
import statistics
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from plan.models.errors import InputError
from plan.models.stacks import loss_not_on_megatron, stack_of
from plan.models.yaml_io import read_yaml
from plan.planner.calibrate.log_lines import scan_log
from plan.planner.calibrate.run_text import (
    MAX_LINE_CHARS,
    load_json,
    read_run_text,
    refuse_long_lines,
)
from plan.planner.calibrate.runs import (
    LAYOUT_KEYS,
    SETTING_KEYS,
    Run,
    RunError,
    parse_layout_text,
    setting,
)
from plan.planner.estimate.types import FRAMEWORKS

REQUIRED = ("model", "method", "gpu", "gpus", "seq_len")
WARMUP_STEPS = 2  # iterations dropped from a log's median: start-up and compilation make them slow
# a figure measured over fewer steady iterations is one iteration's noise, or the warm-up's
MIN_STEADY_STEPS = 2
# assumed: the largest whole number in a run (GPUs, tokens per sequence, sequences per step) is far
# below 1e9, and no measurement (tokens/s of a whole job, seconds, GiB) reaches 1e12.
MAX_WHOLE = 1_000_000_000
MAX_MEASURE = 1e12
# assumed: a calibration needs tens of runs; 2,000 keep `plan calibrate` to seconds and its file
# within the 5 MB every YAML input may have.
MAX_RUNS = 2_000
T = TypeVar("T")


def read_runs(paths: list[Path]) -> list[Run]:
    runs: list[Run] = []
    for path in paths:
        name = path.name.lower()
        if name.endswith(".csv"):
            runs += _csv(path)
        elif name.endswith(".jsonl"):
            runs += _jsonl(path)
        elif name.endswith(".json"):
            runs.append(_trainer_state(path))
        elif name.endswith((".log", ".txt", ".out")):
            runs.append(_log(path))
        else:
            raise RunError(f"{path}: unsupported run file; use .csv, .jsonl, trainer_state.json, "
                           "or a Megatron-LM or torchtitan log (.log, .txt, .out)")
        if len(runs) > MAX_RUNS:
            raise RunError(f"{path}: more than {MAX_RUNS:,} runs; calibrate from at most "
                           f"{MAX_RUNS:,} (a factor needs tens)")
    return runs


def _num(value: Any, where: str, field: str, whole: bool = False) -> float | None:
    """A positive finite number, at most MAX_WHOLE (whole) or MAX_MEASURE; None if empty."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    text = value if isinstance(value, str) else repr(value)
    try:
        number = float(text.replace(",", "").strip())
    except (ValueError, OverflowError):
        raise RunError(f"{where}: {field} must be a number, got {text[:40]!r}") from None
    return _bounded(number, where, field, whole, shown=text[:40])


def _bounded(number: float, where: str, field: str, whole: bool = False, shown: str = "") -> float:
    limit = MAX_WHOLE if whole else MAX_MEASURE
    shown = shown or f"{number:.6g}"
    if not math.isfinite(number) or not 0 < number <= limit:
        raise RunError(f"{where}: {field} must be a finite number above 0 and at most {limit:g}, "
                       f"got {shown}")
    if whole and number != int(number):
        raise RunError(f"{where}: {field} must be a whole number, got {shown}")
    return number


def run_from_fields(
    raw: dict[str, Any],
    where: str,
    measured: dict[str, float | None] | None = None,
    base_dir: Path | None = None,
    steps: int | None = None,
) -> Run:
    """One run from a row or description; `measured` and `steps` (the steady iterations a log
    measured) override the row's own measurements (logs); `base_dir` is the folder of the file
    naming the run, where a model-card path is read from."""
    row = {k.strip().lower(): v for k, v in raw.items() if k is not None}
    missing = [k for k in REQUIRED if row.get(k) in (None, "")]
    if missing:
        raise RunError(f"{where}: missing {', '.join(missing)} (a run needs {', '.join(REQUIRED)})")
    fields: dict[str, Any] = {}
    if row.get("layout"):
        fields.update(parse_layout_text(str(row["layout"]), where))
    for key in (*LAYOUT_KEYS, "lora_rank", "gpus_per_node"):
        if row.get(key) not in (None, ""):
            value = _num(row[key], where, key, whole=True)
            fields[key] = int(value) if value else None
    for key in SETTING_KEYS:
        if row.get(key) not in (None, ""):
            fields[key] = setting(key, str(row[key]), where)
    framework = str(row.get("framework") or fields.pop("framework", "") or "")
    fields.pop("framework", None)
    if framework not in FRAMEWORKS:
        raise RunError(f"{where}: framework must be megatron, deepspeed or fsdp (the execution "
                       f"model the run used), got {framework or 'nothing'!r}")
    if fields.get("loss", "plain") != "plain" and not stack_of(framework).leaner_losses:
        raise RunError(f"{where}: loss {loss_not_on_megatron(str(fields['loss']))}")
    gpus = int(_num(row["gpus"], where, "gpus", whole=True) or 0)
    seq_len = int(_num(row["seq_len"], where, "seq_len", whole=True) or 0)
    tps = _num(row.get("tokens_per_s"), where, "tokens_per_s")
    step = _num(row.get("step_time_s"), where, "step_time_s")
    memory = _num(row.get("peak_memory_gib"), where, "peak_memory_gib")
    if steps is None and row.get("steps") not in (None, ""):
        steps = int(_num(row["steps"], where, "steps", whole=True) or 0)
        _enough_steps(steps, where, "steps: the figures are measured over")
    if measured:
        measured = {k: None if v is None else _bounded(v, where, k, whole=k == "global_batch")
                    for k, v in measured.items()}
        tps = measured.get("tokens_per_s") or tps
        step = measured.get("step_time_s") or step
        memory = measured.get("peak_memory_gib") or memory
        if measured.get("global_batch") and not fields.get("global_batch"):
            fields["global_batch"] = int(measured["global_batch"] or 0)
    if tps is None and step is not None:
        if not fields.get("global_batch"):
            raise RunError(f"{where}: step_time_s needs global_batch (sequences per step) to give "
                           "tokens/s")
        tps = _bounded(fields["global_batch"] * seq_len / step, where,
                       "tokens/s (global_batch x seq_len / step_time_s)")
    if tps is None and memory is None:
        raise RunError(
            f"{where}: no measurement: give tokens_per_s, step_time_s or peak_memory_gib"
        )
    method = str(row["method"])
    # a file name that is not UTF-8 is shown with replacement characters, and written so
    source = where.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    return Run(
        source=source,
        model=str(row["model"]),
        method=method,
        gpu=str(row["gpu"]),
        gpus=gpus,
        seq_len=seq_len,
        framework=framework,
        precision=str(row.get("precision") or "bf16"),
        tokens_per_s=tps,
        peak_memory_gib=memory,
        steps=steps,
        base_dir=base_dir,
        **fields,
    )


def _enough_steps(steps: int, where: str, what: str) -> None:
    """RunError where fewer than MIN_STEADY_STEPS steady iterations were measured."""
    if steps < MIN_STEADY_STEPS:
        raise RunError(f"{where}: {what} {steps} steady iteration(s); a run's figures need at "
                       f"least {MIN_STEADY_STEPS} (one is noise or the warm-up's): measure a "
                       "longer run")


def _csv(path: Path) -> list[Run]:
    text = read_run_text(path)
    refuse_long_lines(path, text)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
        if header is None:
            raise RunError(f"{path}: no rows (a header line and one row per run)")
        names = _columns(header, path)
        rows = [(reader.line_num, dict(zip(names, cells, strict=False)))
                for cells in _rows(reader, path)]
    except csv.Error as exc:
        raise RunError(f"{path}: line {reader.line_num}: not CSV: {exc}") from None
    if not rows:
        raise RunError(f"{path}: no rows (a header line and one row per run)")
    return _each(
        rows, lambda row: run_from_fields(row[1], f"{path}:{row[0]}", base_dir=path.parent)
    )


def _columns(header: list[str], path: Path) -> list[str]:
    """The header's column names as rows are read (trimmed, lower case), each named once."""
    names = [h.strip().lower() for h in header]
    first: dict[str, int] = {}
    for i, name in enumerate(names):
        if name and name in first:
            raise RunError(f"{path}: line 1: column {header[i][:40]!r} appears twice (columns "
                           f"{first[name] + 1} and {i + 1}); give each column once")
        first.setdefault(name, i)
    return names


def _rows(reader: Iterable[list[str]], path: Path) -> Iterable[list[str]]:
    for count, cells in enumerate(reader, start=1):
        if count > MAX_RUNS:
            raise RunError(f"{path}: more than {MAX_RUNS:,} rows; calibrate from at most "
                           f"{MAX_RUNS:,} runs")
        # (the csv module's own field cap is process-wide, and batch raises it: a cell spanning
        # many lines of a quoted field is refused here whatever that cap is)
        longest = max((len(cell) for cell in cells), default=0)
        if longest > MAX_LINE_CHARS:
            raise csv.Error(f"a field of {longest:,} characters (at most {MAX_LINE_CHARS:,})")
        if any(cell.strip() for cell in cells):
            yield cells


def _each(items: list[T], build: Callable[[T], Run]) -> list[Run]:
    """A run from each item, or every item's problem (RunError: the first few, and a count)."""
    runs: list[Run] = []
    problems: list[str] = []
    for item in items:
        try:
            runs.append(build(item))
        except InputError as exc:
            problems += exc.problems
    if problems:
        raise RunError(problems)
    return runs


def _jsonl(path: Path) -> list[Run]:
    text = read_run_text(path)
    refuse_long_lines(path, text)
    rows = [(i, line) for i, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if len(rows) > MAX_RUNS:
        raise RunError(f"{path}: more than {MAX_RUNS:,} rows; calibrate from at most "
                           f"{MAX_RUNS:,} runs")

    def run(item: tuple[int, str]) -> Run:
        where = f"{path}:{item[0]}"
        row = load_json(item[1], where)
        if not isinstance(row, dict):
            raise RunError(f"{where}: each line must be a JSON object")
        return run_from_fields(row, where, base_dir=path.parent)

    return _each(rows, run)


def _description(path: Path) -> dict[str, Any]:
    for candidate in (path.with_name(path.name + ".run.yaml"), path.with_name("run.yaml")):
        if candidate.is_file():
            data = read_yaml(candidate, what="run description")  # the limits every YAML input has
            if not isinstance(data, dict):
                raise RunError(f"{candidate}: must be a mapping of model, method, gpu, gpus, "
                               "layout, seq_len, framework")
            return data
    raise RunError(f"{path}: needs the run's description beside it ({path.name}.run.yaml or "
                   "run.yaml: model, method, gpu, gpus, layout, seq_len, framework)")


def _trainer_state(path: Path) -> Run:
    state = load_json(read_run_text(path, "trainer_state.json"), str(path))
    history = state.get("log_history") if isinstance(state, dict) else None
    if not isinstance(history, list):
        raise RunError(f"{path}: not a Hugging Face trainer_state.json (no log_history list)")
    desc = _description(path)
    where = str(path)
    seq_len = int(_num(desc.get("seq_len"), where, "seq_len", whole=True) or 0)
    samples_per_s = next((e["train_samples_per_second"] for e in reversed(history)
                          if isinstance(e, dict) and e.get("train_samples_per_second")), None)
    if samples_per_s is None:
        raise RunError(f"{path}: log_history has no train_samples_per_second (the Trainer writes "
                       "it at the end of training)")
    samples = _num(samples_per_s, where, "train_samples_per_second") or 0.0
    measured: dict[str, float | None] = {"tokens_per_s": samples * seq_len}
    # the Trainer's figure averages every step, the warm-up's too: its steady part is the rest
    total = state.get("global_step")
    steps = None
    if isinstance(total, int) and not isinstance(total, bool):
        steps = total - WARMUP_STEPS
        _enough_steps(steps, where, f"global_step {total} leaves, after {WARMUP_STEPS} warm-up "
                      "iterations,")
    return run_from_fields(desc, where, measured, base_dir=path.parent, steps=steps)


def _steady(iterations: list[int], path: Path) -> tuple[list[int], int]:
    """The positions of a log's iteration lines after the warm-up, and the iterations they cover
    (a line may average several: Megatron's log interval). RunError naming the file where fewer
    than MIN_STEADY_STEPS lines are left: the figure would be the warm-up's."""
    kept = [i for i, it in enumerate(iterations) if it > WARMUP_STEPS]
    if len(kept) < MIN_STEADY_STEPS:
        raise RunError(f"{path}: {len(kept)} iteration line(s) after the first {WARMUP_STEPS} "
                       f"warm-up iterations (start-up and compilation make those slow); its "
                       f"figures need at least {MIN_STEADY_STEPS}: log a longer run")
    before = iterations[kept[0] - 1] if kept[0] > 0 else 0
    covered = max(iterations[i] for i in kept) - max(WARMUP_STEPS, before)
    return kept, max(covered, len(kept))


def _log(path: Path) -> Run:
    figures = scan_log(read_run_text(path, "log"), path)
    desc = _description(path)
    where = str(path)
    gpus = int(_num(desc.get("gpus"), where, "gpus", whole=True) or 0)
    seq_len = int(_num(desc.get("seq_len"), where, "seq_len", whole=True) or 0)
    steps = figures.megatron_steps
    if steps:
        positions, covered = _steady([it for it, _ in steps], path)
        kept = [steps[i][1] for i in positions]
        gb = figures.global_batch
        if gb is None:
            raise RunError(f"{path}: Megatron log without 'global batch size' on its iteration "
                           "lines")
        step_s = statistics.median(kept) / 1000.0
        memory = figures.reserved_mb
        return run_from_fields(
            desc,
            where,
            {
                "tokens_per_s": gb * seq_len / step_s,
                "global_batch": gb,
                "peak_memory_gib": max(memory) / 1024.0 if memory else None,
            },
            base_dir=path.parent,
            steps=covered,
        )
    titan = figures.titan_steps
    if titan:
        positions, covered = _steady([t[0] for t in titan], path)
        kept_t = [titan[i] for i in positions]
        tps_per_gpu = statistics.median(t[2] for t in kept_t)  # torchtitan logs tokens/s per device
        return run_from_fields(desc, where, {"tokens_per_s": tps_per_gpu * gpus,
                                             "peak_memory_gib": max(t[1] for t in kept_t)},
                               base_dir=path.parent, steps=covered)
    skipped = (f" ({figures.long_lines:,} lines longer than {MAX_LINE_CHARS:,} characters were "
               "skipped)" if figures.long_lines else "")
    raise RunError(f"{path}: no Megatron-LM iteration lines ('elapsed time per iteration (ms)') or "
                   "torchtitan "
                   f"step lines ('step: ... memory: ...GiB ... tps: ...') found{skipped}")
