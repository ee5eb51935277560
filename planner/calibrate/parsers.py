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
from plan.models.said import say_as
from plan.models.stacks import loss_not_on_megatron, stack_of
from plan.models.validation_words import listed
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
            raise RunError(say_as("calib.unsupported", "{path}: unsupported run file; use .csv, "
                                  ".jsonl, trainer_state.json, or a Megatron-LM or torchtitan log "
                                  "(.log, .txt, .out)", path=str(path)))
        if len(runs) > MAX_RUNS:
            raise RunError(say_as("calib.too_many_runs", "{path}: more than {most:,} runs; "
                                  "calibrate from at most {most:,} (a factor needs tens)",
                                  path=str(path), most=MAX_RUNS))
    return runs


def _num(value: Any, where: str, field: str, whole: bool = False) -> float | None:
    """A positive finite number, at most MAX_WHOLE (whole) or MAX_MEASURE; None if empty."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    text = value if isinstance(value, str) else repr(value)
    try:
        number = float(text.replace(",", "").strip())
    except (ValueError, OverflowError):
        raise RunError(say_as("calib.not_number", "{where}: {field} must be a number, got {text}",
                              where=where, field=field, text=repr(text[:40]))) from None
    return _bounded(number, where, field, whole, shown=text[:40])


def _bounded(number: float, where: str, field: str, whole: bool = False, shown: str = "") -> float:
    limit = MAX_WHOLE if whole else MAX_MEASURE
    shown = shown or f"{number:.6g}"
    if not math.isfinite(number) or not 0 < number <= limit:
        raise RunError(say_as("calib.out_of_range", "{where}: {field} must be a finite number "
                              "above 0 and at most {limit:g}, got {shown}", where=where,
                              field=field, limit=limit, shown=shown))
    if whole and number != int(number):
        raise RunError(say_as("calib.not_whole", "{where}: {field} must be a whole number, got "
                              "{shown}", where=where, field=field, shown=shown))
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
        raise RunError(say_as("calib.missing", "{where}: missing {missing} (a run needs "
                              "{needed})", where=where, missing=listed(missing),
                              needed=listed(REQUIRED)))
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
    framework = _framework(row, fields, where)
    gpus = int(_num(row["gpus"], where, "gpus", whole=True) or 0)
    seq_len = int(_num(row["seq_len"], where, "seq_len", whole=True) or 0)
    tps = _num(row.get("tokens_per_s"), where, "tokens_per_s")
    step = _num(row.get("step_time_s"), where, "step_time_s")
    memory = _num(row.get("peak_memory_gib"), where, "peak_memory_gib")
    if steps is None and row.get("steps") not in (None, ""):
        steps = int(_num(row["steps"], where, "steps", whole=True) or 0)
        _enough_steps(steps, where, say_as("calib.steps_measured",
                                           "steps: the figures are measured over"))
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
            raise RunError(say_as("calib.step_needs_batch", "{where}: step_time_s needs "
                                  "global_batch (sequences per step) to give tokens/s",
                                  where=where))
        tps = _bounded(fields["global_batch"] * seq_len / step, where,
                       say_as("calib.tps_from_step",
                              "tokens/s (global_batch x seq_len / step_time_s)"))
    if tps is None and memory is None:
        raise RunError(say_as("calib.no_measurement", "{where}: no measurement: give "
                              "tokens_per_s, step_time_s or peak_memory_gib", where=where))
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


def _framework(row: dict[str, Any], fields: dict[str, Any], where: str) -> str:
    """The run's framework (its column, else the layout's word), taken out of `fields`; RunError
    where it is none of FRAMEWORKS, or cannot run the run's loss."""
    framework = str(row.get("framework") or fields.pop("framework", "") or "")
    fields.pop("framework", None)
    if framework not in FRAMEWORKS:
        got = repr(framework) if framework else say_as("calib.nothing", "'nothing'")
        raise RunError(say_as("calib.framework", "{where}: framework must be megatron, deepspeed "
                              "or fsdp (the execution model the run used), got {got}",
                              where=where, got=got))
    if fields.get("loss", "plain") != "plain" and not stack_of(framework).leaner_losses:
        raise RunError(say_as("calib.loss", "{where}: loss {reason}", where=where,
                              reason=loss_not_on_megatron(str(fields["loss"]))))
    return framework


def _enough_steps(steps: int, where: str, what: str) -> None:
    """RunError where fewer than MIN_STEADY_STEPS steady iterations were measured."""
    if steps < MIN_STEADY_STEPS:
        raise RunError(say_as("calib.few_steps", "{where}: {what} {steps} steady iteration(s); "
                              "a run's figures need at least {least} (one is noise or the "
                              "warm-up's): measure a longer run", where=where, what=what,
                              steps=steps, least=MIN_STEADY_STEPS))


def _csv(path: Path) -> list[Run]:
    text = read_run_text(path)
    refuse_long_lines(path, text)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, None)
        if header is None:
            raise RunError(_no_rows(path))
        names = _columns(header, path)
        rows = [(reader.line_num, dict(zip(names, cells, strict=False)))
                for cells in _rows(reader, path)]
    except csv.Error as exc:
        problem = exc.args[0] if exc.args and isinstance(exc.args[0], str) else str(exc)
        raise RunError(say_as("calib.not_csv", "{path}: line {line}: not CSV: {problem}",
                              path=str(path), line=reader.line_num, problem=problem)) from None
    if not rows:
        raise RunError(_no_rows(path))
    return _each(
        rows, lambda row: run_from_fields(row[1], f"{path}:{row[0]}", base_dir=path.parent)
    )


def _no_rows(path: Path) -> str:
    return say_as("calib.no_rows", "{path}: no rows (a header line and one row per run)",
                  path=str(path))


