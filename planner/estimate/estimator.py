"""`estimate()`: validate a layout, then put memory, FLOPs, topology and timing together."""

from __future__ import annotations

import math

from plan.models.methods import METHOD_NOTES
from plan.models.model_card import ModelCard
from plan.models.stacks import (
    PURE_BF16_PRECISION,
    SplitFacts,
    not_on_megatron,
    stack_gaps,
    stack_of,
)
from plan.planner.estimate.band import uncalibrated_band_note, uncalibrated_mechanisms
from plan.planner.estimate.cluster import Cluster
from plan.planner.estimate.factors import (
    CPU_OPTIMIZER_BYTES_PER_S,
    PCIE_GB_PER_S_PER_DIRECTION,
    efficiency_assumption,
)
from plan.planner.estimate.flops import ModelShape, shape_of
from plan.planner.estimate.memory import chunk_layers, memory_per_gpu, pipeline_peak_note
from plan.planner.estimate.timing import step_time
from plan.planner.estimate.topology import GroupLink, hybrid_links, layout_links
from plan.planner.estimate.types import (
    ADAPTER_METHODS,
    CHECKPOINT_OFFLOAD_NOT_ON_MEGATRON,
    FRAMEWORKS,
    LORA_TARGETS,
    LOSS_KINDS,
    MEGATRON_CP_SEQUENCE,
    MEGATRON_FSDP_SHARDING,
    MEGATRON_ONLY_OPTIMIZERS,
    METHODS,
    OPTIMIZER_NAME_OF,
    OPTIMIZERS,
    PRECISIONS,
    PYTORCH_ONLY_OPTIMIZERS,
    QLORA_METHODS,
    RECOMPUTE,
    RING_ATTENTION_NEEDS_FLASH,
    Estimate,
    Layout,
    expert_parallel_gap,
    framework_zero,
    hybrid_shard_refused,
    interleaving_refused,
    offloads_states,
)


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


_POSITIVE_FIELDS = ("tp", "pp", "dp", "cp", "ep", "micro_batch", "global_batch", "seq_len",
                    "virtual_pipeline")


def _field_problems(method: str, layout: Layout) -> list[str]:
    """An unknown method, and every size below 1."""
    problems: list[str] = []
    if method not in METHODS:
        problems.append(f"method: {method!r} is not one of {', '.join(METHODS)}")
    for name in _POSITIVE_FIELDS:
        if getattr(layout, name) < 1:
            problems.append(f"{name}: must be at least 1, got {getattr(layout, name)}")
    if layout.framework not in FRAMEWORKS:
        problems.append(f"framework: {layout.framework!r} is not one of {', '.join(FRAMEWORKS)}")
    return problems


def _framework_problems(shape: ModelShape, method: str, cluster: Cluster,
                        layout: Layout) -> list[str]:
    """The GPU count the layout needs, the framework and the ZeRO stages it runs, QLoRA on
    Megatron."""
    problems: list[str] = []
    if layout.gpus != cluster.gpus:
        problems.append(f"tp x pp x cp x dp: {layout.tp} x {layout.pp} x {layout.cp} x "
                        f"{layout.dp} = {layout.gpus}, but the cluster has {cluster.gpus} GPUs")
    stack = stack_of(layout.framework)
    stages = framework_zero(layout.framework, layout.pp)
    if layout.zero in (0, 1, 2, 3) and layout.zero not in stages:
        pipelined = (f" under pipeline parallelism (pp={layout.pp}: its pipeline engine "
                     "refuses ZeRO-2 and ZeRO-3)" if stages != stack.zero_stages else "")
        problems.append(f"zero: {layout.framework} runs ZeRO stage "
                        f"{' or '.join(map(str, stages))}{pipelined}, not {layout.zero}")
    if method in QLORA_METHODS and not stack.qlora:
        problems.append("framework: megatron has no 4-bit QLoRA path; use fsdp or deepspeed")
    return problems


