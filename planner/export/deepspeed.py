"""DeepSpeed: the JSON config and a `deepspeed` launch line.

Key names: DeepSpeed `docs/_pages/config-json.md`, `deepspeed/runtime/config.py`,
`deepspeed/launcher/runner.py` (deepspeedai/DeepSpeed main `edaa722`, version.txt 0.19.6,
2026-08-22), as summarised in docs/sources/launch-configs.md section 1.
"""

from __future__ import annotations

import json
from typing import Any

from plan.models.said import say_as
from plan.planner.estimate.types import DEEPSPEED_OFFLOAD_OPTIMIZERS, framework_zero
from plan.planner.export.launch import MASTER_PORT, rendezvous
from plan.planner.export.layout import (
    ExportError,
    ExportLayout,
    no_expert_parallel,
    no_hybrid_shard,
    no_megatron_only,
    pure_bf16_note,
)

DOC = (
    "DeepSpeed docs/_pages/config-json.md and deepspeed/launcher/runner.py, main edaa722 (0.19.6), "
    "2026-08-22"
)
CLIENT_OPTIMIZERS = {"adam_8bit": "bitsandbytes AdamW8bit", "paged_adam_8bit": "bitsandbytes "
                                                                               "PagedAdamW8bit",
                     "adafactor": "transformers Adafactor", "sgd": "torch.optim.SGD"}


def ds_config(layout: ExportLayout) -> dict[str, Any]:
    """The DeepSpeed JSON for this layout (also read by HF Trainer / LLaMA-Factory and accelerate,
    which pass their own batch keys and must agree with these."""
    config: dict[str, Any] = {
        "train_micro_batch_size_per_gpu": layout.micro_batch,
        "gradient_accumulation_steps": layout.grad_accum,
    }
    if layout.tp == 1:
        # With AutoTP and no mpu DeepSpeed checks the batch against all processes, so the safe
        # export gives micro-batch and accumulation only and lets it infer the rest
        # (launch-configs.md s.1).
        config["train_batch_size"] = layout.global_batch
    if layout.precision == "fp16":
        config["fp16"] = {"enabled": True, "loss_scale": 0}
    else:  # bf16, and fp8 runs on a bf16 base (its fp8 matmuls come from model code, not this file)
        config["bf16"] = {"enabled": True}
        # pure BF16: no fp32 master weights, gradients or moments
        if layout.optimizer == "adam_bf16":
            config["bf16"].update(bf16_master_weights_and_grads=True, bf16_optimizer_states=True)
    config["zero_optimization"] = {"stage": layout.zero}
    # ZeRO-3 with the sharded parameters, gradients and optimizer states in host memory
    if layout.state_offload:
        config["zero_optimization"].update(offload_param={"device": "cpu", "pin_memory": True},
                                           offload_optimizer={"device": "cpu", "pin_memory": True})
    if layout.tp > 1:
        config["tensor_parallel"] = {"autotp_size": layout.tp}
    if layout.cp > 1:
        config["sequence_parallel_size"] = layout.cp
    if layout.recompute == "full":
        config["activation_checkpointing"] = {
            "partition_activations": False,
            "cpu_checkpointing": False,
            "contiguous_memory_optimization": False,
        }
    if layout.optimizer in CLIENT_OPTIMIZERS and layout.zero > 0:
        config["zero_allow_untested_optimizer"] = True
    return config


def autotp_batch_note(layout: ExportLayout) -> str:
    """What DeepSpeed's batch counters read under AutoTP with no mpu: DeepSpeedConfig is built
    before the tensor-parallel groups exist and takes every process as data-parallel
    (deepspeed/runtime/config.py DeepSpeedConfig.__init__ and _set_batch_related_parameters;
    engine.py global_samples and the throughput timer read train_batch_size()), DeepSpeed 0.19.8
    from PyPI, read 2026-12-06 (docs/sources/export-consumers.md)."""
    inferred = layout.micro_batch * layout.grad_accum * layout.world_size
    return (f"tp={layout.tp} through AutoTP (tensor_parallel.autotp_size) with no mpu: DeepSpeed "
            f"counts all {layout.world_size} processes as data-parallel and infers "
            f"train_batch_size = micro-batch {layout.micro_batch} x accumulation "
            f"{layout.grad_accum} x {layout.world_size} = {inferred}, {layout.tp}x the plan's "
            f"{layout.global_batch}; its sample counters (global_samples, the throughput timer's "
            "samples per second) and any schedule stepped in samples read that number. A step "
            f"still trains on {layout.global_batch} distinct sequences (the ranks of a "
            "tensor-parallel group share their micro-batch); writing train_batch_size "
            f"{layout.global_batch} would fail DeepSpeed's batch assertion, so ds_config.json "
            "leaves it out")


