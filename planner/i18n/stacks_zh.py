"""训练框架无法运行的设置（plan.models.stacks）、布局搜索略去布局的原因，以及 `plan estimate`
在没有有效布局时的提示的中文；键与 `stacks_en` 一一对应。"""

from __future__ import annotations

STACKS: dict[str, str] = {
    "stack.megatron_cp_sequence": "Megatron 的上下文并行要求序列长度是 2 × cp 的整数倍",
    "stack.ring_needs_flash": "上下文并行通过 flash 内核运行环形注意力（Megatron 依靠 "
                              "Transformer Engine 的融合或 flash 注意力，其自带注意力要求 cp = 1；"
                              "torchtitan 和 accelerate 依靠 SDPA 的 flash 或 efficient 后端）；"
                              "只有按注意力头切分的 DeepSpeed Ulysses 能在 cp > 1 时使用 "
                              "eager 注意力",
    "stack.ulysses_fp8": "DeepSpeed 的上下文并行（Ulysses，即其 JSON 中的 "
                         "`sequence_parallel_size`）由 deepspeed 导出写出，而该 JSON 没有 FP8 "
                         "设置；accelerate 虽经 Transformer Engine 在 DeepSpeed 上运行 FP8，却不在 "
                         "DeepSpeed 上切分序列（其环形注意力需要 FSDP2 插件）：plan export 支持的"
                         "框架中，没有一个能在 DeepSpeed 上以 cp > 1 运行 FP8",
    "stack.pipeline_fp8": "DeepSpeed 的流水线引擎由 deepspeed 导出写出，而该 JSON 没有 FP8 设置；"
                          "accelerate 虽经 Transformer Engine 在 DeepSpeed 上运行 FP8，却不做流水线"
                          "并行：plan export 支持的框架中，没有一个能在 DeepSpeed 上以 pp > 1 运行 "
                          "FP8",
    "stack.experts_deepspeed": "DeepSpeed 只能通过模型代码中的 DeepSpeed-MoE 层把专家分到多张"
                               "卡上，而没有任何导出会写出这些层（Megatron、torchtitan 以及 "
                               "LLaMA-Factory 的 Megatron-Bridge 后端可以切分专家：请用 framework "
                               "megatron 或 fsdp）",
    "stack.experts_torchtitan": "FSDP 系列框架中只有 torchtitan 能把专家分到多张卡上"
                                "（expert_parallel_degree），但它没有 DPO 损失，且只以 bf16 或 fp8 "
                                "精度用 AdamW 或 Adam 训练",
    "stack.pure_bf16_precision": "adamw-bf16 是纯 BF16 训练（权重与动量均为 bf16）：请用 precision "
                                 "bf16，而非 fp16 或 fp8（plan export 支持的框架中，只有 DeepSpeed "
                                 "能在纯 BF16 权重上运行 FP8 矩阵乘，且仅限 ZeRO 1-3）",
    "stack.ulysses_heads": "DeepSpeed 的 cp 是 Ulysses，它给每张卡分配完整的注意力头：每个张量并行"
                           "分组的 {heads} 个头不能被 cp = {cp} 整除",
    "stack.loss_not_on_megatron": "{loss} 是 PyTorch 系框架（fsdp、deepspeed）的损失实现；Megatron "
                                  "的词表并行交叉熵需要完整的 logits：请用 loss plain，或改用 "
                                  "framework fsdp 或 deepspeed",
    "stack.not_on_megatron": "{optimizer} 是 Megatron-LM 不支持的 PyTorch 优化器（bitsandbytes、"
                             "Adafactor、纯 BF16 AdamW；Megatron 的优化器为 adamw、sgd 和 "
                             "adamw-precision-aware）：请用 framework fsdp 或 deepspeed",
    "stack.bridge_zero": "Megatron 上的 LoRA 经 LLaMA-Factory 的 Megatron-Bridge 后端训练，它只切分"
                         "优化器状态（ZeRO 0-1）；Megatron 上的 ZeRO-{zero} 属于 Megatron-FSDP，"
                         "没有任何 LoRA 导出运行它",
    "stack.hybrid_framework": "混合分片是 FSDP 的功能（HSDP）；框架 {framework} 没有它",
    "stack.hybrid_offload": "混合分片把分片留在显卡上；CPU 卸载却把整个分片移到主机内存",
    "stack.hybrid_zero": "混合分片在节点内切分 ZeRO-2/3 的状态；{field} 为 {zero}",
    "stack.no_interleaving": "DeepSpeed 的流水线引擎没有交错（虚拟）流水线阶段",
    "stack.job_optimizer": "优化器 {reason}，或不指定 framework",
    "stack.job_loss": "损失 {reason}",
    "stack.job_hybrid": "hybrid_shard：{reason}：请去掉 hybrid_shard 或修改该设置",
    "stack.job_optimizer_bf16": "优化器 {reason}",
    "reason.cannot_beat": "不可能快过已找到的最快布局",
    "reason.recompute_dominated": "被更优者取代（不需要重计算时，重计算只会增加时间）",
    "reason.zero3_dominated": "被更优者取代（ZeRO-2 放得下时，ZeRO-3 只会增加通信）",
    "reason.out_of_memory": "显存不足",
    "reason.interleaving": "Megatron 只有在每步的微批次数不少于 pp 时才能交错流水线",
    "reason.hybrid_split": "混合分片要求数据并行的各卡占满整数个节点，且每个节点至少两张",
    "reason.tp_nodes": "tp 跨越了多个节点",
    "reason.tp_heads": "tp 与注意力头数不匹配",
    "reason.batch_dp": "全局批次小于数据并行数",
    "reason.layer_split": "没有框架能这样切分各层（流水线阶段）",
    "estimate.no_layout": "--gpus：{model} 在 {gpus} 张 {gpu} 上没有有效的布局：{reasons}",
    "estimate.reason_one": "{reason}（{n} 个布局）",
    "estimate.reason_many": "{reason}（{n} 个布局）",
    "estimate.no_candidates": "没有候选布局",
    # planner/estimate/stack_rules.py 的缺口与搜索原因、检查点卸载（types.py）与
    # QLoRA 的 FP8（models/methods.py）
    'stack.activation_offload_pipeline': '不重计算而卸载激活是 torchtune 的策略，而 torchtune 不做'
                                         '流水线并行，也不切分专家',
    'stack.checkpoint_offload_cpu_adam': '卸载的检查点只在 LLaMA-Factory 的 Hugging Face 路径（'
                                         'use_unsloth_gc）上运行，它经 DeepSpeed 的 ZeRO-Offload '
                                         '卸载模型状态，且只能由其 CPU Adam 更新',
    'stack.checkpoint_offload_dp_only': '卸载的检查点只在 LLaMA-Factory 的 Hugging Face 路径（'
                                        'use_unsloth_gc）上运行，它没有张量、流水线、上下文或专家'
                                        '并行',
    'stack.checkpoint_offload_full_shard': '卸载的检查点只在 LLaMA-Factory 的 Hugging Face 路径（'
                                           'use_unsloth_gc）上运行，它的多卡分片经由 DeepSpeed：不'
                                           '支持混合分片',
    'stack.checkpoint_offload_not_megatron': 'full_offload（检查点放在主机内存：Unsloth 的梯度检查'
                                             '点、LLaMA-Factory 的 use_unsloth_gc）是 PyTorch 系框'
                                             '架的功能；Megatron 的激活卸载不能与重计算同用：请用 '
                                             'full 或 offload，或改用 framework fsdp 或 deepspeed',
    'stack.checkpoint_offload_pure_bf16': '卸载的检查点只在 LLaMA-Factory 的 Hugging Face 路径（'
                                          'use_unsloth_gc）上运行，它拒绝在 DeepSpeed ZeRO-3 上使'
                                          '用纯 BF16 AdamW（pure_bf16）',
    'stack.deepspeed_whole_layers': 'DeepSpeed 只能按整层做检查点（activation_checkpointing 没有选'
                                    '择性策略）',
    'stack.hybrid_one_click': '限定一键路径的团队使用 LLaMA-Factory，其分片经由 DeepSpeed，而 '
                              'DeepSpeed 没有混合分片',
    'stack.hybrid_one_node': '{gpus} 张卡放得进一个 {per_node} 卡节点：没有可供复制的其他节点',
    'stack.hybrid_tp_node': 'tp {tp} 使每个 {per_node} 卡节点内可分片的数据并行分组少于两个',
    'stack.left_out_checkpoint_offload': '卸载的检查点只在 PyTorch 系框架上运行',
    'stack.left_out_dpo': 'Megatron-Bridge 和 mcore_adapter 只训练 pt 和 sft，不训练 DPO',
    'stack.left_out_loss': '{loss} 损失只在 PyTorch 系框架上运行',
    'stack.left_out_no_ops': '没有运维能力的团队只按 PyTorch 系框架规划',
    'stack.left_out_optimizer': 'Megatron 没有 {optimizer}',
    'stack.left_out_qlora': 'Megatron 没有 4 位 QLoRA 路径',
    'stack.one_click_dp': '一键式 PyTorch 路径只做数据并行',
    'stack.op_level_adam_only': 'FSDP 上的选择性重计算是 torchtitan 的算子级策略，而 torchtitan 只'
                                '运行 AdamW 或 Adam',
    'stack.op_level_bf16': 'FSDP 上的选择性重计算是 torchtitan 的算子级策略，而 torchtitan 以 '
                           'bf16 训练，不支持 fp16',
    'stack.op_level_no_dpo': 'FSDP 上的选择性重计算是 torchtitan 的算子级策略，而 torchtitan 没有 '
                             'DPO 损失',
    'stack.op_level_no_lora': 'FSDP 上的选择性重计算是 torchtitan 的算子级策略，而 torchtitan 没有'
                              ' LoRA/QLoRA',
    'stack.op_level_offload': 'FSDP 上的选择性重计算是 torchtitan 的算子级策略，而 torchtitan 只在'
                              ' FSDP2 把模型状态分片到多于一张卡时才卸载它们',
    'stack.pp_adam_only': '唯一做流水线并行的 PyTorch 框架（torchtitan）只运行 AdamW 或 Adam',
    'stack.pp_bf16_only': '唯一做流水线并行的 PyTorch 框架（torchtitan）以 bf16 训练，不支持 fp16',
    'stack.pp_no_dpo': '没有 FSDP 系框架能以流水线并行训练 DPO（唯一做流水线并行的 torchtitan 没有'
                       ' DPO 损失）',
    'stack.pp_no_lora': '没有 FSDP 系框架能以流水线并行训练 LoRA/QLoRA',
    'stack.qlora_fp8': 'qlora 配 precision fp8：bitsandbytes 在每次矩阵乘时把 4 位基座反量化为 16 '
                       '位，因此没有框架能以 FP8 运行 QLoRA；请用 bf16（或 fp16），或用 lora 配 '
                       'fp8',
    'stack.replicated_split': '在复制式（ZeRO-0）数据并行旁使用张量或上下文并行：accelerate 的 '
                              'parallelism_config 拒绝这种组合，而能运行它的 torchtitan 没有适配器'
                              '或 DPO，且只以 bf16 或 fp8 用 AdamW 或 Adam 训练',
    'stack.tp_no_qlora': '没有框架能对 4 位 QLoRA 基座做张量并行',
    'stack.uneven_micro_batch': '{framework} 要求微批次 × 梯度累积步数 = 每个副本分得的全局批次',
}
