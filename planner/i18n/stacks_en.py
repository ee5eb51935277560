"""What a training stack cannot run (plan.models.stacks), the layout search's reasons for leaving
layouts out (plan.planner.estimate) and `plan estimate`'s line when no layout is valid: English,
byte-identical to what they always said. Every key has a Chinese twin in `stacks_zh`."""

from __future__ import annotations

STACKS: dict[str, str] = {
    "stack.megatron_cp_sequence": "Megatron's context parallelism needs a sequence length that is "
                                  "a multiple of 2 x cp",
    "stack.ring_needs_flash": "context parallelism runs ring attention through flash kernels "
                              "(Megatron through Transformer Engine's fused or flash attention, "
                              "its own attention asserting cp = 1; torchtitan and accelerate "
                              "through SDPA's flash or efficient backends); only DeepSpeed's "
                              "Ulysses, which splits the heads, runs eager attention with cp > 1",
    "stack.ulysses_fp8": "DeepSpeed's context parallelism (Ulysses, `sequence_parallel_size` in "
                         "its JSON) is written by the deepspeed export, whose JSON has no FP8 "
                         "setting, and accelerate, which runs FP8 on DeepSpeed through Transformer "
                         "Engine, splits no sequence on DeepSpeed (its ring attention needs the "
                         "FSDP2 plugin): no stack plan export writes for runs FP8 with cp > 1 on "
                         "DeepSpeed",
    "stack.pipeline_fp8": "DeepSpeed's pipeline engine is written by the deepspeed export, whose "
                          "JSON has no FP8 setting, and accelerate, which runs FP8 on DeepSpeed "
                          "through Transformer Engine, does not pipeline: no stack plan export "
                          "writes for runs FP8 with pp > 1 on DeepSpeed",
    "stack.experts_deepspeed": "DeepSpeed splits experts over ranks only through DeepSpeed-MoE "
                               "layers in the model's code, which no export writes (Megatron, "
                               "torchtitan and LLaMA-Factory's Megatron-Bridge backend split them: "
                               "framework megatron or fsdp)",
    "stack.experts_torchtitan": "of the FSDP-family stacks only torchtitan splits experts over "
                                "ranks (expert_parallel_degree), and it has no DPO loss and trains "
                                "with AdamW or Adam in bf16 or fp8",
    "stack.pure_bf16_precision": "adamw-bf16 is pure BF16 training (weights and moments in bf16): "
                                 "use precision bf16, not fp16 or fp8 (of the stacks plan export "
                                 "writes for, only DeepSpeed runs FP8 matmuls on pure BF16 "
                                 "weights, and only with ZeRO 1-3)",
    "stack.ulysses_heads": "DeepSpeed's cp is Ulysses, which hands each rank whole attention "
                           "heads: the {heads} heads per tensor-parallel rank do not divide by "
                           "cp = {cp}",
    "stack.loss_not_on_megatron": "{loss} is a PyTorch stack's loss (fsdp, deepspeed); Megatron's "
                                  "vocab-parallel cross-entropy holds the whole logits: use loss "
                                  "plain, or framework fsdp or deepspeed",
    "stack.not_on_megatron": "{optimizer} is a PyTorch optimizer (bitsandbytes, Adafactor, pure "
                             "BF16 AdamW) that Megatron-LM does not run (its optimizers are adamw, "
                             "sgd and adamw-precision-aware): use framework fsdp or deepspeed",
    "stack.bridge_zero": "LoRA on Megatron trains through LLaMA-Factory's Megatron-Bridge backend, "
                         "which shards the optimizer state only (ZeRO 0-1); ZeRO-{zero} on "
                         "Megatron is Megatron-FSDP's, which no LoRA export runs",
    "stack.hybrid_framework": "hybrid sharding is FSDP's (HSDP); framework {framework} has none",
    "stack.hybrid_offload": "hybrid sharding keeps the shards on the GPUs; CPU offload moves the "
                            "full shard to the host",
    "stack.hybrid_zero": "hybrid sharding shards ZeRO-2/3 states inside a node; {field} is {zero}",
    "stack.no_interleaving": "DeepSpeed's pipeline engine has no interleaved stages",
    "stack.job_optimizer": "optimizer {reason}, or leave framework out",
    "stack.job_loss": "loss {reason}",
    "stack.job_hybrid": "hybrid_shard: {reason}: leave hybrid_shard out or change that",
    "stack.job_optimizer_bf16": "optimizer {reason}",
    # the layout search's kinds of reason (planner/estimate: pruning, combination_trial,
    # search_space, stack_rules), read back from the estimate store as plain text
    "reason.cannot_beat": "cannot beat the fastest layout found",
    "reason.recompute_dominated": "dominated (recomputation only adds time where none is needed)",
    "reason.zero3_dominated": "dominated (ZeRO-3 only adds traffic where ZeRO-2 fits)",
    "reason.out_of_memory": "out of memory",
    "reason.interleaving": "Megatron interleaves only with at least pp micro-batches per step",
    "reason.hybrid_split": "hybrid sharding needs the data-parallel ranks in whole nodes, two or "
                           "more to a node",
    "reason.tp_nodes": "tp spans nodes",
    "reason.tp_heads": "tp incompatible with heads",
    "reason.batch_dp": "global batch too small for dp",
    "reason.layer_split": "no stack splits the layers so (pipeline stages)",
    # plan estimate --gpus N with no valid layout (plan.planner.cli.estimate_cmd)
    "estimate.no_layout": "--gpus: no valid layout for {model} on {gpus} x {gpu}: {reasons}",
    "estimate.reason_one": "{reason} ({n} layout)",
    "estimate.reason_many": "{reason} ({n} layouts)",
    "estimate.no_candidates": "no candidates",
    # planner/estimate/stack_rules.py's gaps and search reasons, the checkpoint-offload
    # refusal (types.py) and QLoRA's FP8 refusal (models/methods.py)
    'stack.activation_offload_pipeline': "activation offload without recomputation is torchtune's "
                                         'policy, and torchtune does not pipeline or split experts',
    'stack.checkpoint_offload_cpu_adam': "offloaded checkpoints run on LLaMA-Factory's Hugging "
                                         'Face path (use_unsloth_gc), which offloads model states '
                                         "through DeepSpeed's ZeRO-Offload, stepped by its CPU "
                                         'Adam only',
    'stack.checkpoint_offload_dp_only': "offloaded checkpoints run on LLaMA-Factory's Hugging "
                                        'Face path (use_unsloth_gc), which has no tensor, '
                                        'pipeline, context or expert parallelism',
    'stack.checkpoint_offload_full_shard': "offloaded checkpoints run on LLaMA-Factory's Hugging "
                                           'Face path (use_unsloth_gc), whose multi-GPU sharding '
                                           'goes through DeepSpeed: no hybrid sharding',
    'stack.checkpoint_offload_not_megatron': "full_offload (checkpoints in host memory: Unsloth's "
                                             "gradient checkpointing, LLaMA-Factory's "
                                             "use_unsloth_gc) is a PyTorch stack's; Megatron's "
                                             'activation offloading cannot be combined with '
                                             'recomputation: use full or offload, or framework '
                                             'fsdp or deepspeed',
    'stack.checkpoint_offload_pure_bf16': "offloaded checkpoints run on LLaMA-Factory's Hugging "
                                          'Face path (use_unsloth_gc), which refuses pure BF16 '
                                          'AdamW (pure_bf16) with DeepSpeed ZeRO-3',
    'stack.deepspeed_whole_layers': 'DeepSpeed checkpoints whole layers only '
                                    '(activation_checkpointing has no selective policy)',
    'stack.hybrid_one_click': 'a team kept to the one-click path runs LLaMA-Factory, whose '
                              'sharding goes through DeepSpeed, which has no hybrid shard',
    'stack.hybrid_one_node': 'the {gpus} GPUs fit one node of {per_node}: there are no nodes to '
                             'replicate across',
    'stack.hybrid_tp_node': 'tp {tp} leaves fewer than two data-parallel ranks in a node of '
                            '{per_node} to shard over',
    'stack.left_out_checkpoint_offload': 'offloaded checkpoints run on the PyTorch stacks only',
    'stack.left_out_dpo': 'Megatron-Bridge and mcore_adapter train pt and sft, not DPO',
    'stack.left_out_loss': 'a {loss} loss runs on the PyTorch stacks only',
    'stack.left_out_no_ops': 'a team with no ops skill is planned on the PyTorch stacks',
    'stack.left_out_optimizer': 'Megatron has no {optimizer}',
    'stack.left_out_qlora': 'Megatron has no 4-bit QLoRA path',
    'stack.one_click_dp': 'the one-click PyTorch path is data-parallel only',
    'stack.op_level_adam_only': "selective recomputation on FSDP is torchtitan's op-level policy, "
                                'and torchtitan runs AdamW or Adam only',
    'stack.op_level_bf16': "selective recomputation on FSDP is torchtitan's op-level policy, and "
                           'torchtitan trains in bf16, not fp16',
    'stack.op_level_no_dpo': "selective recomputation on FSDP is torchtitan's op-level policy, "
                             'and torchtitan has no DPO loss',
    'stack.op_level_no_lora': "selective recomputation on FSDP is torchtitan's op-level policy, "
                              'and torchtitan has no LoRA/QLoRA',
    'stack.op_level_offload': "selective recomputation on FSDP is torchtitan's op-level policy, "
                              'and torchtitan offloads model states only where FSDP2 shards them '
                              'over more than one rank',
    'stack.pp_adam_only': 'the one PyTorch stack that pipelines (torchtitan) runs AdamW or Adam '
                          'only',
    'stack.pp_bf16_only': 'the one PyTorch stack that pipelines (torchtitan) trains in bf16, not '
                          'fp16',
    'stack.pp_no_dpo': 'no FSDP-family stack pipelines DPO (torchtitan, the one that pipelines, '
                       'has no DPO loss)',
    'stack.pp_no_lora': 'no FSDP-family stack pipelines LoRA/QLoRA',
    'stack.qlora_fp8': 'precision fp8 with qlora: bitsandbytes dequantizes the 4-bit base to '
                       '16-bit for every matmul, so no stack runs QLoRA in FP8; use bf16 (or '
                       'fp16), or lora with fp8',
    'stack.replicated_split': 'tensor or context parallelism beside replicated (ZeRO-0) data '
                              "parallelism: accelerate's parallelism_config refuses it, and "
                              'torchtitan, which runs it, has no adapters or DPO and trains with '
                              'AdamW or Adam in bf16 or fp8 only',
    'stack.tp_no_qlora': 'no stack tensor-parallelizes a 4-bit QLoRA base',
    'stack.uneven_micro_batch': '{framework} needs micro-batch x accumulation steps = each '
                                "replica's share of the global batch",
}