def check_offload(layout: ExportLayout, stack: str) -> None:
    """What ZeRO-Offload of the model states (`state_offload`) needs from a DeepSpeed JSON, for
    every stack that writes one: stage 3 (offload_param is stage 3 only), and Adam, as the optimizer
    steps on the CPU with DeepSpeed's CPU Adam (DeepSpeed refuses another client optimizer with
    offload_optimizer unless zero_force_ds_cpu_optimizer is false; accelerate, under HF Trainer and
    LLaMA-Factory, swaps a torch optimizer for DeepSpeedCPUAdam: deepspeed/runtime/engine.py,
    accelerate/accelerator.py)."""
    if not layout.state_offload:
        return
    if layout.zero != 3:
        raise ExportError(say_as(
            "export.deepspeed_offload_param_parameters_cpu",
            "{stack}: offload_param (parameters in CPU memory) is ZeRO stage 3 only, the plan "
            "uses ZeRO-{zero}",
            stack=stack, zero=layout.zero))
    if layout.optimizer not in DEEPSPEED_OFFLOAD_OPTIMIZERS:
        raise ExportError(say_as(
            "export.deepspeed_no_cpu_step_optimizer",
            "{stack}: no CPU step for the {optimizer} optimizer under ZeRO-Offload (DeepSpeed "
            "steps the offloaded optimizer states with its CPU Adam); a job with optimizer "
            "adamw exports",
            stack=stack, optimizer=layout.optimizer))


def check_pure_bf16(layout: ExportLayout, stack: str) -> None:
    """Pure BF16 AdamW (`adam_bf16`) in a DeepSpeed JSON: bf16_master_weights_and_grads and
    bf16_optimizer_states, which DeepSpeed takes with ZeRO stage 1-3 only (launch-configs.md section
    1)."""
    if layout.optimizer != "adam_bf16":
        return
    if layout.precision == "fp16":
        raise ExportError(say_as(
            "export.deepspeed_pure_bf16_adamw_adamw",
            "{stack}: pure BF16 AdamW (adamw-bf16) with fp16 training; plan it with bf16",
            stack=stack))
    if layout.zero == 0:
        raise ExportError(say_as(
            "export.deepspeed_pure_bf16_adamw_bf16",
            "{stack}: pure BF16 AdamW (bf16_master_weights_and_grads, bf16_optimizer_states) "
            "needs ZeRO stage 1-3, the plan uses ZeRO-0",
            stack=stack))


def check(layout: ExportLayout) -> None:
    """Raise ExportError for what the DeepSpeed engine and JSON cannot express."""
    no_megatron_only(layout, "deepspeed")
    no_hybrid_shard(layout, "deepspeed")
    no_expert_parallel(layout, "deepspeed")
    check_offload(layout, "deepspeed")
    check_pure_bf16(layout, "deepspeed")
    if layout.vpp > 1:
        raise ExportError(say_as(
            "export.deepspeed_pipeline_engine_has_no",
            "deepspeed: the pipeline engine has no interleaved (virtual) pipeline stages; the "
            "plan uses vpp={vpp}",
            vpp=layout.vpp))
    if layout.zero not in framework_zero("deepspeed", layout.pp):
        raise ExportError(say_as(
            "export.deepspeed_pipeline_parallelism_pp_runs",
            "deepspeed: pipeline parallelism (pp={pp}) runs with ZeRO stage 0 or 1 only, the "
            "plan uses ZeRO-{zero}",
            pp=layout.pp, zero=layout.zero))
    if layout.recompute in ("selective", "offload", "full_offload"):
        raise ExportError(say_as(
            "export.deepspeed_no_activation_policy",
            "deepspeed: no {recompute} activation policy for a Hugging Face model under DeepSpeed "
            "(its activation_checkpointing block, cpu_checkpointing included, configures only "
            "models built on deepspeed.checkpointing){hint}",
            recompute=layout.recompute,
            hint=say_as("export.deepspeed_try_unsloth", "; try --to llamafactory (use_unsloth_gc)")
            if layout.recompute == "full_offload" else ""))
    if layout.precision == "fp8":
        raise ExportError(say_as(
            "export.deepspeed_deepspeed_json_has_no",
            "deepspeed: the DeepSpeed JSON has no fp8 setting (fp8 comes from model code such "
            "as Transformer Engine)"))