def _too_many_rows(path: Path) -> str:
    return say_as("calib.too_many_rows", "{path}: more than {most:,} rows; calibrate from at most "
                  "{most:,} runs", path=str(path), most=MAX_RUNS)


def _columns(header: list[str], path: Path) -> list[str]:
    """The header's column names as rows are read (trimmed, lower case), each named once."""
    names = [h.strip().lower() for h in header]
    first: dict[str, int] = {}
    for i, name in enumerate(names):
        if name and name in first:
            raise RunError(say_as("calib.column_twice", "{path}: line 1: column {column} appears "
                                  "twice (columns {first} and {second}); give each column once",
                                  path=str(path), column=repr(header[i][:40]),
                                  first=first[name] + 1, second=i + 1))
        first.setdefault(name, i)
    return names


def _rows(reader: Iterable[list[str]], path: Path) -> Iterable[list[str]]:
    for count, cells in enumerate(reader, start=1):
        if count > MAX_RUNS:
            raise RunError(_too_many_rows(path))
        # (the csv module's own field cap is process-wide, and batch raises it: a cell spanning
        # many lines of a quoted field is refused here whatever that cap is)
        longest = max((len(cell) for cell in cells), default=0)
        if longest > MAX_LINE_CHARS:
            raise csv.Error(say_as("calib.long_field", "a field of {n:,} characters (at most "
                                   "{most:,})", n=longest, most=MAX_LINE_CHARS))
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
        raise RunError(_too_many_rows(path))

    def run(item: tuple[int, str]) -> Run:
        where = f"{path}:{item[0]}"
        row = load_json(item[1], where)
        if not isinstance(row, dict):
            raise RunError(say_as("calib.jsonl_object", "{where}: each line must be a JSON object",
                                  where=where))
        return run_from_fields(row, where, base_dir=path.parent)

    return _each(rows, run)


def _description(path: Path) -> dict[str, Any]:
    for candidate in (path.with_name(path.name + ".run.yaml"), path.with_name("run.yaml")):
        if candidate.is_file():
            data = read_yaml(candidate, what="run description")  # the limits every YAML input has
            if not isinstance(data, dict):
                raise RunError(say_as("calib.description_mapping", "{path}: must be a mapping of "
                                      "model, method, gpu, gpus, layout, seq_len, framework",
                                      path=str(candidate)))
            return data
    raise RunError(say_as("calib.description_missing", "{path}: needs the run's description "
                          "beside it ({name}.run.yaml or run.yaml: model, method, gpu, gpus, "
                          "layout, seq_len, framework)", path=str(path), name=path.name))


def _trainer_state(path: Path) -> Run:
    state = load_json(read_run_text(path, "trainer_state.json"), str(path))
    history = state.get("log_history") if isinstance(state, dict) else None
    if not isinstance(history, list):
        raise RunError(say_as("calib.not_trainer_state", "{path}: not a Hugging Face "
                              "trainer_state.json (no log_history list)", path=str(path)))
    desc = _description(path)
    where = str(path)
    seq_len = int(_num(desc.get("seq_len"), where, "seq_len", whole=True) or 0)
    samples_per_s = next((e["train_samples_per_second"] for e in reversed(history)
                          if isinstance(e, dict) and e.get("train_samples_per_second")), None)
    if samples_per_s is None:
        raise RunError(say_as("calib.no_samples_per_second", "{path}: log_history has no "
                              "train_samples_per_second (the Trainer writes it at the end of "
                              "training)", path=str(path)))
    samples = _num(samples_per_s, where, "train_samples_per_second") or 0.0
    measured: dict[str, float | None] = {"tokens_per_s": samples * seq_len}
    # the Trainer's figure averages every step, the warm-up's too: its steady part is the rest
    total = state.get("global_step")
    steps = None
    if isinstance(total, int) and not isinstance(total, bool):
        steps = total - WARMUP_STEPS
        _enough_steps(steps, where, say_as("calib.steps_left", "global_step {total} leaves, "
                                           "after {warmup} warm-up iterations,", total=total,
                                           warmup=WARMUP_STEPS))
    return run_from_fields(desc, where, measured, base_dir=path.parent, steps=steps)


def _steady(iterations: list[int], path: Path) -> tuple[list[int], int]:
    """The positions of a log's iteration lines after the warm-up, and the iterations they cover
    (a line may average several: Megatron's log interval). RunError naming the file where fewer
    than MIN_STEADY_STEPS lines are left: the figure would be the warm-up's."""
    kept = [i for i, it in enumerate(iterations) if it > WARMUP_STEPS]
    if len(kept) < MIN_STEADY_STEPS:
        raise RunError(say_as("calib.few_lines", "{path}: {n} iteration line(s) after the first "
                              "{warmup} warm-up iterations (start-up and compilation make those "
                              "slow); its figures need at least {least}: log a longer run",
                              path=str(path), n=len(kept), warmup=WARMUP_STEPS,
                              least=MIN_STEADY_STEPS))
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
            raise RunError(say_as("calib.no_global_batch", "{path}: Megatron log without {marker} "
                                  "on its iteration lines", path=str(path),
                                  marker="'global batch size'"))
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
    skipped = (say_as("calib.lines_skipped", " ({n:,} lines longer than {most:,} characters were "
                      "skipped)", n=figures.long_lines, most=MAX_LINE_CHARS)
               if figures.long_lines else "")
    # (the words each stack prints, quoted as the log has them)
    raise RunError(say_as("calib.no_iterations", "{path}: no Megatron-LM iteration lines "
                          "({megatron}) or torchtitan step lines ({titan}) found{skipped}",
                          path=str(path), megatron="'elapsed time per iteration (ms)'",
                          titan="'step: ... memory: ...GiB ... tps: ...'", skipped=skipped))