def _expert_problems(shape: ModelShape, method: str, cluster: Cluster,
                     layout: Layout) -> list[str]:
    """The capacity factor and expert parallelism: MoE only, within the experts' bounds."""
    problems: list[str] = []
    cf, most_cf = layout.capacity_factor, shape.moe_experts / max(1, shape.moe_top_k)
    if not math.isfinite(cf) or cf < 1.0:
        problems.append(f"capacity_factor: must be a number of at least 1 (an even split; below it "
                        f"tokens are dropped even at an even load), got {cf:g}")
    elif cf != 1.0 and not shape.is_moe:
        problems.append(f"capacity_factor: {cf:g} pads routed experts; this model is dense")
    elif shape.is_moe and cf > most_cf:
        problems.append(f"capacity_factor: at most {most_cf:g} (the {shape.moe_experts} experts "
                        f"over top-{shape.moe_top_k} routing: every token fits every expert), got "
                        f"{cf:g}")
    if layout.ep > 1 and not shape.is_moe:
        problems.append(f"ep: {layout.ep} expert-parallel ranks need an MoE model; this one is "
                        "dense")
    elif layout.ep > 1 and shape.moe_experts % layout.ep:
        problems.append(f"ep: {layout.ep} does not divide the model's {shape.moe_experts} experts")
    elif layout.ep > 1 and method in ADAPTER_METHODS:
        problems.append(f"ep: LoRA and QLoRA keep each layer's experts whole here (expert "
                        f"parallelism is modelled for full training), got {layout.ep}")
    elif layout.ep > 1 and layout.dp % layout.ep:
        problems.append(f"ep: {layout.ep} does not divide the {layout.dp} data-parallel ranks")
    else:
        experts_gap = expert_parallel_gap(layout.framework, method, layout.optimizer,
                                          layout.precision, layout.ep)
        if experts_gap:
            problems.append(f"ep: {experts_gap}")
    return problems


def _hybrid_shard_problems(shape: ModelShape, method: str, cluster: Cluster,
                           layout: Layout) -> list[str]:
    """A hybrid-sharding group: FSDP's, dividing the data- and context-parallel ranks."""
    if layout.shard_group is None:
        return []
    if hybrid_shard_refused(layout.framework, layout.zero, layout.state_offload, layout.ep):
        return [f"shard_group: hybrid sharding is FSDP's, at ZeRO 2 or 3, without CPU offload or "
                f"expert parallelism; got {layout.framework} ZeRO-{layout.zero}"]
    if (not 1 < layout.shard_group < layout.shard_ranks or layout.shard_ranks % layout.shard_group
            or layout.shard_group % layout.cp):
        return [f"shard_group: {layout.shard_group} must divide the {layout.shard_ranks} data- and "
                "context-parallel ranks, more than one and fewer than all of them, and hold whole "
                f"context-parallel groups of {layout.cp}"]
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
        problems.append(f"attention: {RING_ATTENTION_NEEDS_FLASH}; got {layout.framework} with cp "
                        f"{layout.cp} and eager attention")
    if "ulysses_heads" in gaps:
        problems.append(f"cp: {gaps['ulysses_heads'].reason}")
    if "ulysses_fp8" in gaps:
        problems.append(f"cp: {gaps['ulysses_fp8'].reason}; use precision bf16, cp 1 or framework "
                        "megatron or fsdp")
    if "pipeline_fp8" in gaps:
        problems.append(f"pp: {gaps['pipeline_fp8'].reason}; use precision bf16, pp 1 or "
                        "framework megatron")
    if layout.seq_len % layout.cp:
        problems.append(f"cp: {layout.cp} does not divide the sequence length {layout.seq_len}")
    elif "sequence_split" in gaps:
        problems.append(f"cp: {MEGATRON_CP_SEQUENCE}, not {layout.seq_len}")

    if shape.heads % layout.tp:
        problems.append(f"tp: {layout.tp} does not divide the {shape.heads} attention heads")
    elif layout.tp > shape.kv_heads and layout.tp % shape.kv_heads:
        problems.append(f"tp: {layout.tp} is neither a divisor nor a multiple of the "
                        f"{shape.kv_heads} KV heads")
    elif layout.tp < shape.kv_heads and shape.kv_heads % layout.tp:
        problems.append(f"tp: {layout.tp} does not divide the {shape.kv_heads} KV heads")
    if layout.pp > shape.layers:
        problems.append(f"pp: {layout.pp} stages for only {shape.layers} layers")
    return problems


