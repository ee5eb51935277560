"""`plan export` 的拒绝理由（某个框架无法表达的设置）、其前后打印的行，以及所引用的层切分原因的
中文；键与 `export_en` 一一对应。"""

from __future__ import annotations

EXPORT: dict[str, str] = {
    "export.accelerate_no_pipeline_parallelism_pp": "{stack}：不支持流水线并行（方案用了 pp={pp}）"
                                                    "；可试 --to megatron 或 --to torchtitan",
    "export.accelerate_no_recompute_fsdp_activation": "{stack}：没有 {recompute} 重计算（fsdp_acti"
                                                      "vation_checkpointing 只能整层开启或关闭检查"
                                                      "点）",
    "export.accelerate_tp_cp_replicated_unsharded": "{stack}：accelerate 的 parallelism_config 拒"
                                                    "绝在复制（不分片）的数据并行上叠加 tp 或 cp；"
                                                    "方案在 dp={dp} 上不分片地复制",
    "export.accelerate_context_parallelism_ring_attention": (
        "accelerate：上下文并行（环形注意力）需要 FSDP2 插件，而非 DeepSpeed"
    ),
    "export.accelerate_pure_bf16_adamw_adamw": "{stack}：纯 BF16 AdamW（adamw-bf16）以 bf16 训练，"
                                               "方案用的是 {precision}",
    "export.deepspeed_offload_param_parameters_cpu": "{stack}：offload_param（参数放在 CPU 内存）"
                                                     "只适用于 ZeRO-3，方案用的是 ZeRO-{zero}",
    "export.deepspeed_no_cpu_step_optimizer": "{stack}：ZeRO-Offload 下 {optimizer} 优化器没有 CPU"
                                              " 端的更新步骤（DeepSpeed 用自带的 CPU Adam 更新卸载"
                                              "的优化器状态）；优化器为 adamw 的任务可以导出",
    "export.deepspeed_pure_bf16_adamw_adamw": "{stack}：纯 BF16 AdamW（adamw-bf16）与 fp16 训练不"
                                              "兼容；请按 bf16 规划",
    "export.deepspeed_pure_bf16_adamw_bf16": "{stack}：纯 BF16 AdamW（bf16_master_weights_and_grad"
                                             "s、bf16_optimizer_states）需要 ZeRO 1-3，方案用的是 "
                                             "ZeRO-0",
    "export.deepspeed_pipeline_engine_has_no": "deepspeed：流水线引擎没有交错（虚拟）流水线阶段；"
                                               "方案用了 vpp={vpp}",
    "export.deepspeed_pipeline_parallelism_pp_runs": "deepspeed：流水线并行（pp={pp}）只能配合 ZeR"
                                                     "O 0 或 1 运行，方案用的是 ZeRO-{zero}",
    "export.deepspeed_deepspeed_json_has_no": "deepspeed：DeepSpeed 的 JSON 没有 fp8 设置（fp8 来"
                                              "自模型代码，例如 Transformer Engine）",
    "export.layout_no_block_recomputation_recomputes": "{stack}{where}：没有块重计算（方案在每个模"
                                                       "型分块中重算 {recompute_layers} 层、保留其"
                                                       "余层，即 Megatron 的 --recompute-method bl"
                                                       "ock）；可试 --to megatron",
    "export.layout_no_precision_aware_optimizer": "{stack}{where}：没有精度感知优化器（bf16 梯度，"
                                                  "fp32 主权重以 16 位余数保存：Megatron 的 --use-"
                                                  "precision-aware-optimizer）；可试 --to megatron",
    "export.layout_no_expert_parallelism_splits": "{stack}：不支持专家并行（方案把每层的 {experts}"
                                                  " 个专家分到 ep={ep} 张卡上；这里的 MoE 模型（Hu"
                                                  "gging Face 格式）在每张卡上保留全部专家）；可试"
                                                  " --to megatron、--to torchtitan 或 --to llamafa"
                                                  "ctory（Megatron-Bridge）",
    "export.layout_no_hybrid_sharding_shards": "{stack}{where}：不支持混合分片（方案把模型状态分片"
                                               "到每个节点的 {shard_group} 个数据并行分组上，并保"
                                               "留 {dp_replicate} 份副本，即 FSDP 的 HSDP）；可试 "
                                               "--to torchtitan、--to accelerate 或 --to torchrun-"
                                               "fsdp",
    "export.layout_gpus_do_not_split": "{gpus} 张卡不能均分到 {nodes} 个节点上；torchrun 要求每个"
                                       "节点的进程数相同",
    "export.layout_global_batch_not_multiple": "全局批次 {global_batch} 不是 dp = {dp} 的整数倍",
    "export.layout_hybrid_sharding_over": "方案在 {shard_group} 张卡上的混合分片不能整除其 dp={dp}"
                                          " × cp={cp}（ZeRO-{zero}）",
    "export.layout_offloads_model_states_cpu": "方案把模型状态卸载到 CPU 内存，这需要 FSDP 或 Deep"
                                               "Speed 下的 ZeRO-3 且 tp = pp = 1；其布局为 zero={z"
                                               "ero}、tp={tp}、pp={pp}、框架 {framework}",
    "export.llamafactory_no_cpu_offload_model": "llamafactory：{bridge}不支持把模型状态卸载到 CPU",
    "export.llamafactory_no_optimizer_optim_takes": "llamafactory：没有 {optimizer} 优化器（optim "
                                                    "可取 {optims}）{hint}",
    "export.llamafactory_no_recompute_hugging_face": "llamafactory：Hugging Face 路径上没有 {recom"
                                                     "pute} 重计算（只能整层开启或关闭梯度检查点）",
    "export.llamafactory_qlora_tensor_parallelism_not": "llamafactory：QLoRA 不支持张量并行（4 位"
                                                        "基座上无法使用 AutoTP）",
    "export.llamafactory_fp8_refused_quantization_bit": "llamafactory：设置 quantization_bit 时不"
                                                        "能用 fp8",
    "export.llamafactory_no_pure_bf16_adamw": "llamafactory：{bridge}没有纯 BF16 AdamW（pure_bf16"
                                              "；Megatron 保留 fp32 或 fp16 主权重）",
    "export.llamafactory_pure_bf16_refused_deepspeed": "llamafactory：pure_bf16 不能与 DeepSpeed Z"
                                                       "eRO-3 同用；可试 --to accelerate 或 --to d"
                                                       "eepspeed",
    "export.llamafactory_pure_bf16_adamw_bf16": "llamafactory：pure_bf16（adamw-bf16）以 bf16 训练"
                                                "，方案用的是 {precision}",
    "export.llamafactory_trains_stages_pt_sft": "llamafactory：{bridge}只训练 pt 和 sft 阶段，不支"
                                                "持 {stage}（{method}）；请不用上述设置重新规划，"
                                                "或改在 fsdp 或 deepspeed 上规划",
    "export.llamafactory_qlora_needs_megatron_bridge": "llamafactory：带有{bridge_needs}的 QLoRA "
                                                       "需要 Megatron-Bridge 后端，而它不支持量化",
    "export.llamafactory_shards_optimizer_state_zero": "llamafactory：{bridge}只切分优化器状态（Ze"
                                                       "RO-1），方案用的是 ZeRO-{zero}",
    "export.llamafactory_no_activation_checkpoint_offloading": (
        "llamafactory：Megatron-Bridge 后端不支持卸载激活或检查点"
    ),
    "export.llamafactory_bridge_split": "llamafactory：{bridge}：{split}",
    "export.megatron_no_dpo_loss_frozen": "megatron：没有 DPO 损失或冻结的参考模型（{method}）；可"
                                          "试 --to llamafactory（stage dpo）",
    "export.megatron_pretrain_gpt_py_has": "megatron：pretrain_gpt.py 不支持 LoRA/QLoRA（{method}"
                                           "）；PEFT 在 Megatron-Bridge/NeMo 中（可试 --to llamafa"
                                           "ctory，它把在 Megatron 上规划的 LoRA 写给其 Megatron-B"
                                           "ridge 后端）",
    "export.megatron_no_cpu_offload_parameters": "megatron：不支持把参数和梯度卸载到 CPU（方案把 Z"
                                                 "eRO-3 分片放在主机内存中；--optimizer-cpu-offloa"
                                                 "d 只移动优化器状态，且需要 --use-precision-aware"
                                                 "-optimizer）；可试 --to deepspeed 或 --to torcht"
                                                 "itan",
    "export.megatron_activation_offloading_without_recompute": (
        "megatron：不带重计算的激活卸载没有可一一对应的参数（--cpu-offloading-num-layers 卸载的是"
        "整层）"
    ),
    "export.megatron_cpu_offloading_cannot_be": "megatron：--cpu-offloading 不能与重计算同用，而方"
                                                "案要从主机内存中的检查点重算每一层；可试 --to lla"
                                                "mafactory（use_unsloth_gc）",
    "export.megatron_optimizer_not_megatron_optimizer": "megatron：优化器 {optimizer} 不是 Megatro"
                                                        "n 的优化器（adam、sgd、muon 等；8 位状态"
                                                        "只能经 --use-precision-aware-optimizer）",
    "export.megatron_split": "megatron：{split}",
    "export.megatron_interleaved_schedule_needs_at": "megatron：交错流水线调度要求每步至少 pp={pp}"
                                                     " 个微批次，方案只有 {grad_accum} 个",
    "export.megatron_sequence_length_not_multiple": "megatron：序列长度 {seq_len} 不是 2 × cp 的整"
                                                    "数倍",
    "export.mindspeed_no_dpo_entry_point": "{stack}：所参照的 MindSpeed-LLM 启动方式中没有 DPO 入"
                                           "口（{method}）",
    "export.mindspeed_shards_optimizer_states_use": "{stack}：只切分优化器状态（--use-distributed-"
                                                    "optimizer，ZeRO-1）；方案用的是 ZeRO-{zero}",
    "export.mindspeed_no_host_memory_offload": "{stack}：所参照的参数中没有这类主机内存卸载",
    "export.mindspeed_optimizer_not_megatron_optimizer": "{stack}：优化器 {optimizer} 不是 Megatro"
                                                         "n 的优化器（adam、sgd）",
    "export.mindspeed_layers_do_not_split": "{stack}：{layers} 层不能均分到 pp={pp} × vpp={vpp} 上"
                                            "（示例只用 --num-layers-per-virtual-pipeline-stage）",
    "export.mindspeed_interleaved_schedule_needs_at": "{stack}：交错流水线调度要求每步至少 pp={pp}"
                                                      " 个微批次，方案只有 {grad_accum} 个",
    "export.mindspeed_sequence_length_not_multiple": "{stack}：序列长度 {seq_len} 不是 2 × cp 的整"
                                                     "数倍",
    "export.mindspeed_cuda_job_planned_npus": "{stack}：{what}仅支持 CUDA，而该任务规划在 {gpu} NP"
                                              "U 上",
    "export.torchtitan_no_dpo_loss_frozen": "torchtitan：没有 DPO 损失或冻结的参考模型（{method}）"
                                            "；可试 --to llamafactory（stage dpo）",
    "export.torchtitan_v0_2_2_has": "torchtitan：v0.2.2 不支持 LoRA/QLoRA（{method}）；可试 --to l"
                                    "lamafactory",
    "export.torchtitan_no_activation_checkpoint_offloading": (
        "torchtitan：不支持卸载激活或检查点（enable_cpu_offload 移动的是参数、梯度和优化器状态，而"
        "非激活）"
    ),
    "export.torchtitan_enable_cpu_offload_goes": "torchtitan：enable_cpu_offload 经由 FSDP2，而 v0"
                                                 ".2.2 只在 data_parallel_shard_degree 或 context_"
                                                 "parallel_degree > 1 时启用它；方案在单卡上卸载模"
                                                 "型状态（可试 --to deepspeed）",
    "export.torchtitan_mixed_precision_param_takes": "torchtitan：mixed_precision_param 只能取 bfl"
                                                     "oat16 或 float32，不能取 fp16",
    "export.torchtitan_optimizer_not_exported_adamw": "torchtitan：优化器 {optimizer} 无法导出（只"
                                                      "支持配合 FSDP2 混合精度的 AdamW 或 Adam）",
    "export.torchtitan_split": "torchtitan：{split}",
    "export.torchtitan_v_has_no_train": "torchtitan：v{version} 没有 {model_id} 的 train spec 和 f"
                                        "lavor（这里支持的模型：{models}）；没有它就只会训练其 deb"
                                        "ugmodel",
    "export.versions_job_toml_format": "torchtitan：job.toml 是 torchtitan {torchtitan_version} 的"
                                       " TOML 任务格式；{target} 不是该版本（0.3.0 及以后读取 Pyth"
                                       "on 配置，--module）",
    "export.versions_release_has_no_megatron": "llamafactory：版本 {target} 没有该任务所需的 Megat"
                                               "ron-Bridge 参数（{bridge_needs}）；请安装 {bridge_"
                                               "install}",
    "export.versions_keys_checked": "llamafactory：导出的参数只对照版本 {release} 和 main 核对过，"
                                    "未对照 {target}",
    "export.writer_unknown_stack": "未知的框架 {stack}",
    "export.writer_job_planned_ascend_npus": "{stack}：该任务规划在 {gpu}（昇腾 NPU）上；NPU 的启"
                                             "动脚本只为 MindSpeed-LLM 编写：可试 --to megatron",
    "export.writer_job": "任务 {job}：{problem}",
    "export.deepspeed_no_activation_policy": "deepspeed：DeepSpeed 下的 Hugging Face 模型没有 {rec"
                                             "ompute} 激活策略（其 activation_checkpointing 块，包"
                                             "括 cpu_checkpointing，只对基于 deepspeed.checkpointi"
                                             "ng 构建的模型生效）{hint}",
    "export.deepspeed_try_unsloth": "；可试 --to llamafactory（use_unsloth_gc）",
    "export.layout_does_not_close": "方案的布局对不上：{problems}",
    "export.llamafactory_try_megatron": "；可试 --to megatron",
    "export.bridge_needs": "流水线、上下文或专家并行、Megatron 重计算，或在 Megatron 上规划的 LoRA",
    "export.bridge": "Megatron-Bridge 后端（{needs}需要它）",
    "export.where_hf_path": "（Hugging Face 路径上）",
    "export.where_deepspeed_plugin": "（使用 DeepSpeed 插件时）",
    "export.where_mindspeed": "（MindSpeed-LLM 中）",
    "export.mindspeed_stack": "megatron：昇腾上的 MindSpeed-LLM",
    "export.mindspeed_precision_aware": "精度感知优化器（Transformer Engine）",
    "export.mindspeed_nf4": "4 位 NF4 基座（bitsandbytes）",
    "export.where_llamafactory": "（其多卡分片经由 DeepSpeed 或 Megatron-Bridge）",
    "export.folder_note": "任务 {job} 写入文件夹 {folder}：其 id 不是安全的文件夹名",
    "export.no_plan": "{file}：没有可导出的方案（{status}）",
    "export.bridge_install": "尚未发布的 main 版本及 megatron-bridge：{command}",
    "export.target_stacks": "--target-version 只适用于 {stacks}（这些框架的文件格式随版本变化），"
                            "不适用于 {stack}",
    "export.target_release": "--target-version：{target} 不是版本号（例如 0.9.5）或 main",
    "split.chunks": "（vpp={virtual} 个等长分块）",
    "split.megatron": "Megatron 无法把 {layers} 层切分到 pp={pp} 个阶段{chunks}且每段不超过 {most}"
                      " 层",
    "split.torchtitan": "torchtitan 没有能把 {layers} 层切成 {stages} 个阶段的每阶段层数",
    "export.both": "{first} 和 {second}",
}
