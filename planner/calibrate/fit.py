"""Fitting efficiency factors from measured runs: measured / predicted, per (GPU, framework, method).

Each factor is the geometric mean of the runs' ratios (measured over the estimator's prediction for the
same layout), with its spread: two parameters, so a group needs at least two runs (MIN_RUNS) and is
refused below that. Groups are fitted at four levels, most specific first: (gpu, framework, method),
(gpu, framework, any), (any, framework, any), (any, any, any); a plan uses the most specific one fitted.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field

MIN_RUNS = 2  # parameters per factor: its level and its spread
Z90 = 1.2816  # standard normal quantile of 0.9: p10-p90 of a log-normal spread
ANY = "*"
METRICS = ("throughput", "memory")


@dataclass(frozen=True)
class Observation:
    """One run's measured and predicted value of one metric."""

    source: str
    gpu: str
    framework: str
    method: str
    metric: str  # throughput | memory
    measured: float
    predicted: float

    @property
    def ratio(self) -> float:
        return self.measured / self.predicted


@dataclass(frozen=True)
class Factor:
    gpu: str
    framework: str
    method: str
    metric: str
    factor: float
    log_sd: float
    runs: tuple[str, ...]
    median_residual_before: float
    median_residual_after: float
    run_gpus: tuple[str, ...] = ()  # the GPUs the runs were on

    @property
    def scope(self) -> tuple[str, str, str]:
        return (self.gpu, self.framework, self.method)

    @property
    def band(self) -> tuple[float, float]:
        """p10-p90 of the ratio a new run on this scope would show (the runs' spread)."""
        return self.factor * math.exp(-Z90 * self.log_sd), self.factor * math.exp(Z90 * self.log_sd)

    def describe(self) -> str:
        scope = "/".join(self.scope)
        return (f"{self.metric} x{self.factor:.3f} on {scope} from {len(self.runs)} runs (p10-p90 "
                f"x{self.band[0]:.2f}-x{self.band[1]:.2f}; median residual {self.median_residual_before:.1%} "
                f"before, {self.median_residual_after:.1%} after)")


@dataclass
class Fit:
    factors: list[Factor] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # exact groups with too few runs


def scopes_of(gpu: str, framework: str, method: str) -> tuple[tuple[str, str, str], ...]:
    """Most specific first."""
    return ((gpu, framework, method), (gpu, framework, ANY), (ANY, framework, ANY), (ANY, ANY, ANY))


def _factor(scope: tuple[str, str, str], metric: str, obs: list[Observation]) -> Factor:
    logs = [math.log(o.ratio) for o in obs]
    mean = statistics.fmean(logs)
    sd = statistics.stdev(logs) if len(logs) > 1 else 0.0
    k = math.exp(mean)
    return Factor(*scope, metric=metric, factor=k, log_sd=sd, runs=tuple(o.source for o in obs),
                  median_residual_before=statistics.median(abs(o.ratio - 1) for o in obs),
                  median_residual_after=statistics.median(abs(o.ratio / k - 1) for o in obs),
                  run_gpus=tuple(sorted({o.gpu for o in obs})))


def fit(observations: Iterable[Observation], min_runs: int = MIN_RUNS) -> Fit:
    obs = list(observations)
    result = Fit()
    for metric in METRICS:
        groups: dict[tuple[str, str, str], list[Observation]] = {}
        for o in obs:
            if o.metric != metric:
                continue
            for scope in scopes_of(o.gpu, o.framework, o.method):
                groups.setdefault(scope, []).append(o)
        for scope, members in groups.items():
            if len(members) >= min_runs:
                result.factors.append(_factor(scope, metric, members))
            elif ANY not in scope:
                result.refused.append(f"{metric} on {'/'.join(scope)}: {len(members)} run(s) for {min_runs} "
                                      f"parameters (factor and spread); not fitted")
    return result


def lookup(factors: Iterable[Factor], metric: str, gpu: str, framework: str, method: str) -> Factor | None:
    by_scope = {f.scope: f for f in factors if f.metric == metric}
    return next((by_scope[s] for s in scopes_of(gpu, framework, method) if s in by_scope), None)