def _stage_and_precision_problems(shape: ModelShape, method: str, cluster: Cluster,
                                  layout: Layout) -> list[str]:
    """The ZeRO stage, recomputation, and a precision the GPU has a peak for."""
    problems: list[str] = []
    gpu = cluster.gpu
    if layout.zero not in (0, 1, 2, 3):
        problems.append(f"zero: must be 0, 1, 2 or 3, got {layout.zero}")
    if layout.recompute not in RECOMPUTE:
        problems.append(f"recompute: {layout.recompute!r} is not one of {', '.join(RECOMPUTE)}")
    stack = stack_of(layout.framework)
    if layout.recompute == "full_offload" and not stack.checkpoint_offload:
        problems.append(f"recompute: {CHECKPOINT_OFFLOAD_NOT_ON_MEGATRON}")
    if layout.recompute_layers is not None and (layout.recompute != "full"
                                                or not stack.block_recompute
                                                or layout.recompute_layers < 1):
        problems.append(f"recompute_layers: {layout.recompute_layers} layers per chunk is "
                        "Megatron's block recomputation: it needs recompute 'full', framework "
                        "megatron and at least 1 layer")
    if layout.precision not in PRECISIONS:
        problems.append(f"precision: {layout.precision!r} is not one of {', '.join(PRECISIONS)}")
    elif gpu.peak_tflops.for_precision(layout.precision) is None:
        have = [p for p in PRECISIONS if gpu.peak_tflops.for_precision(p) is not None]
        problems.append(f"precision: {gpu.id} ({gpu.architecture}) has no {layout.precision} peak; "
                        f"it supports {', '.join(have)}")
    return problems


def _optimizer_problems(shape: ModelShape, method: str, cluster: Cluster,
                        layout: Layout) -> list[str]:
    """An optimizer the framework, ZeRO stage and precision run."""
    problems: list[str] = []
    stack = stack_of(layout.framework)
    if layout.optimizer not in OPTIMIZERS:
        problems.append(f"optimizer: {layout.optimizer!r} is not one of {', '.join(OPTIMIZERS)}")
    elif layout.optimizer in MEGATRON_ONLY_OPTIMIZERS and (
            not stack.distributed_optimizer or (layout.zero != 1 and layout.shard_ranks > 1)):
        # (the search's probe layout meets this check too: a spec's framework, ZeRO stage or QLoRA,
        # whose default stack is FSDP, is refused here)
        problems.append("optimizer: the precision-aware optimizer is Megatron's distributed "
                        "optimizer: it needs framework megatron with zero 1 (or one data-parallel "
                        f"rank), got {layout.framework} with zero {layout.zero}"
                        + (", and QLoRA has no Megatron path" if method in QLORA_METHODS else ""))
    if layout.optimizer in PYTORCH_ONLY_OPTIMIZERS and not stack.pytorch_optimizers:
        problems.append(f"optimizer: {not_on_megatron(OPTIMIZER_NAME_OF[layout.optimizer])}")
    if layout.optimizer == "adam_bf16" and layout.precision != "bf16":
        problems.append(f"optimizer: {PURE_BF16_PRECISION}")
    if layout.optimizer == "adam_bf16" and stack.pure_bf16_needs_zero and layout.zero == 0:
        # its bf16_master_weights_and_grads and bf16_optimizer_states are ZeRO stage 1-3 settings
        problems.append("optimizer: adamw-bf16 on DeepSpeed needs ZeRO stage 1-3 "
                        "(bf16_master_weights_and_grads), got zero 0")
    return problems


def _adapter_problems(shape: ModelShape, method: str, cluster: Cluster,
                      layout: Layout) -> list[str]:
    """LoRA targets, and a rank for the adapter methods only."""
    problems: list[str] = []
    if layout.lora_targets not in LORA_TARGETS:
        problems.append(f"lora_targets: {layout.lora_targets!r} is not one of "
                        f"{', '.join(LORA_TARGETS)}")
    if method in ADAPTER_METHODS:
        if layout.lora_rank is None or layout.lora_rank < 1:
            problems.append(f"lora_rank: {method} needs a rank of at least 1, got "
                            f"{layout.lora_rank}")
    elif layout.lora_rank is not None:
        problems.append(f"lora_rank: only for {'/'.join(ADAPTER_METHODS)}, not for {method}")
    return problems


