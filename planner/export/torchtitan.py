"""torchtitan: a TOML job config (the TOML era, v0.2.2) and its torchrun line.

Key names: torchtitan v0.2.2 (2026-02-20) `torchtitan/config/job_config.py`, `run_train.sh`,
`multinode_trainer.slurm`, as summarised in docs/sources/launch-configs.md section 3. torchtitan
main after 2026-02-23 configures jobs in Python instead; this file is for v0.2.2.
"""

from __future__ import annotations

from typing import Any

from plan.models.methods import ADAPTER_METHODS, DPO_METHODS
from plan.models.said import say_as
from plan.planner.estimate.stages import split_problem, torchtitan_layers_per_stage
from plan.planner.export.launch import torchrun
from plan.planner.export.layout import ExportError, ExportLayout, no_megatron_only
from plan.planner.export.torchtitan_models import FLAVORS, flavor_of
from plan.planner.plan import fused_pytorch_kernels

DOC = "torchtitan v0.2.2 (2026-02-20) torchtitan/config/job_config.py"
VERSION = "0.2.2"
"""The release whose TOML job files this exporter writes: 0.3.0 (the next) reads Python configs
chosen by --module/--config and refuses a TOML file ("--module is required"); the keys differ before
0.2.2."""
VERSION_GUARD = ("python -c 'import importlib.metadata as m, sys; "
                 f"sys.exit(m.version(\"torchtitan\") != \"{VERSION}\")' 2>/dev/null || {{ echo "
                 f"'job.toml is for torchtitan {VERSION}: pip install torchtitan=={VERSION}'; exit "
                 f"2; }}")


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def dump_toml(sections: dict[str, dict[str, Any]], header: list[str]) -> str:
    out = [f"# {line}" for line in header]
    for name, table in sections.items():
        out += ["", f"[{name}]"] + [f"{key} = {_toml_value(value)}" for key, value in table.items()]
    return "\n".join(out) + "\n"


def check(layout: ExportLayout) -> None:
    no_megatron_only(layout, "torchtitan")
    if layout.method in DPO_METHODS:
        raise ExportError(say_as(
            "export.torchtitan_no_dpo_loss_frozen",
            "torchtitan: no DPO loss or frozen reference model ({method}); try --to "
            "llamafactory (stage dpo)",
            method=layout.method))
    if layout.method in ADAPTER_METHODS:
        raise ExportError(say_as(
            "export.torchtitan_v0_2_2_has",
            "torchtitan: v0.2.2 has no LoRA/QLoRA ({method}); try --to llamafactory",
            method=layout.method))
    if layout.recompute in ("offload", "full_offload"):
        raise ExportError(say_as(
            "export.torchtitan_no_activation_checkpoint_offloading",
            "torchtitan: no activation or checkpoint offloading (enable_cpu_offload moves "
            "parameters, gradients and optimizer state, not activations)"))
    if layout.state_offload and layout.dp == 1 and layout.cp == 1:
        # v0.2.2 parallelize: FSDP2 (and with it CPUOffloadPolicy) is applied only when dp_shard > 1
        # or cp > 1
        raise ExportError(say_as(
            "export.torchtitan_enable_cpu_offload_goes",
            "torchtitan: enable_cpu_offload goes through FSDP2, which v0.2.2 applies only "
            "when data_parallel_shard_degree or context_parallel_degree > 1; the plan "
            "offloads model states on one GPU (try --to deepspeed)"))
    if layout.precision == "fp16":
        raise ExportError(say_as(
            "export.torchtitan_mixed_precision_param_takes",
            "torchtitan: mixed_precision_param takes bfloat16 or float32, not fp16"))
    if layout.optimizer not in ("adam",):
        raise ExportError(say_as(
            "export.torchtitan_optimizer_not_exported_adamw",
            "torchtitan: optimizer {optimizer} is not exported (AdamW or Adam with FSDP2's "
            "mixed precision only)",
            optimizer=layout.optimizer))
    split = split_problem(layout.layers, layout.pp, layout.vpp, "fsdp")
    if split:
        raise ExportError(say_as(
            "export.torchtitan_split",
            "torchtitan: {split}",
            split=split))
    if flavor_of(layout.model_id) is None:
        names = sorted({f.name for f in FLAVORS.values()})
        raise ExportError(say_as(
            "export.torchtitan_v_has_no_train",
            "torchtitan: v{version} has no train spec and flavor for {model_id} (its models "
            "here: {models}); without one it trains its debugmodel",
            version=VERSION, model_id=layout.model_id, models=', '.join(names)))


