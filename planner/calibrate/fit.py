"""Fitting efficiency factors from measured runs: measured / predicted, per (GPU, framework,
method).

Each run gives a log ratio y = log(measured / predicted). Scopes are fitted at four levels, most
specific
first: (gpu, framework, method), (gpu, framework, any), (any, framework, any), (any, any, any); a
plan uses the most specific one fitted (see `lookup` for the two rules on what a scope may be
applied to). For the memory metric "any method" means any method of the same class (`*:full`:
pretrain, fine-tune, SFT, DPO; `*:adapter`: LoRA, QLoRA and their DPO forms): the two classes hold
different things in memory (optimizer states of every weight against frozen, maybe 4-bit, base
weights), so one's factor says nothing of the other.

A scope's factor has two parameters, its level and its spread, so a scope needs at least two runs
(MIN_RUNS) and is refused below that. Its level is estimated by partial pooling (empirical Bayes,
fitted top-down; Efron & Morris 1975, Gelman & Hill 2007 ch. 12):

    mu_S = mu_P + w_S (ybar_S - mu_P),   w_S = tau_l^2 / (tau_l^2 + se_S^2),   factor = exp(mu_S)

- ybar_S: the mean log ratio of the scope's n runs (the geometric mean, as fitted before pooling).
- mu_P: the pooled log factor of the parent scope (one level broader); at the top, 0 (no
correction).
- se_S^2 = s~^2 / n, the squared standard error of ybar_S. s~^2 = ((n - 1) s^2 + s0^2) / n is the
scope's own
  log variance moderated by the pooled within-scope variance s0^2 of the most specific scopes,
  counted as one degree of freedom (Smyth 2004's moderated variance, prior df 1): two runs that
  agree by chance do not claim a near-zero error.
- tau_l^2: the variance of true scope levels about their parent at level l, by the method of moments
  over the level's scopes that hold runs their parent's other children do not: d = ybar_S - ybar_P,
  with f = n_S / n_P of the parent's runs in S, has E[d^2] ~ (1 - f)^2 tau^2 + (1 - f) se^2. At the
  top there is one scope, compared with 0: tau_0^2 = max(0, ybar^2 - se^2) (the maximum-likelihood
  estimate from one group): an overall bias no larger than its own noise is not applied.

Runs are weighed by the steady iterations they measured (`run_weight`): a run's weight is
min(1, steps / FULL_WEIGHT_STEPS), 1 where the run does not say. Means and spreads are weighted
(reliability weights), and n above is the effective number of runs (Kish 1965:
(sum w)^2 / sum w^2), so a short run moves a factor less and makes its error wider; MIN_RUNS still
counts runs.

A scope whose runs are exactly its parent's has no information of its own and takes its parent's
factor. The weight is in [0, 1]: 1 keeps the scope's own geometric mean, 0 takes the parent's
factor; it falls as the runs scatter and rises with their number.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field

from plan.models.methods import ADAPTER_METHODS
from plan.models.said import say_as

MIN_RUNS = 2  # parameters per factor: its level and its spread
# A factor plans may apply, measured / predicted: further off, the run or its units are wrong
# (tokens/s of the whole job, GiB per GPU), not the estimate. A run outside it is refused, so every
# factor fitted, a weighted geometric mean of runs inside it, is inside it too.
FACTOR_RANGE = (0.05, 20.0)
Z90 = 1.2816  # standard normal quantile of 0.9: p10-p90 of a log-normal spread
ANY = "*"
METRICS = ("throughput", "memory")
# degrees of freedom the pooled within-scope spread counts for in a scope's own spread
SPREAD_PRIOR_DF = 1
# assumed: steady iterations whose median is a run's own figure. Step times scatter a few percent
# from one iteration to the next; the median of 10 is within about 1% of the steady state, below
# the 5-15% by which runs of one stack differ from the estimate, so more steps add no weight.
FULL_WEIGHT_STEPS = 10

Scope = tuple[str, str, str]


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
    steps: int | None = None  # steady iterations measured; None where the run does not say

    @property
    def ratio(self) -> float:
        return self.measured / self.predicted

    @property
    def weight(self) -> float:
        return run_weight(self.steps)


def run_weight(steps: int | None) -> float:
    """A run's weight in a fit, in (0, 1]: min(1, steps / FULL_WEIGHT_STEPS); 1 where unknown."""
    return 1.0 if steps is None else min(1.0, max(steps, 0) / FULL_WEIGHT_STEPS)


