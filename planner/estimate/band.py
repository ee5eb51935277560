"""How sure an estimate is: p10-p90 bands for throughput and memory, from the validation residuals.

The bands hold published / predicted for 80% of runs by split conformal prediction over the
calibration rows of each mechanism class (bench/scale_bands.py, conformal_band: the
ceil((n + 1) 0.8)-th smallest |log(ratio / median)|, so few rows give wider bands; Angelopoulos &
Bates 2021, arXiv:2107.07511; bench/validate_estimates.py derives and prints them from the 67
throughput and 10 banded memory rows of the public set). A quantile q in between
follows a log-normal fitted to the two percentiles, so the planner can ask for the memory or the
time that holds with probability q (`confidence` in a scenario).
Where an estimate rests on what those rows do not measure, its throughput band is widened
(`uncalibrated_mechanisms`).
"""

from __future__ import annotations

import math
from functools import lru_cache
from statistics import NormalDist
from typing import TYPE_CHECKING, get_args

from plan.models.fields import StackMaturity
from plan.models.methods import PRETRAIN_METHODS, QLORA_METHODS
from plan.models.stacks import DEEPSPEED, MEGATRON, stack_of
from plan.planner.estimate.factors import MEASURED_GEMM_ARCHITECTURES
from plan.planner.i18n.said import Joined, phrase, say

if TYPE_CHECKING:
    from plan.models.layout import Layout

THROUGHPUT_BAND: dict[str, tuple[float, float]] = {
    "megatron": (0.90, 1.09),
    "fsdp": (0.85, 1.15),
}
"""(p10, p90) of published / predicted tokens per second, by the stack's class: Megatron-LM and NeMo
rows (MEG21, MEG24, KOR, NEMO), FSDP-style rows (llm-foundry, torchtitan); DeepSpeed is in the FSDP
class (same sharded data parallelism), widened since no row measures it
(uncalibrated_mechanisms). The conformal rule gives (0.909, 1.089) and (0.859, 1.150), rounded
outwards here; the interpolated p10-p90 used before, (0.90, 1.07) and (0.85, 1.13), held the
published value for 70% of rows when each source was judged by the others' band, this rule 84%
(2026-12-06)."""

MEMORY_BAND: tuple[float, float] = (0.91, 1.14)
"""(p10, p90) of published / predicted peak memory over the measured rows (torchtune, torchtitan,
QLoRA; the ZeRO rows are exact state counts and excluded; re-derived after torch pipelining's kept
outputs were counted, 2026-12-01, (0.91, 1.17) before). Above 1: torchtitan logs the allocator's
reserved peak and its 1F1B run sits 13% above the estimate; below 1: torchtune's LoRA/QLoRA figures
sit 7-18% under it. Not lowered to the (0.89, 1.13) that torchtune's three 8-GPU rows
(bench/data/memory_torchtune.csv) give the derivation: those rows sit under the estimate, and a band
narrowed by over-estimates would let every plan run closer to its card on the strength of three
rows, one of them (405B QLoRA) read at its recipe's batch size because the table's stated one cannot
hold its figure. The conformal rule (see THROUGHPUT_BAND) gives (0.864, 1.141): the same upper side;
the lower side is kept, for the reason above. Held out one source at a time it cannot be judged: the
rows come from two sources (torchtune, torchtitan), and neither alone holds the 4 rows a finite
80% band needs (torchtitan's 3) or the other's offset (torchtune's)."""

UNCALIBRATED_SPREAD = 1.2
"""The p90 / median ratio of the extra throughput error an estimate carries for each mechanism it
rests on that no calibration row measures (`uncalibrated_mechanisms`): the band of its class is
widened by it, the errors taken as independent (log-normal, spreads added in quadrature). Assumed,
from the two times the estimator met a mechanism before any row measured it: the A100 families,
timed with Hopper's kernel factor before Ampere had its own, sat at a median of -10.5% and down to
-17% (factors.py, TRAINING_KERNEL_EFFICIENCY_OF_ARCHITECTURE); DeepSeek-V3's whole run, the one MoE
figure checked, came out +23% in GPU-hours. +-20% at p10-p90 spans both. Every estimate that uses it
says so."""

WHOLE_RUN_OVERHEAD = 1.19
"""Whole runs take longer than steady-state steps plus the failure model: warm-up, evaluation, data
stalls, stragglers, batch-size ramps, long-context stages, rewinds. bench/data/whole_runs.csv holds
published GPU-hours of whole pre-training runs (Llama 2 7B/13B/70B, Llama 3 8B/70B, Llama 3.1 405B,
each with its source); `bench/validate_estimates.py` prints, per run, the overhead that run alone
would need over our steady-state estimate with failures (the failure model's restart and checkpoint
write derived from Llama 3's published >90% effective training time, cluster.py, so failures scale
with the GPU count there and not here): Llama 2 7B/13B/70B 1.16, 1.29 and 1.24, Llama 3.1 405B 1.13,
and Llama 3 8B/70B 1.22 and 1.02 over the GPU counts their unpublished one may be (2,048 to the
team's published 16,384 H100s; at the 2,048 assumed alone they needed 2.07 and 1.46: a larger count
at their 4M-token batch runs smaller per-rank batches, which the step estimate prices). 1.19 is the
median of the six."""

