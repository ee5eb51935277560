"""English messages, by key (the wording the records and renderers always used). Every key has a
Chinese twin in `messages_zh` (tests/planner/test_i18n.py checks it)."""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    # frames of one-line messages (plan.planner.cli)
    "error.frame": "error: {line}",
    "error.no_solution": "no solution: {line}",
    "error.internal": "internal error: {kind}: {detail} (set PLAN_DEBUG=1 for details; please "
                      "report)",
    "report.wrote": "wrote {path}",
    # plan pareto (plan.planner.cli.pareto_cmd) and files written
    "cli.option_problem": "{option}: {problem}",
    "cli.no_card_file": "--model: no such model-card file: {wanted}",
    "file.wrote": "wrote {path}",
    "file.unsupported": "{path}: unsupported file type; use {allowed}",
    "pareto.headline": "{name}: {n} points on the cost/time front ({status}{incomplete}, {s} s)",
    "pareto.incomplete": ", incomplete",
    "pareto.risk": "risk",
    "pareto.beyond": " (beyond limits)",
    "pareto.more": "... and {n} more in the JSON (-o front.json)",
    "pareto.note": "note: {note}",
    "pareto.kept": "; kept: {paths}",
    "pareto.nothing_written": "; nothing was written",
    "pareto.write_failed": "{problem}{kept} (the front is shown above)",
    "pareto.plot_needs_matplotlib": "plotting PNG/SVG needs matplotlib: {command} (or use a .html "
                                    "plot, which needs nothing)",
    "compare.unknown_job": "unknown job {job}; jobs: {jobs}",
    # plan validate (plan.planner.cli.validate_cmd)
    "validate.ok": "ok: {path}: scenario {name}, {jobs} job(s), {pools} owned pool(s)",
    "sep": ": ",
    "list_sep": "; ",
    # words of the domain (plan.planner.i18n.word); English shows the word itself
    "status.optimal": "optimal",
    "status.feasible": "feasible",
    "status.infeasible": "infeasible",
    "status.unknown": "unknown",
    "status.cut": "cut",
    "status.error": "error",
    "objective.cost": "cost",
    "objective.time": "time",
    "objective.balanced": "balanced",
    "objective.lexicographic": "lexicographic",
    "billing.hourly": "hourly",
    "billing.daily": "daily",
    "billing.monthly": "monthly",
    "billing.yearly": "yearly",
    "billing.spot": "spot",
    "billing.owned": "owned",
    "kind.reservation": "reservation",
    "kind.purchase": "purchase",
    "relax.budget": "budget",
    "relax.deadline": "deadline",
    "relax.headroom": "headroom",
    "relax.optimizer": "optimizer",
    "relax.loss": "loss",
    "relax.kernels": "kernels",
    "relax.policy": "policy",
    "relax.sensitivity": "sensitivity",
    "relax.rule": "rule",
    "relax.joint": "joint",
    "unit.hours": "{h} h",
    "unit.days": "{d} days",
    "unit.signed_hours": "{h} h",
    # plan solve: table and markdown (plan.planner.report)
    "solve.proof": "{status}, gap {gap}, bound {bound}",
    "solve.headline": "{proof} ({objective} objective, {s} s)",
    "md.status": "Status: **{proof}** ({objective} objective, {s} s)",
    "table.title": "plans",
    "table.rank": "rank",
    "table.cost": "cost ({cur})",
    "table.makespan": "makespan (days)",
    "table.interruptions": "exp. interruptions",
    "table.vs_best": "vs plan 1",
    "table.plan": "plan",
    "plan.heading": "plan {rank}",
    "plan.heading_md": "Plan {rank}",
    "plan.assumptions": "assumptions:",
    "plan.assumptions_md": "Assumptions:",
    "plan.job_place": "{job}: {gpus}x {gpu} on {platform} ({billing})",
    "line.conflict": "conflict: {constraint}: {detail}",
    "line.relax": "relax {kind}: {detail}",
    "line.note": "note: {note}",
    "md.conflicts": "Conflicts",
    "md.relaxations": "Smallest relaxations",
    "md.notes": "Notes",
    "trade.summary": "{cost}, {time}",
    "trade.dearer": "+{amount}",
    "trade.cheaper": "-{amount}",
    "trade.same_cost": "same cost",
    "trade.later": "+{h} h",
    "trade.sooner": "-{h} h",
    "trade.same_time": "same time",
    # cash flow (plan.planner.report_cash)
    "cash.heading": "cash flow ({rule}):",
    "cash.rule": "rentals when a run starts; a shared reservation's fee at the start of each "
                 "billed period; a reservation held for one job, its whole term when the job "
                 "starts; a purchase, its price and running costs when first held",
    "cash.month": "  {period}: {amount} - {lines}",
    "cash.others": "others {amount}",
    "cash.budget_row": "  budget {period}: {amount}{budget}",
    "cash.budget_of": " of {budget} ({state})",
    "cash.left": "{amount} left",
    "cash.over": "{amount} OVER",
    "cash.year": "  year {period}: {amount}",
    "cash.job_line": "{billing} on {platform}",
    "cash.shared_line": "{kind}: {label}",
    "cash.md_heading": "Cash flow",
    "cash.md_when": "When money leaves: {rule}.",
    "cash.md_month_head": "| month | cash out ({cur}) | billing lines |",
    "cash.md_period_head": "| period | cash out ({cur}) | budget ({cur}) | left |",
    # plan explain --why-not
    "whynot_status.feasible": "feasible",
    "whynot_status.infeasible": "infeasible",
    "whynot_status.unavailable": "unavailable",
    "whynot.head": "why not {spec}? -> {status}",
    "whynot.possible": "  possible, at {cost} and {time} against the best plan",
    "whynot.conflict": "  conflicts with {constraint}: {detail}",
    # plan catalog
    "catalog.title": "catalog {section} ({count}){units}{hint}",
    "catalog.hint": " - sources: --sources, or --format json for everything",
    "catalog.units_gpus": " - TF: dense TFLOPS",
    "catalog.source": "source",
    "catalog.derived_source": "derived: {rule}; ",
    "catalog.changes": "{files}: {count} change(s) to the built-in catalog",
    "section.models": "models",
    "section.gpus": "gpus",
    "section.platforms": "platforms",
    "section.offers": "offers",
    "section.purchases": "purchases",
    "section.limits": "limits",
    "flag.sep": ", ",
    "flag.assumed": "assumed",
    "flag.preliminary": "preliminary",
    "flag.fabric_assumed": "fabric: assumed",
    "flag.node_assumed": "node size: assumed",
    "flag.derived": "derived from {base}",
    "col.id": "id",
    "col.params": "params",
    "col.layers": "layers",
    "col.hidden": "hidden",
    "col.heads": "heads",
    "col.kv": "kv",
    "col.vocab": "vocab",
    "col.max pos": "max pos",
    "col.flag": "flag",
    "col.GiB": "GiB",
    "col.bf16 TF": "bf16 TF",
    "col.fp8 TF": "fp8 TF",
    "col.link": "link",
    "col./node": "/node",
    "col.kind": "kind",
    "col.jurisdiction": "jurisdiction",
    "col.fabric": "fabric",
    "col.offers": "offers",
    "col.platform": "platform",
    "col.gpu": "gpu",
    "col.billing": "billing",
    "col.price/GPU/period": "price/GPU/period",
    "col.cur": "cur",
    "col.as_of": "as_of",
    "col.plan id": "plan id",
    "col.per GPU": "per GPU",
    "col.server": "server",
    "col.life y": "life y",
    "col.lead d": "lead d",
    "col.max": "max",
    "col.reserved max": "reserved max",
    "col.start h": "start h",
    "col.reserved start h": "reserved start h",
}

