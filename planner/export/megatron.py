"""Megatron-LM / Megatron-Core: the `pretrain_gpt.py` argument list as a shell script.

Flag names: argparse parser built from `megatron/training/arguments.py` (+ TransformerConfig,
ModelParallelConfig), NVIDIA/Megatron-LM main `d98e8a6` (after core_v0.19.0), 2026-08-22, as
summarised in docs/sources/launch-configs.md section 2.
"""

from __future__ import annotations

from plan.models.methods import ADAPTER_METHODS, DPO_METHODS
from plan.models.model_card import MoE
from plan.models.said import say_as
from plan.planner.estimate.stages import megatron_split_flags, split_problem
from plan.planner.estimate.types import (
    MEGATRON_FSDP_SHARDING,
    interleaving_refused,
    megatron_splits_sequence,
)
from plan.planner.export import mindspeed
from plan.planner.export.checkpoint import save_interval_steps
from plan.planner.export.launch import torchrun
from plan.planner.export.layout import ExportError, ExportLayout, no_hybrid_shard

DOC = "Megatron-LM megatron/training/arguments.py, main d98e8a6 (after core_v0.19.0), 2026-08-22"
MEGATRON_OPTIMIZER_FLAG = {"adam": "adam", "adam_precision_aware": "adam", "sgd": "sgd"}
"""`--optimizer` for each optimizer the plan may name (launch-configs.md section 2: adam,
AdamW-style decoupled decay, sgd with momentum, ...); the precision-aware one is Adam with its own
flags below."""


def check(layout: ExportLayout) -> None:
    no_hybrid_shard(layout, "megatron")
    if layout.method in DPO_METHODS:
        raise ExportError(say_as(
            "export.megatron_no_dpo_loss_frozen",
            "megatron: no DPO loss or frozen reference model ({method}); try --to "
            "llamafactory (stage dpo)",
            method=layout.method))
    if layout.method in ADAPTER_METHODS:
        raise ExportError(say_as(
            "export.megatron_pretrain_gpt_py_has",
            "megatron: pretrain_gpt.py has no LoRA/QLoRA ({method}); PEFT lives in "
            "Megatron-Bridge/NeMo (try --to llamafactory, which writes LoRA planned on "
            "Megatron for its Megatron-Bridge backend)",
            method=layout.method))
    if layout.state_offload:
        raise ExportError(say_as(
            "export.megatron_no_cpu_offload_parameters",
            "megatron: no CPU offload of parameters and gradients (the plan keeps its ZeRO-3 "
            "shards in host memory; --optimizer-cpu-offload moves only the optimizer state "
            "and needs --use-precision-aware-optimizer); try --to deepspeed or --to torchtitan"))
    if layout.recompute == "offload":
        raise ExportError(say_as(
            "export.megatron_activation_offloading_without_recompute",
            "megatron: activation offloading without recompute has no flag this exporter can "
            "map one-to-one (--cpu-offloading-num-layers offloads whole layers)"))
    if layout.recompute == "full_offload":
        raise ExportError(say_as(
            "export.megatron_cpu_offloading_cannot_be",
            "megatron: --cpu-offloading cannot be combined with recompute, and the plan "
            "recomputes every layer from checkpoints kept in host memory; try --to "
            "llamafactory (use_unsloth_gc)"))
    if layout.optimizer not in MEGATRON_OPTIMIZER_FLAG:
        raise ExportError(say_as(
            "export.megatron_optimizer_not_megatron_optimizer",
            "megatron: optimizer {optimizer} is not a Megatron optimizer (adam, sgd, muon, "
            "...; 8-bit states only via --use-precision-aware-optimizer)",
            optimizer=layout.optimizer))
    split = split_problem(layout.layers, layout.pp, layout.vpp, "megatron")
    if split:
        raise ExportError(say_as(
            "export.megatron_split",
            "megatron: {split}",
            split=split))
    if interleaving_refused("megatron", layout.vpp, layout.grad_accum, layout.pp):
        raise ExportError(say_as(
            "export.megatron_interleaved_schedule_needs_at",
            "megatron: the interleaved schedule needs at least pp={pp} micro-batches per "
            "step, the plan has {grad_accum}",
            pp=layout.pp, grad_accum=layout.grad_accum))
    if not megatron_splits_sequence(layout.seq_len, layout.cp):
        raise ExportError(say_as(
            "export.megatron_sequence_length_not_multiple",
            "megatron: sequence length {seq_len} is not a multiple of 2 x cp",
            seq_len=layout.seq_len))


