"""`plan estimate` 表格的中文（planner/cli/estimate_table.py）；键与 `estimate_en` 一一对应。

Layout fields (tp, pp, zero, micro_batch ...) are flags and stay as they are; so do ids, units and
the p10-p90 band's name."""

from __future__ import annotations

ESTIMATE: dict[str, str] = {
    "estimate.headline": "{model} {method}，{gpus} 张 {gpu}（每节点 {per_node} 张，{fabric}）"
                         "{where}：{verdict}（{total:.1f} / {card:g} GiB；预留 {headroom:.0%} "
                         "余量后可用 {usable:.1f} GiB）",
    "estimate.fabric": "{kind} 每卡 {gbps:g} Gb/s",
    "estimate.on_platform": "，平台 {platform}",
    "estimate.fits": "放得下",
    "estimate.not_card": "超出显卡容量",
    "estimate.not_headroom": "显卡放得下，但占用了 {headroom:.0%} 的预留余量",
    "estimate.at_limit": "只能贴着显卡上限运行",
    "estimate.layout": "并行布局",
    "estimate.field": "字段",
    "estimate.value": "取值",
    "estimate.searched": "搜索得出",
    "estimate.derived": "推导得出",
    "estimate.hybrid_on": "on（每组 {group} 张，{replicas} 个副本）",
    "estimate.memory_title": "每卡显存（GiB），显卡共 {card:g} GiB",
    "estimate.part": "项目",
    "estimate.gib": "GiB",
    "estimate.of_card": "占显卡",
    "estimate.margin": "距可用上限的余量（预留 {headroom:.0%}）",
    "estimate.step_title": "每步耗时 {s:.3f} 秒",
    "estimate.seconds": "秒",
    "estimate.share": "占比",
    "part.weights": "权重",
    "part.gradients": "梯度",
    "part.optimizer": "优化器状态",
    "part.activations": "激活值",
    "part.other": "其他",
    "part.total": "合计",
    "part.compute": "计算",
    "part.recompute": "重计算",
    "part.tp_comm": "张量并行通信",
    "part.cp_comm": "上下文并行通信",
    "part.ep_comm": "专家并行通信",
    "part.dp_comm": "数据并行通信",
    "part.pp_bubble": "流水线气泡",
    "part.host": "主机开销",
    "estimate.throughput": "吞吐：{tps:,.0f} tokens/秒（{band}）",
    "estimate.band": "p10-p90 {lo:,.0f}-{hi:,.0f}；每卡 {per_gpu:,.0f}",
    "estimate.memory_band": "显存 p10-p90 {lo:.1f}-{hi:.1f} GiB",
    "estimate.model_tflops": "每卡模型算力 {tflops:.0f} TFLOP/s",
    "estimate.mfu": "MFU {mfu:.1%}",
    "estimate.mfu_causal": "（注意力只计因果的一半时为 {causal:.1%}）",
    "estimate.gflop": "每 token {gflop:.1f} GFLOP",
    "estimate.line_sep": "；",
    "estimate.run": "训练 {tokens} tokens：{wall}，{gpu_hours:,.0f} 卡时（{overhead}）",
    "estimate.wall": "实际耗时 {h:,.1f} 小时（p10-p90 {low:,.1f}-{high:,.1f}）",
    "estimate.overhead": "故障开销 {fraction:.1%}，每 {every_h:.2f} 小时存一次检查点，"
                         "预计中断约 {n:.1f} 次",
    "run.stack_new": "已说明训练栈是新的：整次训练按成熟训练栈的 {factor:.2f} 倍计（OPT-175B "
                     "首次在这一规模训练时作业可用率 59%，Llama 3 为 90%；假设两者只差在训练栈）",
    "run.stack_mature": "已说明训练栈是成熟的：按已在这一规模训练过的团队公开的整次训练计时"
                        "（Llama 2、Llama 3）",
    "memory.adam_bf16": "优化器 adamw-bf16：权重、梯度和 AdamW 的动量都用 BF16，不留 fp32 主副本"
                        "（torchtune 的默认做法）：每个训练参数 8 字节而不是 16 字节；小于 BF16 "
                        "精度的更新会丢失",
    "memory.lora": "LoRA：基座权重冻结（不为它们保存梯度和优化器状态）",
    "memory.kbit_upcast": "Hugging Face 模块上的 QLoRA：peft 的 prepare_model_for_kbit_training "
                          "会把嵌入层、输出层和归一化层转成 fp32，所以残差流和每个检查点层的输入"
                          "也是 fp32；融合算子（--kernels fused：Unsloth、Liger）或纯 BF16 训练"
                          "（--optimizer adamw-bf16，torchtune）能让它们保持 16 位",
    "memory.what_inputs": "检查点层输入",
    "memory.what_saved": "已保存激活值",
    "memory.left_on_gpu": "；其余 {gib:.1f} GiB 留在显卡上",
    "memory.host_activations": "激活值放在主机内存：每卡 {gib:.1f} GiB 的{what}（每台服务器每卡"
                               "需有这么多空闲内存；每卡最多 {host_cap:g} GiB，{said}{left}）",
    "memory.freed": "（在反向传播到达各层之前释放：峰值取损失计算与正在重计算或取回的层"
                    "（连同其聚合的权重）两者中的较大者）",
    "memory.holds_chunk": "每次一块 token 的 logits 及其输入的梯度",
    "memory.holds_logits": "logits（每元素 {bytes:g} 字节）",
    "memory.allocator": "（另有 {gib:.1f} GiB 由 PyTorch 缓存分配器占在升精度的 logits 旁边："
                        "一块 fp32 logits 大小的内存）",
    "memory.loss": "显存：“其他”一项含损失计算的 {gib:.1f} GiB{allocator}，用于{holds}"
                   "以及输出层的输入{freed}{leaner}",
    "memory.kept_hidden": "最终隐藏状态",
    "memory.kept_logits": "输出 logits",
    "memory.kept": "显存：“其他”一项含 torch 流水线在最后一段保留的 {gib:.1f} GiB {kept}："
                   "{n} 个微批次的输出要留到这一步结束，供 step() 合并返回",
    "memory.leaner_chunked": "，分块交叉熵（--loss chunked）每元素只占 {bytes:g} 字节",
    "memory.leaner": "；融合线性交叉熵（--loss fused，作业里写 loss: fused）从不保存完整的 "
                     "logits{chunked}",
}