def _batch_problems(shape: ModelShape, method: str, cluster: Cluster,
                    layout: Layout) -> list[str]:
    """The global batch over the data-parallel ranks, and the micro-batch within each share."""
    per_replica = layout.global_batch // layout.dp
    if layout.global_batch % layout.dp:
        return [f"global_batch: {layout.global_batch} is not a multiple of dp = {layout.dp}"]
    if layout.micro_batch > per_replica:
        return [f"micro_batch: {layout.micro_batch} exceeds the {per_replica} "
                "sequences each data-parallel replica gets per step"]
    if stack_of(layout.framework).exact_batch and per_replica % layout.micro_batch:
        return [f"micro_batch: {layout.framework} needs micro-batch x accumulation steps = the "
                f"{per_replica} sequences each data-parallel replica gets per step (no smaller "
                f"last micro-batch), and {layout.micro_batch} does not divide them"]
    return []


def _offload_and_schedule_problems(shape: ModelShape, method: str, cluster: Cluster,
                                   layout: Layout) -> list[str]:
    """CPU offload of the model states, the interleaved pipeline schedule, and a fabric between
    nodes."""
    problems: list[str] = []
    if layout.state_offload and not offloads_states(layout.framework, layout.zero, layout.tp,
                                                    layout.pp, layout.optimizer):
        problems.append("state_offload: CPU offload of the model states is ZeRO-3's on FSDP or "
                        "DeepSpeed without tensor or pipeline parallelism, with an optimizer that "
                        "steps on the CPU (not 8-bit AdamW; on DeepSpeed, AdamW, which its CPU "
                        f"Adam runs); got {layout.framework} zero {layout.zero} tp {layout.tp} pp "
                        f"{layout.pp} optimizer {layout.optimizer}")
    if layout.virtual_pipeline > 1 and layout.pp == 1:
        problems.append("virtual_pipeline: interleaving needs pp > 1")
    elif interleaving_refused(layout.framework, layout.virtual_pipeline, layout.micro_batches,
                              layout.pp):
        problems.append(f"virtual_pipeline: Megatron's interleaved schedule needs at least pp = "
                        f"{layout.pp} micro-batches per step, got {layout.micro_batches}")
    if cluster.gpus > cluster.gpus_per_node and (cluster.fabric_kind == "none"
                                                 or cluster.fabric_gbps_per_gpu <= 0):
        problems.append(f"gpus: {cluster.gpus} GPUs need {cluster.nodes} nodes, but there is no "
                        "fabric between nodes")
    return problems


_LAYOUT_CHECKS = (_framework_problems, _expert_problems, _hybrid_shard_problems,
                  _model_split_problems, _stage_and_precision_problems, _optimizer_problems,
                  _adapter_problems, _batch_problems, _offload_and_schedule_problems)
"""The checks of a layout whose fields are sane, in the order their problems are listed."""


def estimate(model: ModelCard, method: str, cluster: Cluster, layout: Layout) -> Estimate:
    """Memory per GPU, step time, throughput and MFU of one layout.

    Raises ValueError, its message naming the field, for a layout that cannot run (tp x pp x dp not
    the GPU count, tp not dividing the heads, fp8 on a GPU without an fp8 peak, lora_rank with a
    full method, ...). A layout that runs out of memory is still estimated (fits=False).
    """
    shape = shape_of(model)
    problems = layout_problems(shape, method, cluster, layout)
    if problems:
        raise ValueError("; ".join(problems))
    return _estimate(model, shape, method, cluster, layout)


HOST_BOUND_SHARE = 0.1
"""Share of a step spent waiting for the host above which an estimate says so."""