WHOLE_RUN_BAND: tuple[float, float] = (1.01, 1.40)
"""p10-p90 of the whole-run overhead, calibrated leave-one-source-out (bench/scale_bands.py,
loso_calibrated_band; jackknife+): each run's distance from the median of the other sources' runs,
its conformal rank at 80% about the median of all, (1.012, 1.400) rounded outwards. The estimate's
band composes it with the throughput band as independent log-normal factors (`run_band`); held out
one source at a time this holds 6 of the 6 runs."""

WHOLE_RUN_PRIOR_BAND: tuple[float, float] = (math.sqrt(0.59 / 0.988), math.sqrt(0.988 / 0.59))
"""The spread a whole run's overhead is given where too few published runs are left to calibrate
one (the bench's leave-one-source-out, under the 4 runs a finite 80% conformal band needs): the
range of published job uptimes, Llama 3 90%, OPT-175B 59% on ~1K A100s, AWS HLAT 98.8% on 4,096
Trainium (G. K. Lockwood, "Job reliability", glennklockwood.com/garden/job-reliability, read for
the team's reliability notes, 2026): time multipliers 1 / 0.988 to 1 / 0.59, a factor 1.67 from
end to end, as a p10-p90 about the overhead's point. Wider than the spread the published whole
runs give, as a band from fewer runs must be."""


STACK_MATURITIES: tuple[str, ...] = get_args(StackMaturity)
"""What `plan estimate --stack-maturity` (a cluster's `stack_maturity`) may say of the training
stack at the run's scale, as a scenario's `stack_maturity` (plan.models.fields.StackMaturity):
`mature`, one its team has run at that scale (the whole runs above are Meta's, and an estimate that
says nothing is timed as they were); `new`, its first run there."""

NEW_STACK_FACTOR = 0.90 / 0.59
"""A new stack's whole pre-training run over a mature one's: the job uptimes published for Llama 3
(90%, 16,384 H100s, on a stack Meta had run at scale) and OPT-175B (59% on ~1K A100s, its team's
first run at that scale) (glennklockwood.com/garden/job-reliability, as WHOLE_RUN_PRIOR_BAND),
about 1.53. Assumed: that the two runs' uptimes differ by their stacks' maturity alone; not scaled
by the GPU count, though OPT's was measured on ~1K GPUs and a new stack on more may do worse."""


def whole_run_overhead(
    method: str, maturity: str | None = None
) -> tuple[float, tuple[float, float]]:
    """(point, p10-p90) multiplier on steady-state hours. The evidence is whole pre-training runs;
    for fine-tuning none is published, so the point is 1 and the upper side keeps the same
    spread. A pre-training run on a `new` stack takes NEW_STACK_FACTOR more, band and all."""
    if method in PRETRAIN_METHODS:
        scale = NEW_STACK_FACTOR if maturity == "new" else 1.0
        return WHOLE_RUN_OVERHEAD * scale, (WHOLE_RUN_BAND[0] * scale, WHOLE_RUN_BAND[1] * scale)
    return 1.0, (1.0, WHOLE_RUN_BAND[1] / WHOLE_RUN_OVERHEAD)


def stack_maturity_note(method: str, maturity: str | None) -> str | None:
    """The line a whole run's estimate carries where its stack's maturity is stated: what it
    changed, and from what."""
    if maturity is None or method not in PRETRAIN_METHODS:
        return None
    if maturity == "new":
        return say("run.stack_new", factor=NEW_STACK_FACTOR)
    return say("run.stack_mature")


def combined(*bands: tuple[float, float]) -> tuple[float, float]:
    """p10-p90 of the product of independent log-normal factors, each given by its p10-p90: the
    centres (in log) add, the half-widths add in quadrature."""
    parts = [_log_centre_and_half(b) for b in bands]
    mu = sum(c for c, _ in parts)
    half = math.sqrt(sum(h * h for _, h in parts))
    return math.exp(mu - half), math.exp(mu + half)


def run_band(
    throughput: tuple[float, float], overhead: float, overhead_band: tuple[float, float]
) -> tuple[float, float]:
    """p10-p90 of a whole run's hours as multiples of its point (steady-state hours x the
    overhead's point, failures aside): the throughput's band as time (1 / p90, 1 / p10 of
    published / estimated tokens per second) and the whole-run overhead's about its point, taken
    as independent. An overhead band whose point is its lower edge (fine-tuning's: no published
    whole run, so no run below its steps) is no log-normal about that point: its edges multiply
    the throughput band's, a bound as before."""
    time_band = (1 / throughput[1], 1 / throughput[0])
    relative = (overhead_band[0] / overhead, overhead_band[1] / overhead)
    if relative[0] >= 1.0:
        return time_band[0] * relative[0], time_band[1] * relative[1]
    return combined(time_band, relative)