HTML: dict[str, str] = {
    # plan report and plan solve --report (plan.planner.report_html)
    "html.lang": "en",
    "html.page_title": "{scenario}: plan report",
    "html.title": "{scenario}: training compute plan",
    "html.lead": "{proof}, {objective} objective, solved in {s} s by the plan CLI. Every number "
                 "below is an estimate with the assumptions listed at the end.",
    "html.no_plan": "No plan: {status}.",
    "html.conflict": "{constraint}: {detail}",
    "html.best": "<b>Best plan:</b> {cost}{budget}, every job done in {time}{deadline}. "
                 "{summary}.",
    "html.budget": " of the {budget} budget",
    "html.deadline": " (deadline {time})",
    "html.why": "Why this plan",
    "html.assumptions": "Assumptions",
    "html.no_assumptions": "none beyond the catalog's sourced figures",
    "html.notes": "Notes",
    "html.front": "Cost / time front",
    "html.front_caption": "Each point is the cheapest plan that finishes by its time; up and "
                          "right of the line is worse on both (shaded). Axes span the points; a "
                          "budget or deadline outside them is marked at the edge.",
    "html.jobs": "Jobs of the best plan",
    "html.jobs_box": "jobs of the best plan",
    "html.col.job": "job",
    "html.col.where": "where",
    "html.col.layout": "layout",
    "html.col.start": "start (h)",
    "html.col.end": "end (h)",
    "html.col.tokens": "tokens/s",
    "html.col.billing_line": "billing line",
    "html.where": "{gpus}x {gpu} on {platform} ({billing})",
    "html.layout_tail": ", mb={mb}, recompute {recompute}, {framework} execution model; "
                        "{exports}",
    "html.exports": "exports: --to {stacks}",
    "html.no_export_writes": "no export writes this layout",
    "html.no_export": "no export: {reason}",
    "html.schedule": "Schedule",
    "html.short_bars": "Bars too short for their name:",
    "html.key_item": "{job} ({gpus}x {gpu}), hours {start} to {end}",
    "html.schedule_caption": "One lane per platform and pool; owned pools and reservations show "
                             "their capacity (a reservation's held window is the dashed box). "
                             "The jobs table above gives the same start and end hours.",
    "html.cost": "Cost",
    "html.by_job": "by job",
    "html.by_line": "by billing line",
    "html.cost_job_caption": "Cost of each job in {cur}.",
    "html.cost_line_caption": "Cost of each billing line in {cur}.",
    "html.memory": "Memory per GPU",
    "html.memory_caption": "Estimated peak per GPU, by part, against the card; the red dashed "
                           "line is the limit after the {headroom} headroom the policy keeps free.",
    "html.alternatives": "Alternatives",
    "html.alternatives_box": "alternatives",
    "html.col.done_in": "done in",
    "html.best_word": "best",
    "html.table_summary": "the chart's figures as a table",
    "html.cost_by": "cost by {what}",
    "html.part.weights": "weights",
    "html.part.gradients": "gradients",
    "html.part.optimizer": "optimizer",
    "html.part.activations": "activations",
    "html.part.other": "other",
    "html.col.part": "{part} (GiB)",
    "html.col.peak": "peak (GiB)",
    "html.col.card": "card (GiB)",
    "html.memory_box": "memory per GPU by part",
    "html.col.time": "time ({unit})",
    "html.col.within": "within budget and deadline",
    "html.yes": "yes",
    "html.no": "no",
    "html.front_box": "plans on the cost / time front",
    "html.unit.days": "days",
    "html.unit.hours": "hours",
    "html.chart.cost_job": "cost of each job ({cur})",
    "html.chart.cost_line": "cost by billing line ({cur})",
    "html.chart.memory": "estimated memory per GPU of each job, by part, against the card",
    "html.chart.card": "{gib} GiB card",
    "html.chart.part": "{part}: {gib} GiB",
    "html.chart.headroom": "{headroom} headroom kept free: layouts may use {limit} GiB",
    "html.chart.used": "{used} of {card} GiB ({free} free)",
    "html.chart.headroom_key": "headroom limit",
    "html.cash": "Cash flow",
    "html.cash_box": "cash paid per period",
    "html.cash_month_caption": "Cash paid in each month the plan pays in ({cur}), stacked by "
                               "billing line.",
    "html.cash_budget_caption": "Cash paid in each budget period ({cur}), stacked by billing "
                                "line.",
    "html.cash_year_caption": "Cash paid in each fiscal year ({cur}), stacked by billing line.",
    "html.cash_budget_note": "The red dashed mark is the period's budget; a bar outlined in red "
                             "is over it.",
    "html.col.period": "period",
    "html.col.cash_out": "cash out ({cur})",
    "html.col.budget": "budget ({cur})",
    "html.col.left": "left ({cur})",
    "html.chart.cash_month": "cash paid per month ({cur}), by billing line",
    "html.chart.cash_budget": "cash paid per budget period ({cur}), by billing line, against "
                              "its budget",
    "html.chart.cash_year": "cash paid per fiscal year ({cur}), by billing line",
    "html.chart.cash_part": "{period}, {line}: {amount}",
    "html.chart.cash_total": "{period}: {amount} in all",
    "html.chart.cash_budget_mark": "budget of {period}: {amount}",
    "html.chart.cash_budget_label": "budget {amount}",
    "html.chart.cash_over": "{amount} over",
    "html.chart.cash_others": "other lines",
    "html.chart.cash_key_budget": "budget of the period",
    "html.chart.cash_key_over": "over budget",
    "html.gantt.name": "Gantt chart: when each job runs, one lane per platform and pool",
    "html.gantt.owned": "{pool} (owned)",
    "html.gantt.owned_cap": "{count}x {gpu}, up to {busy} in use",
    "html.gantt.reserved": "{label} ({kind})",
    "html.gantt.reserved_cap": "{gpus} GPUs reserved",
    "html.gantt.rented": "{platform} ({billing})",
    "html.gantt.rented_cap": "rented on demand",
    "html.gantt.axis": "time from the start of the plan ({unit}); shaded: waiting for a queue or "
                       "provisioning",
    "html.gantt.day": "day {n}",
    "html.gantt.bar": "{job} ({gpus}x {gpu})",
    "recompute.none": "none",
    "html.gantt.hour": "{n} h",
    "html.gantt.held": "{label}: held hours {start} to {end}",
    "html.gantt.wait": "{job}: {h} h queue/provisioning",
    "html.gantt.tip": "{job}: {gpus}x {gpu} on {platform} ({billing}), hours {start} to {end}, "
                      "{cost}",
}
MESSAGES.update(HTML)