def _estimate(model: ModelCard, shape: ModelShape, method: str, cluster: Cluster, layout: Layout,
              with_notes: bool = True, paging_limit_gib: float | None = None) -> Estimate:
    """`paging_limit_gib`: the memory above which a paged optimizer's states go to the host (the
    card's, unless a search kept headroom and the band's margin free: then the limit it timed the
    layout at)."""
    gpu = cluster.gpu
    limit = gpu.memory_gib if paging_limit_gib is None else paging_limit_gib
    mem = memory_per_gpu(shape, method, layout, limit, cluster.host_memory_gib_per_gpu)
    tp_link, cp_link, dp_link, pp_link, ep_link = layout_links(
        cluster, layout.tp, layout.pp, layout.cp, layout.dp, layout.ep
    )
    time = step_time(
        shape,
        method,
        layout,
        cluster,
        tp_link,
        dp_link,
        pp_link,
        mem.paged_offload_params,
        cp_link,
        ep_link,
    )
    step_s = time.total_s
    tokens_per_step = layout.global_batch * layout.seq_len
    tokens_per_s = tokens_per_step / step_s
    flops_tok = shape.flops_per_token(layout.seq_len, method, layout.lora_rank, layout.lora_targets)
    per_gpu = tokens_per_s / cluster.gpus
    tflops = flops_tok * per_gpu / 1e12
    peak = gpu.peak_tflops.for_precision(layout.precision) or 1.0
    uncalibrated = uncalibrated_mechanisms(gpu.architecture, method, layout, shape.is_moe)
    notes: list[str] = []
    if with_notes:
        pipeline = (
            ()
            if mem.peak_stage is None
            else (pipeline_peak_note(shape.layers, layout, mem.peak_stage),)
        )
        notes = _notes(
            model, shape, method, cluster, layout, tp_link, dp_link, ep_link, mem.notes + pipeline
        )
        if uncalibrated:
            notes.append(uncalibrated_band_note(uncalibrated))
        if time.host_s > HOST_BOUND_SHARE * step_s:
            notes.append(f"host-bound: {time.host_s / step_s:.0%} of the step waits for the CPU to "
                         "launch the eager stack's kernels (small micro-batches); a larger "
                         "micro-batch or fused kernels (--kernels fused, a job's kernels: fused) "
                         "would use the GPU better")
    return Estimate(
        model_id=model.id,
        method=method,
        cluster=cluster,
        layout=layout,
        memory=mem.breakdown,
        gpu_memory_gib=gpu.memory_gib,
        fits=mem.breakdown.total_gib <= gpu.memory_gib,
        margin_gib=gpu.memory_gib - mem.breakdown.total_gib,
        flops_per_token=flops_tok,
        step_time_s=step_s,
        time=time,
        tokens_per_s=tokens_per_s,
        tokens_per_s_per_gpu=per_gpu,
        model_tflops_per_gpu=tflops,
        mfu=tflops / peak,
        notes=notes,
        model=model,
        uncalibrated=uncalibrated,
        memory_floor_gib=mem.floor_gib,
    )


def _megatron_execution(layout: Layout) -> str:
    """How Megatron runs the layout's data parallelism, as the notes say it."""
    grads = "fp16" if layout.precision == "fp16" else "fp32"
    if layout.zero >= 2:
        gathers = ("parameters gathered layer by layer every micro-batch" if layout.zero == 3
                    else "updated parameters gathered once per step")
        return (f"Megatron-FSDP ({MEGATRON_FSDP_SHARDING[layout.zero]}): sharded {grads} gradients "
                f"reduce-scattered every micro-batch, {gathers}")
    buffers = ("precision-aware: bf16 gradient buffers, fp32 master weights as bf16 weights + "
               "16-bit remainders"
               if layout.optimizer == "adam_precision_aware" else f"{grads} gradient buffers")
    return f"distributed optimizer, {buffers}, gradients reduced once per step"


def _notes(model: ModelCard, shape: ModelShape, method: str, cluster: Cluster, layout: Layout,
           tp_link: object, dp_link: object, ep_link: object,
           mem_notes: tuple[str, ...]) -> list[str]:
    """The estimate's notes: what is assumed, then the model, method, links, stack and memory."""
    notes = _source_notes(model, cluster)
    if shape.is_moe:
        notes.extend(_moe_notes(model, layout, ep_link))
    notes.extend(_method_notes(method))
    notes.extend(_link_notes(cluster, layout, tp_link, dp_link))
    notes.extend(_stack_notes(model, shape, layout))
    notes.extend(_recompute_and_offload_notes(shape, layout))
    assumed_efficiency = efficiency_assumption(cluster.gpu.architecture)
    if assumed_efficiency:
        notes.append(assumed_efficiency + ("; flash attention assumed"
                                           if cluster.gpu.architecture == "davinci" else ""))
    notes.extend(mem_notes)
    return notes


