"""Whether a layout can run at all: `layout_problems` lists every reason it cannot, each naming
its field (a keyed sentence, said again in the reader's language; planner/estimate/refusal.py).
`estimate()` and the search's spec check (spec_check.py) refuse with them."""

from __future__ import annotations

import math

from plan.models.stacks import (
    PURE_BF16_PRECISION,
    SplitFacts,
    not_on_megatron,
    stack_gaps,
    stack_of,
)
from plan.planner.estimate.cluster import Cluster
from plan.planner.estimate.flops import ModelShape
from plan.planner.estimate.refusal import field_problem
from plan.planner.estimate.types import (
    ADAPTER_METHODS,
    CHECKPOINT_OFFLOAD_NOT_ON_MEGATRON,
    FRAMEWORKS,
    LORA_TARGETS,
    MEGATRON_CP_SEQUENCE,
    MEGATRON_ONLY_OPTIMIZERS,
    METHODS,
    OPTIMIZER_NAME_OF,
    OPTIMIZERS,
    PRECISIONS,
    PYTORCH_ONLY_OPTIMIZERS,
    QLORA_METHODS,
    RECOMPUTE,
    RING_ATTENTION_NEEDS_FLASH,
    Layout,
    expert_parallel_gap,
    framework_zero,
    hybrid_shard_refused,
    interleaving_refused,
    offloads_states,
)
from plan.planner.i18n.said import Joined, say, say_as


def layout_problems(shape: ModelShape, method: str, cluster: Cluster, layout: Layout) -> list[str]:
    """Every reason the layout cannot run at all, each naming its field ('' when valid).

    The fields' own values are checked first; only a layout whose method and sizes are sane meets
    the other checks, each family in turn (`_LAYOUT_CHECKS`)."""
    problems = _field_problems(method, layout)
    if problems:
        return problems
    for check in _LAYOUT_CHECKS:
        problems.extend(check(shape, method, cluster, layout))
    return problems


def _not_one_of(field: str, value: object, allowed: tuple[str, ...]) -> str:
    return field_problem(field, say_as("refusal.not_one_of", "{value} is not one of {names}",
                                       value=repr(value), names=", ".join(allowed)))


_POSITIVE_FIELDS = ("tp", "pp", "dp", "cp", "ep", "micro_batch", "global_batch", "seq_len",
                    "virtual_pipeline")


def _field_problems(method: str, layout: Layout) -> list[str]:
    """An unknown method, and every size below 1."""
    problems: list[str] = []
    if method not in METHODS:
        problems.append(_not_one_of("method", method, METHODS))
    for name in _POSITIVE_FIELDS:
        if getattr(layout, name) < 1:
            problems.append(field_problem(name, say_as(
                "refusal.at_least_one", "must be at least 1, got {value}",
                value=getattr(layout, name))))
    if layout.framework not in FRAMEWORKS:
        problems.append(_not_one_of("framework", layout.framework, FRAMEWORKS))
    return problems


def _framework_problems(shape: ModelShape, method: str, cluster: Cluster,
                        layout: Layout) -> list[str]:
    """The GPU count the layout needs, the framework and the ZeRO stages it runs, QLoRA on
    Megatron."""
    problems: list[str] = []
    if layout.gpus != cluster.gpus:
        problems.append(field_problem("tp x pp x cp x dp", say_as(
            "refusal.split_gpus", "{tp} x {pp} x {cp} x {dp} = {gpus}, but the cluster has "
            "{cluster_gpus} GPUs", tp=layout.tp, pp=layout.pp, cp=layout.cp, dp=layout.dp,
            gpus=layout.gpus, cluster_gpus=cluster.gpus)))
    stack = stack_of(layout.framework)
    stages = framework_zero(layout.framework, layout.pp)
    if layout.zero in (0, 1, 2, 3) and layout.zero not in stages:
        pipelined = say_as("refusal.zero_pipelined", " under pipeline parallelism (pp={pp}: its "
                           "pipeline engine refuses ZeRO-2 and ZeRO-3)", pp=layout.pp) if (
            stages != stack.zero_stages) else ""
        problems.append(field_problem("zero", say(
            "refusal.zero_stages", framework=layout.framework,
            stages=Joined([str(stage) for stage in stages], "refusal.or_sep"),
            pipelined=pipelined, zero=layout.zero)))
    if method in QLORA_METHODS and not stack.qlora:
        problems.append(field_problem("framework", say_as(
            "refusal.qlora_megatron", "megatron has no 4-bit QLoRA path; use fsdp or deepspeed")))
    return problems