_Z90 = NormalDist().inv_cdf(0.9)


def band_class(layout: Layout) -> str:
    return stack_of(layout.framework).band_class


DEEPSPEED_EXECUTION = DEEPSPEED.uncalibrated_execution
MEGATRON_FSDP_EXECUTION = MEGATRON.uncalibrated_sharding
MOE_ROUTING = "MoE routing and all-to-all"
CPU_OFFLOAD_TRAFFIC = "CPU offload traffic"
QLORA_DEQUANTIZATION = "QLoRA dequantization"


def gpu_efficiency(architecture: str) -> str:
    """The uncalibrated mechanism of a GPU whose efficiency factors are assumed."""
    return f"{architecture} GPUs' compute efficiency"


def uncalibrated_mechanisms(
    architecture: str, method: str, layout: Layout, moe: bool
) -> tuple[str, ...]:
    """What an estimate's time rests on that no row of bench/data measures: a GPU architecture whose
    efficiency factors are assumed (factors.MEASURED_GEMM_ARCHITECTURES), DeepSpeed (timed as FSDP's
    sharded data parallelism, with no row of its own), MoE routing and all-to-all, CPU offload's
    host traffic, QLoRA's dequantization (its published speeds are not consistent with their stated
    settings; bench/validate_estimates.py)."""
    found = []
    if architecture not in MEASURED_GEMM_ARCHITECTURES:
        found.append(gpu_efficiency(architecture))
    stack = stack_of(layout.framework)
    if stack.uncalibrated_execution:
        found.append(stack.uncalibrated_execution)
    if stack.uncalibrated_sharding and layout.zero >= 2:
        found.append(stack.uncalibrated_sharding)
    if moe:
        found.append(MOE_ROUTING)
    if layout.state_offload or layout.host_activations:
        found.append(CPU_OFFLOAD_TRAFFIC)
    if method in QLORA_METHODS:
        found.append(QLORA_DEQUANTIZATION)
    return tuple(found)


def uncalibrated_band_note(uncalibrated: tuple[str, ...]) -> str:
    """The line an estimate (and a plan, as an assumption) carries when its band was widened."""
    return say("band.widened", mechanisms=Joined([phrase(m, "band.gpu_efficiency")
                                                  for m in uncalibrated], "list_comma"),
               spread=UNCALIBRATED_SPREAD - 1)


def throughput_band(layout: Layout, uncalibrated: tuple[str, ...] = ()) -> tuple[float, float]:
    """(p10, p90) of true / estimated throughput: the class's band, widened by UNCALIBRATED_SPREAD
    for each uncalibrated mechanism."""
    return widened(THROUGHPUT_BAND[band_class(layout)], len(uncalibrated))


def _log_centre_and_half(band: tuple[float, float]) -> tuple[float, float]:
    """A p10-p90 band in log space: its centre (the log-normal's median) and half its width (z90
    sigma)."""
    lo, hi = math.log(band[0]), math.log(band[1])
    return (lo + hi) / 2, (hi - lo) / 2


def widened(band: tuple[float, float], mechanisms: int) -> tuple[float, float]:
    """`band` with `mechanisms` independent log-normal errors of p90 UNCALIBRATED_SPREAD added."""
    if mechanisms <= 0:
        return band
    mu, half = _log_centre_and_half(band)
    half = math.sqrt(half**2 + mechanisms * math.log(UNCALIBRATED_SPREAD) ** 2)
    return math.exp(mu - half), math.exp(mu + half)


def quantile_factor(band: tuple[float, float], q: float) -> float:
    """Multiplier at quantile q of a log-normal whose 10th and 90th percentiles are `band`."""
    return quantile_factors(band, (q,))[0]


def quantile_factors(band: tuple[float, float], qs: tuple[float, ...]) -> list[float]:
    """`quantile_factor` of `band` at each of `qs`, its log-space centre and width worked out once
    (a bill is priced at 20 quantiles of every candidate's band: billing.py)."""
    mu, half = _log_centre_and_half(band)
    sigma = half / _Z90
    if sigma <= 0:
        return [math.exp(mu)] * len(qs)
    return [math.exp(mu + sigma * _z(q)) for q in qs]


@lru_cache(maxsize=256)
def _z(q: float) -> float:
    """The standard normal's q-quantile (a few quantiles are asked for thousands of times per
    solve)."""
    return NormalDist().inv_cdf(min(max(q, 1e-6), 1 - 1e-6))


def memory_factor(q: float) -> float:
    """Peak-memory multiplier at quantile q (q = 0.8: the memory that 80% of runs stay under)."""
    return quantile_factor(MEMORY_BAND, q)