def render(layout: ExportLayout) -> tuple[dict[str, str], list[str]]:
    check(layout)
    config = ds_config(layout)
    files = {"ds_config.json": json.dumps(config, indent=2) + "\n"}
    nnodes, rank, nproc, addr, port = rendezvous(layout)
    lines = ["#!/usr/bin/env bash", f"# DeepSpeed launch for job {layout.job}. Source: {DOC}.",
             "set -euo pipefail"]
    args = "--deepspeed --deepspeed_config ds_config.json"
    if layout.nodes == 1 and not layout.managed:
        lines.append(f"deepspeed --num_gpus={layout.gpus_per_node} --master_port={MASTER_PORT} "
                     f"train.py {args}")
    else:
        host = "${MASTER_ADDR}" if not layout.managed else addr
        lines += ["# hostfile: one line per node, `<hostname> slots=<GPUs>`; written here from "
                  "NODE_LIST/host names you fill in",
                  f"test -f hostfile || {{ echo 'write hostfile: {layout.nodes} lines <host> "
                  f"slots={layout.gpus_per_node}'; exit 2; }}",
                  f"deepspeed --hostfile=hostfile --no_ssh --num_nodes={nnodes} --num_gpus={nproc} "
                  f"--node_rank={rank} --master_addr={host} --master_port={port} train.py {args}"]
    files["launch.sh"] = "\n".join(lines) + "\n"
    notes = [f"DeepSpeed JSON has no comments: its source is {DOC}"]
    if layout.pp > 1:
        notes.append(f"pp={layout.pp} is set in model code: PipelineModule(layers=..., "
                     f"num_stages={layout.pp})")
    if layout.tp > 1:
        notes.append(autotp_batch_note(layout))
    if layout.cp > 1:
        notes.append(f"cp={layout.cp} maps to DeepSpeed Ulysses sequence_parallel_size (all-to-all "
                     "over heads), not ring attention; the script wires UlyssesSPAttentionHF")
    if layout.recompute == "full":
        notes.append("recompute full: the script turns it on (HF: "
                     "model.gradient_checkpointing_enable())")
    if layout.state_offload:
        notes.append("model states in CPU memory: zero_optimization.offload_param and "
                     "offload_optimizer on cpu (pinned); the optimizer steps on the CPU, so pass "
                     "DeepSpeed's CPU Adam (deepspeed.ops.adam.DeepSpeedCPUAdam) to "
                     "deepspeed.initialize: DeepSpeed refuses another client optimizer with "
                     "offload unless zero_force_ds_cpu_optimizer is false")
    if layout.optimizer in CLIENT_OPTIMIZERS:
        notes.append(f"optimizer {layout.optimizer}: pass {CLIENT_OPTIMIZERS[layout.optimizer]} to "
                     "deepspeed.initialize as a client optimizer")
    if layout.optimizer == "adam_bf16":
        notes.append(pure_bf16_note("bf16.bf16_master_weights_and_grads and bf16_optimizer_states "
                                    "in ds_config.json"))
    if layout.lora_rank:
        notes.append(f"LoRA (rank {layout.lora_rank}) is applied by PEFT in train.py; DeepSpeed "
                     "has no LoRA key")
    if layout.quant_bits:
        notes.append("QLoRA: the script loads the base in 4-bit NF4 (bitsandbytes) before "
                     "deepspeed.initialize")
    return files, notes
