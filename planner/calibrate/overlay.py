"""The calibration overlay file: fitted factors, the runs they came from, and applying them to
estimates.

Only the throughput factor changes plans (speed, hence hours and cost); the memory factor is fitted
and reported, not applied, because the layout search has already judged memory with its own band and
headroom.

Version 2 adds each factor's partial pooling (`fitted`, `weight`, `toward`, `toward_factor`,
`log_se`, `level_sd`) and the frameworks and methods of its runs; version 1 files load and apply as
written (their factors were not pooled), with their frameworks read back from the runs they record.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from plan.models.errors import InputError
from plan.models.methods import QLORA_METHODS
from plan.models.said import say_as
from plan.models.yaml_io import MAX_FILE_BYTES, parse_yaml_text, read_yaml
from plan.planner.calibrate.fit import FACTOR_RANGE, Factor, lookup
from plan.planner.estimate import Estimate
from plan.planner.estimate.band import QLORA_DEQUANTIZATION, gpu_efficiency
from plan.planner.i18n.said import Joined, say

VERSION = 2


class CalibrationError(InputError):
    """A calibration file that cannot be used; the message names the file and the field."""

    def __init__(self, message: str) -> None:
        super().__init__([message])


@dataclass
class Calibration:
    factors: list[Factor]
    runs: list[dict[str, Any]] = field(default_factory=list)  # what each factor came from
    refused: list[str] = field(default_factory=list)
    path: str = ""

    def to_yaml(self) -> str:
        body = yaml.dump(self._data(), Dumper=_Dumper, sort_keys=False, allow_unicode=True)
        return "# plan calibration overlay\n" + body

    def _data(self) -> dict[str, Any]:
        return {"calibration": {
            "version": VERSION,
            "note": "written by `plan calibrate`: per scope (gpu/framework/method, * = any, *:full "
                    "/ *:adapter = any method of that class), fitted = geometric mean of measured "
                    "/ predicted; factor = fitted pooled toward the broader scope's factor (1 at "
                    "the top) with weight tau^2 / (tau^2 + log_se^2), tau = level_sd; plans use "
                    "the most specific scope fitted, and the */*/* scope only for a framework its "
                    "runs used unless they span two or more",
            "factors": [_factor_fields(f) for f in self.factors],
            "refused": [str(line) for line in self.refused],  # text (a keyed line: its English)
            "runs": self.runs,
        }}

    def checked_yaml(self, label: str) -> str:
        """to_yaml(), read back here as `--calibration` reads a file: what `plan calibrate`
        writes is always a file it accepts. CalibrationError (one line) where it would not be."""
        text = self.to_yaml()
        size = len(text.encode("utf-8", "replace"))
        if size > MAX_FILE_BYTES:
            raise CalibrationError(say_as("calib.file_too_big", "{label}: the calibration would "
                                          "be {mb:,.1f} MB, more than the {most:g} MB a "
                                          "calibration file may have; calibrate from fewer runs",
                                          label=label, mb=size / 1e6,
                                          most=MAX_FILE_BYTES / 1e6))
        try:
            text.encode("utf-8")
            back = parse_yaml_text(text, label, what="calibration file")
            Calibration.from_data(back, label)
        except (InputError, UnicodeEncodeError) as exc:
            why = exc.problems[0] if isinstance(exc, InputError) else say_as(
                "calib.not_utf8_text", "text that is not UTF-8")
            raise CalibrationError(say_as("calib.would_be_refused", "{label}: not written: read "
                                          "back, the calibration would be refused ({why})",
                                          label=label, why=why)) from None
        if back != self._data():
            raise CalibrationError(say_as("calib.would_not_read_back", "{label}: not written: the "
                                          "calibration would not read back as written (a run "
                                          "name YAML cannot hold?)", label=label))
        return text

    @classmethod
    def load(cls, path: Path) -> Calibration:
        try:
            data = read_yaml(path, what="calibration file")
        except InputError as exc:  # the same size, nesting and integer limits as a scenario
            raise CalibrationError(exc.problems[0]) from None
        return cls.from_data(data, str(path))

    @classmethod
    def from_data(cls, data: Any, path: str) -> Calibration:
        """A calibration from a file's parsed YAML; CalibrationError naming `path` and the field."""
        body = data.get("calibration") if isinstance(data, dict) else None
        if not isinstance(body, dict) or not isinstance(body.get("factors"), list):
            raise CalibrationError(say_as("calib.no_factors", "{path}: calibration.factors: "
                                          "missing; write the file with `plan calibrate`",
                                          path=path))
        for key in ("runs", "refused"):
            if not isinstance(body.get(key) or [], list):
                raise CalibrationError(_not_a_list(say_as("calib.body_where", "{path}: "
                                                          "calibration.{name}", path=path,
                                                          name=key)))
        records = [r for r in body.get("runs") or [] if isinstance(r, dict)]
        factors = []
        for i, raw in enumerate(body["factors"]):
            where = say_as("calib.factor_where", "{path}: calibration.factors[{i}]", path=path,
                           i=i)
            if not isinstance(raw, dict):
                raise CalibrationError(say_as("calib.not_a_mapping", "{where}: must be a mapping",
                                              where=where))
            for key in ("runs", "run_gpus", "run_frameworks", "run_methods"):
                if not isinstance(raw.get(key) or [], list):
                    raise CalibrationError(_not_a_list(say_as(
                        "calib.field_of", "{where}.{name}", where=where, name=key)))
            try:
                factor = float(raw["factor"])
                log_sd = float(raw.get("log_sd", 0.0))
                runs = tuple(str(r) for r in raw.get("runs") or [])
                fields = {k: str(raw[k]) for k in ("gpu", "framework", "method", "metric")}
            except (KeyError, TypeError, ValueError) as exc:
                raise CalibrationError(say_as("calib.factor_fields", "{where}: needs gpu, "
                                              "framework, method, metric and a numeric factor "
                                              "({why})", where=where,
                                              why=python_words(exc))) from None
            low, high = FACTOR_RANGE
            if not low <= factor <= high or not 0 <= log_sd < math.inf:
                raise CalibrationError(say_as("calib.factor_range", "{where}.factor: {factor} is "
                                              "outside {low:g}-{high:g} (or log_sd is not a "
                                              "finite number >= 0)", where=where, factor=factor,
                                              low=low, high=high))
            if fields["metric"] not in ("throughput", "memory"):
                raise CalibrationError(say_as("calib.factor_metric", "{where}.metric: throughput "
                                              "or memory, got {metric}", where=where,
                                              metric=repr(fields["metric"])))
            factors.append(_factor_from(raw, where, fields, factor, log_sd, runs, records))
        return cls(factors, records, [str(r) for r in body.get("refused") or []], path)

    def throughput_factor(self, gpu: str, framework: str, method: str) -> Factor | None:
        return lookup(self.factors, "throughput", gpu, framework, method)

    def apply(self, est: Estimate, method: str) -> Estimate:
        """The estimate with its speed scaled by the matching throughput factor (unchanged if none);
        the cluster's assumptions say so, which puts the line in every plan that uses it."""
        factor = self.throughput_factor(est.cluster.gpu.id, est.layout.framework, method)
        if factor is None:
            return est
        k = factor.factor
        time = dataclasses.replace(est.time, **{f.name: getattr(est.time, f.name) / k
                                                for f in dataclasses.fields(est.time)})
        note = calibration_note(factor, est.cluster.gpu.id)
        cluster = dataclasses.replace(est.cluster, assumptions=(*est.cluster.assumptions, note))
        measured = measured_by_runs(factor, est, method)
        return dataclasses.replace(
            est,
            cluster=cluster,
            time=time,
            step_time_s=est.step_time_s / k,
            tokens_per_s=est.tokens_per_s * k,
            tokens_per_s_per_gpu=est.tokens_per_s_per_gpu * k,
            model_tflops_per_gpu=est.model_tflops_per_gpu * k,
            mfu=est.mfu * k,
            notes=[*est.notes, note],
            uncalibrated=tuple(m for m in est.uncalibrated if m not in measured),
        )


