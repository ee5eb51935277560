"""MindSpeed-LLM on Ascend NPUs: the `--to megatron` export of a job planned on an Ascend card.

MindSpeed-LLM runs Megatron-Core on torch_npu and HCCL with its own entry points (`pretrain_gpt.py`,
`posttrain_gpt.py` in its repository root), flags and environment; a CUDA Megatron-LM script does
not run there. Flags, entry points, environment variables and the install line: MindSpeed-LLM tag
v26.1.0 (commit 2b7130c, 2026-08-04), its example scripts `examples/mcore/<model>/*_ptd.sh`,
`docs/zh/pytorch/training/install_guide.md` and
`docs/zh/pytorch/features/mcore/environment_variable.md`, as copied into
docs/sources/mindspeed-llm.md. Megatron flags it inherits (core_v0.12.1) as in
docs/sources/launch-configs.md section 2.
"""

from __future__ import annotations

import json
from typing import Any

from plan.models.methods import DPO_METHODS
from plan.models.said import say_as
from plan.planner.estimate.types import interleaving_refused, megatron_splits_sequence
from plan.planner.export.checkpoint import save_interval_steps
from plan.planner.export.launch import rendezvous
from plan.planner.export.layout import ExportError, ExportLayout, no_hybrid_shard

DOC = "MindSpeed-LLM v26.1.0 (commit 2b7130c, 2026-08-04), examples/mcore and docs/zh/pytorch"
INSTALL = (
    "torch 2.7.1 + torch_npu 2.7.1post8, MindSpeed at 26.1.0_core_r0.12.1 (pip install -e .), "
    "Megatron-LM core_v0.12.1's megatron/ copied into MindSpeed-LLM at tag 26.1.0, CANN 9.1.0"
)
CANN_ENV = ("/usr/local/Ascend/cann/set_env.sh", "/usr/local/Ascend/nnal/atb/set_env.sh")
NPU_ENV = {
    "PYTORCH_NPU_ALLOC_CONF": "expandable_segments:True",  # memory fragmentation (doc default off)
    "HCCL_CONNECT_TIMEOUT": "1800",  # the Qwen3-8B example's value; HCCL's default is 120 s
    "TASK_QUEUE_ENABLE": "2",
    "CPU_AFFINITY_CONF": "1",
}
"""The environment every MindSpeed-LLM example script exports (docs/sources/mindspeed-llm.md)."""
_OPTIMIZER = {"adam": "adam", "sgd": "sgd"}
_SFT_METHODS = ("full_finetune", "sft", "lora")
# ModelArts dedicated-pool flavors by NPUs per node (CreateTrainingJob API v2; mindspeed-llm.md)
_POOL_FLAVOR = {
    1: "modelarts.pool.visual.xlarge",
    2: "modelarts.pool.visual.2xlarge",
    4: "modelarts.pool.visual.4xlarge",
    8: "modelarts.pool.visual.8xlarge",
    16: "modelarts.pool.visual.16xlarge",
}