def _expert_problems(shape: ModelShape, method: str, cluster: Cluster,
                     layout: Layout) -> list[str]:
    """The capacity factor and expert parallelism: MoE only, within the experts' bounds."""
    problems: list[str] = []
    cf, most_cf = layout.capacity_factor, shape.moe_experts / max(1, shape.moe_top_k)
    if not math.isfinite(cf) or cf < 1.0:
        problems.append(field_problem("capacity_factor", say_as(
            "refusal.capacity_below_one", "must be a number of at least 1 (an even split; below "
            "it tokens are dropped even at an even load), got {cf:g}", cf=cf)))
    elif cf != 1.0 and not shape.is_moe:
        problems.append(field_problem("capacity_factor", say_as(
            "refusal.capacity_dense", "{cf:g} pads routed experts; this model is dense", cf=cf)))
    elif shape.is_moe and cf > most_cf:
        problems.append(field_problem("capacity_factor", say_as(
            "refusal.capacity_most", "at most {most:g} (the {experts} experts over top-{top_k} "
            "routing: every token fits every expert), got {cf:g}", most=most_cf,
            experts=shape.moe_experts, top_k=shape.moe_top_k, cf=cf)))
    problems.extend(_expert_split_problems(shape, method, layout))
    return problems


def _expert_split_problems(shape: ModelShape, method: str, layout: Layout) -> list[str]:
    """Expert parallelism: an MoE model's, dividing its experts and the data-parallel ranks, on
    a stack that splits experts."""
    why: str | None = None
    if layout.ep > 1 and not shape.is_moe:
        why = say_as("refusal.ep_dense", "{ep} expert-parallel ranks need an MoE model; this one "
                     "is dense", ep=layout.ep)
    elif layout.ep > 1 and shape.moe_experts % layout.ep:
        why = say_as("refusal.ep_experts", "{ep} does not divide the model's {experts} experts",
                     ep=layout.ep, experts=shape.moe_experts)
    elif layout.ep > 1 and method in ADAPTER_METHODS:
        why = say_as("refusal.ep_adapter", "LoRA and QLoRA keep each layer's experts whole here "
                     "(expert parallelism is modelled for full training), got {ep}", ep=layout.ep)
    elif layout.ep > 1 and layout.dp % layout.ep:
        why = say_as("refusal.ep_dp", "{ep} does not divide the {dp} data-parallel ranks",
                     ep=layout.ep, dp=layout.dp)
    else:
        why = expert_parallel_gap(layout.framework, method, layout.optimizer, layout.precision,
                                  layout.ep)
    return [field_problem("ep", why)] if why else []


def _hybrid_shard_problems(shape: ModelShape, method: str, cluster: Cluster,
                           layout: Layout) -> list[str]:
    """A hybrid-sharding group: FSDP's, dividing the data- and context-parallel ranks."""
    if layout.shard_group is None:
        return []
    if hybrid_shard_refused(layout.framework, layout.zero, layout.state_offload, layout.ep):
        return [field_problem("shard_group", say_as(
            "refusal.hybrid_refused", "hybrid sharding is FSDP's, at ZeRO 2 or 3, without CPU "
            "offload or expert parallelism; got {framework} ZeRO-{zero}",
            framework=layout.framework, zero=layout.zero))]
    if (not 1 < layout.shard_group < layout.shard_ranks or layout.shard_ranks % layout.shard_group
            or layout.shard_group % layout.cp):
        return [field_problem("shard_group", say_as(
            "refusal.hybrid_group", "{group} must divide the {ranks} data- and context-parallel "
            "ranks, more than one and fewer than all of them, and hold whole context-parallel "
            "groups of {cp}", group=layout.shard_group, ranks=layout.shard_ranks, cp=layout.cp))]
    return []


