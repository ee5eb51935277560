"""Reading the user's measured runs in any of the forms `plan calibrate` takes.

- CSV or JSONL rows: model, method, gpu, gpus, layout (or tp/pp/dp/... columns), seq_len, framework,
  tokens_per_s or step_time_s (with global_batch), peak_memory_gib.
- A Hugging Face Trainer `trainer_state.json` with the run's description beside it (`run.yaml`):
  throughput from `train_samples_per_second` (or log_history) x seq_len.
- Megatron-LM logs ("elapsed time per iteration (ms)", "global batch size", "max reserved" memory) and
  torchtitan logs ("tps" per GPU, "memory: ...GiB"), each with `run.yaml` beside it.

A log's description is the file `<log>.run.yaml`, or `run.yaml` in the same folder.
"""

from __future__ import annotations

import csv
import json
import re
import statistics
from pathlib import Path
from typing import Any

import yaml

from plan.models.scenario import loss_not_on_megatron
from plan.models.stacks import stack_of
from plan.planner.calibrate.runs import LAYOUT_KEYS, SETTING_KEYS, Run, RunError, parse_layout_text, setting
from plan.planner.estimate.types import FRAMEWORKS

REQUIRED = ("model", "method", "gpu", "gpus", "seq_len")
WARMUP_STEPS = 2  # iterations dropped from a log's median: start-up and compilation make them slow
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def read_runs(paths: list[Path]) -> list[Run]:
    runs: list[Run] = []
    for path in paths:
        if not path.is_file():
            raise RunError(f"{path}: no such file")
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
            raise RunError(f"{path}: unsupported run file; use .csv, .jsonl, trainer_state.json, or a Megatron-LM "
                           "or torchtitan log (.log, .txt, .out)")
    return runs


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise RunError(f"{path}: cannot read: {exc.strerror or exc}") from None


def _num(value: Any, where: str, field: str, whole: bool = False) -> float | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        number = float(str(value).replace(",", "").strip())
    except ValueError:
        raise RunError(f"{where}: {field} must be a number, got {value!r}") from None
    if number <= 0 or (whole and number != int(number)):
        raise RunError(f"{where}: {field} must be a positive {'whole ' if whole else ''}number, got {value!r}")
    return number


def run_from_fields(raw: dict[str, Any], where: str, measured: dict[str, float | None] | None = None) -> Run:
    """One run from a row or description; `measured` overrides the row's own measurements (logs)."""
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
        raise RunError(f"{where}: framework must be megatron, deepspeed or fsdp (the execution model the run "
                       f"used), got {framework or 'nothing'!r}")
    if fields.get("loss", "plain") != "plain" and not stack_of(framework).leaner_losses:
        raise RunError(f"{where}: loss {loss_not_on_megatron(str(fields['loss']))}")
    gpus = int(_num(row["gpus"], where, "gpus", whole=True) or 0)
    seq_len = int(_num(row["seq_len"], where, "seq_len", whole=True) or 0)
    tps = _num(row.get("tokens_per_s"), where, "tokens_per_s")
    step = _num(row.get("step_time_s"), where, "step_time_s")
    memory = _num(row.get("peak_memory_gib"), where, "peak_memory_gib")
    if measured:
        tps = measured.get("tokens_per_s") or tps
        step = measured.get("step_time_s") or step
        memory = measured.get("peak_memory_gib") or memory
        if measured.get("global_batch") and not fields.get("global_batch"):
            fields["global_batch"] = int(measured["global_batch"] or 0)
    if tps is None and step is not None:
        if not fields.get("global_batch"):
            raise RunError(f"{where}: step_time_s needs global_batch (sequences per step) to give tokens/s")
        tps = fields["global_batch"] * seq_len / step
    if tps is None and memory is None:
        raise RunError(f"{where}: no measurement: give tokens_per_s, step_time_s or peak_memory_gib")
    method = str(row["method"])
    return Run(source=where, model=str(row["model"]), method=method, gpu=str(row["gpu"]), gpus=gpus,
               seq_len=seq_len, framework=framework, precision=str(row.get("precision") or "bf16"),
               tokens_per_s=tps, peak_memory_gib=memory, **fields)


def _csv(path: Path) -> list[Run]:
    with path.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise RunError(f"{path}: no rows (a header line and one row per run)")
    return [run_from_fields(row, f"{path}:{i}") for i, row in enumerate(rows, start=2)]