@dataclass(frozen=True)
class Factor:
    """A fitted scope: `factor` is what plans apply (after pooling), `fitted` the runs' own
    geometric mean.

    Files written before pooling carry no pooling fields: their factor is applied as written (weight
    1)."""

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
    raw_factor: float | None = None  # geometric mean of the runs' ratios, before pooling
    weight: float = 1.0  # partial-pooling weight w of the runs' own mean, in [0, 1]
    # what the runs' mean was pooled toward: the parent's factor, or 1 (none)
    prior_factor: float = 1.0
    prior_scope: str = ""  # that parent scope, "" for no correction
    log_se: float = 0.0  # standard error of the runs' mean log ratio
    # tau: sd of true scope levels about their parent at this scope's level
    level_sd: float | None = None
    run_frameworks: tuple[str, ...] = ()  # the frameworks the runs used ("" unknown: an older file)
    run_methods: tuple[str, ...] = ()

    @property
    def scope(self) -> Scope:
        return (self.gpu, self.framework, self.method)

    @property
    def fitted(self) -> float:
        """The runs' own geometric mean (the factor itself for a file written before pooling)."""
        return self.factor if self.raw_factor is None else self.raw_factor

    @property
    def band(self) -> tuple[float, float]:
        """p10-p90 of the ratio a new run on this scope would show (the runs' spread about the
        factor)."""
        return self.factor * math.exp(-Z90 * self.log_sd), self.factor * math.exp(Z90 * self.log_sd)

    def pooling(self) -> str:
        """How far the runs' mean was pulled toward the parent scope, in words ("" for an older
        file)."""
        if self.raw_factor is None:
            return ""
        toward = (say_as("calib.toward_scope", "{scope} x{factor:.3f}", scope=self.prior_scope,
                         factor=self.prior_factor) if self.prior_scope
                  else say_as("calib.no_correction", "no correction"))
        return say_as("calib.pooling", "fitted x{fitted:.3f}, weight {weight:.2f} toward {toward}",
                      fitted=self.raw_factor, weight=self.weight, toward=toward)

    def describe(self) -> str:
        pooled = self.pooling()
        return say_as("calib.describe", "{metric} x{factor:.3f} on {scope} from {n} runs "
                      "({pooled}p10-p90 x{low:.2f}-x{high:.2f}; median residual {before:.1%} "
                      "before, {after:.1%} after)", metric=metric_word(self.metric),
                      factor=self.factor, scope="/".join(self.scope), n=len(self.runs),
                      pooled=say_as("calib.pooled_first", "{pooling}; ", pooling=pooled)
                      if pooled else "", low=self.band[0], high=self.band[1],
                      before=self.median_residual_before, after=self.median_residual_after)


@dataclass
class Fit:
    factors: list[Factor] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # exact groups with too few runs
    # metric -> tau per level
    level_sd: dict[str, tuple[float | None, ...]] = field(default_factory=dict)


def metric_word(metric: str) -> str:
    """'throughput' or 'memory' in the reader's language."""
    words = {"throughput": lambda: say_as("calib.metric_throughput", "throughput"),
             "memory": lambda: say_as("calib.metric_memory", "memory")}
    return words[metric]() if metric in words else metric


def method_class(method: str) -> str:
    return "adapter" if method in ADAPTER_METHODS else "full"


