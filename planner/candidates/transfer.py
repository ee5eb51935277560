"""Moving data in and results out: the hours and the egress fees a job pays where they cross a
boundary.

In: the job's training data (`data.size`) travels from the site where it lives (`data.at`) to the
placement over the best link its sensitivity allows (plan.constraints.sensitivity), at that link's
bottleneck bandwidth. Inbound traffic is free on every platform in the catalog's sources, so data in
costs time, not a fee. It goes to the platform's storage (object storage or a shared disk) before
the GPUs are rented, as users upload a dataset first: the job starts that much later, and its GPU
bill covers the training only. Storage fees are not in the catalog and not charged.

Out: the trained result comes home. Home is the data's site (`data.at`), else the scenario's first
site; a scenario without sites keeps its results where they were trained. The result is the trained
model in 16-bit (2 bytes per parameter) for full training (pretrain, continued_pretrain,
full_finetune, sft, dpo), or the adapters in 16-bit for LoRA/QLoRA (and their DPO forms); optimizer
states and intermediate checkpoints stay on the platform. Where the placement is not at home, the
result crosses the link back (the same rules as the data: sensitive results use the same allowed
links) and pays the platform's egress price per GB (`egress` in the catalog, converted with the
catalog's dated exchange rate), which is what clouds charge for internet outbound traffic. A result
that can come home over a private line (a declared `private_line` link) takes that line and pays no
per-GB fee: a private line is billed for the line, not the traffic. The result leaves from the
platform's storage after the GPUs are released, so its hours count toward when the job is done (its
duration, deadlines, what follows it) but are not billed as GPU time. Owned hardware at another site
pays no fee; a platform with no egress figure in the catalog is not charged, and the plan says so.

GB are 10^9 bytes; link speeds are gigabits per second.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import networkx as nx

from plan.constraints import sensitivity
from plan.models.figures import CandidateFigures
from plan.models.methods import ADAPTER_METHODS
from plan.models.model_card import ModelCard
from plan.models.platform import Platform
from plan.models.problem import Placement
from plan.models.scenario import Job, Scenario
from plan.planner.estimate.flops import shape_of
from plan.planner.i18n.said import Joined, say
from plan.planner.i18n.said import money as money_words

UPLOAD_SAID_FROM_H = 1.0
"""Uploads from this long on are said not to be billed as GPU time (shorter ones go without
saying)."""

RESULT_BYTES_PER_PARAM = 2.0
"""The trained model (or adapters) saved in bf16/fp16, as Hugging Face safetensors exports are."""


@dataclass(frozen=True)
class JobTransfer:
    in_h: float = 0.0
    out_h: float = 0.0
    out_gb: float = 0.0
    egress_cost: float = 0.0  # in the scenario's currency
    home: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def hours(self) -> float:
        return self.in_h + self.out_h



def result_size_gb(card: ModelCard, job: Job) -> float:
    """GB of the trained result: the whole model for full methods, the adapters for LoRA methods."""
    if job.method in ADAPTER_METHODS:
        params = shape_of(card).adapter_params(job.lora_rank or 16, "all")
    else:
        params = card.params
    return params * RESULT_BYTES_PER_PARAM / 1e9


def home_site(scenario: Scenario, job: Job) -> str | None:
    return job.data.at or (scenario.sites[0].id if scenario.sites else None)


def job_transfer(scenario: Scenario, job: Job, place: Placement, graph: nx.Graph, card: ModelCard,
                 platform: Platform | None, money: Callable[[float, str], float]) -> JobTransfer:
    """Hours in and out, and the egress fee, for one job on one placement (module docstring)."""
    in_h, in_note = sensitivity.transfer_hours(scenario, job, place, graph)
    notes = [in_note] if in_note else []
    home = home_site(scenario, job)
    owned = place.kind in ("owned", "purchase")
    where = place.site if owned and place.site else place.platform
    if home is None or where == home:
        return JobTransfer(in_h=in_h, home=home, notes=tuple(notes))
    allowed = sensitivity.RULES[job.data.sensitivity].links
    private = (
        sensitivity.transfer(graph, where, home, ("private_line",))
        if "private_line" in allowed
        else None
    )
    found = private or sensitivity.transfer(graph, where, home, allowed)
    out_gb = result_size_gb(card, job)
    out_h = 0.0
    if found is not None and found[0] != float("inf"):
        out_h = out_gb * 8 / found[0] / 3600
        if found[1] and not in_note:
            notes.append(say("note.result_internet", job=job.id, where=where, home=home,
                             gbps=found[0]))
    fee = 0.0
    if private is not None:
        notes.append(say("note.private_line", job=job.id, where=where, home=home))
    elif not owned and platform is not None:
        if platform.egress is None:
            notes.append(say("note.no_egress_price", job=job.id, platform=platform.id,
                             gb=out_gb))
        else:
            egress = platform.egress
            fee = money(egress.price_per_gb, egress.currency) * out_gb
            if egress.assumed:
                notes.append(say("note.egress", job=job.id, price=egress.price_per_gb,
                                 currency=egress.currency, platform=platform.id,
                                 note=egress.assumption))
    return JobTransfer(
        in_h=in_h, out_h=out_h, out_gb=out_gb, egress_cost=fee, home=home, notes=tuple(notes)
    )


def transfer_line(figures: CandidateFigures | None, job: str, platform: str,
                  currency: str) -> str | None:
    """The plan's line on moving data in and the result out, or None when nothing moves."""
    if figures is None:
        return None
    in_h, out_h = figures.time.transfer_in_h, figures.time.transfer_out_h
    gb, fee, home = figures.cost.result_gb, figures.cost.egress_cost, figures.cost.result_home
    if in_h <= 0 and gb <= 0:
        return None
    parts: list[str] = []
    if in_h > 0:
        parts.append(say("transfer.in", h=in_h))
    if gb > 0:
        parts.append(say("transfer.out", gb=gb, platform=platform, home=home, h=out_h,
                         fee=money_words(fee, currency)))
    said = say("transfer.uploaded" if in_h >= UPLOAD_SAID_FROM_H else "transfer.counted")
    return say("transfer.line", job=job, parts=Joined(parts), said=said)
