"""解释语句的中文（plan.planner.i18n.said）；键与 `explain_en` 一一对应。

Written for a PI or a finance office: 张卡, 显存, 按量计费, 工期, 截止期限; ids, rule names and
scenario fields (policy.memory_headroom, deadline/sft) stay as the scenario writes them, so that a
reader can find them in the file."""

from __future__ import annotations

MESSAGES: dict[str, str] = {
    "list_or": "或",
    "list_comma": "、",
    "billing.purchase": "采购",
    "billing.reserved": "预留",
    "narrate.option": "{platform} 上 {gpus} 张 {gpu}（{billing}）",
    "narrate.job": "{job}：{option}，{setup}；单卡显存占用 {used:.1f} / {card:.0f} GiB（余 "
                   "{free:.1f}）；吞吐 {tokens:,.0f} tokens/秒，MFU {mfu:.0%}{causal}；第 "
                   "{start:,.1f} 至 {end:,.1f} 小时{dates}{startup}；{risk}{pinned}{bill}",
    "narrate.pinned": "；由场景固定：{pinned}",
    "narrate.power_cost": "；高于待机功耗的电费 {cost}，计入 {on}",
    "narrate.cost": "；{cost}",
    "narrate.billed_on": "；计入 {on}",
    "narrate.unit_days": "天",
    "narrate.unit_months": "个月",
    "narrate.unit_years": "年",
    "narrate.unit_period": "个周期（每期 {h:g} 小时）",
    "narrate.held": "持有 {n} {unit}",
    "narrate.held_for": "预留 {n} {unit}",
    "narrate.split": "（硬件 {hardware}，电力与人员 {running}）",
    "narrate.reservation": "{label}：{gpus} 张卡，自第 {start:,.1f} 小时起{held}：{cost}{split}",
    "narrate.dates": "（{start} 至 {end}）",
    "narrate.startup": "（此前排队/开通 {h:,.1f} 小时）",
    "narrate.risk": "预计中断 {n:,.1f} 次{spot}",
    "narrate.spot_risk": "（竞价实例被回收 {preemptions:,.1f} 次，等待资源 {wait:,.1f} 小时；"
                         "丢失的进度与重启使运行时间增加 {overhead:.0%}）",
    "narrate.trade_kind_class": "（同类等同任务整体调整）",
    "narrate.trade_kind_count": "（选择不变，仅卡数不同）",
    "narrate.trade_kind_p90": "（按 P90 时长仍满足全部截止期限的最低费用方案）",
    "narrate.move": "{before} → {after}",
    "narrate.change_one": "{job}：{move}，仅此任务费用 {cost}、工期 {hours:+,.1f} 小时",
    "narrate.each_hours": "{h:+,.1f} 小时",
    "narrate.each_hours_range": "{low:+,.1f} 至 {high:+,.1f} 小时",
    "narrate.change_class": "{n} 个任务（{jobs}）：{move}，合计费用 {cost}，每个任务工期 {each}",
    "narrate.beyond_gap": "（超出 {gap:.0%} 的差距范围）",
    "narrate.trades": "与方案 1 相比{kind}{beyond}：{summary}；{changes}",
    "narrate.binding": "（已到上限）",
    "narrate.budget": "预算 {budget}：已用 {used}（{share:.0%}），余 {slack}{binding}",
    "narrate.deadline_hours": "{job} 的截止期限：第 {end:,.1f} 小时完成，期限 {limit:g} 小时，"
                              "余 {slack:,.1f} 小时{binding}",
    "narrate.deadline_days": "{job} 的截止期限：第 {end:,.1f} 天完成，期限 {limit:g} 天，余 "
                             "{slack:,.1f} 天{binding}",
    "narrate.removed": "被规则排除的选项数：{counts}",
    "narrate.removed_count": "{name} {n}",
    "narrate.overlay": "目录覆盖文件修改：{line}",
    "narrate.job_note": "{job}：{note}",
    "narrate.pace_faster": "比完全分片快 {gain:.0%}",
    "narrate.pace_slower": "比完全分片慢 {gain:.0%}",
    "narrate.pace_same": "与完全分片一样快",
    "narrate.hybrid_stated": "；任务设置了 hybrid_shard: true",
    "narrate.hybrid": "{job}：混合分片（HSDP：模型状态在每个节点的 {group} 个数据并行进程间分片，"
                      "共保留 {copies} 份{stated}）在这些卡上估计{pace}（完全分片为 {tokens:,.0f} "
                      "tokens/秒，配置 {layout}），单卡显存 {memory:+.1f} GiB：各层在节点内汇集，"
                      "节点之间只传各自的梯度分片，经每卡 {gbps:g} Gb/s 的 {fabric} 网络",
    "narrate.without_offload": "{job}：不卸载到内存时，设 {field}: {to}（{why}）即可在同样的 "
                               "{gpus} 张 {gpu} 上放下：{layout}，显存 {gib:.1f} GiB，吞吐 "
                               "{tokens:,.0f} tokens/秒（本方案为 {plan_tokens:,.0f}）",
    "narrate.stack_rule": "{jobs} 的训练框架：团队无运维能力（ops skill none），因此按平台的一键 "
                          "PyTorch 路径规划（Hugging Face Transformers 加 PEFT，即 LLaMA-Factory "
                          "的运行方式：数据并行，ZeRO/FSDP 分片，整层梯度检查点）；Megatron-LM "
                          "需要自行编译并转换检查点（任务的 framework 或 layout 字段可另行指定）",
    "narrate.headroom_band": "（按估算误差带的 {confidence:.0%} 分位，即估算值 × {factor:.2f}）",
    "narrate.headroom": "显存余量 {headroom:.0%}（policy.memory_headroom）：每种配置的显存峰值"
                        "{band}最多占显卡容量的 {share:.0%}；最紧的是 {job}，在 {gpu} 上估算可用 "
                        "{usable:.1f} GiB，已用 {used:.1f} GiB",
    "narrate.time": "{job} 的时长：训练预计 {expected:,.1f} 小时（P10–P90 为 "
                    "{p10:,.1f}–{p90:,.1f} 小时）；排期按 {at:,.1f} 小时，即有 {confidence:.0%} "
                    "把握不超出的时长（{stack} 执行模型）",
    "narrate.instances_each": "{line}（{n} 个实例各自如此）",
    "narrate.cost_band": "费用区间（P10–P90）：{low} 至 {high}（预算按期望费用 {expected} 核算）",
    "narrate.causal": "（若只计 flash attention 实际计算的因果注意力一半，为 {causal:.0%}）",
    "narrate.too_late": "赶不上 deadline/{job}：最早只能在{start}开始（{held}），{end}结束，晚于"
                        "截止期限{deadline}",
    "narrate.too_slow": "太慢，赶不上 deadline/{job}：{end}才结束，晚于截止期限{deadline}",
    "narrate.ruled_out": "被规则 {group} 排除：{reason}",
    "narrate.band_only": "仅因估算误差带而未选：按期望时长（{expected:,.1f} 小时）能赶上 "
                         "deadline/{job}，但达不到 {confidence:.0%} 把握（{at:,.1f} 小时）",
    "narrate.offloaded": "（模型状态卸载到 CPU 内存）",
    "narrate.cheaper_blocked": "{job}：{option}{offloaded}只需 {cost}，但{why}",
    "narrate.policy_platforms": "平台",
    "narrate.policy_gpus": "显卡",
    "narrate.policy_spot": "竞价实例计费",
    "narrate.policy_max_gpus": "超过单任务上限的卡数",
    "narrate.policy_interruptions": "预计中断次数超过上限的选项",
    "narrate.policy_options": "选项",
    "narrate.and_more": "等（另有 {n} 个）",
    "narrate.policy_names": "{what} {names}{more}（{group}）",
    "narrate.policy_group": "{what}（{group}）",
    "narrate.policy_cheapest_job": "{job}：{option}，{cost}（本方案 {mine}）",
    "narrate.policy_cheapest": "；仅因策略而排除的最便宜选项：{jobs}",
    "narrate.policy": "场景设定的策略排除了更便宜的选项：{parts}{cheapest}",
    "conflict.policy_leaves": "{field} 允许的选项在其他规则下无法运行这些任务{example}",
    "conflict.policy_example": "（例如它排除了：{example}）",
    "time.hour": "第 {h:,.1f} 小时",
    "time.day": "第 {d:,.1f} 天",
    "held_back.purchase": "采购后需等待交付",
    "held_back.owned": "自有资源池届时才开放",
    "held_back.lead": "排队或预留的开通时间",
    "dur.h": "小时",
    "dur.d": "天",
    "relax.raise_budget_only": "把预算提高到 {cost}，其余不变",
    "relax.extend_deadline_only": "把截止期限延长到 {value:g} {unit}，其余不变",
    "relax.extend_deadline_fastest": "把截止期限延长到 {value:g} {unit}，其余不变（按最快方案）",
    "relax.raise_budget": "把预算提高到 {cost}",
    "relax.extend_deadline": "把截止期限延长到 {value:g} {unit}",
    "relax.set_level": "把 {field} 设为 {level}（现为 {now}）",
    "relax.drop": "取消 {group}",
    "relax.joint_fastest": "单独调整任何一项都不够；需同时：{changes}；届时最快方案的费用为 {cost}",
    "relax.joint_cheapest": "单独调整任何一项都不够；需同时：{changes}；届时最低费用为 {cost}",
    "relax.allow": "允许 {words}：届时最低费用为 {cost}",
    "relax.lift": "解除 {group}：届时最低费用为 {cost}",
    "relax.drop_policy": "取消 policy.{head}：届时最低费用为 {cost}",
    "relax.level": "把 {field} 设为 {level}（现为 {now}）：届时最低费用为 {cost}",
    "relax.pool_features": "如果 {pools} 提供支持断点续训的一键训练环境（厂商镜像、LLaMA-Factory "
                           "网页界面），请在场景中写明：{fields}: [{features}]；届时最低费用为 "
                           "{cost}",
    "relax.headroom": "把每张卡预留的显存余量从 {headroom:.0%} 降到 {value:.0%}：届时最低费用为 "
                      "{cost}（应对显存峰值的余地变小）",
    "relax.train": "训练 {what}：届时最低费用为 {cost}",
    "infeasible.pinned": "{job} 固定为 {pinned}；目录中没有能这样运行它的选项：请交由规划器选择",
    "infeasible.no_count": "目录中没有任何卡数能放下这个任务的显存需求",
    "infeasible.detail": "{detail}{late}",
    "infeasible.held": "以下为既定事实，不作为可放宽的规则：{facts}",
    "infeasible.soonest": "；其他规则允许的最早选项 {option} 最早只能在{start}开始（{held}），"
                          "{end}结束",
    "infeasible.fastest": "；其他规则允许的最快选项 {option} 需运行 {run:,.1f} 小时，{end}结束",
    "infeasible.host_short": "；卸载到主机内存也放不下：{short}（owned[{pool}]."
                             "host_memory_gib_per_gpu 填写服务器可用的空闲内存）",
    "infeasible.pool_memory": "自有资源池 {pool} 在任何卡数下都放不下 {job} 的显存需求：{reason}"
                              "{host}",
    "infeasible.no_network": "自有资源池 {pool} 有 {nodes} 个节点、每节点 {per_node} 张卡，但未"
                             "声明节点间网络，因此 {jobs} 最多只能使用一个节点；请用 owned[{pool}]"
                             ".fabric 说明节点间的连接（kind 为 infiniband、roce 或 ethernet，"
                             "gbps_per_gpu 如每卡一块 400 Gb/s 网卡则填 400）",
    "infeasible.window": "自有资源池 {pool} 的可用时段为 {window:,.1f} 小时（第 {start:,.1f} 至 "
                         "{end:,.1f} 小时）；{job} 在其上至少需要 {need:,.1f} 小时（{gpus} 张 "
                         "{gpu}）：时段更长才能在此运行",
    "infeasible.no_option_in_time": "{job}：没有能在截止期限前完成的选项；最快的方案需要 {to:g} "
                                    "{unit}",
    "infeasible.none_left": "{job}：没有剩余可选项；例如 {reason}",
    "whynot.removed": "{job}：{rule}：{reason}",
    "whynot.no_option": "{job}：目录和场景的自有资源池中都没有这个选项",
    "whynot.pinned": "{job}：场景已固定为 {pinned}",
    "whynot.some_jobs": "该选项只对部分任务存在；仅在存在的任务上强制采用",
    "whynot.no_plan": "该场景在任何选项下都没有可行方案；`plan solve` 会列出冲突和可放宽的条件",
    "whynot.over_budget": "{job}：预算：单独就要 {cost}，超过预算 {budget}",
    "whynot.too_long": "deadline/{job}：需要 {took:g} {unit}，超过截止期限 {allowed:g} "
                       "{allowed_unit}",
    "note.of": "{who}：{note}",
    "note.price": "{platform} 上 {gpu}（{billing}）的价格：{note}",
    "note.capacity": "{platform} 上 {gpu}（{billing}）的容量：{max} 张卡{reserved}，开通需 "
                     "{startup:g} 小时：{note}",
    "note.capacity_reserved": "，预留可达 {n} 张",
    "note.result_internet": "{job}：训练结果经假设的 {gbps:g} Gb/s 公网链路从 {where} 传回 "
                            "{home}",
    "note.private_line": "{job}：训练结果经专线 {where} → {home} 传回，不按流量收取出网费（专线"
                         "按线路计费，不按流量）",
    "note.no_egress_price": "{job}：目录中没有 {platform} 的出网流量价格；本方案未计入将 "
                            "{gb:,.1f} GB 训练结果传回的费用",
    "note.egress": "{job}：{platform} 出网流量 {price:g} {currency}/GB（{note}）",
    "note.reliability": "可靠性为假设值：单卡平均无故障时间 {mtbf:,.0f} 小时（Llama 3 训练数据），"
                        "重启 {restart:g} 分钟，写检查点 {ckpt:g} 分钟",
    "transfer.in": "数据上传 {h:,.2f} 小时",
    "transfer.out": "训练结果（{gb:,.1f} GB）{platform} → {home} {h:,.2f} 小时，出网费 {fee}",
    "transfer.counted": "（已计入该任务的时长和费用）",
    "transfer.uploaded": "（已计入该任务的时长和费用；数据在租卡前先上传到存储，上传期间不产生"
                         "显卡费用）",
    "transfer.line": "{job} 的数据传输：{parts}{said}",
    "whynot.removed_rule": "{rule}：{reason}",
    "compare.who": "{who}：{what}",
    "compare.plain": "{what}",
    "compare.no_option": "此处没有可选项",
    "compare.no_plan": "该场景没有可行方案（{status}）；原因请看 `plan solve`",
    "compare.policy": "被场景策略排除（{what}）：{pairs}",
    "compare.late": "{names} 的截止期限早于 {platform}（{billing}）最早可开始的时间（第 {day:,.1f} "
                    "天）：交由其最优选项",
    "compare.none_in_time": "在此运行都赶不上截止期限：{note}",
    "compare.payback_months": "{months:,.1f} 个月",
    "compare.never": "无法回本",
    "compare.not_applicable": "不适用",
    "compare.work_limit": "在计算限额内未找到方案（可调高 solver.work_limit）",
    "compare.period_budget": "{label} 期间的预算 {budget}",
    "compare.conflicts": "与以下条件冲突：{said}",
    "compare.no_plan_here": "任务放在此处时，没有满足场景规则的方案",
    "compare.held_purchase": "采购 {n} 次：{gpus} 张卡，持有 {months:,.1f} 个月",
    "compare.unit_d": "{n:g} 天",
    "compare.unit_h": "{n:g} 小时",
    "compare.held_one": "1 个预留期：{periods} × {unit}",
    "compare.held_each": "{n} 个预留期：每个 {periods} × {unit}",
    "compare.held_sizes": "{n} 个预留期：分别 {sizes} 个 {unit} 周期",
    "compare.hours": "{h:,.1f} 小时",
    "compare.days": "{d:,.1f} 天",
    "compare.day": "第 {d:,.1f} 天",
    "compare.mark_cheapest": " *",
    "compare.mark_best": "（最优方案）",
    "compare.mark_unproven": "（未证明最优）",
    "compare.legend": "带 * 者费用最低；（最优方案）为整体最优方案的选择；"
                      "任务费用：该任务的账单及其在所占预留/采购资源中的分摊；"
                      "与最优方案相比：整个方案的费用与最优方案之差",
    "compare.row_note": "{platform}（{billing}）：{note}",
    "compare.row_cannot": "{platform}（{billing}）：不可行：{reason}",
    "compare.over": "（共 {n} 次运行，{first} 至 {last}）",
    "compare.best": "；最优方案 {cost}",
    "compare.title": "{job}{over}：逐一强制使用每种计费方式和平台{best}",
    "compare.col.billing": "计费方式",
    "compare.col.platform": "平台",
    "compare.col.GPUs": "显卡",
    "compare.col.job cost": "任务费用",
    "compare.col.plan vs best": "与最优方案相比",
    "compare.col.run time": "运行时长",
    "compare.col.last ends": "最晚结束",
    "compare.col.exp. interr.": "预计中断",
    "compare.col.holds": "占用资源",
    "compare.col.payback": "回本周期",
    "p90.misses": "按 P90 时长赶不上 deadline/{job}：若该任务及其前序任务都按 P90 时长运行，{job} "
                  "将在{end}结束，晚于截止期限{deadline}；排期按 {confidence:.0%} 把握编排",
    "p90.none": "在场景的规则和预算下，没有能按 P90 时长满足全部截止期限的方案（或在给定的计算量内"
                "未找到）",
    "p90.plan": "方案 {rank}",
    "p90.holding": "按 P90 时长仍满足全部截止期限的最低费用方案是{what}：费用 {extra}"
                   "（{share:+.1%}），第 {end:,.1f} 小时完成",
    "own.unit": "（{n} 台，每台 {per} 张）",
    "own.units": "（{n} 台，每台 {per} 张）",
    "own.per_hour": "每交付 1 卡时 {cost}",
    "own.no_hours": "未交付任何卡时",
    "own.held": "采购 {gpus} 张 {what}{unit}：持有期内 {held:,.0f} 卡时的利用率为 {share:.0%}（方案"
                "中的任务使用 {used:,.0f} 卡时）；含电力、人员、机房和维保共 {cost}，{per_h}；"
                "规划期末残值 {worth}（{rule}）",
    "own.only_bought": "按规则没有任何租用资源能运行 {jobs}，采购是唯一途径，不适用回本测算",
    "own.only_way": "不采购就没有满足场景规则的方案，采购是唯一途径",
    "own.buying_only": "采购 {price} 的硬件：{why}",
    "own.against": "改为租用的最优方案费用 {cost}，第 {day:,.1f} 天完成",
    "own.never": "采购 {price} 的硬件相对租用无法回本：{against}，低于仅自有硬件的运行成本"
                 "（{running}）",
    "own.within": "在其 {life:g} 个月使用寿命之内",
    "own.beyond": "超出其 {life:g} 个月使用寿命",
    "own.after_held": "晚于本方案持有的 {months:,.0f} 个月，{within}",
    "own.pays_back": "采购 {price} 的硬件按本方案的使用量，回本周期为 {months:,.1f} 个月，"
                     "{within}：{against}；自有硬件每月节省租金 {saving}",
    "own.horizon_saves": "在方案的规划期内，采购比租用节省 {amount}（按场景的预算口径：{basis}）",
    "own.horizon_costs": "在方案的规划期内，采购比租用多花 {amount}（按场景的预算口径：{basis}）",
    "own.basis": "计入购置价的 {share:.0%}，残值抵扣",
    "own.spans": "工作跨度 {months:,.1f} 个月",
    "own.renting_dearer": "租用 {gpu} 花费 {spent}，超过采购所用 {most} 张卡的 {buy}",
    "own.not_weighed": "未考虑采购：{reasons}。可设置 policy.consider_purchase: true，或添加 "
                       "purchase: 报价以纳入比较（`plan catalog purchases` 列出可采购的硬件）",
    "own.no_buying_plan": "未采购：没有满足场景规则（预算、截止期限）的采购方案",
    "own.no_buying_plan_because": ("未采购：任何采购方案都违反：{said}；"
                                   "最便宜的采购（{what}）单独计算需 {cost}"),
    "own.buying_dearer": "未采购：最优的采购方案（{what}）比本方案（租用）多花 {extra}",
    "own.not_bought": "未采购：{line}",
}