def _model_split_problems(shape: ModelShape, method: str, cluster: Cluster,
                          layout: Layout) -> list[str]:
    """How the model splits: context parallelism over the sequence and heads (and the FP8 gaps
    of context and pipeline parallelism), tensor parallelism over the heads, pipeline
    parallelism over the layers."""
    problems: list[str] = []
    facts = SplitFacts(tp=layout.tp, pp=layout.pp, cp=layout.cp, heads=shape.heads,
                       seq_len=layout.seq_len, precision=layout.precision,
                       flash_attention=layout.flash_attention)
    gaps = {gap.rule: gap for gap in stack_gaps(layout.framework, facts)}
    # (each in the words and order the check has always stated them: what to change, last)
    if "ring_attention" in gaps:
        problems.append(field_problem("attention", say_as(
            "refusal.ring_eager", "{why}; got {framework} with cp {cp} and eager attention",
            why=RING_ATTENTION_NEEDS_FLASH, framework=layout.framework, cp=layout.cp)))
    if "ulysses_heads" in gaps:
        problems.append(field_problem("cp", gaps["ulysses_heads"].reason))
    if "ulysses_fp8" in gaps:
        problems.append(field_problem("cp", say_as(
            "refusal.ulysses_fp8", "{why}; use precision bf16, cp 1 or framework megatron or fsdp",
            why=gaps["ulysses_fp8"].reason)))
    if "pipeline_fp8" in gaps:
        problems.append(field_problem("pp", say_as(
            "refusal.pipeline_fp8", "{why}; use precision bf16, pp 1 or framework megatron",
            why=gaps["pipeline_fp8"].reason)))
    if layout.seq_len % layout.cp:
        problems.append(field_problem("cp", say_as(
            "refusal.cp_seq_len", "{cp} does not divide the sequence length {seq_len}",
            cp=layout.cp, seq_len=layout.seq_len)))
    elif "sequence_split" in gaps:
        problems.append(field_problem("cp", say_as(
            "refusal.cp_sequence_split", "{why}, not {seq_len}", why=MEGATRON_CP_SEQUENCE,
            seq_len=layout.seq_len)))
    return problems + _head_and_layer_problems(shape, layout)


def _head_and_layer_problems(shape: ModelShape, layout: Layout) -> list[str]:
    """Tensor parallelism over the heads, pipeline parallelism over the layers."""
    problems: list[str] = []
    if shape.heads % layout.tp:
        problems.append(field_problem("tp", say_as(
            "refusal.tp_heads", "{tp} does not divide the {heads} attention heads", tp=layout.tp,
            heads=shape.heads)))
    elif layout.tp > shape.kv_heads and layout.tp % shape.kv_heads:
        problems.append(field_problem("tp", say_as(
            "refusal.tp_kv_multiple", "{tp} is neither a divisor nor a multiple of the {kv_heads} "
            "KV heads", tp=layout.tp, kv_heads=shape.kv_heads)))
    elif layout.tp < shape.kv_heads and shape.kv_heads % layout.tp:
        problems.append(field_problem("tp", say_as(
            "refusal.tp_kv", "{tp} does not divide the {kv_heads} KV heads", tp=layout.tp,
            kv_heads=shape.kv_heads)))
    if layout.pp > shape.layers:
        problems.append(field_problem("pp", say_as(
            "refusal.pp_layers", "{pp} stages for only {layers} layers", pp=layout.pp,
            layers=shape.layers)))
    return problems