def check(layout: ExportLayout) -> None:
    """Refuse, in one line, what MindSpeed-LLM on NPUs cannot run, CUDA-only settings first."""
    stack = say_as("export.mindspeed_stack", "megatron: MindSpeed-LLM on Ascend")
    cuda_only = {
        "fp8": layout.precision == "fp8",
        say_as("export.mindspeed_precision_aware",
               "the precision-aware optimizer (Transformer Engine)"): layout.optimizer
        == "adam_precision_aware",
        say_as("export.mindspeed_nf4", "a 4-bit NF4 base (bitsandbytes)"): bool(layout.quant_bits),
    }
    for what, used in cuda_only.items():
        if used:
            raise ExportError(say_as(
                "export.mindspeed_cuda_job_planned_npus",
                "{stack}: {what} is CUDA-only, and the job is planned on {gpu} NPUs",
                stack=stack, what=what, gpu=layout.gpu))
    no_hybrid_shard(layout, "megatron", say_as("export.where_mindspeed", " in MindSpeed-LLM"))
    if layout.method in DPO_METHODS:
        raise ExportError(say_as(
            "export.mindspeed_no_dpo_entry_point",
            "{stack}: no DPO entry point in the MindSpeed-LLM launch read ({method})",
            stack=stack, method=layout.method))
    if layout.zero > 1:
        raise ExportError(say_as(
            "export.mindspeed_shards_optimizer_states_use",
            "{stack}: shards optimizer states only (--use-distributed-optimizer, ZeRO-1); the "
            "plan uses ZeRO-{zero}",
            stack=stack, zero=layout.zero))
    if layout.state_offload or layout.recompute in ("offload", "full_offload"):
        raise ExportError(say_as(
            "export.mindspeed_no_host_memory_offload",
            "{stack}: no host-memory offload of this plan's kind in the flags read",
            stack=stack))
    if layout.optimizer not in _OPTIMIZER:
        raise ExportError(say_as(
            "export.mindspeed_optimizer_not_megatron_optimizer",
            "{stack}: optimizer {optimizer} is not a Megatron optimizer (adam, sgd)",
            stack=stack, optimizer=layout.optimizer))
    if layout.pp > 1 and (layout.layers % layout.pp or (layout.layers // layout.pp) % layout.vpp):
        raise ExportError(say_as(
            "export.mindspeed_layers_do_not_split",
            "{stack}: {layers} layers do not split evenly over pp={pp} x vpp={vpp} (the "
            "examples' --num-layers-per-virtual-pipeline-stage only)",
            stack=stack, layers=layout.layers, pp=layout.pp, vpp=layout.vpp))
    if interleaving_refused("megatron", layout.vpp, layout.grad_accum, layout.pp):
        raise ExportError(say_as(
            "export.mindspeed_interleaved_schedule_needs_at",
            "{stack}: the interleaved schedule needs at least pp={pp} micro-batches per step, "
            "the plan has {grad_accum}",
            stack=stack, pp=layout.pp, grad_accum=layout.grad_accum))
    if not megatron_splits_sequence(layout.seq_len, layout.cp):
        raise ExportError(say_as(
            "export.mindspeed_sequence_length_not_multiple",
            "{stack}: sequence length {seq_len} is not a multiple of 2 x cp",
            stack=stack, seq_len=layout.seq_len))


def entry_point(layout: ExportLayout) -> tuple[str, list[str]]:
    """(script, its stage flags): pre-training, or posttrain_gpt.py's SFT (full or LoRA)."""
    if layout.method not in _SFT_METHODS:
        return "pretrain_gpt.py", []
    flags = ["--finetune --stage sft --is-instruction-dataset --prompt-type $PROMPT_TYPE"]
    if layout.lora_rank:
        flags.append(f"--lora-r {layout.lora_rank}")
    return "posttrain_gpt.py", flags


def arguments(layout: ExportLayout) -> list[str]:
    """The script's flags, one item per line (flag and its value)."""
    args = [
        "--use-mcore-models",
        f"--num-layers {layout.layers}",
        f"--hidden-size {layout.hidden_size}",
        f"--ffn-hidden-size {layout.ffn_hidden_size}",
        f"--num-attention-heads {layout.num_heads}",
    ]
    if layout.num_kv_heads != layout.num_heads:
        args.append(f"--group-query-attention --num-query-groups {layout.num_kv_heads}")
    args += [
        f"--seq-length {layout.seq_len}",
        f"--max-position-embeddings {layout.seq_len}",
        f"--tensor-model-parallel-size {layout.tp}",
    ]
    if layout.tp > 1:
        args.append("--sequence-parallel")
    args.append(f"--pipeline-model-parallel-size {layout.pp}")
    if layout.vpp > 1:
        args.append(
            f"--num-layers-per-virtual-pipeline-stage {layout.layers // (layout.pp * layout.vpp)}"
        )
    args.append(f"--context-parallel-size {layout.cp}")
    if layout.cp > 1:
        args.append("--context-parallel-algo megatron_cp_algo")  # ring attention, as the plan's cp
    if layout.ep > 1:
        args.append(
            f"--expert-model-parallel-size {layout.ep} --expert-tensor-parallel-size {layout.tp}"
        )
    args += [
        f"--micro-batch-size {layout.micro_batch}",
        f"--global-batch-size {layout.global_batch}",
    ]
    if layout.zero == 1:
        args.append("--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather")
    if layout.recompute == "selective":
        args.append("--recompute-granularity selective")
    elif layout.recompute == "full":
        block = layout.recompute_layers
        args.append(
            "--recompute-granularity full "
            + (
                f"--recompute-method block --recompute-num-layers {block}"
                if block
                else "--recompute-method uniform --recompute-num-layers 1"
            )
        )
    args.append("--fp16" if layout.precision == "fp16" else "--bf16")
    every, _ = save_interval_steps(layout)
    args += [
        f"--optimizer {_OPTIMIZER[layout.optimizer]}",
        f"--train-iters {layout.train_steps}",
        "--data-path $DATA_PATH",
        "--save $CKPT_DIR",
        "--load $CKPT_DIR",
        f"--save-interval {every}",
    ]
    return args


def script(layout: ExportLayout) -> str:
    """train.sh: CANN environment, the NPU variables, and torchrun with MindSpeed-LLM's launch
    words."""
    entry, stage_flags = entry_point(layout)
    body = " \\\n  ".join([*arguments(layout), *stage_flags, "$MODEL_ARGS"])
    nnodes, rank, nproc, addr, port = rendezvous(layout)
    lines = [
        "#!/usr/bin/env bash",
        f"# MindSpeed-LLM launch on Ascend NPUs for job {layout.job}. Source: {DOC}.",
        f"# Run in a MindSpeed-LLM checkout at tag 26.1.0 with {INSTALL}.",
        "# Set LR, schedule and data to your recipe: the planner chooses the layout, not the "
        "learning rate.",
        "set -euo pipefail",
        ': "${DATA_PATH:?set DATA_PATH to your preprocessed data prefix}"',
        ': "${CKPT_DIR:?set CKPT_DIR}"',
        ': "${MODEL_ARGS:?set MODEL_ARGS to the model and tokenizer flags of the MindSpeed-LLM '
        'example script for this model (examples/mcore/<model>/): --spec, --tokenizer-*, norm, '
        'rotary}"',
    ]
    if entry == "posttrain_gpt.py":
        lines.append(
            ': "${PROMPT_TYPE:?set PROMPT_TYPE to the --prompt-type of your model in '
            'MindSpeed-LLM}"'
        )
    lines += ["set +u  # CANN's scripts read unset variables"] + [
        f"source {path}" for path in CANN_ENV
    ]
    lines += [
        "set -u",
        "python -c 'import torch_npu' || { echo 'torch_npu is not importable: install "
        "MindSpeed-LLM 26.1.0 requirements'; exit 2; }",
    ]
    lines += [f"export {name}={value}" for name, value in NPU_ENV.items()]
    lines.append(
        f"torchrun --nproc_per_node {nproc} --nnodes {nnodes} --node_rank {rank} --master_addr "
        f"{addr} --master_port {port} {entry} \\\n  {body}"
    )
    return "\n".join(lines) + "\n"


def modelarts_job(layout: ExportLayout) -> dict[str, Any]:
    """The body of ModelArts' CreateTrainingJob (API v2) for a custom image running train.sh on
    each node."""
    resource: dict[str, Any] = {
        "flavor_id": _POOL_FLAVOR.get(layout.gpus_per_node, "SET-A-FLAVOR"),
        "node_count": layout.nodes,
        "pool_id": "SET-YOUR-DEDICATED-POOL-ID",
    }
    return {
        "kind": "job",
        "metadata": {"name": layout.job, "description": f"{layout.method} of {layout.hf_name}"},
        "algorithm": {
            "engine": {"image_url": "SET-YOUR-SWR-IMAGE-WITH-CANN-TORCH_NPU-MINDSPEED-LLM"},
            "command": f"cd /home/ma-user/work/{layout.job} && bash train.sh",
            "environments": {"DATA_PATH": "", "CKPT_DIR": "", "MODEL_ARGS": ""},
        },
        "spec": {"resource": resource},
    }


def render(layout: ExportLayout) -> tuple[dict[str, str], list[str]]:
    check(layout)
    files = {"train.sh": script(layout)}
    _, saving = save_interval_steps(layout)
    notes = [
        f"Ascend NPUs: MindSpeed-LLM's launch ({DOC}); install: {INSTALL}",
        saving,
        "MindSpeed-LLM's example scripts also export CUDA_DEVICE_MAX_CONNECTIONS=1 (its "
        "environment variable doc: hardware queues); train.sh leaves every CUDA-named setting out",
    ]
    if layout.lora_rank:
        notes.append(
            f"LoRA rank {layout.lora_rank} (--lora-r); alpha ({2 * layout.lora_rank} in the plan) "
            "and target modules: take the flags of your model's tune_*_lora_ptd.sh example into "
            "MODEL_ARGS"
        )
    if layout.method == "continued_pretrain":
        notes.append("continued pre-training: point --load at your converted base checkpoint")
    if layout.platform == "huawei-modelarts":
        files["modelarts_job.json"] = json.dumps(modelarts_job(layout), indent=2) + "\n"
        notes.append(
            "modelarts_job.json is the body of ModelArts' CreateTrainingJob (API v2, POST "
            "/v2/{project_id}/training-jobs): fill image_url, pool_id and the environments; the "
            "pool flavors modelarts.pool.visual.* are dedicated-pool flavors; the command "
            "assumes these "
            f"files under /home/ma-user/work/{layout.job} in the container (assumed: change it to "
            "where your image or mount puts them)"
        )
    return files, notes
