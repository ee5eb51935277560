"""`estimate()`: validate a layout, then put memory, FLOPs, topology and timing together."""

from __future__ import annotations

from plan.models.methods import METHOD_NOTES
from plan.models.model_card import ModelCard
from plan.planner.estimate.band import uncalibrated_band_note, uncalibrated_mechanisms
from plan.planner.estimate.cluster import Cluster
from plan.planner.estimate.factors import (
    CPU_OPTIMIZER_BYTES_PER_S,
    PCIE_GB_PER_S_PER_DIRECTION,
    efficiency_assumption,
)
from plan.planner.estimate.flops import ModelShape, shape_of
from plan.planner.estimate.layout_checks import layout_problems
from plan.planner.estimate.memory import chunk_layers, memory_per_gpu, pipeline_peak_note
from plan.planner.estimate.refusal import joined
from plan.planner.estimate.timing import step_time
from plan.planner.estimate.topology import GroupLink, hybrid_links, layout_links
from plan.planner.estimate.types import (
    ADAPTER_METHODS,
    MEGATRON_FSDP_SHARDING,
    QLORA_METHODS,
    Estimate,
    Layout,
)
from plan.planner.i18n.said import say


def estimate(model: ModelCard, method: str, cluster: Cluster, layout: Layout) -> Estimate:
    """Memory per GPU, step time, throughput and MFU of one layout.

    Raises ValueError, its message naming the field, for a layout that cannot run (tp x pp x dp not
    the GPU count, tp not dividing the heads, fp8 on a GPU without an fp8 peak, lora_rank with a
    full method, ...). A layout that runs out of memory is still estimated (fits=False).
    """
    shape = shape_of(model)
    problems = layout_problems(shape, method, cluster, layout)
    if problems:
        raise ValueError(joined(problems))
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
            notes.append(say("enote.host_bound", share=time.host_s / step_s))
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
        gathers = (say("enote.gathers_layers") if layout.zero == 3
                   else say("enote.gathers_once"))
        return say("enote.megatron_fsdp", sharding=MEGATRON_FSDP_SHARDING[layout.zero],
                   grads=grads, gathers=gathers)
    buffers = (say("enote.precision_aware") if layout.optimizer == "adam_precision_aware"
               else say("enote.grad_buffers", grads=grads))
    return say("enote.distributed_optimizer", buffers=buffers)


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
        notes.append(say("enote.flash_assumed", note=assumed_efficiency)
                     if cluster.gpu.architecture == "davinci" else assumed_efficiency)
    notes.extend(mem_notes)
    return notes


def _source_notes(model: ModelCard, cluster: Cluster) -> list[str]:
    """The cluster's assumptions, and those of the model card and the GPU's figures."""
    notes = list(cluster.assumptions)
    if model.assumed:
        notes.append(say("enote.model_assumed", model=model.id, assumption=model.assumption))
    if cluster.gpu.assumed:
        notes.append(say("enote.gpu_assumed", gpu=cluster.gpu.id,
                         assumption=cluster.gpu.assumption))
    return notes


def _moe_notes(model: ModelCard, layout: Layout, ep_link: object) -> list[str]:
    """How an MoE model's experts, routing and all-to-alls are costed."""
    notes: list[str] = []
    split = (say("enote.moe_split", ep=layout.ep) if layout.ep > 1
             else say("enote.moe_no_ep"))
    cf = layout.capacity_factor
    routing = say("enote.dropless") if cf == 1.0 else say("enote.capacity", cf=cf)
    notes.append(say("enote.moe", split=split, routing=routing))
    if layout.ep > 1 and isinstance(ep_link, GroupLink) and ep_link.spans_nodes:
        notes.append(say("enote.moe_ep_nodes", ep=layout.ep))
    if model.attention:
        notes.append(say("enote.attention_approx", attention=model.attention[:80]))
    return notes


def _method_notes(method: str) -> list[str]:
    """What LoRA, QLoRA and the method's own note change."""
    notes: list[str] = []
    if method in ADAPTER_METHODS:
        notes.append(say("enote.adapters"))
    if method in METHOD_NOTES:
        notes.append(say(f"enote.method.{method}"))
    if method in QLORA_METHODS:
        notes.append(say("enote.qlora"))
    return notes