def sections(layout: ExportLayout) -> dict[str, dict[str, Any]]:
    training: dict[str, Any] = {}
    parallel: dict[str, Any] = {}
    if layout.pp > 1:
        # local_batch_size is per DP rank per accumulation step and is split into PP micro-batches.
        training["local_batch_size"] = layout.micro_batch * layout.grad_accum
        parallel["pipeline_parallel_microbatch_size"] = layout.micro_batch
    else:
        training["local_batch_size"] = layout.micro_batch
    training["global_batch_size"] = layout.global_batch
    training["seq_len"] = layout.seq_len
    training["mixed_precision_param"] = "bfloat16"
    training["mixed_precision_reduce"] = "float32"
    training["steps"] = layout.train_steps
    # FSDP2 CPUOffloadPolicy: parameters, gradients and optimizer state in host memory
    if layout.state_offload:
        training["enable_cpu_offload"] = True
    # > 1 with a shard degree > 1: HSDP
    parallel["data_parallel_replicate_degree"] = layout.dp_replicate
    parallel["data_parallel_shard_degree"] = layout.dp_shard
    if layout.zero > 0:
        parallel["fsdp_reshard_after_forward"] = "always" if layout.zero == 3 else "never"
    parallel["tensor_parallel_degree"] = layout.tp
    parallel["context_parallel_degree"] = layout.cp
    parallel["pipeline_parallel_degree"] = layout.pp
    # experts split over tp too, as the estimate counts them (ETP must be tp or 1)
    if layout.ep > 1:
        parallel["expert_parallel_degree"] = layout.ep
        parallel["expert_tensor_parallel_degree"] = layout.tp
    if layout.pp > 1:
        parallel["pipeline_parallel_schedule"] = "Interleaved1F1B" if layout.vpp > 1 else "1F1B"
        stages = layout.pp * layout.vpp
        parallel["pipeline_parallel_layers_per_stage"] = torchtitan_layers_per_stage(
            layout.layers, stages
        )
    checkpoint: dict[str, Any] = {"mode": layout.recompute}
    if layout.recompute == "selective":
        checkpoint["selective_ac_option"] = "op"
    spec = flavor_of(layout.model_id)
    assert spec is not None  # check() refuses a model with no flavor
    model: dict[str, Any] = {"name": spec.name, "flavor": spec.flavor,
                             "hf_assets_path": f"./assets/hf/{layout.hf_name}"}
    out: dict[str, dict[str, Any]] = {
        "job": {"description": f"{layout.job} ({layout.method})"},
        "model": model,
        "training": training,
        "parallelism": parallel,
        "activation_checkpoint": checkpoint,
        "optimizer": {"name": "AdamW"},
    }
    if fused_pytorch_kernels(layout.kernels, layout.framework):
        out["compile"] = {"enable": True}  # the plan's fused kernels: torch.compile
    if layout.precision == "fp8":
        model["converters"] = ["quantize.linear.float8"]
        out["quantize.linear.float8"] = {"recipe_name": "tensorwise"}
    return out


def render(layout: ExportLayout) -> tuple[dict[str, str], list[str]]:
    check(layout)
    notes = []
    if layout.state_offload:
        notes.append("model states in CPU memory: [training] enable_cpu_offload = true (FSDP2 "
                     "offload of parameters, gradients and optimizer state)")
    if layout.zero == 1:
        notes.append("ZeRO-1 has no FSDP equivalent: exported as FSDP with reshard_after_forward "
                     "never (ZeRO-2-like: gradients sharded too, memory at or below the plan's)")
    spec = flavor_of(layout.model_id)
    assert spec is not None
    notes.append(f"torchtitan {VERSION} exactly (pip install torchtitan=={VERSION}): the last "
                 "release that reads TOML job files; launch.sh stops on another version. "
                 f"model.name {spec.name} and flavor {spec.flavor}: torchtitan/models/{spec.name} "
                 f"of that release, the shape of {layout.model_id}")
    header = [f"torchtitan job config for {layout.job}. Source: {DOC}.",
              f"For torchtitan {VERSION} (pip install torchtitan=={VERSION}): later releases read "
              "no TOML.",
              *notes[:-1]]
    toml = dump_toml(sections(layout), header)
    script = ["#!/usr/bin/env bash", f"# torchtitan launch for job {layout.job}. Source: {DOC}, "
                                     "run_train.sh "
              "and multinode_trainer.slurm.", "set -euo pipefail", VERSION_GUARD,
              torchrun(layout, "-m torchtitan.train --job.config_file ./job.toml")]
    return {"job.toml": toml, "launch.sh": "\n".join(script) + "\n"}, notes
