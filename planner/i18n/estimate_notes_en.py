"""English notes of an estimate (planner/estimate: estimator.py, search.py, memory.py, cluster.py,
advice.py; planner/cli/estimate_cmd.py): what was searched, assumed and chosen, the links, the
stack, the advice on what would fit. The wording they always had, so English output and JSON are
unchanged. Keys match `estimate_notes_zh` one for one."""

from __future__ import annotations

from plan.models.methods import METHOD_NOTES

NOTES: dict[str, str] = {
    # the search (planner/estimate/search.py)
    "enote.searched": "searched {fields} over {n} layouts; chose {layout}",
    "enote.global_batch": "global batch {batch} sequences by the default rule ({rule}; set it to "
                          "your recipe's)",
    "enote.rule_tokens": "~{tokens} tokens per step for this model size",
    "enote.rule_sequences": "{n} sequences per step",
    # the cluster (planner/estimate/cluster.py)
    "enote.no_platform": "no platform given: assumed {kind} {gbps:g} Gb/s per GPU between nodes",
    # the estimator (planner/estimate/estimator.py)
    "enote.host_bound": "host-bound: {share:.0%} of the step waits for the CPU to launch the eager "
                        "stack's kernels (small micro-batches); a larger micro-batch or fused "
                        "kernels (--kernels fused, a job's kernels: fused) would use the GPU "
                        "better",
    "enote.model_assumed": "model card {model} is an assumption: {assumption}",
    "enote.gpu_assumed": "GPU {gpu} figures include assumptions: {assumption}",
    "enote.moe_split": "split over ep={ep}",
    "enote.moe_no_ep": "no expert parallelism",
    "enote.dropless": "dropless routing (capacity factor 1) at an even expert load assumed",
    "enote.capacity": "capacity factor {cf:g}: each routed expert's input padded to {cf:g} x an "
                      "even split, so {cf:g}x their FLOPs, saved activations and all-to-all bytes "
                      "(tokens beyond a full expert's capacity skip it); model FLOPs and MFU count "
                      "the useful work only; an even load assumed",
    "enote.moe": "MoE: memory holds all experts ({split}), FLOPs count active parameters; "
                 "all-to-all dispatch/combine exposed; {routing}",
    "enote.moe_ep_nodes": "MoE: ep={ep} spans nodes: its all-to-alls are costed as Megatron's "
                          "default dispatcher sends them (a copy per routed expert, 16-bit, none "
                          "hidden); DeepSeek-V3's run sent each token once per node to at most 4 "
                          "nodes, in FP8 for the dispatch, and hid the all-to-alls behind compute "
                          "(DeepEP, DualPipe; DeepSeek-V3 technical report, sections 3.2-3.3): "
                          "not modelled, so such a stack runs faster than estimated",
    "enote.attention_approx": "attention approximated by the generic multi-head shape: "
                              "{attention}...",
    "enote.adapters": "LoRA/QLoRA: frozen base, backward computes activation gradients only (~4N "
                      "instead of 6N FLOPs per token)",
    **{f"enote.method.{method}": note for method, note in METHOD_NOTES.items()},
    "enote.qlora": "QLoRA: NF4 base weights with double quantization (4.127 bits/param); "
                   "embeddings and output layer kept in 16-bit; dequantization costs memory "
                   "bandwidth",
    "enote.tp_spans": "tp={tp} spans nodes: its all-reduces run at {gbps:g} GB/s ({bottleneck})",
    "enote.dp_group": "data-parallel group of {n}: bottleneck {bottleneck} {gbps:g} GB/s per "
                      "direction{spread}",
    "enote.dp_one_nic": " (one member per node, on its own {fabric:g} Gb/s card)",
    "enote.dp_nics": " ({nics} NICs per node, {fabric:g} Gb/s each, NCCL spreads its rings over "
                     "all of them)",
    "enote.hsdp": "hybrid sharding (HSDP): states sharded over the {group} data-parallel ranks of "
                  "each node ({shard_link} {shard_gbps:g} GB/s), kept in {replicas} copies; the "
                  "layers are gathered and their gradients reduce-scattered inside the node, each "
                  "gradient shard all-reduced across the nodes ({replicate_link} "
                  "{replicate_gbps:g} GB/s)",
    "enote.framework": "framework {framework}: {how}",
    "enote.megatron_fsdp": "Megatron-FSDP ({sharding}): sharded {grads} gradients "
                           "reduce-scattered every micro-batch, {gathers}",
    "enote.gathers_layers": "parameters gathered layer by layer every micro-batch",
    "enote.gathers_once": "updated parameters gathered once per step",
    "enote.precision_aware": "precision-aware: bf16 gradient buffers, fp32 master weights as bf16 "
                             "weights + 16-bit remainders",
    "enote.grad_buffers": "{grads} gradient buffers",
    "enote.distributed_optimizer": "distributed optimizer, {buffers}, gradients reduced once per "
                                   "step",
    "enote.deepspeed": "ZeRO stages 2/3 reduce gradients every micro-batch",
    "enote.fsdp": "parameters gathered layer by layer every micro-batch, prefetch overlapped with "
                  "compute",
    "enote.eager": "kernels eager: the layers run as PyTorch modules op by op (Hugging Face, "
                   "torchtune, peft): their saved activations, peft's casts and the host's kernel "
                   "launches as measured on an H200 (bench/device/README.md); --kernels fused for "
                   "torch.compile, Liger or Unsloth",
    "enote.loss": "loss {loss}: {kind}; the run must use one",
    "enote.loss_kind.chunked": "a chunked cross-entropy that holds the bf16 logits but never their "
                               "fp32 copy (flash-attn's cross-entropy, torchtune's compiled "
                               "chunked loss)",
    "enote.loss_kind.fused": "a fused linear cross-entropy that never holds the whole logits "
                             "(Liger's, Unsloth's Cut Cross-Entropy)",
    "enote.kv_replicated": "tp={tp} > {kv} KV heads: KV projections replicated",
    "enote.uneven_stages": "pp={pp} does not divide {layers} layers: uneven stages, the largest "
                           "has {largest}",
    "enote.last_micro_batch": "micro-batches: each replica's {sequences} sequences run as {full} "
                              "of {mb} and a last of {last}, which computes {last}/{mb} of a full "
                              "one but hides only that share of its collectives and launches as "
                              "many kernels",
    "enote.seq_beyond": "seq_len {seq_len} exceeds the model's {positions} positions (context "
                        "extension)",
    "enote.fp8": "fp8: linear layers in FP8 (Transformer Engine style), attention in BF16; MFU is "
                 "against the FP8 peak",
    "enote.block_recompute": "recompute: Megatron's block method, {n} of {chunk} layers per model "
                             "chunk recomputed, the rest keep their activations "
                             "(--recompute-granularity full --recompute-method block "
                             "--recompute-num-layers {n})",
    "enote.full_offload": "recompute: full, each layer's checkpointed input kept in host memory "
                          "and copied back for its recomputation (Unsloth's gradient "
                          "checkpointing; LLaMA-Factory use_unsloth_gc: true); the search picks "
                          "it only where nothing else fits",
    "enote.activation_offload": "recompute: activations offloaded to host memory, as torchtune "
                                "runs it (enable_activation_offloading); none of the stacks plan "
                                "export writes for has it, so the search picks it only where "
                                "nothing else fits",
    "enote.cpu_offload": "CPU offload (ZeRO-3 {framework}): chosen only where nothing fits "
                         "without it; the optimizer step on the CPU is timed at an assumed "
                         "{cpu_gbps:g} GB/s of host memory traffic per GPU (no measurement), PCIe "
                         "at {pcie_gbps:g} GB/s per direction per GPU",
    "enote.flash_assumed": "{note}; flash attention assumed",
    # the pipeline's peak stage (planner/estimate/memory.py)
    "enote.pipeline": "pipeline ({schedule}, {mb} micro-batches per step): stage {stage} of {p} "
                      "peaks, {layers} of the {total} layers, holding the activations of "
                      "{held:.3g} micro-batches at once",
    "enote.interleaved": "interleaved 1F1B, {v} chunks per stage",
    "enote.1f1b": "1F1B",
    # plan estimate's own (planner/cli/estimate_cmd.py, planner/estimate/types.py)
    "enote.platform_limit": "{platform} allows at most {most} GPUs per job",
    "enote.at_limit": "at the card's limit: the peak PyTorch reserves with room to spare, "
                      "{total:.1f} GiB, is over the {card:g} GiB card; its caching allocator frees "
                      "cached blocks and retries before failing, so the run needs about "
                      "{floor:.1f} GiB (each retry stalls the GPU: slower; no plan runs there)",
    "enote.nothing_fits": "nothing fits: the least-memory layout needs {total:.1f} GiB of "
                          "{usable:.1f} GiB usable ({card:g} GiB less {headroom:.0%} "
                          "headroom){within}",
    "enote.within_card": "; it fits the card itself, which a plan does not run so close to "
                         "(--headroom)",
    "enote.eager_on_megatron": "{stated} says how a PyTorch stack (fsdp, deepspeed) runs its "
                               "layers; the layout chosen is Megatron's, which always runs fused "
                               "kernels ({keep} keeps to an eager stack)",
    "enote.keep_eager": "--framework fsdp or deepspeed",
    # advice (planner/estimate/advice.py)
    "advice.fits_with": "with {flag} it {fits}: {layout} at {gib:.1f} GiB",
    "advice.fits": "fits",
    "advice.fits_card": "fits the card, not its headroom",
    "advice.setting_why": "{setting} ({why})",
    "advice.both": "{settings} (Liger or Unsloth, which run both)",
    "advice.recompute_searched": "recomputation searched (without --recompute {recompute})",
    "advice.megatron_fsdp": "--framework megatron --zero {zero} (Megatron-FSDP: {sharded} sharded "
                            "over the data-parallel ranks; Llama 3 405B's data parallelism "
                            "sharded its gradients and optimizer states)",
    "advice.sharded_grads": "gradients",
    "advice.sharded_both": "gradients and weights",
    "advice.cpu_offload_flag": "--cpu-offload on (ZeRO-3 states in host memory)",
    "advice.without_offload": "without offloading, {setting} ({why}) fits: {layout} at {gib:.1f} "
                              "GiB, {tps:,.0f} tokens/s against the offloaded layout's "
                              "{offloaded:,.0f}",
    "advice.offload_faster": "{setting} (ZeRO-3 with the states in host memory) is estimated "
                             "{gain:.0%} faster: {tps:,.0f} tokens/s with {layout}; left out "
                             "because the search offloads only where nothing fits without it: "
                             "that speed rests on assumed host figures (the CPU optimizer step at "
                             "{cpu_gbps:g} GB/s of host memory traffic per GPU, {host_gib:g} GiB "
                             "of host memory per GPU, no measurement); measure a step before "
                             "relying on it",
    "advice.cannot_offload": "--cpu-offload on: the layout found cannot offload (it needs ZeRO-3 "
                             "on FSDP or DeepSpeed, tp = pp = 1 and an optimizer with a CPU step); "
                             "estimated without it",
    "advice.host_refused": "--cpu-offload on: {short}, so no offloaded layout fits (a platform or "
                           "pool with more RAM per GPU may; an owned pool's "
                           "host_memory_gib_per_gpu says what its servers have); estimated "
                           "without it",
    "memory.shortfall_body": "the {host_gib:.1f} GiB of model states per GPU exceed the "
                             "{host_cap:g} GiB of host memory per GPU {said} free; they stay on "
                             "the GPU",
    # what each memory saver is and saves (advice.MemorySaver.key: the English is its `why`)
    "saver.precision_aware": "Megatron's precision-aware optimizer: bf16 gradients, fp32 master "
                             "weights kept as 16-bit remainders, 14 bytes per parameter, not 18, "
                             "as NeMo's performance recipes do",
    "saver.paged_adapters": "paged 8-bit AdamW, bitsandbytes, the QLoRA recipe's optimizer: 2 "
                            "bytes of state per adapter parameter, not 12, paged to host memory "
                            "when the GPU is full",
    "saver.adamw_bf16": "pure BF16 AdamW, torchtune's default: bf16 weights, gradients and "
                        "moments, 8 bytes per parameter, not 16; no fp32 master copy, so updates "
                        "below BF16's resolution are lost",
    "saver.paged_full": "paged 8-bit AdamW stepped inside the backward pass on bf16 weights, "
                        "torchtune's low-memory full fine-tune recipe: 2 bytes of optimizer state "
                        "per parameter, not 12, one layer of gradients at a time; no fp32 master "
                        "copy, so the updates are rounded to bf16",
    "saver.loss_fused": "a fused linear cross-entropy that never holds the whole logits: Liger's, "
                        "or Unsloth's Cut Cross-Entropy; a chunked loss as torchtune's drops only "
                        "their fp32 copy",
    "saver.kernels_fused": "fused or compiled layers: torch.compile, Liger or Unsloth keep 0.7 "
                           "times the eager activations",
    # the estimate cache refused (planner/estimate/store.py)
    "store.unsafe": "estimate cache {place} {reason}; not used (it must be this user's alone: "
                    "chmod 700 the folder, or set {env})",
    "store.unchecked": "cannot be checked ({error})",
    "store.symlink": "is a symbolic link",
    "store.other_owner": "belongs to another user",
    "store.others_write": "may be written by other users",
}
