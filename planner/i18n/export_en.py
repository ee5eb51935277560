"""`plan export`'s refusals (planner/export: what a stack cannot express), the lines around them
(plan.planner.cli.export_cmd) and the layer-split reasons they quote (planner/estimate/stages.py):
English, byte-identical to what they always said. Every key has a Chinese twin in `export_zh`."""

from __future__ import annotations

EXPORT: dict[str, str] = {
    "export.accelerate_no_pipeline_parallelism_pp": "{stack}: no pipeline parallelism (the plan "
                                                    "uses pp={pp}); try --to megatron or --to "
                                                    "torchtitan",
    "export.accelerate_no_recompute_fsdp_activation": "{stack}: no {recompute} recompute "
                                                      "(fsdp_activation_checkpointing is full "
                                                      "per-layer checkpointing on or off)",
    "export.accelerate_tp_cp_replicated_unsharded": "{stack}: tp or cp with replicated "
                                                    "(unsharded) data parallelism is refused by "
                                                    "accelerate's parallelism_config; the plan "
                                                    "replicates over dp={dp} unsharded",
    "export.accelerate_context_parallelism_ring_attention": "accelerate: context parallelism "
                                                            "(ring attention) needs the FSDP2 "
                                                            "plugin, not DeepSpeed",
    "export.accelerate_pure_bf16_adamw_adamw": "{stack}: pure BF16 AdamW (adamw-bf16) trains in "
                                               "bf16, the plan uses {precision}",
    "export.deepspeed_offload_param_parameters_cpu": "{stack}: offload_param (parameters in CPU "
                                                     "memory) is ZeRO stage 3 only, the plan uses "
                                                     "ZeRO-{zero}",
    "export.deepspeed_no_cpu_step_optimizer": "{stack}: no CPU step for the {optimizer} optimizer "
                                              "under ZeRO-Offload (DeepSpeed steps the offloaded "
                                              "optimizer states with its CPU Adam); a job with "
                                              "optimizer adamw exports",
    "export.deepspeed_pure_bf16_adamw_adamw": "{stack}: pure BF16 AdamW (adamw-bf16) with fp16 "
                                              "training; plan it with bf16",
    "export.deepspeed_pure_bf16_adamw_bf16": "{stack}: pure BF16 AdamW "
                                             "(bf16_master_weights_and_grads, "
                                             "bf16_optimizer_states) needs ZeRO stage 1-3, the "
                                             "plan uses ZeRO-0",
    "export.deepspeed_pipeline_engine_has_no": "deepspeed: the pipeline engine has no interleaved "
                                               "(virtual) pipeline stages; the plan uses vpp={vpp}",
    "export.deepspeed_pipeline_parallelism_pp_runs": "deepspeed: pipeline parallelism (pp={pp}) "
                                                     "runs with ZeRO stage 0 or 1 only, the plan "
                                                     "uses ZeRO-{zero}",
    "export.deepspeed_deepspeed_json_has_no": "deepspeed: the DeepSpeed JSON has no fp8 setting "
                                              "(fp8 comes from model code such as Transformer "
                                              "Engine)",
    "export.layout_no_block_recomputation_recomputes": "{stack}: no block recomputation{where} "
                                                       "(the plan recomputes {recompute_layers} "
                                                       "layers per model chunk and keeps the "
                                                       "rest, Megatron's --recompute-method "
                                                       "block); try --to megatron",
    "export.layout_no_precision_aware_optimizer": "{stack}: no precision-aware optimizer{where} "
                                                  "(bf16 gradients, fp32 master weights as 16-bit "
                                                  "remainders: Megatron's "
                                                  "--use-precision-aware-optimizer); try --to "
                                                  "megatron",
    "export.layout_no_expert_parallelism_splits": "{stack}: no expert parallelism (the plan "
                                                  "splits each layer's {experts} experts over "
                                                  "ep={ep} ranks; a Hugging Face MoE model here "
                                                  "keeps them whole on every rank); try --to "
                                                  "megatron, --to torchtitan or --to llamafactory "
                                                  "(Megatron-Bridge)",
    "export.layout_no_hybrid_sharding_shards": "{stack}: no hybrid sharding{where} (the plan "
                                               "shards the model states over the {shard_group} "
                                               "data-parallel ranks of each node and keeps "
                                               "{dp_replicate} copies of them, FSDP's HSDP); try "
                                               "--to torchtitan, --to accelerate or --to "
                                               "torchrun-fsdp",
    "export.layout_gpus_do_not_split": "{gpus} GPUs do not split evenly over {nodes} nodes; "
                                       "torchrun needs the same processes on every node",
    "export.layout_global_batch_not_multiple": "global batch {global_batch} is not a multiple of "
                                               "dp = {dp}",
    "export.layout_hybrid_sharding_over": "the plan's hybrid sharding over {shard_group} ranks "
                                          "does not divide its dp={dp} x cp={cp} at ZeRO-{zero}",
    "export.layout_offloads_model_states_cpu": "the plan offloads model states to CPU memory, "
                                               "which needs ZeRO-3 under FSDP or DeepSpeed with "
                                               "tp = pp = 1; its layout has zero={zero}, tp={tp}, "
                                               "pp={pp}, framework {framework}",
    "export.llamafactory_no_cpu_offload_model": "llamafactory: no CPU offload of the model states "
                                                "in {bridge}",
    "export.llamafactory_no_optimizer_optim_takes": "llamafactory: no {optimizer} optimizer "
                                                    "(optim takes {optims}){hint}",
    "export.llamafactory_no_recompute_hugging_face": "llamafactory: no {recompute} recompute on "
                                                     "the Hugging Face path (only full per-layer "
                                                     "gradient checkpointing on or off)",
    "export.llamafactory_qlora_tensor_parallelism_not": "llamafactory: QLoRA with tensor "
                                                        "parallelism is not supported (AutoTP "
                                                        "over a 4-bit base)",
    "export.llamafactory_fp8_refused_quantization_bit": "llamafactory: fp8 is refused with "
                                                        "quantization_bit",
    "export.llamafactory_no_pure_bf16_adamw": "llamafactory: no pure BF16 AdamW (pure_bf16) in "
                                              "{bridge} (Megatron keeps fp32 or fp16 master "
                                              "weights)",
    "export.llamafactory_pure_bf16_refused_deepspeed": "llamafactory: pure_bf16 is refused with "
                                                       "DeepSpeed ZeRO-3; try --to accelerate or "
                                                       "--to deepspeed",
    "export.llamafactory_pure_bf16_adamw_bf16": "llamafactory: pure_bf16 (adamw-bf16) trains in "
                                                "bf16, the plan uses {precision}",
    "export.llamafactory_trains_stages_pt_sft": "llamafactory: {bridge} trains stages pt and sft, "
                                                "not {stage} ({method}); plan it without those, "
                                                "or on fsdp or deepspeed",
    "export.llamafactory_qlora_needs_megatron_bridge": "llamafactory: QLoRA with {bridge_needs} "
                                                       "needs the Megatron-Bridge backend, which "
                                                       "has no quantization",
    "export.llamafactory_shards_optimizer_state_zero": "llamafactory: {bridge} shards optimizer "
                                                       "state only (ZeRO-1), the plan uses "
                                                       "ZeRO-{zero}",
    "export.llamafactory_no_activation_checkpoint_offloading": "llamafactory: no activation or "
                                                               "checkpoint offloading in the "
                                                               "Megatron-Bridge backend",
    "export.llamafactory_bridge_split": "llamafactory: {bridge}: {split}",
    "export.megatron_no_dpo_loss_frozen": "megatron: no DPO loss or frozen reference model "
                                          "({method}); try --to llamafactory (stage dpo)",
    "export.megatron_pretrain_gpt_py_has": "megatron: pretrain_gpt.py has no LoRA/QLoRA "
                                           "({method}); PEFT lives in Megatron-Bridge/NeMo (try "
                                           "--to llamafactory, which writes LoRA planned on "
                                           "Megatron for its Megatron-Bridge backend)",
    "export.megatron_no_cpu_offload_parameters": "megatron: no CPU offload of parameters and "
                                                 "gradients (the plan keeps its ZeRO-3 shards in "
                                                 "host memory; --optimizer-cpu-offload moves only "
                                                 "the optimizer state and needs "
                                                 "--use-precision-aware-optimizer); try --to "
                                                 "deepspeed or --to torchtitan",
    "export.megatron_activation_offloading_without_recompute": "megatron: activation offloading "
                                                               "without recompute has no flag "
                                                               "this exporter can map one-to-one "
                                                               "(--cpu-offloading-num-layers "
                                                               "offloads whole layers)",
    "export.megatron_cpu_offloading_cannot_be": "megatron: --cpu-offloading cannot be combined "
                                                "with recompute, and the plan recomputes every "
                                                "layer from checkpoints kept in host memory; try "
                                                "--to llamafactory (use_unsloth_gc)",
    "export.megatron_optimizer_not_megatron_optimizer": "megatron: optimizer {optimizer} is not a "
                                                        "Megatron optimizer (adam, sgd, muon, "
                                                        "...; 8-bit states only via "
                                                        "--use-precision-aware-optimizer)",
    "export.megatron_split": "megatron: {split}",
    "export.megatron_interleaved_schedule_needs_at": "megatron: the interleaved schedule needs at "
                                                     "least pp={pp} micro-batches per step, the "
                                                     "plan has {grad_accum}",
    "export.megatron_sequence_length_not_multiple": "megatron: sequence length {seq_len} is not a "
                                                    "multiple of 2 x cp",
    "export.mindspeed_no_dpo_entry_point": "{stack}: no DPO entry point in the MindSpeed-LLM "
                                           "launch read ({method})",
    "export.mindspeed_shards_optimizer_states_use": "{stack}: shards optimizer states only "
                                                    "(--use-distributed-optimizer, ZeRO-1); the "
                                                    "plan uses ZeRO-{zero}",
    "export.mindspeed_no_host_memory_offload": "{stack}: no host-memory offload of this plan's "
                                               "kind in the flags read",
    "export.mindspeed_optimizer_not_megatron_optimizer": "{stack}: optimizer {optimizer} is not a "
                                                         "Megatron optimizer (adam, sgd)",
    "export.mindspeed_layers_do_not_split": "{stack}: {layers} layers do not split evenly over "
                                            "pp={pp} x vpp={vpp} (the examples' "
                                            "--num-layers-per-virtual-pipeline-stage only)",
    "export.mindspeed_interleaved_schedule_needs_at": "{stack}: the interleaved schedule needs at "
                                                      "least pp={pp} micro-batches per step, the "
                                                      "plan has {grad_accum}",
    "export.mindspeed_sequence_length_not_multiple": "{stack}: sequence length {seq_len} is not a "
                                                     "multiple of 2 x cp",
    "export.mindspeed_cuda_job_planned_npus": "{stack}: {what} is CUDA-only, and the job is "
                                              "planned on {gpu} NPUs",
    "export.torchtitan_no_dpo_loss_frozen": "torchtitan: no DPO loss or frozen reference model "
                                            "({method}); try --to llamafactory (stage dpo)",
    "export.torchtitan_v0_2_2_has": "torchtitan: v0.2.2 has no LoRA/QLoRA ({method}); try --to "
                                    "llamafactory",
    "export.torchtitan_no_activation_checkpoint_offloading": "torchtitan: no activation or "
                                                             "checkpoint offloading "
                                                             "(enable_cpu_offload moves "
                                                             "parameters, gradients and optimizer "
                                                             "state, not activations)",
    "export.torchtitan_enable_cpu_offload_goes": "torchtitan: enable_cpu_offload goes through "
                                                 "FSDP2, which v0.2.2 applies only when "
                                                 "data_parallel_shard_degree or "
                                                 "context_parallel_degree > 1; the plan offloads "
                                                 "model states on one GPU (try --to deepspeed)",
    "export.torchtitan_mixed_precision_param_takes": "torchtitan: mixed_precision_param takes "
                                                     "bfloat16 or float32, not fp16",
    "export.torchtitan_optimizer_not_exported_adamw": "torchtitan: optimizer {optimizer} is not "
                                                      "exported (AdamW or Adam with FSDP2's mixed "
                                                      "precision only)",
    "export.torchtitan_split": "torchtitan: {split}",
    "export.torchtitan_v_has_no_train": "torchtitan: v{version} has no train spec and flavor for "
                                        "{model_id} (its models here: {models}); without one it "
                                        "trains its debugmodel",
    "export.versions_job_toml_format": "torchtitan: job.toml is torchtitan {torchtitan_version}'s "
                                       "TOML job format; {target} is not that release (0.3.0 and "
                                       "later read Python configs, --module)",
    "export.versions_release_has_no_megatron": "llamafactory: release {target} has no "
                                               "Megatron-Bridge keys, which this job needs "
                                               "({bridge_needs}); install {bridge_install}",
    "export.versions_keys_checked": "llamafactory: the export's keys are checked against release "
                                    "{release} and main, not {target}",
    "export.writer_unknown_stack": "unknown stack {stack}",
    "export.writer_job_planned_ascend_npus": "{stack}: the job is planned on {gpu} (Ascend NPUs); "
                                             "NPU launches are written for MindSpeed-LLM only: "
                                             "try --to megatron",
    "export.writer_job": "job {job}: {problem}",
    "export.deepspeed_no_activation_policy": "deepspeed: no {recompute} activation policy for a "
                                             "Hugging Face model under DeepSpeed (its "
                                             "activation_checkpointing block, cpu_checkpointing "
                                             "included, configures only models built on "
                                             "deepspeed.checkpointing){hint}",
    "export.deepspeed_try_unsloth": "; try --to llamafactory (use_unsloth_gc)",
    "export.layout_does_not_close": "the plan's layout does not close: {problems}",
    "export.llamafactory_try_megatron": "; try --to megatron",
    "export.bridge_needs": "pipeline, context or expert parallelism, Megatron recomputation, or "
                           "LoRA planned on Megatron",
    "export.bridge": "the Megatron-Bridge backend (needed for {needs})",
    "export.where_hf_path": " on the Hugging Face path",
    "export.where_deepspeed_plugin": " with the DeepSpeed plugin",
    "export.where_mindspeed": " in MindSpeed-LLM",
    "export.mindspeed_stack": "megatron: MindSpeed-LLM on Ascend",
    "export.mindspeed_precision_aware": "the precision-aware optimizer (Transformer Engine)",
    "export.mindspeed_nf4": "a 4-bit NF4 base (bitsandbytes)",
    "export.where_llamafactory": " (its multi-GPU sharding goes through DeepSpeed or "
                                 "Megatron-Bridge)",
    "export.folder_note": "job {job} is written to folder {folder}: its id is not a safe folder "
                          "name",
    "export.no_plan": "{file}: no plan to export ({status})",
    "export.bridge_install": "unreleased main and megatron-bridge: {command}",
    "export.target_stacks": "--target-version applies to {stacks} only (the stacks whose file "
                            "formats change between releases here), not {stack}",
    "export.target_release": "--target-version: {target} is not a release number (e.g. 0.9.5) or "
                             "main",
    "export.both": "{first} and {second}",
    "split.chunks": " of vpp={virtual} equal chunks",
    "split.megatron": "Megatron cannot split {layers} layers over pp={pp} stages{chunks}, none "
                      "longer than {most} layers",
    "split.torchtitan": "torchtitan has no layers-per-stage value that splits {layers} layers "
                        "into {stages} stages",
}