def _source_notes(model: ModelCard, cluster: Cluster) -> list[str]:
    """The cluster's assumptions, and those of the model card and the GPU's figures."""
    notes = list(cluster.assumptions)
    if model.assumed:
        notes.append(f"model card {model.id} is an assumption: {model.assumption}")
    if cluster.gpu.assumed:
        notes.append(f"GPU {cluster.gpu.id} figures include assumptions: {cluster.gpu.assumption}")
    return notes


def _moe_notes(model: ModelCard, layout: Layout, ep_link: object) -> list[str]:
    """How an MoE model's experts, routing and all-to-alls are costed."""
    notes: list[str] = []
    split = f"split over ep={layout.ep}" if layout.ep > 1 else "no expert parallelism"
    cf = layout.capacity_factor
    routing = ("dropless routing (capacity factor 1) at an even expert load assumed"
               if cf == 1.0 else
               f"capacity factor {cf:g}: each routed expert's input padded to {cf:g} x an even "
               f"split, so {cf:g}x their FLOPs, saved activations and all-to-all bytes (tokens "
               "beyond a full expert's capacity skip it); model FLOPs and MFU count the useful "
               "work only; an even load assumed")
    notes.append(f"MoE: memory holds all experts ({split}), "
                 f"FLOPs count active parameters; all-to-all dispatch/combine exposed; {routing}")
    if layout.ep > 1 and isinstance(ep_link, GroupLink) and ep_link.spans_nodes:
        notes.append(f"MoE: ep={layout.ep} spans nodes: its all-to-alls are costed as Megatron's "
                     "default dispatcher sends them (a copy per routed expert, 16-bit, none "
                     "hidden); DeepSeek-V3's run sent each token once per node to at most 4 nodes, "
                     "in FP8 for the dispatch, and hid the all-to-alls behind compute (DeepEP, "
                     "DualPipe; DeepSeek-V3 technical report, sections 3.2-3.3): not modelled, so "
                     "such a stack runs faster than estimated")
    if model.attention:
        notes.append("attention approximated by the generic multi-head shape: "
                     f"{model.attention[:80]}...")
    return notes


def _method_notes(method: str) -> list[str]:
    """What LoRA, QLoRA and the method's own note change."""
    notes: list[str] = []
    if method in ADAPTER_METHODS:
        notes.append("LoRA/QLoRA: frozen base, backward computes activation gradients only "
                     "(~4N instead of 6N FLOPs per token)")
    if method in METHOD_NOTES:
        notes.append(METHOD_NOTES[method])
    if method in QLORA_METHODS:
        notes.append("QLoRA: NF4 base weights with double quantization (4.127 bits/param); "
                     "embeddings and output layer kept in 16-bit; dequantization costs memory "
                     "bandwidth")
    return notes


def _link_notes(cluster: Cluster, layout: Layout, tp_link: object, dp_link: object) -> list[str]:
    """The links of the tensor- and data-parallel groups, hybrid sharding's, and how the
    framework runs data parallelism."""
    notes: list[str] = []
    if isinstance(tp_link, GroupLink) and tp_link.spans_nodes:
        notes.append(f"tp={layout.tp} spans nodes: its all-reduces run at "
                     f"{tp_link.bandwidth_gb_per_s:g} GB/s ({tp_link.bottleneck})")
    if isinstance(dp_link, GroupLink) and layout.shard_ranks > 1:
        spread = ("" if not dp_link.spans_nodes else
                  f" (one member per node, on its own {cluster.fabric_gbps_per_gpu:g} Gb/s card)"
                  if dp_link.nics_per_node <= 1 else
                  f" ({dp_link.nics_per_node} NICs per node, {cluster.fabric_gbps_per_gpu:g} Gb/s "
                  "each, NCCL spreads its rings over all of them)")
        notes.append(f"data-parallel group of {layout.shard_ranks}: bottleneck "
                     f"{dp_link.bottleneck} {dp_link.bandwidth_gb_per_s:g} GB/s per "
                     f"direction{spread}")
    if layout.shard_group:
        shard_link, replicate_link = hybrid_links(cluster, layout.tp, layout.shard_group,
                                                  layout.replicas)
        notes.append(f"hybrid sharding (HSDP): states sharded over the {layout.shard_group} "
                     f"data-parallel ranks of each node ({shard_link.bottleneck} "
                     f"{shard_link.bandwidth_gb_per_s:g} GB/s), kept in {layout.replicas} copies; "
                     "the layers are gathered and their gradients reduce-scattered inside the "
                     "node, each gradient shard all-reduced across the nodes "
                     f"({replicate_link.bottleneck} {replicate_link.bandwidth_gb_per_s:g} GB/s)")
    notes.append(f"framework {layout.framework}: " + {
        "megatron": _megatron_execution(layout),
        "deepspeed": "ZeRO stages 2/3 reduce gradients every micro-batch",
        "fsdp": ("parameters gathered layer by layer every micro-batch, prefetch overlapped "
                 "with compute"),
    }[layout.framework])
    return notes