def _stage_and_precision_problems(shape: ModelShape, method: str, cluster: Cluster,
                                  layout: Layout) -> list[str]:
    """The ZeRO stage, recomputation, and a precision the GPU has a peak for."""
    problems: list[str] = []
    gpu = cluster.gpu
    if layout.zero not in (0, 1, 2, 3):
        problems.append(field_problem("zero", say_as(
            "refusal.zero_range", "must be 0, 1, 2 or 3, got {zero}", zero=layout.zero)))
    if layout.recompute not in RECOMPUTE:
        problems.append(_not_one_of("recompute", layout.recompute, RECOMPUTE))
    stack = stack_of(layout.framework)
    if layout.recompute == "full_offload" and not stack.checkpoint_offload:
        problems.append(field_problem("recompute", CHECKPOINT_OFFLOAD_NOT_ON_MEGATRON))
    if layout.recompute_layers is not None and (layout.recompute != "full"
                                                or not stack.block_recompute
                                                or layout.recompute_layers < 1):
        problems.append(field_problem("recompute_layers", say_as(
            "refusal.recompute_layers_needs", "{layers} layers per chunk is Megatron's block "
            "recomputation: it needs recompute 'full', framework megatron and at least 1 layer",
            layers=layout.recompute_layers)))
    if layout.precision not in PRECISIONS:
        problems.append(_not_one_of("precision", layout.precision, PRECISIONS))
    elif gpu.peak_tflops.for_precision(layout.precision) is None:
        have = [p for p in PRECISIONS if gpu.peak_tflops.for_precision(p) is not None]
        problems.append(field_problem("precision", say_as(
            "refusal.no_peak", "{gpu} ({architecture}) has no {precision} peak; it supports "
            "{have}", gpu=gpu.id, architecture=gpu.architecture, precision=layout.precision,
            have=", ".join(have))))
    return problems


def _optimizer_problems(shape: ModelShape, method: str, cluster: Cluster,
                        layout: Layout) -> list[str]:
    """An optimizer the framework, ZeRO stage and precision run."""
    problems: list[str] = []
    stack = stack_of(layout.framework)
    if layout.optimizer not in OPTIMIZERS:
        problems.append(_not_one_of("optimizer", layout.optimizer, OPTIMIZERS))
    elif layout.optimizer in MEGATRON_ONLY_OPTIMIZERS and (
            not stack.distributed_optimizer or (layout.zero != 1 and layout.shard_ranks > 1)):
        # (the search's probe layout meets this check too: a spec's framework, ZeRO stage or QLoRA,
        # whose default stack is FSDP, is refused here)
        problems.append(field_problem("optimizer", say_as(
            "refusal.precision_aware_zero", "the precision-aware optimizer is Megatron's "
            "distributed optimizer: it needs framework megatron with zero 1 (or one data-parallel "
            "rank), got {framework} with zero {zero}{qlora}", framework=layout.framework,
            zero=layout.zero, qlora=say_as("refusal.qlora_no_megatron", ", and QLoRA has no "
                                           "Megatron path") if method in QLORA_METHODS else "")))
    if layout.optimizer in PYTORCH_ONLY_OPTIMIZERS and not stack.pytorch_optimizers:
        problems.append(field_problem("optimizer",
                                      not_on_megatron(OPTIMIZER_NAME_OF[layout.optimizer])))
    if layout.optimizer == "adam_bf16" and layout.precision != "bf16":
        problems.append(field_problem("optimizer", PURE_BF16_PRECISION))
    if layout.optimizer == "adam_bf16" and stack.pure_bf16_needs_zero and layout.zero == 0:
        # its bf16_master_weights_and_grads and bf16_optimizer_states are ZeRO stage 1-3 settings
        problems.append(field_problem("optimizer", say_as(
            "refusal.pure_bf16_zero0", "adamw-bf16 on DeepSpeed needs ZeRO stage 1-3 "
            "(bf16_master_weights_and_grads), got zero 0")))
    return problems


