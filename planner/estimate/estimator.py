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
    LOSS_KINDS,
    MEGATRON_FSDP_SHARDING,
    QLORA_METHODS,
    Estimate,
    Layout,
)


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