def any_method(metric: str, method: str) -> str:
    """The method wildcard of a metric: any method for throughput, any of the same class for
    memory."""
    return ANY if metric == "throughput" else f"{ANY}:{method_class(method)}"


def is_wildcard(part: str) -> bool:
    return part.startswith(ANY)


def scopes_of(
    gpu: str, framework: str, method: str, metric: str = "throughput"
) -> tuple[Scope, ...]:
    """Most specific first; each scope's parent is the next."""
    anym = any_method(metric, method)
    return (
        (gpu, framework, method),
        (gpu, framework, anym),
        (ANY, framework, anym),
        (ANY, ANY, anym),
    )


@dataclass(frozen=True)
class _Group:
    obs: tuple[Observation, ...]
    level: int  # 0 (any, any, any) .. 3 (gpu, framework, method)
    parent: Scope | None

    @property
    def n(self) -> float:
        """The effective number of runs (Kish): the count itself where every weight is equal."""
        weights = [o.weight for o in self.obs]
        return sum(weights) ** 2 / sum(w * w for w in weights)

    @property
    def total_weight(self) -> float:
        return sum(o.weight for o in self.obs)

    @property
    def logs(self) -> list[float]:
        return [math.log(o.ratio) for o in self.obs]

    @property
    def mean(self) -> float:
        return statistics.fmean(self.logs, [o.weight for o in self.obs])

    @property
    def sd(self) -> float:
        """The weighted sample sd (reliability weights; the plain sample sd at equal weights)."""
        if len(self.obs) < 2:
            return 0.0
        weights = [o.weight for o in self.obs]
        v1, v2 = sum(weights), sum(w * w for w in weights)
        mean = self.mean
        spread = sum(w * (y - mean) ** 2 for w, y in zip(weights, self.logs, strict=True))
        return math.sqrt(max(0.0, spread / (v1 - v2 / v1)))


def _pooled_within_variance(groups: dict[Scope, _Group]) -> float:
    """s0^2: the pooled variance of log ratios within the most specific scopes that have two runs or
    more; where none has, the variance about each top scope's mean."""
    for level in (3, 0):
        members = [g for g in groups.values() if g.level == level and len(g.obs) > 1]
        dof = sum(g.n - 1 for g in members)
        if dof:
            return sum((g.n - 1) * g.sd ** 2 for g in members) / dof
    return 0.0


def _level_variance(
    level: int, fitted: dict[Scope, _Group], se2: dict[Scope, float]
) -> float | None:
    """tau_l^2 by the method of moments (see the module docstring); None where no scope at the level
    holds runs of its own (every one equals its parent, so the level adds nothing)."""
    num = den = 0.0
    found = False
    for scope, g in fitted.items():
        if g.level != level:
            continue
        if g.parent is None:
            d, f = g.mean, 0.0
        else:
            p = fitted[g.parent]
            if len(p.obs) == len(g.obs):
                continue
            d, f = g.mean - p.mean, g.total_weight / p.total_weight
        num += d * d - (1 - f) * se2[scope]
        den += (1 - f) ** 2
        found = True
    return max(0.0, num / den) if found else None


