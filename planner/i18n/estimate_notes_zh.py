"""估算附注的中文（键与 `estimate_notes_en` 一一对应）。

Layout fields (tp=2, pp, zero=1), stacks and flags (megatron, nvlink, --loss fused), ids and units
stay as they are."""

from __future__ import annotations

NOTES: dict[str, str] = {
    "enote.searched": "在 {n} 种布局中搜索了 {fields}；选定 {layout}",
    "enote.global_batch": "全局批量 {batch} 条序列，按默认规则取（{rule}；请改成你训练配方的取值）",
    "enote.rule_tokens": "此规模的模型每步约 {tokens} tokens",
    "enote.rule_sequences": "每步 {n} 条序列",
    "enote.no_platform": "未指定平台：假设节点之间为 {kind}，每卡 {gbps:g} Gb/s",
    "enote.host_bound": "受主机限制：每步有 {share:.0%} 的时间在等 CPU 启动 eager 栈的算子（微批次"
                        "太小）；更大的微批次或融合算子（--kernels fused，作业里写 kernels: fused）"
                        "能更好地利用显卡",
    "enote.model_assumed": "模型卡 {model} 是假设值：{assumption}",
    "enote.gpu_assumed": "显卡 {gpu} 的参数含假设值：{assumption}",
    "enote.moe_split": "按 ep={ep} 切分",
    "enote.moe_no_ep": "不做专家并行",
    "enote.dropless": "假设无丢弃路由（容量因子 1）且各专家负载均匀",
    "enote.capacity": "容量因子 {cf:g}：每个被路由专家的输入补齐到均匀切分的 {cf:g} 倍，因此其 "
                      "FLOPs、已保存激活值和 all-to-all 字节数都是 {cf:g} 倍（超出专家容量的 token "
                      "跳过该专家）；模型 FLOPs 和 MFU 只计有效计算；假设负载均匀",
    "enote.moe": "MoE：显存中保存全部专家（{split}），FLOPs 只计激活参数；all-to-all 分发/合并"
                 "不被掩盖；{routing}",
    "enote.moe_ep_nodes": "MoE：ep={ep} 跨节点：其 all-to-all 按 Megatron 默认分发器的方式计费"
                          "（每个被路由专家发一份，16 位，不被掩盖）；DeepSeek-V3 的训练中"
                          "每个 token 每节点只发一次、最多发往 4 个节点，分发用 FP8，并把 "
                          "all-to-all 藏在计算之后（DeepEP、DualPipe；DeepSeek-V3 技术报告第 "
                          "3.2-3.3 节）：这些未建模，所以这类训练栈会比估算更快",
    "enote.attention_approx": "注意力按通用多头注意力的形状近似：{attention}...",
    "enote.adapters": "LoRA/QLoRA：基座冻结，反向传播只计算激活值的梯度（每 token 约 4N 而不是 "
                      "6N FLOPs）",
    "enote.method.sft": "sft 即全参数微调，序列打包（样本拼接到 seq_len，不补齐）；不打包时补齐到 "
                        "seq_len 会多耗 token",
    "enote.method.dpo": "DPO：策略模型在选中和被拒的回答上训练（两者都计入 token），另有一份冻结的 "
                        "16 位参考权重（只做前向：每 token 多 2N FLOPs，每参数多 2 字节）",
    "enote.method.lora_dpo": "LoRA-DPO：参考模型是关掉适配器的基座（不另存一份权重）；每 token "
                             "多一次前向传播（多 2N FLOPs）",
    "enote.method.qlora_dpo": "QLoRA-DPO：参考模型是关掉适配器的 4 位基座（不另存一份权重）；每 "
                              "token 多一次前向传播（多 2N FLOPs）及其反量化",
    "enote.qlora": "QLoRA：基座权重用 NF4 加双重量化（每参数 4.127 位）；嵌入层和输出层保持 16 位；"
                   "反量化要占用显存带宽",
    "enote.tp_spans": "tp={tp} 跨节点：其 all-reduce 以 {gbps:g} GB/s 运行（{bottleneck}）",
    "enote.dp_group": "{n} 卡的数据并行组：瓶颈为 {bottleneck}，每个方向 {gbps:g} GB/s{spread}",
    "enote.dp_one_nic": "（每节点一个成员，各用自己的 {fabric:g} Gb/s 网卡）",
    "enote.dp_nics": "（每节点 {nics} 块网卡，每块 {fabric:g} Gb/s，NCCL 把环分布到所有网卡上）",
    "enote.hsdp": "混合分片（HSDP）：状态在每个节点的 {group} 个数据并行 rank 之间分片"
                  "（{shard_link} {shard_gbps:g} GB/s），共保留 {replicas} 份；各层在节点内"
                  "聚合、梯度在节点内 reduce-scatter，每个梯度分片再跨节点 all-reduce"
                  "（{replicate_link} {replicate_gbps:g} GB/s）",
    "enote.framework": "框架 {framework}：{how}",
    "enote.megatron_fsdp": "Megatron-FSDP（{sharding}）：分片的 {grads} 梯度每个微批次做一次 "
                           "reduce-scatter，{gathers}",
    "enote.gathers_layers": "每个微批次逐层聚合参数",
    "enote.gathers_once": "更新后的参数每步聚合一次",
    "enote.precision_aware": "精度感知：bf16 梯度缓冲区，fp32 主权重存为 bf16 权重加 16 位余数",
    "enote.grad_buffers": "{grads} 梯度缓冲区",
    "enote.distributed_optimizer": "分布式优化器，{buffers}，梯度每步归约一次",
    "enote.deepspeed": "ZeRO 第 2/3 阶段每个微批次归约一次梯度",
    "enote.fsdp": "每个微批次逐层聚合参数，预取与计算重叠",
    "enote.eager": "kernels eager：各层以 PyTorch 模块逐个算子运行（Hugging Face、torchtune、"
                   "peft）：其已保存激活值、peft 的类型转换和主机的算子启动按在 H200 上的实测计"
                   "（bench/device/README.md）；torch.compile、Liger 或 Unsloth 请用 --kernels "
                   "fused",
    "enote.loss": "损失 {loss}：{kind}；训练时须使用这种损失",
    "enote.loss_kind.chunked": "分块交叉熵，保存 bf16 logits 但从不保存其 fp32 副本（flash-attn "
                               "的交叉熵、torchtune 编译后的分块损失）",
    "enote.loss_kind.fused": "融合线性交叉熵，从不保存完整的 logits（Liger 的，或 Unsloth 的 Cut "
                             "Cross-Entropy）",
    "enote.kv_replicated": "tp={tp} 大于 {kv} 个 KV 头：KV 投影被复制",
    "enote.uneven_stages": "pp={pp} 不能整除 {layers} 层：各段不均，最大的一段有 {largest} 层",
    "enote.last_micro_batch": "微批次：每个副本的 {sequences} 条序列分为 {full} 个 {mb} 条的微批次"
                              "和最后一个 {last} 条的微批次，后者只有完整微批次 {last}/{mb} 的计算"
                              "量，却只能掩盖同样比例的集合通信，且启动同样多的算子",
    "enote.seq_beyond": "seq_len {seq_len} 超过模型的 {positions} 个位置（上下文扩展）",
    "enote.fp8": "fp8：线性层用 FP8（Transformer Engine 的做法），注意力用 BF16；MFU 以 FP8 峰值"
                 "为基准",
    "enote.block_recompute": "重计算：Megatron 的 block 方式，每个模型块 {chunk} 层中重计算 {n} "
                             "层，其余层保留激活值（--recompute-granularity full "
                             "--recompute-method block --recompute-num-layers {n}）",
    "enote.full_offload": "重计算：full，每层的检查点输入放在主机内存，重计算时再拷回（Unsloth "
                          "的梯度检查点；LLaMA-Factory use_unsloth_gc: true）；只有别的都放不下"
                          "时搜索才会选它",
    "enote.activation_offload": "重计算：激活值卸载到主机内存，即 torchtune 的做法"
                                "（enable_activation_offloading）；plan export 支持的训练栈都"
                                "没有这一功能，所以只有别的都放不下时搜索才会选它",
    "enote.cpu_offload": "CPU 卸载（ZeRO-3 {framework}）：只在不卸载就放不下时选用；CPU 上的"
                         "优化器步骤按假设的每卡 {cpu_gbps:g} GB/s 主机内存流量计时（无实测），"
                         "PCIe 按每卡每个方向 {pcie_gbps:g} GB/s 计",
    "enote.flash_assumed": "{note}；假设使用 flash attention",
    "enote.pipeline": "流水线（{schedule}，每步 {mb} 个微批次）：第 {stage} 段（共 {p} 段）显存"
                      "最高，含 {total} 层中的 {layers} 层，同时保存 {held:.3g} 个微批次的激活值",
    "enote.interleaved": "交错式 1F1B，每段 {v} 个块",
    "enote.1f1b": "1F1B",
    "enote.platform_limit": "{platform} 每个作业最多 {most} 张卡",
    "enote.at_limit": "贴着显卡上限：PyTorch 留有余地预留的峰值 {total:.1f} GiB 超过了 {card:g} "
                      "GiB 的显卡；其缓存分配器会先释放缓存块再重试，然后才报错，所以训练实际约需 "
                      "{floor:.1f} GiB（每次重试都会让显卡停顿：更慢；方案不会这样运行）",
    "enote.nothing_fits": "都放不下：显存最省的布局也需要 {total:.1f} GiB，而可用只有 "
                          "{usable:.1f} GiB（{card:g} GiB 减去 {headroom:.0%} 的预留余量）"
                          "{within}",
    "enote.within_card": "；它放得下显卡本身，但方案不会贴得这么近运行（--headroom）",
    "enote.eager_on_megatron": "{stated} 说的是 PyTorch 训练栈（fsdp、deepspeed）如何运行各层；"
                               "选定的布局是 Megatron 的，它总是运行融合算子（用 {keep} 可保持 "
                               "eager 训练栈）",
    "enote.keep_eager": "--framework fsdp 或 deepspeed",
    "advice.fits_with": "改用 {flag} 就{fits}：{layout}，{gib:.1f} GiB",
    "advice.fits": "放得下",
    "advice.fits_card": "显卡放得下，但占用了预留余量",
    "advice.setting_why": "{setting}（{why}）",
    "advice.both": "{settings}（Liger 或 Unsloth 两者都用）",
    "advice.recompute_searched": "搜索重计算方式（不用 --recompute {recompute}）",
    "advice.megatron_fsdp": "--framework megatron --zero {zero}（Megatron-FSDP：{sharded}在数据"
                            "并行 rank 之间分片；Llama 3 405B 的数据并行就分片了其梯度和优化器"
                            "状态）",
    "advice.sharded_grads": "梯度",
    "advice.sharded_both": "梯度和权重",
    "advice.cpu_offload_flag": "--cpu-offload on（ZeRO-3 状态放在主机内存）",
    "advice.without_offload": "不卸载时，{setting}（{why}）放得下：{layout}，{gib:.1f} GiB，"
                              "{tps:,.0f} tokens/秒，卸载布局为 {offloaded:,.0f}",
    "advice.offload_faster": "{setting}（ZeRO-3，状态放在主机内存）估算快 {gain:.0%}：{layout} "
                             "下 {tps:,.0f} tokens/秒；未选用是因为搜索只在不卸载就放不下时才"
                             "卸载：这一速度依赖假设的主机数据（CPU 优化器步骤按每卡 {cpu_gbps:g} "
                             "GB/s 主机内存流量、每卡 {host_gib:g} GiB 主机内存计，无实测）；"
                             "依赖它之前请先实测一步",
    "advice.cannot_offload": "--cpu-offload on：找到的布局无法卸载（需要 FSDP 或 DeepSpeed 上的 "
                             "ZeRO-3、tp = pp = 1，以及有 CPU 步骤的优化器）；按不卸载估算",
    "advice.host_refused": "--cpu-offload on：{short}，因此没有放得下的卸载布局（每卡内存更多的"
                           "平台或资源池也许可以；自有资源池的 host_memory_gib_per_gpu 写明其服务器"
                           "的内存）；按不卸载估算",
    "memory.shortfall_body": "每卡 {host_gib:.1f} GiB 的模型状态超过每卡 {host_cap:g} GiB 的空闲"
                             "主机内存（{said}），因此仍留在显卡上",
    "saver.precision_aware": "Megatron 的精度感知优化器：bf16 梯度，fp32 主权重存为 16 位余数，"
                             "每参数 14 字节而不是 18 字节，NeMo 的性能配方就这样做",
    "saver.paged_adapters": "分页 8-bit AdamW，即 bitsandbytes 中 QLoRA 配方的优化器：每个适配器"
                            "参数的状态 2 字节而不是 12 字节，显卡满时分页到主机内存",
    "saver.adamw_bf16": "纯 BF16 AdamW，torchtune 的默认做法：权重、梯度和动量都用 bf16，每参数 "
                        "8 字节而不是 16 字节；不留 fp32 主副本，小于 BF16 精度的更新会丢失",
    "saver.paged_full": "分页 8-bit AdamW 在反向传播中对 bf16 权重逐层更新，即 torchtune 的低显存"
                        "全参数微调配方：每参数 2 字节优化器状态而不是 12 字节，一次只保留一层的"
                        "梯度；不留 fp32 主副本，更新会舍入到 bf16",
    "saver.loss_fused": "融合线性交叉熵，从不保存完整的 logits：Liger 的，或 Unsloth 的 Cut "
                        "Cross-Entropy；torchtune 那样的分块损失只省掉其 fp32 副本",
    "saver.kernels_fused": "融合或编译后的层：torch.compile、Liger 或 Unsloth 只保留 eager "
                           "激活值的 0.7 倍",
    # 估算缓存不可用（planner/estimate/store.py）
    "store.unsafe": "估算缓存 {place} {reason}，未使用（它必须只属于当前用户：对该文件夹执行 chmod "
                    "700，或设置 {env}）",
    "store.unchecked": "无法检查（{error}）",
    "store.symlink": "是符号链接",
    "store.other_owner": "属于其他用户",
    "store.others_write": "其他用户可以写入",
}
