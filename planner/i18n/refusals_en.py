"""English refusals of a layout's fixed fields (planner/estimate/spec_check.py and estimator.py,
`plan estimate`'s --tp, --cp, ... lines): the wording they always had. Each call carries its
template (`say_as`); tests/planner/test_i18n_coverage.py checks it is the one here. Keys match
`refusals_zh` one for one."""

from __future__ import annotations

REFUSALS: dict[str, str] = {
    'refusal.at_any_tp': '{gap} at any tensor-parallel size',
    'refusal.at_least_one': 'must be at least 1, got {value}',
    'refusal.batch_dp': '{batch} is not a multiple of dp = {dp}',
    'refusal.bridge_zero': '{why}; use zero 0 or 1, or framework fsdp or deepspeed',
    'refusal.capacity_below_one': 'must be a number of at least 1 (an even split; below it tokens '
                                  'are dropped even at an even load), got {cf:g}',
    'refusal.capacity_dense': '{cf:g} pads routed experts; this model is dense',
    'refusal.capacity_most': 'at most {most:g} (the {experts} experts over top-{top_k} routing: '
                             'every token fits every expert), got {cf:g}',
    'refusal.cp_seq_len': '{cp} does not divide the sequence length {seq_len}',
    'refusal.cp_sequence_split': '{why}, not {seq_len}',
    'refusal.ep_adapter': "LoRA and QLoRA keep each layer's experts whole here (expert "
                          'parallelism is modelled for full training), got {ep}',
    'refusal.ep_dense': '{ep} expert-parallel ranks need an MoE model; this one is dense',
    'refusal.ep_dp': '{ep} does not divide the {dp} data-parallel ranks',
    'refusal.ep_experts': "{ep} does not divide the model's {experts} experts",
    'refusal.field': '{field}: {problem}',
    'refusal.hybrid_group': '{group} must divide the {ranks} data- and context-parallel ranks, '
                            'more than one and fewer than all of them, and hold whole '
                            'context-parallel groups of {cp}',
    'refusal.hybrid_refused': "hybrid sharding is FSDP's, at ZeRO 2 or 3, without CPU offload or "
                              'expert parallelism; got {framework} ZeRO-{zero}',
    'refusal.interleave_batch': "Megatron's interleaved schedule needs at least pp = {pp} "
                                'micro-batches per step; a global batch of {gb} over dp = {dp} '
                                'gives at most {most}',
    'refusal.interleave_micro': "Megatron's interleaved schedule needs at least pp = {pp} "
                                'micro-batches per step, got {micro_batches}',
    'refusal.interleave_pp': 'interleaving needs pp > 1',
    'refusal.joined': '{problems}',
    'refusal.left_out': ' ({reason})',
    'refusal.lora_rank_needed': '{method} needs a rank of at least 1, got {rank}',
    'refusal.lora_rank_only': 'only for {methods}, not for {method}',
    'refusal.micro_exceeds': '{micro_batch} exceeds the {share} sequences each data-parallel '
                             'replica gets per step',
    'refusal.micro_uneven': '{framework} needs micro-batch x accumulation steps = the {share} '
                            'sequences each data-parallel replica gets per step (no smaller last '
                            'micro-batch), and {micro_batch} does not divide them',
    'refusal.no_fabric': '{gpus} GPUs need {nodes} nodes, but there is no fabric between nodes',
    'refusal.no_peak': '{gpu} ({architecture}) has no {precision} peak; it supports {have}',
    'refusal.no_stack_eager': '{why}; {stacks} cannot run eager attention at cp={cp}{left_out}; '
                              'use flash attention, cp 1 or framework deepspeed',
    'refusal.no_stack_ep': '{why}; no stack runs {method} at ep={ep}{left_out}',
    'refusal.no_stack_selective': '{why}; no stack runs {method} with selective '
                                  'recomputation{left_out}; use full or none',
    'refusal.no_stack_split': '{why}; no stack runs {method} at {field}={value}{left_out}',
    'refusal.not_one_of': '{value} is not one of {names}',
    'refusal.offload_fixed': '{gap}; the job fixes {recompute} with tp={tp} pp={pp} cp={cp}{ep}',
    'refusal.or_sep': ' or ',
    'refusal.pipeline_fp8': '{why}; use precision bf16, pp 1 or framework megatron',
    'refusal.pp_layers': '{pp} stages for only {layers} layers',
    'refusal.precision_aware_adapter': "the precision-aware optimizer is Megatron's, and the one "
                                       "stack written for {method} on Megatron (LLaMA-Factory's "
                                       'Megatron-Bridge backend) has none; use adamw',
    'refusal.precision_aware_zero': "the precision-aware optimizer is Megatron's distributed "
                                    'optimizer: it needs framework megatron with zero 1 (or one '
                                    'data-parallel rank), got {framework} with zero {zero}{qlora}',
    'refusal.pure_bf16_zero0': 'adamw-bf16 on DeepSpeed needs ZeRO stage 1-3 '
                               '(bf16_master_weights_and_grads), got zero 0',
    'refusal.qlora_megatron': 'megatron has no 4-bit QLoRA path; use fsdp or deepspeed',
    'refusal.qlora_no_megatron': ', and QLoRA has no Megatron path',
    'refusal.recompute_layers_dpo': "block recomputation is Megatron's, and no exported Megatron "
                                    "stack trains DPO (LLaMA-Factory's Megatron-Bridge backend "
                                    'trains pt and sft); use --recompute full, or name framework '
                                    'megatron for your own Megatron DPO',
    'refusal.recompute_layers_needs': "{layers} layers per chunk is Megatron's block "
                                      "recomputation: it needs recompute 'full', framework "
                                      'megatron and at least 1 layer',
    'refusal.recompute_layers_qlora': "block recomputation is Megatron's, and Megatron has no "
                                      '4-bit QLoRA path; use --recompute full',
    'refusal.recompute_layers_range': "{layers} layers per chunk is Megatron's block "
                                      "recomputation: 1 to the model's {model_layers} layers, "
                                      'with recompute full and framework megatron',
    'refusal.ring_eager': '{why}; got {framework} with cp {cp} and eager attention',
    'refusal.share_over_dp': '{share} over dp = {dp}',
    'refusal.shares_undivided': '{framework} needs micro-batch x accumulation steps = each '
                                "replica's share of the global batch ({over}), and {micro_batch} "
                                'divides none of them',
    'refusal.split_gpus': '{tp} x {pp} x {cp} x {dp} = {gpus}, but the cluster has {cluster_gpus} '
                          'GPUs',
    'refusal.stacks_searched': 'the stacks searched for {method}',
    'refusal.state_offload': "CPU offload of the model states is ZeRO-3's on FSDP or DeepSpeed "
                             'without tensor or pipeline parallelism, with an optimizer that '
                             'steps on the CPU (not 8-bit AdamW; on DeepSpeed, AdamW, which its '
                             'CPU Adam runs); got {framework} zero {zero} tp {tp} pp {pp} '
                             'optimizer {optimizer}',
    'refusal.tp_gpus': '{tp} does not divide the {gpus} GPUs',
    'refusal.tp_heads': '{tp} does not divide the {heads} attention heads',
    'refusal.tp_kv': '{tp} does not divide the {kv_heads} KV heads',
    'refusal.tp_kv_multiple': '{tp} is neither a divisor nor a multiple of the {kv_heads} KV heads',
    'refusal.tp_pp_cp_gpus': 'tp x pp x cp = {tp} x {pp} x {cp} does not divide the {gpus} GPUs',
    'refusal.tp_pp_gpus': 'tp x pp = {tp} x {pp} does not divide the {gpus} GPUs',
    'refusal.ulysses_fp8': '{why}; use precision bf16, cp 1 or framework megatron or fsdp',
    'refusal.zero_pipelined': ' under pipeline parallelism (pp={pp}: its pipeline engine refuses '
                              'ZeRO-2 and ZeRO-3)',
    'refusal.zero_range': 'must be 0, 1, 2 or 3, got {zero}',
    'refusal.zero_stages': '{framework} runs ZeRO stage {stages}{pipelined}, not {zero}',
}