def _stack_notes(model: ModelCard, shape: ModelShape, layout: Layout) -> list[str]:
    """Eager kernels, the loss, replicated KV heads, uneven stages, a short last micro-batch, a
    sequence beyond the model's positions and FP8."""
    notes: list[str] = []
    if layout.eager_modules:
        notes.append("kernels eager: the layers run as PyTorch modules op by op (Hugging Face, "
                     "torchtune, peft): their saved activations, peft's casts and the host's "
                     "kernel launches as measured on an H200 (bench/device/README.md); --kernels "
                     "fused for torch.compile, Liger or Unsloth")
    if layout.loss != "plain":
        notes.append(f"loss {layout.loss}: {LOSS_KINDS[layout.loss]}; the run must use one")
    if layout.tp > shape.kv_heads:
        notes.append(f"tp={layout.tp} > {shape.kv_heads} KV heads: KV projections replicated")
    if shape.layers % layout.pp:
        notes.append(f"pp={layout.pp} does not divide {shape.layers} layers: uneven stages, the "
                     f"largest has {-(-shape.layers // layout.pp)}")
    if layout.last_micro_batch_share < 1:
        last = round(layout.last_micro_batch_share * layout.micro_batch)
        notes.append(f"micro-batches: each replica's {layout.global_batch // layout.dp} "
                     f"sequences run as {layout.micro_batches - 1} of {layout.micro_batch} and a "
                     f"last of {last}, which computes {last}/{layout.micro_batch} of a full one "
                     "but hides only that share of its collectives and launches as many kernels")
    if layout.seq_len > model.max_positions:
        notes.append(f"seq_len {layout.seq_len} exceeds the model's {model.max_positions} "
                     "positions (context extension)")
    if layout.precision == "fp8":
        notes.append("fp8: linear layers in FP8 (Transformer Engine style), attention in BF16; "
                     "MFU is against the FP8 peak")
    return notes


def _recompute_and_offload_notes(shape: ModelShape, layout: Layout) -> list[str]:
    """Block recomputation, checkpoints or activations in host memory, and CPU offload of the
    model states."""
    notes: list[str] = []
    if layout.recompute_layers is not None:
        chunk = chunk_layers(shape.layers, layout)
        notes.append(f"recompute: Megatron's block method, {layout.recompute_layers} of {chunk} "
                     "layers per model chunk recomputed, the rest keep their activations "
                     "(--recompute-granularity full --recompute-method block "
                     f"--recompute-num-layers {layout.recompute_layers})")
    if layout.recompute == "full_offload":
        notes.append("recompute: full, each layer's checkpointed input kept in host memory and "
                     "copied back for its recomputation (Unsloth's gradient checkpointing; "
                     "LLaMA-Factory use_unsloth_gc: true); the search picks it only where nothing "
                     "else fits")
    if layout.recompute == "offload":
        notes.append("recompute: activations offloaded to host memory, as torchtune runs it "
                     "(enable_activation_offloading); none of the stacks plan export writes for "
                     "has it, so the search picks it only where nothing else fits")
    if layout.state_offload:
        notes.append(f"CPU offload (ZeRO-3 {layout.framework}): chosen only where nothing fits "
                     "without it; the optimizer step on the CPU is timed at an assumed "
                     f"{CPU_OPTIMIZER_BYTES_PER_S / 1e9:g} GB/s of host memory traffic per GPU (no "
                     f"measurement), PCIe at {PCIE_GB_PER_S_PER_DIRECTION['pcie']:g} GB/s per "
                     "direction per GPU")
    return notes