def _jsonl(path: Path) -> list[Run]:
    runs = []
    for i, line in enumerate(_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RunError(f"{path}:{i}: not JSON: {exc.msg}") from None
        if not isinstance(row, dict):
            raise RunError(f"{path}:{i}: each line must be a JSON object")
        runs.append(run_from_fields(row, f"{path}:{i}"))
    return runs


def _description(path: Path) -> dict[str, Any]:
    for candidate in (path.with_name(path.name + ".run.yaml"), path.with_name("run.yaml")):
        if candidate.is_file():
            try:
                data = yaml.safe_load(_text(candidate))
            except yaml.YAMLError as exc:
                raise RunError(f"{candidate}: not YAML: {str(exc).splitlines()[0]}") from None
            if not isinstance(data, dict):
                raise RunError(f"{candidate}: must be a mapping of model, method, gpu, gpus, layout, seq_len, "
                               "framework")
            return data
    raise RunError(f"{path}: needs the run's description beside it ({path.name}.run.yaml or run.yaml: model, "
                   "method, gpu, gpus, layout, seq_len, framework)")


def _trainer_state(path: Path) -> Run:
    try:
        state = json.loads(_text(path))
    except json.JSONDecodeError as exc:
        raise RunError(f"{path}: not JSON: {exc.msg}") from None
    history = state.get("log_history") if isinstance(state, dict) else None
    if not isinstance(history, list):
        raise RunError(f"{path}: not a Hugging Face trainer_state.json (no log_history list)")
    desc = _description(path)
    where = str(path)
    seq_len = int(_num(desc.get("seq_len"), where, "seq_len", whole=True) or 0)
    samples_per_s = next((e["train_samples_per_second"] for e in reversed(history)
                          if isinstance(e, dict) and e.get("train_samples_per_second")), None)
    if samples_per_s is None:
        raise RunError(f"{path}: log_history has no train_samples_per_second (the Trainer writes it at the end "
                       "of training)")
    measured: dict[str, float | None] = {"tokens_per_s": float(samples_per_s) * seq_len}
    return run_from_fields(desc, where, measured)


MEGATRON_STEP = re.compile(r"iteration\s+(\d+)\s*/\s*\d+\s*\|.*?elapsed time per iteration \(ms\):\s*([\d.]+)")
MEGATRON_BATCH = re.compile(r"global batch size:\s*(\d+)")
MEGATRON_MEMORY = re.compile(r"memory \(MB\).*?max reserved:\s*([\d.]+)")
TITAN_STEP = re.compile(r"step:\s*(\d+).*?memory:\s*([\d.]+)\s*GiB.*?tps:\s*([\d,]+)")


def _log(path: Path) -> Run:
    text = ANSI.sub("", _text(path))
    desc = _description(path)
    where = str(path)
    gpus = int(_num(desc.get("gpus"), where, "gpus", whole=True) or 0)
    seq_len = int(_num(desc.get("seq_len"), where, "seq_len", whole=True) or 0)
    steps = [(int(m.group(1)), float(m.group(2))) for m in MEGATRON_STEP.finditer(text)]
    if steps:
        kept = [ms for it, ms in steps if it > WARMUP_STEPS] or [ms for _, ms in steps]
        batches = MEGATRON_BATCH.findall(text)
        gb = int(batches[-1]) if batches else None
        if gb is None:
            raise RunError(f"{path}: Megatron log without 'global batch size' on its iteration lines")
        step_s = statistics.median(kept) / 1000.0
        memory = [float(m) for m in MEGATRON_MEMORY.findall(text)]
        return run_from_fields(desc, where, {"tokens_per_s": gb * seq_len / step_s, "global_batch": gb,
                                             "peak_memory_gib": max(memory) / 1024.0 if memory else None})
    titan = [(int(m.group(1)), float(m.group(2)), float(m.group(3).replace(",", "")))
             for m in TITAN_STEP.finditer(text)]
    if titan:
        kept_t = [t for t in titan if t[0] > WARMUP_STEPS] or titan
        tps_per_gpu = statistics.median(t[2] for t in kept_t)  # torchtitan logs tokens/s per device
        return run_from_fields(desc, where, {"tokens_per_s": tps_per_gpu * gpus,
                                             "peak_memory_gib": max(t[1] for t in kept_t)})
    raise RunError(f"{path}: no Megatron-LM iteration lines ('elapsed time per iteration (ms)') or torchtitan "
                   "step lines ('step: ... memory: ...GiB ... tps: ...') found")
