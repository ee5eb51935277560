"""English explanation sentences (plan.planner.i18n.said): the wording the records always had, so
English output and JSON are unchanged. Keys match `explain_zh` one for one."""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "list_or": " or ",
    "list_comma": ", ",
    "billing.purchase": "purchase",
    "billing.reserved": "reserved",
    # a plan's lines (planner/explain/narrate.py)
    "narrate.option": "{gpus}x {gpu} on {platform} ({billing})",
    "narrate.job": "{job}: {option}, {setup}; {used:.1f} of {card:.0f} GiB per GPU ({free:.1f} "
                   "free); {tokens:,.0f} tokens/s, MFU {mfu:.0%}{causal}; hours {start:,.1f} -> "
                   "{end:,.1f}{dates}{startup}; {risk}{pinned}{bill}",
    "narrate.pinned": "; fixed by the scenario: {pinned}",
    "narrate.power_cost": "; {cost} power above idle draw, billed on {on}",
    "narrate.cost": "; {cost}",
    "narrate.billed_on": "; billed on {on}",
    "narrate.unit_days": "days",
    "narrate.unit_months": "months",
    "narrate.unit_years": "years",
    "narrate.unit_period": "x {h:g} h",
    "narrate.held": "held {n} {unit}",
    "narrate.held_for": "for {n} {unit}",
    "narrate.split": " ({hardware} for the hardware, {running} power and staff)",
    "narrate.reservation": "{label}: {gpus} GPUs {held} from hour {start:,.1f}: {cost}{split}",
    "narrate.dates": " ({start} -> {end})",
    "narrate.startup": " (after {h:,.1f} h of queue/provisioning)",
    "narrate.risk": "expected interruptions {n:,.1f}{spot}",
    "narrate.spot_risk": " (spot preemptions {preemptions:,.1f}, {wait:,.1f} h waiting for "
                         "capacity; lost work and restarts add {overhead:.0%} to the run)",
    "narrate.trade_kind_class": " (every job of a class of equal jobs moved)",
    "narrate.trade_kind_count": " (the same choices with other GPU counts)",
    "narrate.trade_kind_p90": " (the cheapest plan that holds every deadline at p90 time)",
    "narrate.move": "{before} -> {after}",
    "narrate.change_one": "{job}: {move}, {cost} and {hours:+,.1f} h for this job alone",
    "narrate.each_hours": "{h:+,.1f} h",
    "narrate.each_hours_range": "{low:+,.1f} to {high:+,.1f} h",
    "narrate.change_class": "{n} jobs ({jobs}): {move}, {cost} for them together and {each} each",
    "narrate.beyond_gap": " (beyond the {gap:.0%} gap)",
    "narrate.trades": "trades against plan 1{kind}{beyond}: {summary}; {changes}",
    "narrate.binding": " (binding)",
    "narrate.budget": "budget {budget}: uses {used} ({share:.0%}), slack {slack}{binding}",
    "narrate.deadline_hours": "deadline of {job}: hour {end:,.1f} of {limit:g}, slack {slack:,.1f} "
                              "h{binding}",
    "narrate.deadline_days": "deadline of {job}: day {end:,.1f} of {limit:g}, slack {slack:,.1f} "
                             "days{binding}",
    "narrate.removed": "options removed: {counts}",
    "narrate.removed_count": "{name} {n}",
    "narrate.overlay": "catalog overlay {line}",
    "narrate.job_note": "{job}: {note}",
    "narrate.pace_faster": "{gain:.0%} faster than",
    "narrate.pace_slower": "{gain:.0%} slower than",
    "narrate.pace_same": "as fast as",
    "narrate.hybrid_stated": "; the job states hybrid_shard: true",
    "narrate.hybrid": "{job}: hybrid sharding (HSDP: the states sharded over the {group} "
                      "data-parallel ranks of each node and kept in {copies} copies{stated}) is "
                      "estimated {pace} the full shard on these GPUs ({tokens:,.0f} tokens/s with "
                      "{layout}), for {memory:+.1f} GiB per GPU: the layers are gathered inside a "
                      "node and only each gradient shard crosses the {gbps:g} Gb/s per GPU "
                      "{fabric} between nodes",
    "narrate.without_offload": "{job}: without offloading, {field}: {to} ({why}) fits the same "
                               "{gpus}x {gpu}: {layout} at {gib:.1f} GiB, {tokens:,.0f} tokens/s "
                               "against the plan's {plan_tokens:,.0f}",
    "narrate.stack_rule": "stack of {jobs}: ops skill none, so planned on the platform's "
                          "one-click PyTorch path (Hugging Face Transformers with PEFT, as "
                          "LLaMA-Factory runs them: data parallelism with ZeRO/FSDP sharding, "
                          "whole-layer gradient checkpointing); Megatron-LM needs its own build "
                          "and a checkpoint conversion (a job's framework or layout field chooses "
                          "otherwise)",
    "narrate.headroom_band": " at the {confidence:.0%} quantile of the estimator's error band "
                             "(estimate x {factor:.2f})",
    "narrate.headroom": "memory headroom {headroom:.0%} (policy.memory_headroom): every layout "
                        "peaks{band} at most at {share:.0%} of its card; tightest is {job} at "
                        "{used:.1f} of {usable:.1f} GiB its estimate may use on {gpu}",
    "narrate.time": "time of {job}: expected {expected:,.1f} h of training (p10-p90 "
                    "{p10:,.1f}-{p90:,.1f} h); scheduled at {at:,.1f} h, the time it stays within "
                    "with {confidence:.0%} confidence ({stack} execution model)",
    "narrate.instances_each": "{line} (each of {n} instances)",
    "narrate.cost_band": "cost band p10-p90: {low} to {high} (the budget is checked on the "
                         "expected {expected})",
    "narrate.causal": " ({causal:.0%} counting only the causal half of attention that flash "
                      "attention computes)",
    "narrate.too_late": "too late for deadline/{job}: it can start only at {start} ({held}) and "
                        "ends at {end}, after the deadline at {deadline}",
    "narrate.too_slow": "too slow for deadline/{job}: it ends at {end}, after the deadline at "
                        "{deadline}",
    "narrate.ruled_out": "ruled out by {group}: {reason}",
    "narrate.band_only": "set aside only because of the estimator's band: it meets "
                         "deadline/{job} on its expected time ({expected:,.1f} h) but not with "
                         "{confidence:.0%} confidence ({at:,.1f} h)",
    "narrate.offloaded": " with its model states offloaded to the CPU",
    "narrate.cheaper_blocked": "{job}: {option}{offloaded} would cost {cost} but is {why}",
    "narrate.policy_platforms": "platforms",
    "narrate.policy_gpus": "GPUs",
    "narrate.policy_spot": "spot billing",
    "narrate.policy_max_gpus": "GPU counts over the per-job limit",
    "narrate.policy_interruptions": "options over the cap on expected interruptions",
    "narrate.policy_options": "options",
    "narrate.and_more": " and {n} more",
    "narrate.policy_names": "{what} {names}{more} ({group})",
    "narrate.policy_group": "{what} ({group})",
    "narrate.policy_cheapest_job": "{job}: {option} at {cost} against {mine}",
    "narrate.policy_cheapest": "; the cheapest that only policy keeps out: {jobs}",
    "narrate.policy": "policy, as the scenario sets it, keeps out cheaper options: "
                      "{parts}{cheapest}",
    # conflicts (planner/explain/conflicts.py)
    "conflict.policy_leaves": "what {field} leaves cannot run the jobs under the other "
                              "rules{example}",
    "conflict.policy_example": " (it excludes, e.g.: {example})",
    "time.hour": "hour {h:,.1f}",
    "time.day": "day {d:,.1f}",
    "held_back.purchase": "delivery after purchase",
    "held_back.owned": "the owned pool opens then",
    "held_back.lead": "queue or reservation lead time",
    # relaxations (planner/explain/relaxations.py, infeasible.py)
    "dur.h": "h",
    "dur.d": "d",
    "relax.raise_budget_only": "raise the budget to {cost} and the rest holds",
    "relax.extend_deadline_only": "extend the deadline to {value:g} {unit} and the rest holds",
    "relax.extend_deadline_fastest": "extend the deadline to {value:g} {unit} and the rest holds "
                                     "(the fastest plan)",
    "relax.raise_budget": "raise the budget to {cost}",
    "relax.extend_deadline": "extend the deadline to {value:g} {unit}",
    "relax.set_level": "set {field} to {level} (now {now})",
    "relax.drop": "drop {group}",
    "relax.joint_fastest": "no single change is enough; together: {changes}: the fastest plan "
                           "then costs {cost}",
    "relax.joint_cheapest": "no single change is enough; together: {changes}: the cheapest plan "
                            "then costs {cost}",
    "relax.allow": "allow {words}: the cheapest plan then costs {cost}",
    "relax.lift": "lift {group}: the cheapest plan then costs {cost}",
    "relax.drop_policy": "drop policy.{head}: the cheapest plan then costs {cost}",
    "relax.level": "set {field} to {level} (now {now}): the cheapest plan then costs {cost}",
    "relax.pool_features": "if {pools} runs a one-click environment with checkpoint resume (a "
                           "vendor image, LLaMA-Factory's web UI), say so: {fields}: [{features}]; "
                           "the cheapest plan then costs {cost}",
    "relax.headroom": "keep {value:.0%} of each card free instead of {headroom:.0%}: the cheapest "
                      "plan then costs {cost} (less margin for memory spikes)",
    "relax.train": "train {what}: the cheapest plan then costs {cost}",
    "infeasible.pinned": "{job} fixes {pinned}; no catalog option runs it that way: let the "
                         "planner choose",
    "infeasible.no_count": "no GPU count in the catalog holds this job in memory",
    "infeasible.detail": "{detail}{late}",
    "infeasible.held": "held as given, not rules to relax: {facts}",
    "infeasible.soonest": "; the soonest the other rules allow, {option}, can start only at "
                          "{start} ({held}) and ends at {end}",
    "infeasible.fastest": "; the fastest option the other rules allow, {option}, runs {run:,.1f} "
                          "h and ends at {end}",
    "infeasible.host_short": "; offloaded to host memory it would not fit either: {short} "
                             "(owned[{pool}].host_memory_gib_per_gpu says what its servers have "
                             "free)",
    "infeasible.pool_memory": "owned pool {pool} cannot hold {job} in memory at any GPU count: "
                              "{reason}{host}",
    "infeasible.no_network": "owned pool {pool} has {nodes} nodes of {per_node} GPUs but declares "
                             "no network between them, so {jobs} can use one node at most; "
                             "owned[{pool}].fabric says what joins them (kind infiniband, roce "
                             "or ethernet, gbps_per_gpu: e.g. 400 for one 400 Gb/s card per GPU)",
    "infeasible.window": "owned pool {pool} is free for {window:,.1f} h (hour {start:,.1f} to "
                         "{end:,.1f}); {job} needs at least {need:,.1f} h on it ({gpus}x {gpu}): "
                         "a longer window would let it run there",
    "infeasible.no_option_in_time": "{job}: no option finishes by the deadline; the fastest plan "
                                    "needs {to:g} {unit}",
    "infeasible.none_left": "{job}: no option is left; e.g. {reason}",
    # why not (planner/explain/why_not.py)
    "whynot.removed": "{job}: {rule}: {reason}",
    "whynot.no_option": "{job}: no such option in the catalog or the scenario's owned pools",
    "whynot.pinned": "{job}: the scenario fixes {pinned}",
    "whynot.some_jobs": "the option exists for some jobs only; forcing it where it exists",
    "whynot.no_plan": "the scenario has no plan with any option; `plan solve` names its "
                      "conflicts and relaxations",
    "whynot.over_budget": "{job}: budget: costs {cost} alone, above the budget of {budget}",
    "whynot.too_long": "deadline/{job}: takes {took:g} {unit}, beyond the deadline of "
                       "{allowed:g} {allowed_unit}",
    # assumptions and transfers (planner/candidates, planner/estimate/cluster.py)
    "note.of": "{who}: {note}",
    "note.price": "price of {gpu} {billing} on {platform}: {note}",
    "note.capacity": "capacity of {gpu} ({billing}) on {platform}: {max} GPUs{reserved}, start-up "
                     "{startup:g} h: {note}",
    "note.capacity_reserved": ", {n} with a reservation",
    "note.result_internet": "{job}: the result moves {where} -> {home} over an assumed {gbps:g} "
                            "Gb/s internet link",
    "note.private_line": "{job}: the result comes home over the private line {where} -> {home}: "
                         "no per-GB egress (a private line is paid for by the line, not by the "
                         "traffic)",
    "note.no_egress_price": "{job}: {platform} publishes no egress price in the catalog; bringing "
                            "the {gb:,.1f} GB result home is not charged in this plan",
    "note.egress": "{job}: egress {price:g} {currency}/GB on {platform} ({note})",
    "note.reliability": "reliability assumed: GPU MTBF {mtbf:,.0f} h (Llama 3 run), restart "
                        "{restart:g} min, checkpoint write {ckpt:g} min",
    "transfer.in": "data in {h:,.2f} h",
    "transfer.out": "result ({gb:,.1f} GB) {platform} -> {home} {h:,.2f} h, egress {fee}",
    "transfer.counted": " (in the job's hours and cost)",
    "transfer.uploaded": " (in the job's hours and cost; the data is uploaded to storage before "
                         "the GPUs are rented, so they are not billed for it)",
    "transfer.line": "transfer for {job}: {parts}{said}",
    # plan compare (planner/compare.py, planner/cli/compare_cmd.py)
    "whynot.removed_rule": "{rule}: {reason}",
    "compare.who": "{who}: {what}",
    "compare.plain": "{what}",
    "compare.no_option": "no option here",
    "compare.no_plan": "the scenario has no plan ({status}); `plan solve` says why",
    "compare.policy": "left out by the scenario's policy ({what}): {pairs}",
    "compare.late": "{names} due before {platform} ({billing}) can start (day {day:,.1f}): left to "
                    "their best option",
    "compare.none_in_time": "no run can end by its deadline here: {note}",
    "compare.payback_months": "{months:,.1f} months",
    "compare.never": "never",
    "compare.not_applicable": "not applicable",
    "compare.work_limit": "no plan found within the work limit (raise solver.work_limit)",
    "compare.period_budget": "the {label} budget of {budget}",
    "compare.conflicts": "conflicts with {said}",
    "compare.no_plan_here": "no plan meets the scenario's rules with the job here",
    "compare.held_purchase": "{n} purchase: {gpus} GPUs for {months:,.1f} months",
    "compare.unit_d": "{n:g} d",
    "compare.unit_h": "{n:g} h",
    "compare.held_one": "1 window: {periods} x {unit}",
    "compare.held_each": "{n} windows: {periods} x {unit} each",
    "compare.held_sizes": "{n} windows: {sizes} periods of {unit}",
    "compare.hours": "{h:,.1f} h",
    "compare.days": "{d:,.1f} d",
    "compare.day": "day {d:,.1f}",
    "compare.mark_cheapest": " *",
    "compare.mark_best": " (best)",
    "compare.mark_unproven": " (unproven)",
    "compare.legend": "* cheapest plan; (best) the best plan's own choice; job cost: its bills and "
                      "its share of what it holds; plan vs best: the whole plan's cost against "
                      "the best plan",
    "compare.row_note": "{billing} on {platform}: {note}",
    "compare.row_cannot": "{billing} on {platform}: cannot: {reason}",
    "compare.over": " over its {n} instances ({first} .. {last})",
    "compare.best": "; best plan {cost}",
    "compare.title": "{job}{over}, forced onto each billing mode and platform{best}",
    "compare.col.billing": "billing",
    "compare.col.platform": "platform",
    "compare.col.GPUs": "GPUs",
    "compare.col.job cost": "job cost",
    "compare.col.plan vs best": "plan vs best",
    "compare.col.run time": "run time",
    "compare.col.last ends": "last ends",
    "compare.col.exp. interr.": "exp. interr.",
    "compare.col.holds": "holds",
    "compare.col.payback": "payback",
    # plan 1 at p90 time (planner/trades.py)
    "p90.misses": "p90 misses deadline/{job}: at p90 time (its own and the jobs it follows) {job} "
                  "ends at {end}, after the deadline at {deadline}; the schedule holds at "
                  "{confidence:.0%} confidence",
    "p90.none": "no plan holds every deadline at p90 time under the scenario's rules and budget "
                "(or none was found within the work given to it)",
    "p90.plan": "plan {rank}",
    "p90.holding": "the cheapest plan that holds every deadline at p90 time is {what}: {extra} "
                   "({share:+.1%}), ending at {end:,.1f} h",
    # buying (planner/explain/ownership.py)
    "own.unit": " ({n} unit of {per})",
    "own.units": " ({n} units of {per})",
    "own.per_hour": "{cost} per delivered GPU-hour",
    "own.no_hours": "no GPU-hour delivered",
    "own.held": "{gpus} {what} bought{unit}: used {share:.0%} of the {held:,.0f} GPU-hours held "
                "({used:,.0f} by the plan's jobs); {cost} with power, staff, space and "
                "maintenance, {per_h}; worth {worth} at the horizon's end ({rule})",
    "own.only_bought": "no rental may run {jobs} under its rules, so buying is the only way and "
                       "the payback test does not apply",
    "own.only_way": "no plan meets the scenario's rules without buying, so buying is the only way",
    "own.buying_only": "buying {price} of hardware: {why}",
    "own.against": "the best plan that rents instead costs {cost} and ends at day {day:,.1f}",
    "own.never": "buying {price} of hardware never pays back against renting: {against}, less "
                 "than owning's running costs alone ({running})",
    "own.within": "within its {life:g}-month life",
    "own.beyond": "beyond its {life:g}-month life",
    "own.after_held": "after the {months:,.0f} months it is held here, {within}",
    "own.pays_back": "buying {price} of hardware pays back after {months:,.1f} months at this "
                     "plan's use, {within}: {against}; owning saves {saving} a month in rent",
    "own.horizon_saves": "over the plan's horizon buying saves {amount} against renting, on the "
                         "scenario's budget basis ({basis})",
    "own.horizon_costs": "over the plan's horizon buying costs {amount} against renting, on the "
                         "scenario's budget basis ({basis})",
    "own.basis": "{share:.0%} of the price counted, the residual value credited",
    "own.spans": "the work spans {months:,.1f} months",
    "own.renting_dearer": "renting {gpu} costs {spent}, more than the {buy} that buying the "
                          "{most} it uses would",
    "own.not_weighed": "buying was not weighed: {reasons}. Set policy.consider_purchase: true, or "
                       "add a purchase: quote, to weigh it (`plan catalog purchases` lists what "
                       "can be bought)",
    "own.no_buying_plan": "not bought: no plan that buys meets the scenario's rules (budget, "
                          "deadlines)",
    "own.no_buying_plan_because": "not bought: no plan that buys keeps to {said}; "
                                  "the cheapest purchase, {what}, costs {cost} on its own",
    "own.buying_dearer": "not bought: the best plan that buys ({what}) costs {extra} more than "
                         "this plan, which rents",
    "own.not_bought": "not bought: {line}",
}