def arguments(layout: ExportLayout) -> list[str]:
    """pretrain_gpt.py flags, one item per line (flag and its value)."""
    args = [f"--num-layers {layout.layers}", f"--hidden-size {layout.hidden_size}",
            f"--ffn-hidden-size {layout.ffn_hidden_size}", "--num-attention-heads "
                                                           f"{layout.num_heads}"]
    if layout.num_kv_heads != layout.num_heads:
        args.append(f"--group-query-attention --num-query-groups {layout.num_kv_heads}")
    if layout.ffn_type == "swiglu":
        args.append("--swiglu")
    if not layout.tied_embeddings:
        args.append("--untie-embeddings-and-output-weights")
    args += [f"--seq-length {layout.seq_len}", f"--max-position-embeddings {layout.seq_len}",
             f"--tensor-model-parallel-size {layout.tp}"]
    if layout.tp > 1:
        args.append("--sequence-parallel")
    args.append(f"--pipeline-model-parallel-size {layout.pp}")
    split = megatron_split_flags(layout.layers, layout.pp, layout.vpp)
    if split:
        args.append(" ".join(split))
    if layout.vpp > 1:
        args.append(f"--num-virtual-stages-per-pipeline-rank {layout.vpp}")
    args.append(f"--context-parallel-size {layout.cp}")
    if layout.ep > 1:  # the experts split over tp as well, as the estimate counts them
        args.append(f"--expert-model-parallel-size {layout.ep} --expert-tensor-parallel-size "
                    f"{layout.tp}")
    args += [f"--micro-batch-size {layout.micro_batch}", "--global-batch-size "
                                                         f"{layout.global_batch}"]
    if layout.zero == 1 or layout.optimizer == "adam_precision_aware":
        args.append("--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather")
    if layout.optimizer == "adam_precision_aware":
        # bf16 gradient buffers; the fp32 master kept as 16-bit remainders (store_param_remainders,
        # on by default with Transformer Engine >= 2.1; Megatron-Core 0.16 OptimizerConfig)
        args.append("--use-precision-aware-optimizer --main-grads-dtype bf16")
    elif layout.zero in MEGATRON_FSDP_SHARDING:
        args.append("--use-megatron-fsdp --data-parallel-sharding-strategy "
                    f"{MEGATRON_FSDP_SHARDING[layout.zero]}")
    if layout.recompute == "selective":
        args.append("--recompute-granularity selective")
    elif layout.recompute == "full":
        args.append(
            "--recompute-granularity full "
            + (
                f"--recompute-method block --recompute-num-layers {layout.recompute_layers}"
                if layout.recompute_layers
                else "--recompute-method uniform --recompute-num-layers 1"
            )
        )
    if layout.precision == "fp16":
        args.append("--fp16")
    else:
        args.append("--bf16")
    if layout.precision == "fp8":
        args.append("--fp8-format hybrid --fp8-recipe delayed")
    args += [f"--optimizer {MEGATRON_OPTIMIZER_FLAG[layout.optimizer]}", "--train-iters "
                                                                         f"{layout.train_steps}",
             "--data-path $DATA_PATH", "--tokenizer-type HuggingFaceTokenizer",
             f"--tokenizer-model {layout.hf_name}", "--save $CKPT_DIR", "--load $CKPT_DIR",
             f"--save-interval {save_interval_steps(layout)[0]}"]
    return args


def moe_architecture_note(moe: MoE) -> str:
    """The MoE shape the flags above do not carry (launch-configs.md lists the parallel sizes only),
    in Megatron-Core's TransformerConfig field names, from which the checkout's flags are
    generated."""
    shared = (", moe_shared_expert_intermediate_size "
              f"{moe.shared_experts * moe.expert_ffn_hidden_size}"
              if moe.shared_experts else "")
    dense = (f", moe_layer_freq with the first {moe.dense_layers} layers dense (--ffn-hidden-size "
             "is theirs)"
             if moe.dense_layers else "")
    return ("MoE model: set MOE_ARGS to the flags your checkout generates from Megatron-Core's "
            f"TransformerConfig fields num_moe_experts {moe.experts}, moe_router_topk {moe.top_k}, "
            f"moe_ffn_hidden_size {moe.expert_ffn_hidden_size}{shared}{dense}; train.sh stops "
            "without it, since without them pretrain_gpt.py builds a dense model")


MOE_ARGS_GUARD = (': "${MOE_ARGS:?set MOE_ARGS to the MoE shape flags (see the README notes); '
                  'without them a dense model trains}"')
"""An MoE script stops before launch unless the MoE shape's flags are given (launch-configs.md names
the parallel sizes only): a script that ran without them would train a dense model of the card's
shape, silently."""


def render(layout: ExportLayout) -> tuple[dict[str, str], list[str]]:
    if layout.on_npu:  # Ascend: MindSpeed-LLM's launch, not CUDA Megatron-LM's
        return mindspeed.render(layout)
    check(layout)
    args = arguments(layout)
    body = " \\\n  ".join(args)
    lines = ["#!/usr/bin/env bash", f"# Megatron-LM launch for job {layout.job}. Source: {DOC}.",
             "# Set LR, schedule and data to your recipe: the planner chooses the layout, not the "
             "learning rate.",
             "# Architecture flags the catalog does not record (normalization, position embedding, "
             "biases)",
             "# must be added for your model.",
             "set -euo pipefail", ": \"${DATA_PATH:?set DATA_PATH to your Megatron data prefix}\"",
             ": \"${CKPT_DIR:?set CKPT_DIR}\""]
    if layout.moe is not None:
        lines.append(MOE_ARGS_GUARD)
        body += " \\\n  $MOE_ARGS"
    if layout.zero < 2:  # Megatron-FSDP must not run with one connection (launch-configs.md s.2)
        lines.append("export CUDA_DEVICE_MAX_CONNECTIONS=1")
    lines.append(torchrun(layout, "pretrain_gpt.py \\\n  " + body))
    notes = [save_interval_steps(layout)[1] + " (--save-interval; validate_args requires it with "
                                              "--save)"]
    if layout.moe is not None:
        notes.append(moe_architecture_note(layout.moe))
    if layout.zero >= 2:
        notes.append(f"ZeRO-{layout.zero} maps to Megatron-FSDP "
                     f"({MEGATRON_FSDP_SHARDING[layout.zero]}); its distributed optimizer saves "
                     "and loads only the fsdp_dtensor checkpoint format (megatron-core 0.16.1 "
                     "distrib_optimizer.py): choose that format for --save/--load")
    return {"train.sh": "\n".join(lines) + "\n"}, notes
