"""布局固定字段被拒绝的原因（planner/estimate/spec_check.py 与 estimator.py，即 `plan estimate` 的
--tp、--cp 等提示）的中文；键与 `refusals_en` 一一对应。"""

from __future__ import annotations

REFUSALS: dict[str, str] = {
    'refusal.at_any_tp': '{gap}（任何张量并行规模下均如此）',
    'refusal.at_least_one': '至少为 1，收到 {value}',
    'refusal.batch_dp': '{batch} 不是 dp = {dp} 的整数倍',
    'refusal.bridge_zero': '{why}；请用 zero 0 或 1，或改用 framework fsdp 或 deepspeed',
    'refusal.capacity_below_one': '须为不小于 1 的数（1 即均匀分配；低于 1 时即使负载均匀也会丢弃 '
                                  'token），收到 {cf:g}',
    'refusal.capacity_dense': '{cf:g} 用于填充路由专家；此模型是稠密模型',
    'refusal.capacity_most': '至多为 {most:g}（{experts} 个专家、top-{top_k} 路由：每个 token 都能'
                             '进入每个专家），收到 {cf:g}',
    'refusal.cp_seq_len': '{cp} 不能整除序列长度 {seq_len}',
    'refusal.cp_sequence_split': '{why}，而序列长度为 {seq_len}',
    'refusal.ep_adapter': 'LoRA 和 QLoRA 在此保持每层的专家完整（专家并行只为全参训练建模），收到 '
                          '{ep}',
    'refusal.ep_dense': '{ep} 个专家并行分组需要 MoE 模型；此模型是稠密模型',
    'refusal.ep_dp': '{ep} 不能整除 {dp} 个数据并行分组',
    'refusal.ep_experts': '{ep} 不能整除模型的 {experts} 个专家',
    'refusal.field': '{field}：{problem}',
    'refusal.hybrid_group': '{group} 必须整除 {ranks} 个数据与上下文并行分组，大于一且小于全部，并'
                            '包含完整的上下文并行组（每组 {cp} 个）',
    'refusal.hybrid_refused': '混合分片是 FSDP 的功能，需 ZeRO 2 或 3，且不带 CPU 卸载或专家并行；'
                              '收到 {framework} ZeRO-{zero}',
    'refusal.interleave_batch': 'Megatron 的交错流水线调度要求每步至少 pp = {pp} 个微批次；全局批'
                                '次 {gb} 分到 dp = {dp} 上至多只有 {most} 个',
    'refusal.interleave_micro': 'Megatron 的交错流水线调度要求每步至少 pp = {pp} 个微批次，收到 '
                                '{micro_batches}',
    'refusal.interleave_pp': '交错流水线需要 pp > 1',
    'refusal.joined': '{problems}',
    'refusal.left_out': '（{reason}）',
    'refusal.lora_rank_needed': '{method} 需要至少为 1 的秩，收到 {rank}',
    'refusal.lora_rank_only': '只适用于 {methods}，不适用于 {method}',
    'refusal.micro_exceeds': '{micro_batch} 超过每个数据并行副本每步分得的 {share} 条序列',
    'refusal.micro_uneven': '{framework} 要求微批次 × 梯度累积步数 = 每个数据并行副本每步分得的 '
                            '{share} 条序列（末个微批次不能更小），而 {micro_batch} 不能整除它',
    'refusal.no_fabric': '{gpus} 张卡需要 {nodes} 个节点，但节点之间没有互联网络',
    'refusal.no_peak': '{gpu}（{architecture} 架构）没有 {precision} 峰值算力；它支持 {have}',
    'refusal.no_stack_eager': '{why}；{stacks}无法在 cp={cp} 时运行 eager 注意力{left_out}；请用 '
                              'flash 注意力、cp 1 或 framework deepspeed',
    'refusal.no_stack_ep': '{why}；没有框架能以 ep={ep} 运行 {method}{left_out}',
    'refusal.no_stack_selective': '{why}；没有框架能以选择性重计算运行 {method}{left_out}；请用 '
                                  'full 或 none',
    'refusal.no_stack_split': '{why}；没有框架能以 {field}={value} 运行 {method}{left_out}',
    'refusal.not_one_of': '{value} 不在可选值之中（{names}）',
    'refusal.offload_fixed': '{gap}；该任务固定了 {recompute}，且 tp={tp} pp={pp} cp={cp}{ep}',
    'refusal.or_sep': ' 或 ',
    'refusal.pipeline_fp8': '{why}；请用 precision bf16、pp 1 或 framework megatron',
    'refusal.pp_layers': '{pp} 个流水线阶段，但只有 {layers} 层',
    'refusal.precision_aware_adapter': '精度感知优化器是 Megatron 的，而为 {method} 在 Megatron 上'
                                       '写出的唯一框架（LLaMA-Factory 的 Megatron-Bridge 后端）没'
                                       '有它；请用 adamw',
    'refusal.precision_aware_zero': '精度感知优化器是 Megatron 的分布式优化器：它需要 framework '
                                    'megatron 配 zero 1（或只有一个数据并行分组），收到 '
                                    '{framework} 配 zero {zero}{qlora}',
    'refusal.pure_bf16_zero0': 'DeepSpeed 上的 adamw-bf16 需要 ZeRO 阶段 1-3（'
                               'bf16_master_weights_and_grads），收到 zero 0',
    'refusal.qlora_megatron': 'megatron 没有 4 位 QLoRA 路径；请用 fsdp 或 deepspeed',
    'refusal.qlora_no_megatron': '，且 QLoRA 没有 Megatron 路径',
    'refusal.recompute_layers_dpo': '分块重计算是 Megatron 的功能，而导出支持的 Megatron 框架都不'
                                    '训练 DPO（LLaMA-Factory 的 Megatron-Bridge 后端只训练 pt 和 '
                                    'sft）；请用 --recompute full，或为自有的 Megatron DPO 指定 '
                                    'framework megatron',
    'refusal.recompute_layers_needs': '每个模型块重计算 {layers} 层是 Megatron 的分块重计算：它需'
                                      "要 recompute 'full'、framework megatron，且至少 1 层",
    'refusal.recompute_layers_qlora': '分块重计算是 Megatron 的功能，而 Megatron 没有 4 位 QLoRA '
                                      '路径；请用 --recompute full',
    'refusal.recompute_layers_range': '每个模型块重计算 {layers} 层是 Megatron 的分块重计算：取值'
                                      '为 1 到模型的 {model_layers} 层，并需 recompute full 和 '
                                      'framework megatron',
    'refusal.ring_eager': '{why}；收到 {framework}，cp 为 {cp}，且使用 eager 注意力',
    'refusal.share_over_dp': 'dp = {dp} 时为 {share}',
    'refusal.shares_undivided': '{framework} 要求微批次 × 梯度累积步数 = 每个副本分得的全局批次（'
                                '{over}），而 {micro_batch} 不能整除其中任何一个',
    'refusal.split_gpus': '{tp} × {pp} × {cp} × {dp} = {gpus}，但集群有 {cluster_gpus} 张卡',
    'refusal.stacks_searched': '为 {method} 搜索的框架',
    'refusal.state_offload': '模型状态的 CPU 卸载是 FSDP 或 DeepSpeed 上 ZeRO-3 的功能，不带张量或'
                             '流水线并行，且优化器在 CPU 上更新（不能是 8 位 AdamW；DeepSpeed 上须'
                             '为其 CPU Adam 所运行的 AdamW）；收到 {framework} zero {zero} tp '
                             '{tp} pp {pp} optimizer {optimizer}',
    'refusal.tp_gpus': '{tp} 不能整除 {gpus} 张卡',
    'refusal.tp_heads': '{tp} 不能整除 {heads} 个注意力头',
    'refusal.tp_kv': '{tp} 不能整除 {kv_heads} 个 KV 头',
    'refusal.tp_kv_multiple': '{tp} 既不是 {kv_heads} 个 KV 头的约数，也不是其倍数',
    'refusal.tp_pp_cp_gpus': 'tp × pp × cp = {tp} × {pp} × {cp} 不能整除 {gpus} 张卡',
    'refusal.tp_pp_gpus': 'tp × pp = {tp} × {pp} 不能整除 {gpus} 张卡',
    'refusal.ulysses_fp8': '{why}；请用 precision bf16、cp 1 或 framework megatron 或 fsdp',
    'refusal.zero_pipelined': '（流水线并行下，pp={pp}：其流水线引擎拒绝 ZeRO-2 和 ZeRO-3）',
    'refusal.zero_range': '须为 0、1、2 或 3，收到 {zero}',
    'refusal.zero_stages': '{framework} 只支持 ZeRO 阶段 {stages}{pipelined}，不支持 {zero}',
}
