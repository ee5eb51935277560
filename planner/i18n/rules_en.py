"""English rule reasons and rule-group descriptions (plan.models.said): the wording the rules
always had, so English output and JSON are unchanged. A rule in constraints/ carries its own
English template (it may not import the planner); tests/planner/test_i18n_rules.py checks that each
is the one here. Keys match `rules_zh` one for one."""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    # data sensitivity and residency (constraints/sensitivity.py)
    "rule.sensitivity_marketplace": "{sensitivity} data may not run on a community marketplace "
                                    "({platform})",
    "rule.sensitivity_shared": "{sensitivity} data may not share nodes with other tenants "
                               "({platform})",
    "rule.sensitivity_spot": "{sensitivity} data may not run on spot capacity",
    "rule.sensitivity_needs": "{sensitivity} data needs {features}; {platform} lacks it",
    "rule.sensitivity_jurisdiction": "{sensitivity} data must stay in jurisdiction {site}; "
                                     "{platform} is {where}",
    "rule.sensitivity_link": "no {links} link from {at} to {target} for {sensitivity} data",
    "rule.transfer_assumed": "{job}: data moves {at} -> {target} over an assumed {gbps:g} Gb/s "
                             "internet link{stated}",
    "rule.transfer_declared": " (the speed {site} declares for its internet)",
    "rule.residency_china": "China",
    "rule.residency_jurisdiction": "jurisdiction {name}",
    "rule.residency_regions": " (regions: {regions})",
    "rule.residency": "data must stay in {where}; {platform} is in {at}{regions}",
    "rule.premises": "the premises",
    "rule.residency_premises": "data must stay on premises ({where}); {platform} is not there",
    # ops skill (constraints/ops_skill.py)
    "rule.both": "{first} and {second}",
    "rule.ops_none_needs": "ops skill none needs {features}; {platform} lacks it",
    "rule.ops_none_nodes": "ops skill none: single node only, this needs {nodes} nodes",
    "rule.ops_basic_nodes": "ops skill basic: {nodes}-node jobs only on managed platforms, "
                            "{platform} is not managed",
    # quotas and capacity (constraints/capacity.py)
    "rule.quota_single_node": "{platform} runs single-node jobs only (at most {gpus} GPUs)",
    "rule.quota_max_gpus": "{platform} allows at most {gpus} GPUs per job",
    "rule.capacity_pool": "{platform} has only {gpus} GPUs",
    # memory (constraints/memory.py)
    "rule.memory_no_layout": "no valid layout of {model} on {gpus}x {gpu}",
    "rule.memory_headroom": " less {headroom:.0%} headroom",
    "rule.memory_band": ", with the estimate's band at x{factor:.2f}",
    "rule.memory_usable": " = {gib:.1f} GiB usable",
    "rule.memory": "no layout of {model} fits on {gpus}x {gpu}: the leanest needs {least:.1f} GiB "
                   "per GPU, the card has {card:.0f} GiB{less}{band}{usable}",
    # the scenario's policy (constraints/policy.py)
    "rule.policy_not_allowed": "{platform} is not in allow_platforms",
    "rule.policy_forbidden": "{platform} is in forbid_platforms",
    "rule.policy_gpus": "{gpu} is not allowed by the scenario's GPU policy",
    "rule.policy_spot": "spot is opt-in and the scenario does not allow it (policy.allow_spot)",
    "rule.policy_max_gpus": "{gpus} GPUs exceed the scenario's limit of {limit} per job",
    "rule.policy_renter": "renting {gpu} ({billing}) on {platform} from {renter}: {rule}",
    "rule.policy_sold_for": "{gpu} ({billing}) is sold for {where} only, not {at}: {rule}",
    "rule.policy_interruptions": "{expected:,.1f} expected interruptions exceed the scenario's cap "
                                 "of {cap:g} per job",
    # hardware and software stack (constraints/compatibility.py)
    "rule.compat_bf16": "bf16 needs Ampere or newer; {gpu} has no bf16 peak",
    "rule.compat_fp8": "fp8 needs Hopper/Ada or newer; {gpu} has no fp8 peak",
    "rule.compat_ascend_qlora": "bitsandbytes 4-bit (QLoRA) kernels do not run on {gpu} (Ascend)",
    "rule.compat_qlora_hint": " (an owned pool that has them says features: [qlora_kernels])",
    "rule.compat_qlora": "4-bit QLoRA kernels are not available on {platform} / {gpu}{hint}",
    # reproducibility (constraints/reproducibility.py)
    "rule.repro_exclusive": "{platform} shares nodes; exclusive hardware required",
    "rule.repro_snapshot": "{platform} offers no environment snapshots",
    # rule groups as explanations name them (planner/candidates/build.py)
    "group.budget": "total cost within the budget of {budget}",
    "group.deadline_hours": "{job} ends within {hours:g} hours",
    "group.deadline_days": "{job} ends within {days:g} days",
    "group.owned_pool": "owned pool {pool} ({count}x {gpu})",
    "group.rule_example": "{group} rule, e.g. {reason}",
    "group.after": "jobs run after the jobs they depend on",
    "group.fixed_gpu_type": "every job on the same GPU type",
    "group.pool_window": "{label}: its GPUs and availability window",
    "group.pool_shared": "{label}: jobs share its GPUs over time",
    # how an offer is sold (models/platform.py Offer.instance_text)
    "rule.instance_whole": "whole {step}-GPU instances",
    "rule.instance_whole_least": "whole {step}-GPU instances, at least {least} GPUs",
    "rule.instance_least": "at least {least} GPUs",
    # input errors (models/errors.py, models/yaml_io.py)
    "rule.yaml_where": " line {line}, column {column}",
    "rule.yaml_malformed": "{label}:{where}: malformed YAML: {problem}",
    "rule.did_you_mean": "; did you mean {names}?",
    "rule.known": "; known: {names}{more}",
    "rule.unknown_field": "unknown field{hint}",
    "rule.unknown_field_typo": "unknown field (typo?)",
    "rule.field_problem": "{label}: {path}: {message}",
    "rule.top_level": "(top level)",
    "rule.unknown_id": "unknown {kind} {wanted}{hint}",
    "rule.kind_gpu": "GPU",
    "rule.kind_model": "model",
    "rule.kind_platform": "platform",
    "rule.literal": "got {value}; input should be {choices}",
    "rule.choices": "{head} or {last}",
    "rule.bound_less_than_equal": "got {value}; must be at most {bound}",
    "rule.bound_less_than": "got {value}; must be below {bound}",
    "rule.bound_greater_than_equal": "got {value}; must be at least {bound}",
    "rule.bound_greater_than": "got {value}; must be above {bound}",
    "rule.not_finite": "got {value}; must be a finite number (not .inf or .nan)",
}

from plan.planner.i18n import inputs_en  # noqa: E402  (input errors: files, YAML, validation)

MESSAGES.update(inputs_en.MESSAGES)

from plan.planner.i18n import stacks_en  # noqa: E402  (stacks' gaps, search reasons)

MESSAGES.update(stacks_en.STACKS)
