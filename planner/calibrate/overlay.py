"""The calibration overlay file: fitted factors, the runs they came from, and applying them to estimates.

Only the throughput factor changes plans (speed, hence hours and cost); the memory factor is fitted and
reported, not applied, because the layout search has already judged memory with its own band and headroom.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from models.errors import InputError
from planner.calibrate.fit import Factor, lookup
from planner.estimate import Estimate

VERSION = 1


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
        data = {"calibration": {
            "version": VERSION,
            "note": "written by `plan calibrate`: factor = geometric mean of measured / predicted, per scope "
                    "(gpu/framework/method, * = any); plans use the most specific scope fitted",
            "factors": [{"gpu": f.gpu, "framework": f.framework, "method": f.method, "metric": f.metric,
                         "factor": round(f.factor, 4), "log_sd": round(f.log_sd, 4),
                         "p10": round(f.band[0], 4), "p90": round(f.band[1], 4),
                         "median_residual_before": round(f.median_residual_before, 4),
                         "median_residual_after": round(f.median_residual_after, 4),
                         "run_gpus": list(f.run_gpus), "runs": list(f.runs)}
                        for f in self.factors],
            "refused": self.refused,
            "runs": self.runs,
        }}
        return "# plan calibration overlay\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True)

    @classmethod
    def load(cls, path: Path) -> Calibration:
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise CalibrationError(f"{path}: cannot read: {exc.strerror or exc}") from None
        except yaml.YAMLError as exc:
            raise CalibrationError(f"{path}: not YAML: {str(exc).splitlines()[0]}") from None
        body = data.get("calibration") if isinstance(data, dict) else None
        if not isinstance(body, dict) or not isinstance(body.get("factors"), list):
            raise CalibrationError(f"{path}: calibration.factors: missing; write the file with `plan calibrate`")
        factors = []
        for i, raw in enumerate(body["factors"]):
            where = f"{path}: calibration.factors[{i}]"
            if not isinstance(raw, dict):
                raise CalibrationError(f"{where}: must be a mapping")
            try:
                factor = float(raw["factor"])
                log_sd = float(raw.get("log_sd", 0.0))
                runs = tuple(str(r) for r in raw.get("runs", []))
                fields = {k: str(raw[k]) for k in ("gpu", "framework", "method", "metric")}
            except (KeyError, TypeError, ValueError) as exc:
                raise CalibrationError(f"{where}: needs gpu, framework, method, metric and a numeric factor "
                                       f"({exc})") from None
            if not 0.05 <= factor <= 20 or log_sd < 0:
                raise CalibrationError(f"{where}.factor: {factor} is outside 0.05-20 (or log_sd < 0)")
            if fields["metric"] not in ("throughput", "memory"):
                raise CalibrationError(f"{where}.metric: throughput or memory, got {fields['metric']!r}")
            factors.append(Factor(fields["gpu"], fields["framework"], fields["method"], fields["metric"], factor,
                                  log_sd, runs, float(raw.get("median_residual_before", 0.0)),
                                  float(raw.get("median_residual_after", 0.0)),
                                  tuple(str(g) for g in raw.get("run_gpus", []))))
        return cls(factors, list(body.get("runs") or []), list(body.get("refused") or []), str(path))

    def throughput_factor(self, gpu: str, framework: str, method: str) -> Factor | None:
        return lookup(self.factors, "throughput", gpu, framework, method)

    def apply(self, est: Estimate, method: str) -> Estimate:
        """The estimate with its speed scaled by the matching throughput factor (unchanged if none); the
        cluster's assumptions say so, which puts the line in every plan that uses it."""
        factor = self.throughput_factor(est.cluster.gpu.id, est.layout.framework, method)
        if factor is None:
            return est
        k = factor.factor
        time = dataclasses.replace(est.time, **{f.name: getattr(est.time, f.name) / k
                                                for f in dataclasses.fields(est.time)})
        note = calibration_note(factor, est.cluster.gpu.id)
        cluster = dataclasses.replace(est.cluster, assumptions=(*est.cluster.assumptions, note))
        return dataclasses.replace(est, cluster=cluster, time=time, step_time_s=est.step_time_s / k,
                                   tokens_per_s=est.tokens_per_s * k, tokens_per_s_per_gpu=est.tokens_per_s_per_gpu * k,
                                   model_tflops_per_gpu=est.model_tflops_per_gpu * k, mfu=est.mfu * k,
                                   notes=[*est.notes, note])


def calibration_note(factor: Factor, gpu: str) -> str:
    gpus = factor.run_gpus or ((factor.gpu,) if factor.gpu != "*" else ())
    on = "your " + ", ".join(f"{g}s" for g in gpus) if gpus else "your GPUs"
    scope = "/".join(s for s in (factor.framework, factor.method) if s != "*")
    return (f"calibrated from {len(factor.runs)} runs on {on}{f' ({scope})' if scope else ''} (median residual "
            f"{factor.median_residual_after:.0%}): throughput x{factor.factor:.2f} applied to {gpu}")
