"""规则原因与规则组说明的中文（plan.models.said）；键与 `rules_en` 一一对应。

ids, feature names and scenario values (regulated, basic, allow_platforms) stay as the scenario and
catalog write them, so that a reader can find them in the file; a catalog's own rule text (a
`{rule}` field) is quoted as the catalog gives it."""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "rule.sensitivity_marketplace": "{sensitivity} 级数据不得在社区算力市场（{platform}）上运行",
    "rule.sensitivity_shared": "{sensitivity} 级数据不得与其他租户共用节点（{platform}）",
    "rule.sensitivity_spot": "{sensitivity} 级数据不得使用竞价实例",
    "rule.sensitivity_needs": "{sensitivity} 级数据需要 {features}；{platform} 不具备",
    "rule.sensitivity_jurisdiction": "{sensitivity} 级数据必须留在辖区 {site} 内；{platform} 位于 "
                                     "{where}",
    "rule.sensitivity_link": "从 {at} 到 {target} 没有可传输 {sensitivity} 级数据的 {links} 链路",
    "rule.transfer_assumed": "{job}：数据从 {at} 经假设的 {gbps:g} Gb/s 互联网链路传到 {target}"
                             "{stated}",
    "rule.transfer_declared": "（即 {site} 为其互联网连接声明的带宽）",
    "rule.residency_china": "中国境内",
    "rule.residency_jurisdiction": "辖区 {name} 内",
    "rule.residency_regions": "（地域：{regions}）",
    "rule.residency": "数据必须留在{where}；{platform} 位于 {at}{regions}",
    "rule.premises": "本地机房",
    "rule.residency_premises": "数据必须留在本地（{where}）；{platform} 不在那里",
    "rule.both": "{first} 和 {second}",
    "rule.ops_none_needs": "运维能力为 none 时需要 {features}；{platform} 不具备",
    "rule.ops_none_nodes": "运维能力为 none 时只能单节点运行，此方案需要 {nodes} 个节点",
    "rule.ops_basic_nodes": "运维能力为 basic 时，{nodes} 节点的任务只能在托管平台上运行，"
                            "{platform} 不是托管平台",
    "rule.quota_single_node": "{platform} 只支持单节点任务（最多 {gpus} 张卡）",
    "rule.quota_max_gpus": "{platform} 每个任务最多 {gpus} 张卡",
    "rule.capacity_pool": "{platform} 只有 {gpus} 张卡",
    "rule.memory_no_layout": "{model} 在 {gpus} 张 {gpu} 上没有可行的并行布局",
    "rule.memory_headroom": "，扣除 {headroom:.0%} 余量",
    "rule.memory_band": "，按估算误差带 ×{factor:.2f}",
    "rule.memory_usable": "，可用 {gib:.1f} GiB",
    "rule.memory": "{model} 在 {gpus} 张 {gpu} 上放不下：最省显存的布局每卡需 {least:.1f} GiB，"
                   "显卡为 {card:.0f} GiB{less}{band}{usable}",
    "rule.policy_not_allowed": "{platform} 不在 allow_platforms 中",
    "rule.policy_forbidden": "{platform} 在 forbid_platforms 中",
    "rule.policy_gpus": "场景的 GPU 策略不允许 {gpu}",
    "rule.policy_spot": "竞价实例需主动开启，本场景未允许（policy.allow_spot）",
    "rule.policy_max_gpus": "{gpus} 张卡超过场景规定的每任务上限 {limit} 张",
    "rule.policy_renter": "经 {renter} 在 {platform} 上租用 {gpu}（{billing}）：{rule}",
    "rule.policy_sold_for": "{gpu}（{billing}）仅面向 {where} 销售，不含 {at}：{rule}",
    "rule.policy_interruptions": "预计中断 {expected:,.1f} 次，超过场景规定的每任务上限 {cap:g} 次",
    "rule.compat_bf16": "bf16 需要 Ampere 或更新的架构；{gpu} 没有 bf16 峰值算力",
    "rule.compat_fp8": "fp8 需要 Hopper/Ada 或更新的架构；{gpu} 没有 fp8 峰值算力",
    "rule.compat_ascend_qlora": "bitsandbytes 4-bit（QLoRA）算子无法在 {gpu}（昇腾）上运行",
    "rule.compat_qlora_hint": "（具备这类算子的自有资源池可写 features: [qlora_kernels]）",
    "rule.compat_qlora": "{platform} / {gpu} 上没有 4-bit QLoRA 算子{hint}",
    "rule.repro_exclusive": "{platform} 与其他租户共用节点；本场景要求独占硬件",
    "rule.repro_snapshot": "{platform} 不提供环境快照",
    "group.budget": "总费用不超过预算 {budget}",
    "group.deadline_hours": "{job} 在 {hours:g} 小时内完成",
    "group.deadline_days": "{job} 在 {days:g} 天内完成",
    "group.owned_pool": "自有资源池 {pool}（{count} 张 {gpu}）",
    "group.rule_example": "{group} 规则，例如：{reason}",
    "group.after": "任务在其所依赖的任务完成后运行",
    "group.fixed_gpu_type": "所有任务使用同一种 GPU",
    "group.pool_window": "{label}：其卡数与可用时间窗",
    "group.pool_shared": "{label}：各任务分时共用其卡",
    "rule.instance_whole": "整台 {step} 卡实例",
    "rule.instance_whole_least": "整台 {step} 卡实例（至少 {least} 张卡）",
    "rule.instance_least": "至少 {least} 张卡的规格",
    "rule.yaml_where": "：第 {line} 行第 {column} 列",
    "rule.yaml_malformed": "{label}{where}：YAML 格式有误（{problem}）",
    "rule.did_you_mean": "；是否想写 {names}？",
    "rule.known": "；可用的有：{names}{more}",
    "rule.unknown_field": "未知字段{hint}",
    "rule.unknown_field_typo": "未知字段（是否拼写有误？）",
    "rule.field_problem": "{label}：{path}：{message}",
    "rule.top_level": "（顶层）",
    "rule.unknown_id": "未知的{kind} {wanted}{hint}",
    "rule.kind_gpu": "显卡",
    "rule.kind_model": "模型",
    "rule.kind_platform": "平台",
    "rule.literal": "收到 {value}；应为 {choices} 之一",
    "rule.choices": "{head} 或 {last}",
    "rule.bound_less_than_equal": "收到 {value}；须不大于 {bound}",
    "rule.bound_less_than": "收到 {value}；须小于 {bound}",
    "rule.bound_greater_than_equal": "收到 {value}；须不小于 {bound}",
    "rule.bound_greater_than": "收到 {value}；须大于 {bound}",
    "rule.not_finite": "收到 {value}；须为有限数（不能是 .inf 或 .nan）",
}

from plan.planner.i18n import inputs_zh  # noqa: E402  (input errors: files, YAML, validation)

MESSAGES.update(inputs_zh.MESSAGES)

from plan.planner.i18n import stacks_zh  # noqa: E402  (stacks' gaps, search reasons)

MESSAGES.update(stacks_zh.STACKS)
