"""Explanations a PI can read: why this plan, what binds, what the rules removed (infeasible
scenarios: plan.planner.explain.infeasible; why not X: plan.planner.explain.why_not)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any, TypeVar
from weakref import WeakKeyDictionary

from plan.constraints import memory as memory_rule
from plan.constraints import ops_skill
from plan.constraints.groups import family
from plan.models.figures import CandidateTime, SpotFigures
from plan.models.methods import QLORA_METHODS
from plan.models.platform import billed_hours
from plan.models.problem import SCALE, Candidate, Problem
from plan.models.scenario import Job
from plan.models.stacks import stack_of
from plan.planner.candidates import CandidateBuilder
from plan.planner.candidates.ruled_out import RuledOut
from plan.planner.candidates.transfer import transfer_line
from plan.planner.cpsat.run import Outcome
from plan.planner.estimate import Estimate
from plan.planner.estimate.advice import (
    MemorySaver,
    applies_to_job,
    faster_offloaded,
    fitting_without_offload,
    offload_note,
)
from plan.planner.estimate.types import (
    CAUSAL_MFU_NOTE_GAP,
    OPTIMIZER_NAME_OF,
    eager_kernels_on_megatron,
)
from plan.planner.explain.cheaper_blocked import by_policy, cheaper_blocked, why_blocked
from plan.planner.explain.conflicts import HOURS_STATED_BELOW_H
from plan.planner.explain.ownership import held_lines
from plan.planner.explain.series_lines import said_once
from plan.planner.i18n.plan_words import trade_words
from plan.planner.i18n.said import Joined, date, money, say, signed_money, word
from plan.planner.plan import JobPlan, Plan, Trade
from plan.planner.session import Session

_T = TypeVar("_T")
# Per builder, what-if answers about one of its candidates: a batch's variants share a build
# (planner/candidates/reuse.py) and so the same plans, whose what-ifs list the offers each time
# (half a budget sweep's time). Keyed by the candidate's id, which the entry keeps alive.
_WHAT_IF: WeakKeyDictionary[CandidateBuilder, dict[tuple[object, int], tuple[Candidate, Any]]] = (
    WeakKeyDictionary())

# Per session, its problem and the options each rule family removed from it (_removed_counts).
_REMOVED: WeakKeyDictionary[Session, tuple[Problem, list[tuple[str, int]]]] = WeakKeyDictionary()


def _what_if(answer: Callable[[CandidateBuilder, Candidate], _T], builder: CandidateBuilder,
             chosen: Candidate) -> _T:
    """`answer(builder, chosen)`, asked once per builder, question and candidate (it reads only
    those and the builder's own scenario)."""
    answers = _WHAT_IF.setdefault(builder, {})
    key = (answer, id(chosen))
    if key not in answers:
        answers[key] = (chosen, answer(builder, chosen))
    result: _T = answers[key][1]
    return result


def _job_line(problem: Problem, plan: Plan, currency: str) -> list[str]:
    lines: list[str] = []
    for j in plan.jobs:
        free = j.gpu_memory_gib - j.memory_gib_per_gpu
        where = "owned" if j.billing == "owned" else j.billing
        layout = j.layout
        optimizer = layout.optimizer  # named as a scenario names it
        setup = (
            f"{j.framework or 'stack'}: "
            f"tp={j.tp} pp={j.pp}"
            + (f" vpp={j.virtual_pipeline}" if j.virtual_pipeline > 1 else "")
            + (f" cp={j.cp}" if j.cp > 1 else "")
            + (f" ep={j.ep}" if j.ep > 1 else "")
            + f" dp={j.dp} zero={j.zero}"
            + ("+cpu-offload" if j.state_offload else "")
            + (f" hybrid-sharded over {j.shard_group} per node" if j.shard_group else "")
            + f" recompute={j.recompute_text} mb={j.micro_batch}"
            + (
                f" optimizer {OPTIMIZER_NAME_OF.get(optimizer, optimizer)}"
                if optimizer != "adam"
                else ""
            )
            + (" fused kernels" if j.assumes_fused_kernels else "")
            + (f" {j.loss} loss" if j.loss != "plain" else "")
            + (
                " LoRA on attention only"
                if layout.lora_rank and layout.lora_targets == "attention"
                else ""
            )
        )
        pinned = (say("narrate.pinned", pinned=problem.pinned[j.job])
                  if j.job in problem.pinned else "")
        bill = (
            say("narrate.power_cost", cost=money(j.cost, currency), on=j.reservation)
            if j.cost and j.billing == "purchase"
            else say("narrate.cost", cost=money(j.cost, currency))
            if j.cost
            else say("narrate.billed_on", on=j.reservation)
            if j.reservation
            else ""
        )
        lines.append(say(
            "narrate.job", job=j.job, option=option(j.gpus, j.gpu, j.platform, where),
            setup=setup, used=j.memory_gib_per_gpu, card=j.gpu_memory_gib, free=free,
            tokens=j.tokens_per_s, mfu=j.mfu, causal=_causal(j), start=j.start_h, end=j.end_h,
            dates=_dates(j), startup=_startup(j), risk=_risk(j), pinned=pinned, bill=bill))
    for r in plan.reservations:
        unit = ({24.0: say("narrate.unit_days"), 720.0: say("narrate.unit_months"),
                 8760.0: say("narrate.unit_years")}.get(r.period_h)
                or say("narrate.unit_period", h=r.period_h))
        held = say("narrate.held" if r.kind == "purchase" else "narrate.held_for",
                   n=r.periods, unit=unit)
        split = (
            say("narrate.split", hardware=money(r.upfront_cost, currency),
                running=money(r.cost - r.upfront_cost, currency))
            if r.upfront_cost
            else ""
        )
        lines.append(say("narrate.reservation", label=r.label, gpus=r.gpus, held=held,
                         start=r.start_h, cost=money(r.cost, currency), split=split))
    return lines + held_lines(problem, plan, currency)


def option(gpus: int, gpu: str, platform: str, billing: str) -> str:
    """'8x h800 on autodl (hourly)'."""
    return say("narrate.option", gpus=gpus, gpu=gpu, platform=platform,
               billing=word("billing", billing))


def _dates(j: JobPlan) -> str:
    return say("narrate.dates", start=date(j.dates[0]), end=date(j.dates[1])) if j.dates else ""


def _startup(j: JobPlan) -> str:
    startup_h = j.figures.time.startup_h if j.figures else 0.0
    return say("narrate.startup", h=startup_h) if startup_h else ""


def _risk(j: JobPlan) -> str:
    """Expected interruptions, and for spot what they cost in time (lost work, restarts,
    waiting)."""
    spot_line: str = ""
    if j.billing == "spot":
        time = j.figures.time if j.figures else CandidateTime()
        spot = time.spot or SpotFigures(0.0, 0.0, 0.0)
        spot_line = say("narrate.spot_risk", preemptions=spot.preemptions,
                        wait=spot.capacity_wait_h, overhead=time.failure_overhead)
    return say("narrate.risk", n=j.expected_interruptions, spot=spot_line)


TRADE_KINDS = {
    "decision": "",
    "class": "narrate.trade_kind_class",
    "count": "narrate.trade_kind_count",
    "p90": "narrate.trade_kind_p90",
}


def trade(problem: Problem, outcome: Outcome, best: Outcome, kind: str = "decision") -> Trade:
    """What an alternative changes against the best plan, job by job with each job's own deltas;
    jobs that make the same change (a class of equal jobs) on one line."""
    moves: dict[str, list[tuple[str, int, float]]] = {}  # (by the English move: dict order kept)
    for job in problem.jobs:
        a, b = outcome.chosen[job], best.chosen[job]
        if (a.decision, a.gpus) == (b.decision, b.gpus):
            continue
        move = say("narrate.move", before=option(b.gpus, b.gpu, b.platform, b.billing),
                   after=option(a.gpus, a.gpu, a.platform, a.billing))
        units = problem.standalone_cost(a) - problem.standalone_cost(b)
        moves.setdefault(move, []).append((job, units, a.hours - b.hours))
    changes: list[str] = []
    for move, jobs in moves.items():
        cost = SCALE.to_money(sum(units for _, units, _ in jobs))
        if len(jobs) == 1:
            (job, _, hours), = jobs
            changes.append(say("narrate.change_one", job=job, move=move,
                               cost=signed_money(cost, problem.currency), hours=hours))
            continue
        low, high = min(h for *_, h in jobs), max(h for *_, h in jobs)
        each = (say("narrate.each_hours", h=low) if high - low < 0.05
                else say("narrate.each_hours_range", low=low, high=high))
        changes.append(say("narrate.change_class", n=len(jobs),
                           jobs=Joined([job for job, *_ in jobs], "list_comma"), move=move,
                           cost=signed_money(cost, problem.currency), each=each))
    return Trade(
        delta_cost=round(SCALE.to_money(outcome.total_cost - best.total_cost), 2),
        delta_makespan_h=round(SCALE.to_hours(outcome.makespan_min - best.makespan_min), 2),
        changes=tuple(changes),
        kind=kind,
    )


def explain_plan(session: Session, plan: Plan, outcome: Outcome, best: Outcome,
                 kind: str = "decision") -> None:
    """A plan's lines; `kind` says what an alternative trades against `best` (TRADE_KINDS)."""
    problem = session.problem
    cur = problem.currency
    lines = _job_line(problem, plan, cur)
    lines += [line for j in plan.jobs if (line := transfer_line(j.figures, j.job, j.platform, cur))]
    if plan.rank > 1:
        plan.trade = trade(problem, outcome, best, kind)
        beyond = "" if plan.within_gap else say("narrate.beyond_gap", gap=session.settings.gap)
        kind_key = TRADE_KINDS.get(kind, "")
        lines.append(say("narrate.trades", kind=say(kind_key) if kind_key else "", beyond=beyond,
                         summary=trade_words(plan.trade, cur),
                         changes=Joined(plan.trade.changes)))
    if problem.budget is not None:
        budget = SCALE.to_money(problem.budget)
        used = plan.total_cost / budget
        binding = say("narrate.binding") if used > 0.98 else ""
        lines.append(say("narrate.budget", budget=money(budget, cur),
                         used=money(plan.total_cost, cur), share=used,
                         slack=money(budget - plan.total_cost, cur), binding=binding))
    for j in plan.jobs:
        limit = problem.deadline_min[j.job]
        if limit is not None:
            slack_h = SCALE.to_hours(limit) - j.end_h
            binding = say("narrate.binding") if slack_h < 0.02 * SCALE.to_hours(limit) else ""
            limit_h = SCALE.to_hours(limit)
            if limit_h < HOURS_STATED_BELOW_H:  # a deadline under two days is stated in hours
                lines.append(say("narrate.deadline_hours", job=j.job, end=j.end_h, limit=limit_h,
                                 slack=slack_h, binding=binding))
            else:
                lines.append(say("narrate.deadline_days", job=j.job, end=j.end_h / 24,
                                 limit=limit_h / 24, slack=slack_h / 24, binding=binding))
    lines += _stack_rule_line(session, plan)
    lines += _stated_kernels_lines(session, plan)
    lines.append(_headroom_line(problem, plan))
    lines += _band_lines(problem, plan)
    lines += _ruled_out_cheaper(session, outcome)
    if plan.rank == 1:  # said once, for the answer
        lines += _policy_excludes(session, outcome)
    removed = _removed_counts(session)
    if removed:
        lines.append(say("narrate.removed", counts=Joined(
            [say("narrate.removed_count", name=name, n=n) for name, n in removed], "list_comma")))
    plan.explanation = lines
    # what the scenario's catalog overlays changed, then amounts converted from other currencies
    assumptions: list[str] = [] if session.loaded is None else [
        *(say("narrate.overlay", line=line) for line in session.loaded.catalog.changes),
        *session.loaded.money_notes,
    ]
    for job in problem.jobs:
        for note in outcome.chosen[job].assumptions:
            if note not in assumptions:
                assumptions.append(note)
    plan.assumptions = assumptions


def _removed_counts(session: Session) -> list[tuple[str, int]]:
    """The options each rule family removed, most first: the same for every plan of a session's
    problem, so counted once (a front explains dozens of plans)."""
    kept = _REMOVED.get(session)
    if kept is not None and kept[0] is session.problem:
        return kept[1]
    problem = session.problem
    removed = Counter(family(g) for c in problem.all_candidates() for g in c.violations)
    # (an option a deferring build left unsized: once per rule it breaks, as a sized one counts)
    removed.update(r.rule if r.floor_cost is None else family(r.rule) for r in problem.removed)
    counts = removed.most_common()
    _REMOVED[session] = (problem, counts)
    return counts


def offload_lines(session: Session, outcome: Outcome) -> list[str]:
    """Offloading to host memory in a plan's jobs, which the planner uses only where nothing fits
    without it (its speed rests on assumed host figures): where a job's GPUs would run it clearly
    faster offloaded (planner/estimate/advice.py), and where a job was offloaded, the settings an
    expert tries first that fit the same GPUs without it (advice.py memory savers: a fused loss or
    layers, the least change of optimizer)."""
    builder = session.builder
    if session.loaded is None or builder is None:
        return []
    lines = []
    for job in session.problem.jobs:
        lines += _what_if(_offload_lines, builder, outcome.chosen[job])
    return lines


def _offload_lines(builder: CandidateBuilder, chosen: Candidate) -> list[str]:
    job = builder.scenario.job(chosen.job)  # the same job as the session's (reuse.py's key)
    offloaded = builder.offloaded_alternative(chosen)
    gain = faster_offloaded(chosen.tokens_per_s, offloaded)
    lines = []
    if gain is not None and offloaded is not None:
        lines.append(say("narrate.job_note", job=job.id,
                         note=offload_note("cpu_offload: true", gain, offloaded)))
    return lines + _without_offload(builder, job, chosen)


def hybrid_shard_lines(session: Session, outcome: Outcome) -> list[str]:
    """For each job the plan shards hybrid (FSDP's HSDP: the states over one node's GPUs, replicated
    across nodes), what that gains over the full shard on the same GPUs and what it costs in memory:
    the search takes it only where it is faster (or where the job states `hybrid_shard: true`, when
    it may be slower), and an expert weighs the gain against the copies."""
    hybrid = [job for job in session.problem.jobs if outcome.chosen[job].layout.shard_group]
    builder = session.builder
    if session.loaded is None or builder is None or not hybrid:
        return []
    lines = []
    for job in hybrid:
        chosen = outcome.chosen[job]
        group, dp, cp = chosen.layout.shard_group or 0, chosen.layout.dp, chosen.layout.cp
        copies = dp * cp // group
        full = _what_if(CandidateBuilder.full_shard_alternative, builder, chosen)
        if full is None or full.tokens_per_s <= 0:
            continue
        cluster = full.cluster
        gain = chosen.tokens_per_s / full.tokens_per_s - 1
        pace = (
            say("narrate.pace_faster", gain=gain)
            if gain >= 0.005
            else say("narrate.pace_slower", gain=-gain)
            if gain <= -0.005
            else say("narrate.pace_same")
        )
        stated = bool(session.loaded.scenario.job(job).hybrid_shard)
        lines.append(say(
            "narrate.hybrid", job=job, group=group, copies=copies,
            stated=say("narrate.hybrid_stated") if stated else "", pace=pace,
            tokens=full.tokens_per_s, layout=full.layout.short(),
            memory=chosen.memory_gib_per_gpu - full.memory.total_gib,
            gbps=cluster.fabric_gbps_per_gpu, fabric=cluster.fabric_kind))
    return lines


def _without_offload(builder: CandidateBuilder, job: Job, chosen: Candidate) -> list[str]:
    """For a job the plan offloads (and that asked for no offloading), the memory savers that fit
    its GPUs without it, each with its speed beside the plan's."""
    if job.cpu_offload is not None or not (
        chosen.layout.state_offload or chosen.layout.recompute in ("offload", "full_offload")
    ):
        return []
    def fits(saver: MemorySaver) -> Estimate | None:
        return builder.fitting_without_offload(chosen, {saver.field: saver.to})

    return [
        say("narrate.without_offload", job=job.id, field=saver.field, to=saver.to, why=saver.why,
            gpus=chosen.gpus, gpu=chosen.gpu, layout=found.layout.short(),
            gib=found.memory.total_gib, tokens=found.tokens_per_s, plan_tokens=chosen.tokens_per_s)
        for saver, found in fitting_without_offload(lambda saver: applies_to_job(saver, job), fits)
    ]


def _stack_rule_line(session: Session, plan: Plan) -> list[str]:
    """Why a team with no ops skill gets PyTorch stacks only (constraints/ops_skill.py)."""
    if session.loaded is None or not ops_skill.pytorch_stacks_only(session.loaded.scenario):
        return []
    # QLoRA runs on the PyTorch stacks for every team; a named framework was the team's choice
    searched_ids = {job.id for job in session.loaded.scenario.jobs
                    if not job.framework and job.method not in QLORA_METHODS}
    searched = [j.job for j in plan.jobs if j.job in searched_ids]
    if not searched:
        return []
    return [say("narrate.stack_rule", jobs=Joined(searched, "list_comma"))]


def _stated_kernels_lines(session: Session, plan: Plan) -> list[str]:
    """For a job that states `kernels: eager` and is planned on Megatron (always fused): the field
    did not apply, and how to keep the job on an eager stack."""
    if session.loaded is None:
        return []
    jobs = {job.id: job for job in session.loaded.scenario.jobs}
    return [eager_kernels_on_megatron(f"{j.job} states kernels: eager, which", "framework: fsdp or "
                                                                               "deepspeed")
            for j in plan.jobs if stack_of(j.framework).fused_layers
            and "kernels" in jobs[j.job].model_fields_set
            and jobs[j.job].kernels == "eager"]


def _headroom_line(problem: Problem, plan: Plan) -> str:
    """The memory rule in force and the job that comes closest to it."""
    tight = max(plan.jobs, key=lambda j: j.memory_gib_per_gpu / j.gpu_memory_gib)
    factor = problem.memory_band_factor
    usable = memory_rule.usable_gib(tight.gpu_memory_gib, problem.memory_headroom, factor)
    band = (say("narrate.headroom_band", confidence=problem.confidence, factor=factor)
            if factor != 1.0 else "")
    return say("narrate.headroom", headroom=problem.memory_headroom, band=band,
               share=1 - problem.memory_headroom, job=tight.job, used=tight.memory_gib_per_gpu,
               usable=usable, gpu=tight.gpu)


def _band_lines(problem: Problem, plan: Plan) -> list[str]:
    """How sure the times are (the schedule holds at the scenario's confidence) and the cost band
    that follows: time-billed offers bill the p10 and p90 times as they bill, an owned pool charges
    its rate per GPU-hour for them; a reservation or a purchase costs what it costs."""
    times, low, high = [], plan.total_cost, plan.total_cost
    for j in plan.jobs:
        if j.figures is None or not j.figures.time.train_h:
            continue
        time = j.figures.time
        expected, at_q = time.train_h, time.train_at_confidence_h
        p10, p90 = time.train_p10_h, time.train_p90_h
        times.append((j.job, say("narrate.time", job=j.job, expected=expected, p10=p10, p90=p90,
                                 at=at_q, confidence=problem.confidence,
                                 stack=j.figures.framework)))
        if j.cost and j.billing != "purchase":
            low += _billed_change(j, p10 - expected)
            high += _billed_change(j, p90 - expected)
    lines = said_once(times, problem.series)
    if high > low:
        lines.append(say("narrate.cost_band", low=money(low, problem.currency),
                         high=money(high, problem.currency),
                         expected=money(plan.total_cost, problem.currency)))
    return lines


def _billed_change(j: JobPlan, extra_h: float) -> float:
    """What the bill of a time-billed job changes by when training takes `extra_h` hours more (less,
    when negative), billed as the offer bills: whole days for a daily offer, its granularity and
    minimum for an hourly one (a job just inside one day costs two if it runs late)."""
    figures = j.figures
    bill = figures.cost if figures else None
    if (bill is None or not bill.billing_step_h or bill.billable_hours is None
            or bill.min_billed_hours is None or bill.price_per_gpu_hour is None
            or bill.billed_hours is None):
        expected = (figures.time.train_h if figures else 0.0) or 1.0
        return j.cost * extra_h / expected
    billed_h = billed_hours(max(0.0, bill.billable_hours + extra_h), bill.billing_step_h,
                            bill.min_billed_hours)
    return float(bill.price_per_gpu_hour * j.gpus * (billed_h - bill.billed_hours))


def _causal(j: JobPlan) -> str:
    """The causal-attention MFU next to the conventional one where long sequences make them
    differ."""
    causal = j.figures.estimate.mfu_causal if j.figures else None
    if causal is None or j.mfu - causal < CAUSAL_MFU_NOTE_GAP:
        return ""
    return say("narrate.causal", causal=causal)


def _ruled_out_cheaper(session: Session, outcome: Outcome) -> list[str]:
    """Per job, the cheapest option cheaper than the chosen one, and the rule or limit that
    blocks it (cheaper_blocked.py); the instances of a recurring job that read alike, once."""
    problem = session.problem
    lines: list[tuple[str, str]] = []
    for job, blocked in cheaper_blocked(session, outcome):
        c = blocked.candidate
        offloaded = say("narrate.offloaded") if c.layout.state_offload else ""
        lines.append((job, say("narrate.cheaper_blocked", job=job,
                               option=option(c.gpus, c.gpu, c.platform, c.billing),
                               offloaded=offloaded,
                               cost=money(SCALE.to_money(blocked.cost), problem.currency),
                               why=why_blocked(problem, job, blocked))))
    return said_once(lines, problem.series)


POLICY_EXCLUDES = {  # the message saying what each policy group keeps out
    "policy.platforms": "narrate.policy_platforms",
    "policy.gpus": "narrate.policy_gpus",
    "policy.spot": "narrate.policy_spot",
    "policy.max_gpus": "narrate.policy_max_gpus",
    "policy.interruptions": "narrate.policy_interruptions",
}
NAMES_SHOWN = 6  # platforms or GPUs named in the policy line, then a count


def _policy_sized(ruled_out: RuledOut, problem: Problem,
                  outcome: Outcome) -> dict[str, list[Candidate]]:
    """Per job, the rule-breaking candidates a deferring build left unsized that the policy line
    must see to read as a whole build's: the places, cheapest floor first, that could name a
    platform or GPU (`_policy_name`) for a policy group not yet named, or hold a job's cheapest
    option only policy keeps out. A place whose floor is at or above the job's choice holds
    nothing cheaper (cheaper_blocked.py)."""
    named: set[tuple[str, str]] = set()  # (policy group, platform or GPU) found cheaper
    sized: dict[str, list[Candidate]] = {}
    for job in problem.jobs:
        mine = problem.standalone_cost(outcome.chosen[job])
        least: int | None = None  # the job's cheapest option only policy keeps out, so far
        found = sized.setdefault(job, [])
        for place, d in sorted(ruled_out.deferred(job).items(), key=lambda item: item[1].floor):
            if d.floor >= mine:  # (and every place after it)
                break
            if not d.policy:
                continue
            kept_out = d.policy_groups | ({INTERRUPTIONS} if ruled_out.interruptions_capped
                                          else set())
            names = {(g, _policy_name(g, place[0], place[1])) for g in kept_out}
            cheapest = d.only_policy and (least is None or d.floor <= least)
            if names <= named and not cheapest:
                continue
            for c in ruled_out.place(job, place):
                cost = ruled_out.cost(c)
                broken = [g for g in c.violations if by_policy(g)]
                if not broken or cost >= mine:
                    continue
                found.append(c)
                named |= {(g, _policy_name(g, c.platform, c.gpu)) for g in broken}
                if len(broken) == len(c.violations):
                    least = cost if least is None else min(least, cost)
    return sized


INTERRUPTIONS = "policy.interruptions"  # (set once an option is sized: its run's figures decide it)


def _policy_name(group: str, platform: str, gpu: str) -> str:
    """What the policy line names for an option a policy group keeps out."""
    return platform if group == "policy.platforms" else gpu


def _policy_excludes(session: Session, outcome: Outcome) -> list[str]:
    """What the scenario's policy keeps out that would cost less than the plan's choice, said once
    (the ruled-out lines cite only what policy allows): by group, the platforms and GPUs it names,
    and per job the cheapest option only policy keeps out. Nothing when policy costs nothing."""
    problem, ruled_out = session.problem, session.ruled_out
    if ruled_out is not None:  # (a deferring build's: the places that may change the line, sized)
        problem = ruled_out.view(_policy_sized(ruled_out, problem, outcome))
    cheaper = [c for c in problem.all_candidates()
               if any(by_policy(g) for g in c.violations)
               and problem.standalone_cost(c) < problem.standalone_cost(outcome.chosen[c.job])]
    if not cheaper:
        return []
    parts: list[str] = []
    for group in sorted({g for c in cheaper for g in c.violations if by_policy(g)}):
        hit = [c for c in cheaper if group in c.violations]
        names = sorted({_policy_name(group, c.platform, c.gpu) for c in hit})
        more = (say("narrate.and_more", n=len(names) - NAMES_SHOWN)
                if len(names) > NAMES_SHOWN else "")
        what = say(POLICY_EXCLUDES.get(group, "narrate.policy_options"))
        parts.append(say("narrate.policy_names", what=what,
                         names=Joined(names[:NAMES_SHOWN], "list_comma"), more=more, group=group)
                     if group in ("policy.platforms", "policy.gpus")
                     else say("narrate.policy_group", what=what, group=group))
    cheapest: list[str] = []
    for job in problem.jobs:
        only_policy = [c for c in cheaper
                       if c.job == job and all(by_policy(g) for g in c.violations)]
        c = min(only_policy, key=lambda c: (problem.standalone_cost(c), c.index), default=None)
        if c is not None:
            mine = problem.standalone_cost(outcome.chosen[job])
            cheapest.append(say(
                "narrate.policy_cheapest_job", job=job,
                option=option(c.gpus, c.gpu, c.platform, c.billing),
                cost=money(SCALE.to_money(problem.standalone_cost(c)), problem.currency),
                mine=money(SCALE.to_money(mine), problem.currency)))
    return [say("narrate.policy", parts=Joined(parts),
                cheapest=say("narrate.policy_cheapest", jobs=Joined(cheapest)) if cheapest
                else "")]

