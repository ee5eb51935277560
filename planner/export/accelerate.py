"""Hugging Face accelerate config YAML (FSDP2 or DeepSpeed plugin) and torchrun / accelerate launch
lines.

Key names: huggingface/accelerate main `16cb6eb` (1.15.0.dev0, latest tag v1.14.0), 2026-07-24:
`src/accelerate/commands/launch.py`, `src/accelerate/utils/dataclasses.py`,
`src/accelerate/parallelism_config.py`, `docs/source/usage_guides/fsdp.md`; torchrun flags from
PyTorch 2.14.1 `torch/distributed/run.py`; as summarised in docs/sources/launch-configs.md sections
5 and 6.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from plan.models.said import say_as
from plan.planner.export.deepspeed import (
    autotp_batch_note,
    check_offload,
    check_pure_bf16,
    ds_config,
)
from plan.planner.export.launch import rendezvous, torchrun
from plan.planner.export.layout import (
    ExportError,
    ExportLayout,
    no_expert_parallel,
    no_hybrid_shard,
    no_megatron_only,
    pure_bf16_note,
)

DOC = ("accelerate main 16cb6eb (1.15.0.dev0), src/accelerate/commands/launch.py and "
       "utils/dataclasses.py, 2026-07-24; parallelism checks of accelerate 1.16.0")


def check(layout: ExportLayout, plugin: str, stack: str = "accelerate") -> None:
    """Refuse what `stack` (accelerate, or torchrun-fsdp, which writes the same FSDP config)
    cannot run."""
    no_megatron_only(layout, stack)
    no_expert_parallel(layout, stack)
    if layout.pp > 1:
        raise ExportError(say_as(
            "export.accelerate_no_pipeline_parallelism_pp",
            "{stack}: no pipeline parallelism (the plan uses pp={pp}); try --to megatron or "
            "--to torchtitan",
            stack=stack, pp=layout.pp))
    if layout.recompute in ("selective", "offload", "full_offload"):
        raise ExportError(say_as(
            "export.accelerate_no_recompute_fsdp_activation",
            "{stack}: no {recompute} recompute (fsdp_activation_checkpointing is full "
            "per-layer checkpointing on or off)",
            stack=stack, recompute=layout.recompute))
    if (
        plugin == "fsdp"
        and layout.dp_shard == 1
        and (layout.tp > 1 or layout.cp > 1)
        and layout.dp > 1
    ):
        raise ExportError(say_as(
            "export.accelerate_tp_cp_replicated_unsharded",
            "{stack}: tp or cp with replicated (unsharded) data parallelism is refused by "
            "accelerate's parallelism_config; the plan replicates over dp={dp} unsharded",
            stack=stack, dp=layout.dp))
    if plugin == "deepspeed":
        no_hybrid_shard(layout, stack, say_as("export.where_deepspeed_plugin",
                                                   " with the DeepSpeed plugin"))
    if plugin == "deepspeed" and layout.cp > 1:
        raise ExportError(say_as(
            "export.accelerate_context_parallelism_ring_attention",
            "accelerate: context parallelism (ring attention) needs the FSDP2 plugin, not "
            "DeepSpeed"))
    if plugin == "deepspeed":
        check_offload(layout, "accelerate")
        check_pure_bf16(layout, "accelerate")
    elif layout.optimizer == "adam_bf16" and layout.precision != "bf16":
        raise ExportError(say_as(
            "export.accelerate_pure_bf16_adamw_adamw",
            "{stack}: pure BF16 AdamW (adamw-bf16) trains in bf16, the plan uses {precision}",
            stack=stack, precision=layout.precision))


PURE_TP_NOTE = (
    "pure tensor parallelism (tp={tp}, one data-parallel rank): written as distributed_type "
    "MULTI_GPU with parallelism_config tp_size {tp}, no FSDP plugin, because accelerate 1.16 "
    "refuses an FSDP2 config with nothing to shard (dp_shard and cp both 1: "
    "ParallelismConfig._validate_accelerator); the plan's ZeRO-{zero} over one data-parallel rank "
    "shards nothing; train.py loads the model with tp_plan=\"auto\" (accelerate wraps no DDP when "
    "tp is on)")
"""Why a tp-only layout leaves FSDP out (accelerate 1.16.0 parallelism_config.py and accelerator.py,
read from the PyPI wheel; docs/sources/export-consumers.md)."""


def pure_tensor_parallel(layout: ExportLayout, plugin: str) -> bool:
    """All ranks in one tensor-parallel group (dp 1, cp 1): nothing for FSDP to shard."""
    return plugin == "fsdp" and layout.tp > 1 and layout.dp == 1 and layout.cp == 1


def plugin_for(layout: ExportLayout, forced: str | None) -> str:
    """The plugin accelerate's config names: the forced one (torchrun-fsdp's fsdp), else DeepSpeed
    for a plan on DeepSpeed and FSDP otherwise."""
    if forced:
        return forced
    return "deepspeed" if layout.framework == "deepspeed" else "fsdp"


def config(layout: ExportLayout, plugin: str) -> tuple[dict[str, Any], list[str]]:
    notes: list[str] = []
    nnodes, rank, _, addr, port = rendezvous(layout)
    cfg: dict[str, Any] = {"compute_environment": "LOCAL_MACHINE"}
    simple_ddp = plugin == "fsdp" and layout.zero == 0 and layout.tp == 1 and layout.cp == 1
    tp_only = pure_tensor_parallel(layout, plugin)
    if plugin == "deepspeed":
        # With deepspeed_config_file the YAML must not also set zero_stage or
        # offload_{optimizer,param}_device (accelerate raises ValueError): the stage and a state
        # offload live in ds_config.json.
        cfg["distributed_type"] = "DEEPSPEED"
        cfg["deepspeed_config"] = {"deepspeed_config_file": "ds_config.json",
                                   "deepspeed_multinode_launcher": "standard"}
        if layout.state_offload:
            notes.append("model states in CPU memory: ds_config.json sets "
                         "zero_optimization.offload_param and offload_optimizer to cpu (the "
                         "accelerate YAML may not repeat them beside deepspeed_config_file); "
                         "accelerate swaps a torch AdamW for DeepSpeed's CPU Adam")
    elif simple_ddp or tp_only:
        cfg["distributed_type"] = "MULTI_GPU" if layout.world_size > 1 else "NO"
    else:
        cfg["distributed_type"] = "FSDP"
    if plugin != "deepspeed":  # with a DeepSpeed file, precision lives in the JSON
        cfg["mixed_precision"] = {"bf16": "bf16", "fp16": "fp16", "fp8": "fp8"}[layout.precision]
        # the weights themselves are bf16: no autocast, no fp32 master
        if layout.optimizer == "adam_bf16":
            cfg["mixed_precision"] = "no"
            notes.append(pure_bf16_note("mixed_precision is no, and train.py loads the model with "
                                        "torch_dtype=torch.bfloat16 and builds torch.optim.AdamW "
                                        "on those weights"))
        if layout.precision == "fp8":
            cfg["fp8_config"] = {"backend": "TE", "fp8_format": "HYBRID"}
    cfg.update(
        num_machines=layout.nodes,
        num_processes=layout.world_size,
        machine_rank=0,
        main_process_ip=addr if layout.nodes > 1 else "127.0.0.1",
        main_process_port=int(port) if port.isdigit() else 29500,
        rdzv_backend="static",
        same_network=True,
        gpu_ids="all",
    )
    if cfg["distributed_type"] == "FSDP":
        if layout.zero == 1:
            notes.append("ZeRO-1 has no FSDP equivalent: exported as reshard_after_forward false "
                         "(ZeRO-2-like: gradients sharded too, memory at or below the plan's)")
        if layout.framework == "deepspeed":
            notes.append(f"the plan assumed DeepSpeed ZeRO-{layout.zero}; exported as the FSDP2 "
                         "sharding that matches it")
        cfg["fsdp_config"] = {"fsdp_version": 2, "fsdp_reshard_after_forward": layout.zero == 3,
                              "fsdp_auto_wrap_policy": "TRANSFORMER_BASED_WRAP",
                              "fsdp_state_dict_type": "SHARDED_STATE_DICT",
                              "fsdp_offload_params": layout.state_offload,
                              "fsdp_activation_checkpointing": layout.recompute == "full",
                              "fsdp_cpu_ram_efficient_loading": True}
        if layout.state_offload:
            notes.append("model states in CPU memory: fsdp_offload_params true (FSDP2 "
                         "CPUOffloadPolicy: the sharded parameters and gradients live in host "
                         "memory and the optimizer steps on the CPU)")
        if layout.shard_group:
            notes.append("hybrid sharding (HSDP): parallelism_config shards over "
                         f"{layout.dp_shard} data-parallel ranks per node and replicates "
                         f"{layout.dp_replicate} times (FSDP2 on a 2-D mesh)")
        cfg["parallelism_config"] = {"parallelism_config_dp_replicate_size": layout.dp_replicate,
                                     "parallelism_config_dp_shard_size": layout.dp_shard,
                                     "parallelism_config_tp_size": layout.tp,
                                     "parallelism_config_cp_size": layout.cp}
    if tp_only:
        cfg["parallelism_config"] = {
            "parallelism_config_dp_replicate_size": 1,
            "parallelism_config_dp_shard_size": 1,
            "parallelism_config_tp_size": layout.tp,
            "parallelism_config_cp_size": 1,
        }
        notes.append(PURE_TP_NOTE.format(tp=layout.tp, zero=layout.zero))
    if layout.nodes > 1 or layout.managed:
        notes.append("machine_rank is 0 in the file: each node passes its own with --machine_rank "
                     f"({rank})")
    del nnodes
    return cfg, notes


def _script_args(layout: ExportLayout) -> str:
    """The batch and adapter numbers the training script takes (HF Trainer argument names)."""
    args = [f"--per_device_train_batch_size {layout.micro_batch}",
            f"--gradient_accumulation_steps {layout.grad_accum}", "--max_steps "
                                                                  f"{layout.train_steps}"]
    if layout.recompute == "full":
        args.append("--gradient_checkpointing true")
    return " ".join(args)


def render(
    layout: ExportLayout, forced_plugin: str | None = None
) -> tuple[dict[str, str], list[str]]:
    plugin = plugin_for(layout, forced_plugin)
    check(layout, plugin, "torchrun-fsdp" if forced_plugin == "fsdp" else "accelerate")
    cfg, notes = config(layout, plugin)
    name = "accelerate_config.yaml"
    files: dict[str, str] = {}
    if plugin == "deepspeed":
        files["ds_config.json"] = json.dumps(ds_config(layout), indent=2) + "\n"
        if layout.tp > 1:
            notes.append(autotp_batch_note(layout))
    files[name] = (f"# accelerate config for job {layout.job}. Source: {DOC}.\n"
                   f"# num_processes counts all machines together ({layout.nodes} x "
                   f"{layout.gpus_per_node}).\n"
                   + yaml.safe_dump(cfg, sort_keys=False))
    nnodes, rank, _, addr, port = rendezvous(layout)
    script_args = _script_args(layout)
    accel = (f"accelerate launch --config_file {name} --num_machines {nnodes} --machine_rank "
             f"{rank} --num_processes {layout.world_size} --main_process_ip {addr} "
             f"--main_process_port {port} train.py {script_args}")
    if layout.nodes == 1 and not layout.managed:
        accel = f"accelerate launch --config_file {name} train.py {script_args}"
    raw = torchrun(layout, f"train.py {script_args}")
    lines = ["#!/usr/bin/env bash", f"# Launch for job {layout.job}. Sources: {DOC}; torchrun from "
                                    "PyTorch 2.14.1 "
             "torch/distributed/run.py.", "set -euo pipefail"]
    if forced_plugin == "fsdp" and pure_tensor_parallel(layout, "fsdp"):
        lines += [
            "# torchrun: for a script that applies its own tensor-parallel plan over all "
            f"{layout.tp} ranks (tp only: one data-parallel rank, no fully_shard)",
            raw,
            "# or, for an accelerate script, the same placement through accelerate:",
            f"# {accel}",
        ]
    elif forced_plugin == "fsdp":
        offload = ", offload_policy=CPUOffloadPolicy()" if layout.state_offload else ""
        lines += [
            "# torchrun: for a script that builds its own FSDP2 mesh (fully_shard with "
            f"reshard_after_forward={layout.zero == 3}{offload}, dp_shard={layout.dp_shard}, "
            f"{f'dp_replicate={layout.dp_replicate}, ' if layout.shard_group else ''}"
            f"tp={layout.tp}, cp={layout.cp})",
            raw,
            "# or, for an accelerate script, the same placement through accelerate:",
            f"# {accel}",
        ]
    else:
        lines += [
            accel,
            "# the same placement with plain torchrun (script reads the config itself):",
            f"# {raw}",
        ]
    files["launch.sh"] = "\n".join(lines) + "\n"
    if layout.lora_rank:
        notes.append(
            f"LoRA is applied by the training script (PEFT LoraConfig r={layout.lora_rank}, "
            f"lora_alpha={2 * layout.lora_rank}, target_modules "
            f"{'all-linear' if layout.lora_targets == 'all' else 'q_proj,k_proj,v_proj,o_proj'}"
            + (", base loaded in 4-bit NF4 via BitsAndBytesConfig)" if layout.quant_bits else ")")
        )
    return files, notes