def _adapter_problems(shape: ModelShape, method: str, cluster: Cluster,
                      layout: Layout) -> list[str]:
    """LoRA targets, and a rank for the adapter methods only."""
    problems: list[str] = []
    if layout.lora_targets not in LORA_TARGETS:
        problems.append(_not_one_of("lora_targets", layout.lora_targets, LORA_TARGETS))
    if method in ADAPTER_METHODS:
        if layout.lora_rank is None or layout.lora_rank < 1:
            problems.append(field_problem("lora_rank", say_as(
                "refusal.lora_rank_needed", "{method} needs a rank of at least 1, got {rank}",
                method=method, rank=layout.lora_rank)))
    elif layout.lora_rank is not None:
        problems.append(field_problem("lora_rank", say_as(
            "refusal.lora_rank_only", "only for {methods}, not for {method}",
            methods="/".join(ADAPTER_METHODS), method=method)))
    return problems


def _batch_problems(shape: ModelShape, method: str, cluster: Cluster,
                    layout: Layout) -> list[str]:
    """The global batch over the data-parallel ranks, and the micro-batch within each share."""
    per_replica = layout.global_batch // layout.dp
    if layout.global_batch % layout.dp:
        return [field_problem("global_batch", say_as(
            "refusal.batch_dp", "{batch} is not a multiple of dp = {dp}",
            batch=layout.global_batch, dp=layout.dp))]
    if layout.micro_batch > per_replica:
        return [field_problem("micro_batch", say_as(
            "refusal.micro_exceeds", "{micro_batch} exceeds the {share} sequences each "
            "data-parallel replica gets per step", micro_batch=layout.micro_batch,
            share=per_replica))]
    if stack_of(layout.framework).exact_batch and per_replica % layout.micro_batch:
        return [field_problem("micro_batch", say_as(
            "refusal.micro_uneven", "{framework} needs micro-batch x accumulation steps = the "
            "{share} sequences each data-parallel replica gets per step (no smaller last "
            "micro-batch), and {micro_batch} does not divide them", framework=layout.framework,
            share=per_replica, micro_batch=layout.micro_batch))]
    return []


def _offload_and_schedule_problems(shape: ModelShape, method: str, cluster: Cluster,
                                   layout: Layout) -> list[str]:
    """CPU offload of the model states, the interleaved pipeline schedule, and a fabric between
    nodes."""
    problems: list[str] = []
    if layout.state_offload and not offloads_states(layout.framework, layout.zero, layout.tp,
                                                    layout.pp, layout.optimizer):
        problems.append(field_problem("state_offload", say_as(
            "refusal.state_offload", "CPU offload of the model states is ZeRO-3's on FSDP or "
            "DeepSpeed without tensor or pipeline parallelism, with an optimizer that steps on "
            "the CPU (not 8-bit AdamW; on DeepSpeed, AdamW, which its CPU Adam runs); got "
            "{framework} zero {zero} tp {tp} pp {pp} optimizer {optimizer}",
            framework=layout.framework, zero=layout.zero, tp=layout.tp, pp=layout.pp,
            optimizer=layout.optimizer)))
    if layout.virtual_pipeline > 1 and layout.pp == 1:
        problems.append(field_problem("virtual_pipeline", say_as(
            "refusal.interleave_pp", "interleaving needs pp > 1")))
    elif interleaving_refused(layout.framework, layout.virtual_pipeline, layout.micro_batches,
                              layout.pp):
        problems.append(field_problem("virtual_pipeline", say_as(
            "refusal.interleave_micro", "Megatron's interleaved schedule needs at least pp = "
            "{pp} micro-batches per step, got {micro_batches}", pp=layout.pp,
            micro_batches=layout.micro_batches)))
    if cluster.gpus > cluster.gpus_per_node and (cluster.fabric_kind == "none"
                                                 or cluster.fabric_gbps_per_gpu <= 0):
        problems.append(field_problem("gpus", say_as(
            "refusal.no_fabric", "{gpus} GPUs need {nodes} nodes, but there is no fabric "
            "between nodes", gpus=cluster.gpus, nodes=cluster.nodes)))
    return problems


_LAYOUT_CHECKS = (_framework_problems, _expert_problems, _hybrid_shard_problems,
                  _model_split_problems, _stage_and_precision_problems, _optimizer_problems,
                  _adapter_problems, _batch_problems, _offload_and_schedule_problems)
"""The checks of a layout whose fields are sane, in the order their problems are listed."""