from plan.planner.i18n import explain_en  # noqa: E402  (explanation sentences)

MESSAGES.update(explain_en.MESSAGES)

from plan.planner.i18n import rules_en  # noqa: E402  (rule reasons and rule-group names)

MESSAGES.update(rules_en.MESSAGES)

from plan.planner.i18n import notes_en  # noqa: E402  (assumption notes, labels, search notes)

MESSAGES.update(notes_en.MESSAGES)

from plan.planner.i18n import usage_en  # noqa: E402  (usage errors, batch and export lines)

MESSAGES.update(usage_en.USAGE)
MESSAGES.update(usage_en.BATCH)

from plan.planner.i18n import export_en  # noqa: E402  (plan export's refusals and lines)

MESSAGES.update(export_en.EXPORT)

from plan.planner.i18n import refusals_en  # noqa: E402  (a layout's fixed fields refused)

MESSAGES.update(refusals_en.REFUSALS)

from plan.planner.i18n import estimate_en  # noqa: E402  (plan estimate's table)

MESSAGES.update(estimate_en.ESTIMATE)

from plan.planner.i18n import estimate_notes_en  # noqa: E402  (an estimate's notes and advice)

MESSAGES.update(estimate_notes_en.NOTES)

from plan.planner.i18n import calibrate_en  # noqa: E402  (plan calibrate and its note)

MESSAGES.update(calibrate_en.CALIBRATE)