class _Dumper(yaml.SafeDumper):
    """PyYAML writes a next-line character (U+0085) raw inside a single-quoted scalar, where reading
    folds it into a space; a string holding a line break other than \\n is written double-quoted,
    where it is escaped (\\N, \\L, \\P) and reads back as it was."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = '"' if any(ch in value for ch in "\x85\u2028\u2029") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def measured_by_runs(factor: Factor, est: Estimate, method: str) -> set[str]:
    """Which of the estimate's uncalibrated mechanisms (band.uncalibrated_mechanisms) the factor's
    own runs measured, so its band no longer widens for them: the GPU's efficiency where they ran on
    this GPU, and QLoRA's dequantization where they also ran QLoRA on it."""
    if est.cluster.gpu.id not in factor.run_gpus:
        return set()
    measured = {gpu_efficiency(est.cluster.gpu.architecture)}
    if method in QLORA_METHODS and method in factor.run_methods:
        measured.add(QLORA_DEQUANTIZATION)
    return measured


def _factor_fields(f: Factor) -> dict[str, Any]:
    return {
        "gpu": f.gpu,
        "framework": f.framework,
        "method": f.method,
        "metric": f.metric,
        "factor": round(f.factor, 4),
        "fitted": round(f.fitted, 4),
        "weight": round(f.weight, 4),
        "toward": f.prior_scope or "none",
        "toward_factor": round(f.prior_factor, 4),
        "log_se": round(f.log_se, 4),
        "level_sd": None if f.level_sd is None else round(f.level_sd, 4),
        "log_sd": round(f.log_sd, 4),
        "p10": round(f.band[0], 4),
        "p90": round(f.band[1], 4),
        "median_residual_before": round(f.median_residual_before, 4),
        "median_residual_after": round(f.median_residual_after, 4),
        "run_gpus": list(f.run_gpus),
        "run_frameworks": list(f.run_frameworks),
        "run_methods": list(f.run_methods),
        "runs": list(f.runs),
    }