def _link_notes(cluster: Cluster, layout: Layout, tp_link: object, dp_link: object) -> list[str]:
    """The links of the tensor- and data-parallel groups, hybrid sharding's, and how the
    framework runs data parallelism."""
    notes: list[str] = []
    if isinstance(tp_link, GroupLink) and tp_link.spans_nodes:
        notes.append(say("enote.tp_spans", tp=layout.tp, gbps=tp_link.bandwidth_gb_per_s,
                         bottleneck=tp_link.bottleneck))
    if isinstance(dp_link, GroupLink) and layout.shard_ranks > 1:
        fabric = cluster.fabric_gbps_per_gpu
        spread = ("" if not dp_link.spans_nodes else
                  say("enote.dp_one_nic", fabric=fabric) if dp_link.nics_per_node <= 1 else
                  say("enote.dp_nics", nics=dp_link.nics_per_node, fabric=fabric))
        notes.append(say("enote.dp_group", n=layout.shard_ranks, bottleneck=dp_link.bottleneck,
                         gbps=dp_link.bandwidth_gb_per_s, spread=spread))
    if layout.shard_group:
        shard_link, replicate_link = hybrid_links(cluster, layout.tp, layout.shard_group,
                                                  layout.replicas)
        notes.append(say("enote.hsdp", group=layout.shard_group,
                         shard_link=shard_link.bottleneck,
                         shard_gbps=shard_link.bandwidth_gb_per_s, replicas=layout.replicas,
                         replicate_link=replicate_link.bottleneck,
                         replicate_gbps=replicate_link.bandwidth_gb_per_s))
    notes.append(say("enote.framework", framework=layout.framework, how={
        "megatron": _megatron_execution(layout),
        "deepspeed": say("enote.deepspeed"),
        "fsdp": say("enote.fsdp"),
    }[layout.framework]))
    return notes


def _stack_notes(model: ModelCard, shape: ModelShape, layout: Layout) -> list[str]:
    """Eager kernels, the loss, replicated KV heads, uneven stages, a short last micro-batch, a
    sequence beyond the model's positions and FP8."""
    notes: list[str] = []
    if layout.eager_modules:
        notes.append(say("enote.eager"))
    if layout.loss != "plain":
        notes.append(say("enote.loss", loss=layout.loss,
                         kind=say(f"enote.loss_kind.{layout.loss}")))
    if layout.tp > shape.kv_heads:
        notes.append(say("enote.kv_replicated", tp=layout.tp, kv=shape.kv_heads))
    if shape.layers % layout.pp:
        notes.append(say("enote.uneven_stages", pp=layout.pp, layers=shape.layers,
                         largest=-(-shape.layers // layout.pp)))
    if layout.last_micro_batch_share < 1:
        last = round(layout.last_micro_batch_share * layout.micro_batch)
        notes.append(say("enote.last_micro_batch", sequences=layout.global_batch // layout.dp,
                         full=layout.micro_batches - 1, mb=layout.micro_batch, last=last))
    if layout.seq_len > model.max_positions:
        notes.append(say("enote.seq_beyond", seq_len=layout.seq_len,
                         positions=model.max_positions))
    if layout.precision == "fp8":
        notes.append(say("enote.fp8"))
    return notes


def _recompute_and_offload_notes(shape: ModelShape, layout: Layout) -> list[str]:
    """Block recomputation, checkpoints or activations in host memory, and CPU offload of the
    model states."""
    notes: list[str] = []
    if layout.recompute_layers is not None:
        chunk = chunk_layers(shape.layers, layout)
        notes.append(say("enote.block_recompute", n=layout.recompute_layers, chunk=chunk))
    if layout.recompute == "full_offload":
        notes.append(say("enote.full_offload"))
    if layout.recompute == "offload":
        notes.append(say("enote.activation_offload"))
    if layout.state_offload:
        notes.append(say("enote.cpu_offload", framework=layout.framework,
                         cpu_gbps=CPU_OPTIMIZER_BYTES_PER_S / 1e9,
                         pcie_gbps=PCIE_GB_PER_S_PER_DIRECTION["pcie"]))
    return notes