def _factors(
    metric: str, fitted: dict[Scope, _Group], s0_sq: float
) -> tuple[list[Factor], tuple[float | None, ...]]:
    se2 = {s: ((g.n - 1) * g.sd ** 2 + SPREAD_PRIOR_DF * s0_sq) / (g.n - 1 + SPREAD_PRIOR_DF) / g.n
           for s, g in fitted.items()}
    taus = tuple(_level_variance(level, fitted, se2) for level in range(4))
    out: dict[Scope, Factor] = {}
    for level in range(4):  # broadest first: each scope is pooled toward its parent's pooled factor
        for scope, g in fitted.items():
            if g.level != level:
                continue
            parent = out[g.parent] if g.parent else None
            k_raw = math.exp(g.mean)
            # the parent's very runs: nothing of its own
            if parent is not None and len(parent.runs) == len(g.obs):
                mu, w, prior, prior_scope = (
                    math.log(parent.factor),
                    parent.weight,
                    parent.prior_factor,
                    parent.prior_scope,
                )
                tau, se = parent.level_sd, parent.log_se
            else:
                tau2 = taus[level] or 0.0
                prior = parent.factor if parent else 1.0
                prior_scope = "/".join(parent.scope) if parent else ""
                total = tau2 + se2[scope]
                w = tau2 / total if total > 0 else 1.0
                mu = math.log(prior) + w * (g.mean - math.log(prior))
                tau, se = math.sqrt(tau2), math.sqrt(se2[scope])
            k = math.exp(mu)
            out[scope] = Factor(
                *scope,
                metric=metric,
                factor=k,
                log_sd=g.sd,
                runs=tuple(o.source for o in g.obs),
                median_residual_before=statistics.median(abs(o.ratio - 1) for o in g.obs),
                median_residual_after=statistics.median(abs(o.ratio / k - 1) for o in g.obs),
                run_gpus=tuple(sorted({o.gpu for o in g.obs})),
                raw_factor=k_raw,
                weight=w,
                prior_factor=prior,
                prior_scope=prior_scope,
                log_se=se,
                level_sd=tau,
                run_frameworks=tuple(sorted({o.framework for o in g.obs})),
                run_methods=tuple(sorted({o.method for o in g.obs})),
            )
    most_specific_first = sorted(out, key=lambda s: -fitted[s].level)
    return [out[s] for s in most_specific_first], tuple(
        None if t is None else math.sqrt(t) for t in taus
    )


def fit(observations: Iterable[Observation], min_runs: int = MIN_RUNS) -> Fit:
    obs = list(observations)
    result = Fit()
    for metric in METRICS:
        members: dict[Scope, list[Observation]] = {}
        parents: dict[Scope, Scope | None] = {}
        levels: dict[Scope, int] = {}
        for o in obs:
            if o.metric != metric:
                continue
            chain = scopes_of(o.gpu, o.framework, o.method, metric)
            for i, scope in enumerate(chain):
                members.setdefault(scope, []).append(o)
                parents[scope] = chain[i + 1] if i + 1 < len(chain) else None
                levels[scope] = len(chain) - 1 - i
        groups = {s: _Group(tuple(m), levels[s], parents[s]) for s, m in members.items()}
        for scope, g in groups.items():
            if len(g.obs) < min_runs and not any(is_wildcard(part) for part in scope):
                result.refused.append(say_as(
                    "calib.refused_scope", "{metric} on {scope}: {n} run(s) for {least} "
                    "parameters (factor and spread); not fitted", metric=metric_word(metric),
                    scope="/".join(scope), n=len(g.obs), least=min_runs))
        fitted = {s: g for s, g in groups.items() if len(g.obs) >= min_runs}
        if fitted:
            factors, taus = _factors(metric, fitted, _pooled_within_variance(groups))
            result.factors += factors
            result.level_sd[metric] = taus
    return result


def applies(factor: Factor, framework: str) -> bool:
    """Whether a factor may be applied to a plan on `framework`. The (any, any, any) level stands
    for every framework only when its runs span two or more; fitted on one framework's runs it is
    that framework's factor, and says nothing of another's (an older file that does not list its
    frameworks is trusted)."""
    if factor.framework != ANY or not factor.run_frameworks or framework in factor.run_frameworks:
        return True
    return len(factor.run_frameworks) >= 2


def lookup(
    factors: Iterable[Factor], metric: str, gpu: str, framework: str, method: str
) -> Factor | None:
    """The most specific fitted scope that covers the plan and may be applied to it (`applies`);
    None if none. For memory, a method wildcard covers only its own class (full or adapter)."""
    by_scope = {f.scope: f for f in factors if f.metric == metric}
    return next((by_scope[s] for s in scopes_of(gpu, framework, method, metric)
                 if s in by_scope and applies(by_scope[s], framework)), None)