def _factor_from(
    raw: dict[str, Any],
    where: str,
    fields: dict[str, str],
    factor: float,
    log_sd: float,
    runs: tuple[str, ...],
    records: list[dict[str, Any]],
) -> Factor:
    """A factor from its file entry; a version 1 entry (no pooling fields) is applied as written,
    and its runs' frameworks and methods are read back from the run records, so the scope rules
    still hold."""
    by_source = {str(r.get("source")): r for r in records}
    try:
        pooled = "fitted" in raw
        weight = float(raw.get("weight", 1.0))
        prior = float(raw.get("toward_factor", 1.0))
        log_se = float(raw.get("log_se", 0.0))
        level_sd = None if raw.get("level_sd") is None else float(raw["level_sd"])
        fitted = float(raw["fitted"]) if pooled else None
        residuals = (
            float(raw.get("median_residual_before", 0.0)),
            float(raw.get("median_residual_after", 0.0)),
        )
    except (TypeError, ValueError) as exc:
        raise CalibrationError(say_as("calib.pooling_numbers", "{where}: fitted, weight, "
                                      "toward_factor, log_se, level_sd and the median residuals "
                                      "must be numbers ({why})", where=where,
                                      why=python_words(exc))) from None
    if not 0 <= weight <= 1 or (fitted is not None and fitted <= 0) or prior <= 0:
        raise CalibrationError(say_as("calib.weight_range", "{where}.weight: {weight} must be "
                                      "within 0-1 (and fitted, toward_factor > 0)", where=where,
                                      weight=weight))
    numbers = (weight, prior, log_se, *residuals, *(v for v in (fitted, level_sd) if v is not None))
    if not all(math.isfinite(v) for v in numbers):
        raise CalibrationError(say_as("calib.pooling_finite", "{where}: fitted, weight, "
                                      "toward_factor, log_se, level_sd and the median residuals "
                                      "must be finite numbers (not .nan or .inf)", where=where))

    def listed(key: str, record_key: str) -> tuple[str, ...]:
        if key in raw:
            return tuple(str(v) for v in raw.get(key) or [])
        found = [by_source[r].get(record_key) for r in runs if r in by_source]
        return (
            tuple(sorted({str(v) for v in found}))
            if runs and len(found) == len(runs) and all(found)
            else ()
        )

    toward = str(raw.get("toward", "none"))
    return Factor(
        fields["gpu"],
        fields["framework"],
        fields["method"],
        fields["metric"],
        factor,
        log_sd,
        runs,
        *residuals,
        tuple(str(g) for g in raw.get("run_gpus") or []),
        raw_factor=fitted,
        weight=weight,
        prior_factor=prior,
        prior_scope="" if toward == "none" else toward,
        log_se=log_se,
        level_sd=level_sd,
        run_frameworks=listed("run_frameworks", "framework"),
        run_methods=listed("run_methods", "method"),
    )


def calibration_note(factor: Factor, gpu: str) -> str:
    """The line every plan and estimate that used the factor carries (its assumptions, its notes),
    said again in the reader's language."""
    gpus = factor.run_gpus or ((factor.gpu,) if factor.gpu != "*" else ())
    on = (say("calib.on_your", gpus=Joined([say("calib.gpu_plural", gpu=g) for g in gpus],
                                            "list_comma"))
          if gpus else say("calib.on_your_gpus"))
    scope = "/".join(s for s in (factor.framework, factor.method) if not s.startswith("*"))
    return say_as("calib.note", "calibrated from {n} runs on {on}{scope} (median residual "
                  "{residual:.0%}): throughput x{factor:.2f}{pooled} applied to {gpu}",
                  n=len(factor.runs), on=on,
                  scope=say_as("calib.in_parens", " ({text})", text=scope) if scope else "",
                  residual=factor.median_residual_after, factor=factor.factor,
                  pooled=say_as("calib.in_parens", " ({text})", text=factor.pooling())
                  if factor.raw_factor is not None else "", gpu=gpu)


def _not_a_list(where: str) -> str:
    return say_as("calib.not_a_list", "{where}: must be a list", where=where)


# Python's own words for a field that is missing or not a number (float() and a mapping's lookup)
_NOT_FLOAT = re.compile(r"could not convert string to float: (?P<value>.+)")
_FLOAT_TYPE = re.compile(r"float\(\) argument must be a string or a real number, not (?P<kind>.+)")


def python_words(exc: Exception) -> str:
    """What float() or a missing key said, keyed where its words are known; else as Python wrote
    it."""
    text = str(exc)
    if isinstance(exc, KeyError):
        return say_as("calib.py_missing_key", "{name}", name=text)
    if match := _NOT_FLOAT.fullmatch(text):
        return say_as("calib.py_not_float", "could not convert string to float: {value}",
                      value=match["value"])
    if match := _FLOAT_TYPE.fullmatch(text):
        return say_as("calib.py_float_type", "float() argument must be a string or a real number, "
                      "not {kind}", kind=match["kind"])
    return text
