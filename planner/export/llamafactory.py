"""LLaMA-Factory: a training YAML for `llamafactory-cli train`, with its DeepSpeed JSON where
multi-GPU.

Key names: hiyouga/LLaMA-Factory main `ff6d4d1` (0.9.6.dev0, latest tag v0.9.5), 2026-08-18:
`src/llamafactory/hparams/*.py`, `examples/train_lora/qwen3_lora_sft.yaml`, `examples/train_qlora/`,
`src/llamafactory/launcher.py`; as summarised in docs/sources/launch-configs.md section 4.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from plan.models.said import say_as
from plan.models.stacks import adapters_through_bridge
from plan.planner.estimate.stages import split_problem
from plan.planner.export.deepspeed import (
    autotp_batch_note,
    check_offload,
    check_pure_bf16,
    ds_config,
)
from plan.planner.export.launch import rendezvous
from plan.planner.export.layout import (
    ExportError,
    ExportLayout,
    no_hybrid_shard,
    no_megatron_only,
    pure_bf16_note,
)
from plan.planner.output_target import safe_component

DOC = "LLaMA-Factory main ff6d4d1 (0.9.6.dev0), src/llamafactory/hparams, 2026-08-18"
LAST_CHECKED_RELEASE = (0, 9, 5)
"""The release whose hparams hold every key of the Hugging Face path (llamafactory 0.9.5 wheel,
PyPI, read 2026-12-06); it has no Megatron-Bridge keys."""
RELEASE_INSTALL = "pip install llamafactory==0.9.5"
BRIDGE_INSTALL_COMMAND = ('pip install "llamafactory @ '
                          'git+https://github.com/hiyouga/LLaMA-Factory.git@ff6d4d1" '
                          'megatron-bridge')
BRIDGE_INSTALL = say_as("export.bridge_install", "unreleased main and megatron-bridge: {command}",
                        command=BRIDGE_INSTALL_COMMAND)
"""The Megatron-Bridge backend (USE_MEGATRON_BRIDGE=1) is on main only: ff6d4d1 is the commit whose
keys this exporter writes (docs/sources/launch-configs.md section 4); the reference records no
megatron-bridge version, so none is pinned."""
BRIDGE_GUARD = ("python -c 'import importlib.metadata as m, sys, megatron.bridge; v = "
                "m.version(\"llamafactory\"); sys.exit(None if tuple(int(x) for x in "
                "v.split(\".\")[:3] if x.isdigit()) > (0, 9, 5) else 1)' 2>/dev/null || { echo "
                "'needs LLaMA-Factory main ff6d4d1 with megatron-bridge (see the README)'; exit 2; "
                "}")
_OPTIM = {"adam": "adamw_torch", "adam_8bit": "adamw_8bit", "paged_adam_8bit": "paged_adamw_8bit",
          # the last with pure_bf16
          "adafactor": "adafactor", "sgd": "sgd", "adam_bf16": "adamw_torch"}
_STAGE = {
    "pretrain": "pt",
    "continued_pretrain": "pt",
    "full_finetune": "sft",
    "sft": "sft",
    "lora": "sft",
    "qlora": "sft",
    "dpo": "dpo",
    "lora_dpo": "dpo",
    "qlora_dpo": "dpo",
}
# Chat templates LLaMA-Factory names (src/llamafactory/data/template.py) for families the catalog
# carries; others get `default` and a comment to change it.
_TEMPLATES = (
    ("qwen3", "qwen3_nothink"),
    ("qwen", "qwen"),
    ("llama-3", "llama3"),
    ("llama3", "llama3"),
)


def _template(model_id: str) -> str:
    for prefix, name in _TEMPLATES:
        if model_id.lower().startswith(prefix):
            return name
    return "default"


BRIDGE_NEEDS = say_as("export.bridge_needs", "pipeline, context or expert parallelism, Megatron "
                      "recomputation, or LoRA planned on Megatron")
"""What sends a job to the Megatron-Bridge backend (`uses_bridge`), as refusals and notes say it."""
_BRIDGE = say_as("export.bridge", "the Megatron-Bridge backend (needed for {needs})",
                 needs=BRIDGE_NEEDS)


def uses_bridge(layout: ExportLayout) -> bool:
    """Pipeline, context or expert parallelism, or Megatron's block or selective recomputation,
    needs LLaMA-Factory's Megatron-Bridge backend (`recompute_method: block`,
    `recompute_granularity: selective`, `expert_model_parallel_size`; launch-configs.md section
    4); so does LoRA planned on Megatron (`adapters_through_bridge`): the plan timed Megatron-Core's
    execution, which the Hugging Face path (DeepSpeed or DDP) does not run."""
    return (layout.pp > 1 or layout.cp > 1 or layout.ep > 1 or bool(layout.recompute_layers)
            or (layout.recompute == "selective" and layout.framework == "megatron")
            or adapters_through_bridge(layout.framework, layout.method))


def uses_deepspeed(layout: ExportLayout) -> bool:
    """The Hugging Face path's multi-GPU sharding, tensor parallelism (AutoTP) and ZeRO-Offload of
    the model states (also on one GPU) go through a DeepSpeed JSON (the `deepspeed` key)."""
    if uses_bridge(layout):
        return False
    return (layout.world_size > 1 and (layout.zero > 0 or layout.tp > 1)) or layout.state_offload


def check(layout: ExportLayout) -> None:
    no_hybrid_shard(layout, "llamafactory", say_as(
        "export.where_llamafactory",
        " (its multi-GPU sharding goes through DeepSpeed or Megatron-Bridge)"))
    if not uses_bridge(layout):
        no_megatron_only(layout, "llamafactory", say_as("export.where_hf_path",
                                                          " on the Hugging Face path"))
    if layout.state_offload and uses_bridge(layout):
        raise ExportError(say_as(
            "export.llamafactory_no_cpu_offload_model",
            "llamafactory: no CPU offload of the model states in {bridge}",
            bridge=_BRIDGE))
    if uses_deepspeed(layout):
        check_offload(layout, "llamafactory")
        check_pure_bf16(layout, "llamafactory")
    if layout.optimizer == "adam_bf16":
        if uses_bridge(layout):
            raise ExportError(say_as(
                "export.llamafactory_no_pure_bf16_adamw",
                "llamafactory: no pure BF16 AdamW (pure_bf16) in {bridge} (Megatron keeps "
                "fp32 or fp16 master weights)",
                bridge=_BRIDGE))
        if uses_deepspeed(layout) and layout.zero == 3:
            raise ExportError(say_as(
                "export.llamafactory_pure_bf16_refused_deepspeed",
                "llamafactory: pure_bf16 is refused with DeepSpeed ZeRO-3; try --to "
                "accelerate or --to deepspeed"))
        if layout.precision != "bf16":
            raise ExportError(say_as(
                "export.llamafactory_pure_bf16_adamw_bf16",
                "llamafactory: pure_bf16 (adamw-bf16) trains in bf16, the plan uses "
                "{precision}",
                precision=layout.precision))
    if layout.optimizer not in _OPTIM:
        # (LoRA has no other export: the megatron one has no adapters)
        hint = "" if layout.lora_rank else say_as("export.llamafactory_try_megatron",
                                                  "; try --to megatron")
        raise ExportError(say_as(
            "export.llamafactory_no_optimizer_optim_takes",
            "llamafactory: no {optimizer} optimizer (optim takes {optims}){hint}",
            optimizer=layout.optimizer, optims=', '.join(sorted(set(_OPTIM.values()))), hint=hint))
    if layout.recompute in ("selective", "offload") and not uses_bridge(layout):
        raise ExportError(say_as(
            "export.llamafactory_no_recompute_hugging_face",
            "llamafactory: no {recompute} recompute on the Hugging Face path (only full "
            "per-layer gradient checkpointing on or off)",
            recompute=layout.recompute))
    if uses_bridge(layout):
        _check_bridge(layout)
    if layout.quant_bits and layout.tp > 1:
        raise ExportError(say_as(
            "export.llamafactory_qlora_tensor_parallelism_not",
            "llamafactory: QLoRA with tensor parallelism is not supported (AutoTP over a "
            "4-bit base)"))
    if layout.quant_bits and layout.precision == "fp8":
        raise ExportError(say_as(
            "export.llamafactory_fp8_refused_quantization_bit",
            "llamafactory: fp8 is refused with quantization_bit"))


def _check_bridge(layout: ExportLayout) -> None:
    """What the Megatron-Bridge backend cannot run: stages other than pt and sft, quantization, ZeRO
    above 1, offloading, a layer split Megatron refuses."""
    if _STAGE[layout.method] not in ("pt", "sft"):
        raise ExportError(say_as(
            "export.llamafactory_trains_stages_pt_sft",
            "llamafactory: {bridge} trains stages pt and sft, not {stage} ({method}); "
            "plan it without those, or on fsdp or deepspeed",
            bridge=_BRIDGE, stage=_STAGE[layout.method], method=layout.method))
    if layout.quant_bits:
        raise ExportError(say_as(
            "export.llamafactory_qlora_needs_megatron_bridge",
            "llamafactory: QLoRA with {bridge_needs} needs the Megatron-Bridge backend, "
            "which has no quantization",
            bridge_needs=BRIDGE_NEEDS))
    if layout.zero > 1:
        raise ExportError(say_as(
            "export.llamafactory_shards_optimizer_state_zero",
            "llamafactory: {bridge} shards optimizer state only (ZeRO-1), the plan uses "
            "ZeRO-{zero}",
            bridge=_BRIDGE, zero=layout.zero))
    if layout.recompute in ("offload", "full_offload"):
        raise ExportError(say_as(
            "export.llamafactory_no_activation_checkpoint_offloading",
            "llamafactory: no activation or checkpoint offloading in the Megatron-Bridge "
            "backend"))
    split = split_problem(layout.layers, layout.pp, layout.vpp, "megatron")
    if split:
        raise ExportError(say_as(
            "export.llamafactory_bridge_split",
            "llamafactory: {bridge}: {split}",
            bridge=_BRIDGE, split=split))


def training_yaml(layout: ExportLayout, ds_file: str | None) -> dict[str, Any]:
    cfg: dict[str, Any] = {"model_name_or_path": layout.hf_name}
    if layout.quant_bits:
        cfg.update(
            quantization_bit=layout.quant_bits,
            quantization_method="bnb",
            quantization_type="nf4",
            double_quantization=True,
        )
    cfg.update(stage=_STAGE[layout.method], do_train=True,
               finetuning_type="lora" if layout.lora_rank else "full")
    if layout.lora_rank:
        cfg.update(
            lora_rank=layout.lora_rank,
            lora_alpha=2 * layout.lora_rank,
            lora_target="all" if layout.lora_targets == "all" else "q_proj,k_proj,v_proj,o_proj",
        )
    if ds_file:
        cfg["deepspeed"] = ds_file
    cfg.update(dataset="your_dataset", cutoff_len=layout.seq_len,
               per_device_train_batch_size=layout.micro_batch,
               gradient_accumulation_steps=layout.grad_accum, max_steps=layout.train_steps,
               optim=_OPTIM[layout.optimizer], output_dir=f"saves/{safe_component(layout.job)}")
    if _STAGE[layout.method] in ("sft", "dpo"):  # chat data: instructions, or preference pairs
        cfg["template"] = _template(layout.model_id)
    if layout.precision == "fp16":
        cfg["fp16"] = True
    else:
        cfg["bf16"] = True
    if layout.optimizer == "adam_bf16":  # no AMP: the weights and AdamW's moments stay bf16
        cfg["pure_bf16"] = True
    if layout.precision == "fp8":
        cfg["fp8"] = True
    if uses_bridge(layout):
        cfg.update(tensor_model_parallel_size=layout.tp, pipeline_model_parallel_size=layout.pp,
                   context_parallel_size=layout.cp, sequence_parallel=layout.tp > 1,
                   use_distributed_optimizer=layout.zero == 1)
        if layout.vpp > 1:
            cfg["virtual_pipeline_model_parallel_size"] = layout.vpp
        if layout.ep > 1:
            cfg["expert_model_parallel_size"] = layout.ep
        if layout.recompute in ("selective", "full"):
            cfg["recompute_granularity"] = layout.recompute
        if layout.recompute == "full":
            # Megatron's block method: only that many layers per chunk
            block = layout.recompute_layers
            cfg.update(
                recompute_method="block" if block else "uniform", recompute_num_layers=block or 1
            )
    else:
        cfg["disable_gradient_checkpointing"] = layout.recompute == "none"
        # the checkpoints in host memory (Unsloth's gradient checkpointing)
        if layout.recompute == "full_offload":
            cfg["use_unsloth_gc"] = True
    return cfg


def render(layout: ExportLayout) -> tuple[dict[str, str], list[str]]:
    check(layout)
    notes: list[str] = []
    files: dict[str, str] = {}
    ds_file = None
    if uses_deepspeed(layout):
        ds_file = "ds_config.json"
        files[ds_file] = json.dumps(ds_config(layout), indent=2) + "\n"
        if layout.framework == "fsdp":
            notes.append("the plan assumed FSDP; LLaMA-Factory's documented multi-GPU path is "
                         f"DeepSpeed, exported as the same sharding (ZeRO-{layout.zero})")
        if layout.state_offload:
            notes.append("model states in CPU memory: ds_config.json sets "
                         "zero_optimization.offload_param and offload_optimizer to cpu, as "
                         "LLaMA-Factory's examples/deepspeed/ds_z3_offload_config.json; accelerate "
                         "swaps the AdamW for DeepSpeed's CPU Adam")
        if layout.tp > 1:
            notes.append(autotp_batch_note(layout) + "; DeepSpeed's docs disagree on AutoTP with "
                                                     "ZeRO-3 "
                         "(config page: 0-3, tutorial: 0-2)")
    cfg = training_yaml(layout, ds_file)
    if layout.optimizer == "adam_bf16":
        notes.append(pure_bf16_note("pure_bf16 true, no AMP: the weights and AdamW's moments stay "
                                    "bf16"))
    if cfg.get("template") == "default":
        notes.append(f"template: no LLaMA-Factory chat template is mapped for {layout.model_id} "
                     "here; `default` is written: set your model's template "
                     "(src/llamafactory/data/template.py)")
    header = [f"# LLaMA-Factory training config for {layout.job}. Source: {DOC}.",
              "# Set `dataset` to your entry in data/dataset_info.json."]
    files["train.yaml"] = "\n".join(header) + "\n" + yaml.safe_dump(cfg, sort_keys=False)
    nnodes, rank, nproc, addr, port = rendezvous(layout)
    env = []
    if uses_bridge(layout):
        env.append("USE_MEGATRON_BRIDGE=1")
    if layout.world_size > 1 or ds_file:
        env.append("FORCE_TORCHRUN=1")
    if layout.nodes > 1 or layout.managed:
        env += [
            f"NNODES={nnodes}",
            f"NODE_RANK={rank}",
            f"NPROC_PER_NODE={nproc}",
            f"MASTER_ADDR={addr}",
            f"MASTER_PORT={port}",
        ]
    script = ["#!/usr/bin/env bash", f"# LLaMA-Factory launch for job {layout.job}. Source: {DOC}, "
              "src/llamafactory/launcher.py."]
    if uses_bridge(layout):
        script += [f"# Needs {BRIDGE_INSTALL}", "set -euo pipefail", BRIDGE_GUARD]
        notes.append(f"Megatron-Bridge backend (USE_MEGATRON_BRIDGE=1, for {BRIDGE_NEEDS}): "
                     f"release 0.9.5 rejects its keys; needs {BRIDGE_INSTALL}; launch.sh stops "
                     "without them")
    else:
        script += [f"# Needs LLaMA-Factory 0.9.5 or later ({RELEASE_INSTALL}): every key checked "
                   "against "
                   "0.9.5's hparams.", "set -euo pipefail"]
        notes.append(f"LLaMA-Factory 0.9.5 or later ({RELEASE_INSTALL}): every key of train.yaml "
                     "is in release 0.9.5's hparams")
    script.append(" ".join([*env, "llamafactory-cli train train.yaml"]))
    files["launch.sh"] = "\n".join(script) + "\n"
    return files, notes
