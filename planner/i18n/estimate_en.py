"""English words of `plan estimate`'s table (planner/cli/estimate_table.py): the headline, the
layout, memory and step-time tables, the throughput and run lines; the wording they always had.
Keys match `estimate_zh` one for one."""

from __future__ import annotations

ESTIMATE: dict[str, str] = {
    # the headline (markup such as [green] stays outside these words)
    "estimate.headline": "{model} {method} on {gpus} x {gpu} ({per_node} per node, {fabric}){where}"
                         ": {verdict} ({total:.1f} of {card:g} GiB; {usable:.1f} usable with "
                         "{headroom:.0%} headroom)",
    "estimate.fabric": "{kind} {gbps:g} Gb/s per GPU",
    "estimate.on_platform": " on {platform}",
    "estimate.fits": "fits",
    "estimate.not_card": "does NOT fit the card",
    "estimate.not_headroom": "fits the card, not its {headroom:.0%} headroom",
    "estimate.at_limit": "runs only at the card's limit",
    # the layout table (the field names are flags: they stay as they are)
    "estimate.layout": "layout",
    "estimate.field": "field",
    "estimate.value": "value",
    "estimate.searched": "searched",
    "estimate.derived": "derived",
    "estimate.hybrid_on": "on ({group} per group, {replicas} replicas)",
    # the memory and step-time tables
    "estimate.memory_title": "memory per GPU (GiB) against {card:g} GiB",
    "estimate.part": "part",
    "estimate.gib": "GiB",
    "estimate.of_card": "% of card",
    "estimate.margin": "margin to usable ({headroom:.0%} headroom)",
    "estimate.step_title": "step time {s:.3f} s",
    "estimate.seconds": "s",
    "estimate.share": "share",
    "part.weights": "weights",
    "part.gradients": "gradients",
    "part.optimizer": "optimizer",
    "part.activations": "activations",
    "part.other": "other",
    "part.total": "total",
    "part.compute": "compute",
    "part.recompute": "recompute",
    "part.tp_comm": "tp_comm",
    "part.cp_comm": "cp_comm",
    "part.ep_comm": "ep_comm",
    "part.dp_comm": "dp_comm",
    "part.pp_bubble": "pp_bubble",
    "part.host": "host",
    # the throughput line
    "estimate.throughput": "throughput: {tps:,.0f} tokens/s ({band})",
    "estimate.band": "p10-p90 {lo:,.0f}-{hi:,.0f}; {per_gpu:,.0f} per GPU",
    "estimate.memory_band": "memory p10-p90 {lo:.1f}-{hi:.1f} GiB",
    "estimate.model_tflops": "{tflops:.0f} model TFLOP/s per GPU",
    "estimate.mfu": "MFU {mfu:.1%}",
    "estimate.mfu_causal": " ({causal:.1%} counting only the causal half of attention)",
    "estimate.gflop": "{gflop:.1f} GFLOP per token",
    "estimate.line_sep": "; ",
    # the run line
    "estimate.run": "run of {tokens} tokens: {wall}, {gpu_hours:,.0f} GPU-hours ({overhead})",
    "estimate.wall": "{h:,.1f} h wall (p10-p90 {low:,.1f}-{high:,.1f})",
    "estimate.overhead": "failure overhead {fraction:.1%}, checkpoint every {every_h:.2f} h, "
                         "~{n:.1f} interruptions",
    # a whole run's note where its stack's maturity is stated (band.stack_maturity_note)
    "run.stack_new": "stack stated new: the whole run takes x{factor:.2f} a mature stack's (job "
                     "uptime 59% on OPT-175B's first run at scale against Llama 3's 90%; assumed "
                     "to differ by the stack alone)",
    "run.stack_mature": "stack stated mature: timed as the published whole runs of teams that had "
                        "run at that scale (Llama 2, Llama 3)",
    # an estimate's memory notes (planner/estimate/memory_notes.py, its say_as templates)
    "memory.adam_bf16": "optimizer adamw-bf16: weights, gradients and AdamW's moments in BF16 with "
                        "no fp32 master copy (torchtune's default): 8 bytes per trained parameter, "
                        "not 16; updates below BF16's resolution are lost",
    "memory.lora": "LoRA: base weights frozen (no gradients or optimizer states for them)",
    "memory.kbit_upcast": "QLoRA on Hugging Face modules: peft's prepare_model_for_kbit_training "
                          "casts the embeddings, output layer and norms to fp32, so the residual "
                          "stream and each checkpointed layer input are fp32 too; fused kernels "
                          "(--kernels fused: Unsloth, Liger) or pure BF16 training (--optimizer "
                          "adamw-bf16, torchtune) keep them 16-bit",
    "memory.what_inputs": "checkpointed layer inputs",
    "memory.what_saved": "saved activations",
    "memory.left_on_gpu": "; the other {gib:.1f} GiB stay on the GPU",
    "memory.host_activations": "activations in host memory: {gib:.1f} GiB of {what} per GPU (each "
                               "server needs that much free RAM per GPU; at most {host_cap:g} GiB "
                               "per GPU {said}{left})",
    "memory.freed": " (freed before the backward pass reaches the layers: the peak holds the "
                    "larger of the loss and the layer being recomputed or fetched back, with its "
                    "gathered weights)",
    "memory.holds_chunk": "a chunk of tokens' logits at a time, the gradient of its input",
    "memory.holds_logits": "the logits at {bytes:g} B per element",
    "memory.allocator": " (and {gib:.1f} GiB more that PyTorch's caching allocator holds beside "
                        "the upcast logits: an fp32 logit-sized block)",
    "memory.loss": "memory: 'other' includes {gib:.1f} GiB for the loss{allocator}, {holds} and "
                   "the output layer's input{freed}{leaner}",
    "memory.kept_hidden": "final hidden states",
    "memory.kept_logits": "logits",
    "memory.kept": "memory: 'other' includes {gib:.1f} GiB of {kept} that torch pipelining keeps "
                   "on the last stage, {n} micro-batches' outputs held for step()'s merged return "
                   "until the step ends",
    "memory.leaner_chunked": ", a chunked one (--loss chunked) holds {bytes:g} B per element",
    "memory.leaner": "; a fused linear cross-entropy (--loss fused, a job's loss: fused) never "
                     "holds the whole logits{chunked}",
}
