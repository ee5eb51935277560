"""Chinese assumption notes, labels and search notes: `notes_en` said again for a Chinese reader.
Keys and {fields} match `notes_en` one for one."""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "note.unavailable": "可得性：{why}（设置 policy.only_available: true 可将其排除）",
    "note.buying": "采购 {gpu}：{assumption}",
    "note.reservation_needed": "{platform} 上 {count} 张 {gpu} 超过单个客户不预留可得的 {max} 张："
                               "需与厂商预先安排（需提前 {lead:g} 小时）",
    "note.whole_instances": "{platform} 的 {gpu}（{billing}）只按{sold}出租："
                            "方案租用 {count} 张卡，均为整台实例，全部用上",
    "note.pinned_instances": "{platform} 的 {gpu}（{billing}）只按{sold}出租；{job} 固定了 gpus: "
                             "{gpus}",
    "note.gpu": "显卡 {gpu}：{note}",
    "note.model": "模型 {model}：{note}",
    "note.preliminary": "初步数据",
    "band.widened": "吞吐误差带已放宽：没有校准数据测量过 {mechanisms}；每项按假设在 P10–P90 上"
                    "加宽 ±{spread:.0%}（band.UNCALIBRATED_SPREAD）",
    "band.gpu_efficiency": "{architecture} 架构显卡的计算效率",
    "band.efficiency_assumed": "{architecture} 架构显卡{on_stack}的计算效率为假设值：稠密矩阵乘法"
                               "按规格峰值的 {fraction:.0%} 计（尚无公开实测；A100 的 86% 和 H100 "
                               "的 80% 是实测值），因此在这类显卡上的时长和费用不如 A100/H100 确定",
    "band.on_stack": "（运行于 {stack}）",
    "phrase.MoE routing and all-to-all": "MoE 路由和 all-to-all 通信",
    "phrase.CPU offload traffic": "CPU 卸载的数据传输",
    "phrase.QLoRA dequantization": "QLoRA 反量化",
    "phrase.DeepSpeed's execution of ZeRO": "DeepSpeed 对 ZeRO 的执行",
    "phrase.Megatron-FSDP's sharded data parallelism": "Megatron-FSDP 的分片数据并行",
    "phrase.MindSpeed-LLM, Ascend's Megatron fork on CANN":
        "MindSpeed-LLM（昇腾基于 CANN 的 Megatron 分支）",
    "phrase.Hygon's DTK builds of Megatron-LM/DeepSpeed":
        "海光 DTK 版 Megatron-LM/DeepSpeed",
    "phrase.Cambricon's forks of Megatron-LM/DeepSpeed":
        "寒武纪的 Megatron-LM/DeepSpeed 分支",
    "own.residual_quoted": "购置价的 {share:.0%}（报价所列）",
    "own.residual_straight": "购置价的 {share:.0%}：按 {life:g} 年寿命直线折旧至零，已用 "
                             "{months:,.1f} 个月",
    "label.reservation": "{platform} 上 {gpu} 的{billing}预留",
    "label.unit": "（每 {n} 张卡为一单位）",
    "label.buy_cash": "采购 {gpu}{unit}，每卡 {price:,.0f} {currency}，现金支付",
    "label.buy_amortized": "采购 {gpu}{unit}，每卡 {price:,.0f} {currency}，分摊计价：{days:g} 天"
                           "规划期内计入购置价的 {share:.1%}，残值抵扣",
    "label.held_alone": "{label}，由 {job} 独占",
    "alt.alternatives": "备选方案",
    "alt.trades": "{kind} 类权衡方案",
    "alt.no_further": "未再找到",
    "alt.none": "未找到",
    "alt.time_limit": "时间限制",
    "alt.work_units": "{work:g} 个工作量单位",
    "alt.ran_out": "{what}：在{within}内{found}（未证明不存在）",
    "alt.unproven": "备选方案：有 {n} 个是在每次 {work:g} 个工作量单位内找到的，确是可行的权衡，"
                    "但未证明是最接近的",
    "alt.singles": "{jobs} 的平台、显卡型号或计费方式（这些任务各占费用或工期的 {share:.0%} 以上）",
    "alt.classes": "{series} 中每个任务的选择（同类任务，单个占比均不到 {share:.0%}）",
    "alt.counts": "仅改变卡数、至少提前 {span} 完成（最优方案工期的 {share:.0%}，最多一天）",
    "alt.or": "；或",
    "alt.shown": "备选方案：距最优 {gap:.0%} 以内的有 {inside} 个，每个都比排在它前面的方案更省钱或"
                 "更快，改变的是{what}{beyond}",
    "alt.beyond": "；最后一个方案是超出该差距的最接近的此类改变",
    "alt.span_h": "{h:,.1f} 小时",
    "alt.span_days": "{days:,.1f} 天",
    "alt.not_proven": "在工作量上限（{work:g} 个单位）内未证明最优：理论最优为 "
                      "{bound:,.2f} {unit}，差距 {gap:.1%}；"
                      "调高 solver.work_limit（或 --work-limit）可缩小差距",
    "memory.shortfall": "CPU 卸载：每卡 {host_gib:.1f} GiB 的模型状态超过每卡 {host_cap:g} GiB 的"
                        "空闲主机内存（{said}），因此仍留在显卡上",
    "memory.offload": "CPU 卸载：每卡 {host_gib:.1f} GiB 的分片参数、梯度和优化器状态放在主机内存中"
                      "（每台服务器每卡需有这么多空闲内存；每卡最多 {host_cap:g} GiB，{said}）；"
                      "每层的分片在聚合前经 PCIe 传入，梯度分片在归约后传出，优化器在 CPU 上更新",
    "memory.paged": "分页优化器：{paged:.1f} GiB 的 8-bit Adam 状态放在主机内存中（全部放在显卡上"
                    "会超过该布局可用的 {usable:.1f} GiB），每步经 PCIe 传输",
    "phrase.assumed": "假设值",
    "phrase.declared": "按场景声明",
    "group.scheduling": "{resource}：各任务分时共用",
    "group.period_budget": "预算期 {label} 的预算",
    "note.cut": "墙钟保护（{limit:g} 秒）在工作量上限之前中止了一次求解；此{answer}可能随机器负载"
                "而变：请调高 {knob}",
    "phrase.answer": "结果",
    "phrase.front": "前沿",
    "front.cut_at": "前沿在 {points} 个点处截断；请改用 --points 抽稀",
    "front.thinned": "找到 {found} 个非支配点，保留 {kept} 个（--points）：最便宜、最快、风险最低，"
                     "其余按时间分散",
    "front.infeasible": "没有方案满足该场景；运行 `plan solve` 查看相互冲突的约束",
    "front.none_found": "在工作量上限内未找到方案",
    "front.presolve_retries": "{n} 次求解被 CP-SAT 预求解误判为不可行（已知有满足的方案），"
                              "已关闭预求解重新求解",
    "front.unproven": "{n} 个点在工作量上限内未证明最优",
    "front.missed": "{n} 个点在限制内未找到：前沿不完整；请调高 --work-limit",
}
