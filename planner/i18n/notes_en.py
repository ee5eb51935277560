"""English assumption notes, labels and search notes (plan.planner.i18n.said): capacity and
instance notes, estimate bands and assumed efficiencies, residual values, reservation and purchase
labels, the alternatives and Pareto notes. The wording the records always had, so English output
and JSON are unchanged. Keys match `notes_zh` one for one."""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    # a plan's flags and assumptions (plan.planner.candidates.options, .purchase)
    "note.unavailable": "availability: {why} (policy.only_available: true rules it out)",
    "note.buying": "buying {gpu}: {assumption}",
    # offers (planner/candidates/options.py)
    "note.reservation_needed": "{count}x {gpu} on {platform} is above the {max} one customer gets "
                               "without a reservation: arrange it with the vendor ({lead:g} h lead "
                               "time)",
    "note.whole_instances": "{platform} rents {gpu} ({billing}) only as {sold}: the plan rents "
                            "{count} GPUs, whole instances, and uses them all",
    "note.pinned_instances": "{platform} rents {gpu} ({billing}) only as {sold}; {job} pins gpus: "
                             "{gpus}",
    # a candidate's assumptions (planner/candidates/build.py)
    "note.gpu": "GPU {gpu}: {note}",
    "note.model": "model {model}: {note}",
    "note.preliminary": "preliminary figures",
    # estimate bands and assumed efficiencies (planner/estimate/band.py, factors.py)
    "band.widened": "throughput band widened: no calibration row measures {mechanisms}; each adds "
                    "an assumed +-{spread:.0%} at p10-p90 (band.UNCALIBRATED_SPREAD)",
    "band.gpu_efficiency": "{architecture} GPUs' compute efficiency",
    "band.efficiency_assumed": "compute efficiency of {architecture} GPUs{on_stack} assumed: dense "
                               "GEMMs at {fraction:.0%} of the datasheet peak (no published "
                               "measurement; A100 86% and H100 80% are measured), so time and cost "
                               "on them are less certain than on A100/H100",
    "band.on_stack": " on {stack}",
    # mechanisms no calibration row measures, and the stacks domestic accelerators train on:
    # phrases looked up by their English text (an estimate read back from the store is plain text)
    "phrase.MoE routing and all-to-all": "MoE routing and all-to-all",
    "phrase.CPU offload traffic": "CPU offload traffic",
    "phrase.QLoRA dequantization": "QLoRA dequantization",
    "phrase.DeepSpeed's execution of ZeRO": "DeepSpeed's execution of ZeRO",
    "phrase.Megatron-FSDP's sharded data parallelism": "Megatron-FSDP's sharded data parallelism",
    "phrase.MindSpeed-LLM, Ascend's Megatron fork on CANN":
        "MindSpeed-LLM, Ascend's Megatron fork on CANN",
    "phrase.Hygon's DTK builds of Megatron-LM/DeepSpeed":
        "Hygon's DTK builds of Megatron-LM/DeepSpeed",
    "phrase.Cambricon's forks of Megatron-LM/DeepSpeed":
        "Cambricon's forks of Megatron-LM/DeepSpeed",
    # residual value of hardware bought (planner/candidates/purchase.py)
    "own.residual_quoted": "{share:.0%} of the price, as the quote states",
    "own.residual_straight": "{share:.0%} of the price: straight-line to zero over its "
                             "{life:g}-year life, {months:,.1f} months used",
    # reservation and purchase labels (planner/candidates/billing.py, windows.py)
    "label.reservation": "{billing} reservation of {gpu} on {platform}",
    "label.unit": " in {n}-GPU units",
    "label.buy_cash": "buy {gpu}{unit} at {price:,.0f} {currency}/GPU, paid in cash",
    "label.buy_amortized": "buy {gpu}{unit} at {price:,.0f} {currency}/GPU, amortized: {share:.1%} "
                           "of the price falls within the {days:g}-day horizon, the residual value "
                           "is credited",
    "label.held_alone": "{label}, held for {job} alone",
    # alternatives (planner/solve.py)
    "alt.alternatives": "alternatives",
    "alt.trades": "{kind} trades",
    "alt.no_further": "no further one",
    "alt.none": "none",
    "alt.time_limit": "the time limit",
    "alt.work_units": "{work:g} work units",
    "alt.ran_out": "{what}: {found} found within {within} (not proven that none exists)",
    "alt.unproven": "alternatives: {n} shown as found within {work:g} work units each, real trades "
                    "but not proven the nearest ones",
    "alt.singles": "the platform, GPU type or billing of {jobs} (the jobs carrying {share:.0%} or "
                   "more of the cost or time)",
    "alt.classes": "that of every job of {series} (equal jobs, none carrying {share:.0%} alone)",
    "alt.counts": "only GPU counts, ending at least {span} sooner ({share:.0%} of the best plan's "
                  "time, at most a day)",
    "alt.or": "; or ",
    "alt.shown": "alternatives: {inside} within {gap:.0%} of the best are cheaper or faster than "
                 "the plans above them and change {what}{beyond}",
    "alt.beyond": "; the last plan shown is the nearest such change beyond the gap",
    "alt.span_h": "{h:,.1f} h",
    "alt.span_days": "{days:,.1f} days",
    "alt.not_proven": "not proven optimal within the work limit ({work:g} units): the best "
                      "possible is {bound:,.2f} {unit}, gap {gap:.1%}; raise solver.work_limit (or "
                      "--work-limit) to close it",
    # host memory (planner/estimate/memory_notes.py; HOST_SHORTFALL_NOTE begins the first)
    "memory.shortfall": "CPU offload: the {host_gib:.1f} GiB of model states per GPU exceed the "
                        "{host_cap:g} GiB of host memory per GPU {said} free; they stay on the GPU",
    "memory.offload": "CPU offload: {host_gib:.1f} GiB of sharded parameters, gradients and "
                      "optimizer states per GPU live in host memory (each server needs that much "
                      "free RAM per GPU; at most {host_cap:g} GiB per GPU {said}); each layer's "
                      "shard crosses PCIe before its gather, its gradient shard after its "
                      "reduction, and the optimizer steps on the CPU",
    "memory.paged": "paged optimizer: {paged:.1f} GiB of 8-bit Adam states live in host memory "
                    "(keeping them all would pass the {usable:.1f} GiB this layout may use) and "
                    "cross PCIe every step",
    "phrase.assumed": "assumed",
    "phrase.declared": "declared",
    # rule groups English names by their id (planner/candidates/build.py)
    "group.scheduling": "scheduling/{resource}",
    "group.period_budget": "budget/{label}",
    # the wall-clock safety net (planner/session.py) and Pareto fronts (planner/pareto/front.py)
    "note.cut": "the wall-clock safety net ({limit:g} s) stopped a solve before its work limit; "
                "this {answer} may depend on the machine's load: raise {knob}",
    "phrase.answer": "answer",
    "phrase.front": "front",
    "front.cut_at": "front cut at {points} points; use --points to thin it instead",
    "front.thinned": "{found} non-dominated points found; {kept} kept (--points): the cheapest, "
                     "the fastest, the least risky and others spread in time",
    "front.infeasible": "no plan satisfies the scenario; run `plan solve` for the conflicting "
                        "constraints",
    "front.none_found": "no plan found within the work limit",
    "front.presolve_retries": "{n} solve(s) that CP-SAT's presolve wrongly found infeasible (a "
                              "plan meeting them was known) were solved again without presolve",
    "front.unproven": "{n} point(s) not proven optimal within the work limit",
    "front.missed": "{n} point(s) looked for and not found within the limits: the front is "
                    "incomplete; raise --work-limit",
}
