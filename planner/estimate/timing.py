"""Step time: compute at an achieved rate, exposed communication, pipeline bubble, recomputation.

Compute per micro-batch (FLOPs at an achieved rate, memory-bound kernels, recomputation):
compute.py. Here the communication each layout exposes, and the step.

Tensor parallelism: 4 all-reduces of s b h 16-bit values per layer per micro-batch (2 forward, 2
backward; 6 with full recompute; Shoeybi et al. 2019), or the same volume as reduce-scatter +
all-gather with sequence parallelism (Korthikanti et al. 2022), of which TP_COMM_EXPOSED_FRACTION is
exposed. Context parallelism: ring attention passes K/V chunks (cp - 1) times per layer forward and
twice that backward, overlapped with the attention kernels; only the excess is exposed. DeepSpeed's
cp is Ulysses instead: all-to-alls that trade the sequence split for a head split around each
attention (q, k, v in, the output back), on the critical path. Pipeline (Narayanan et al. 2021):
bubble (p-1)/v micro-batch times of the slowest stage, plus point-to-point transfers; each stage
hides its own data-parallel traffic behind its own passes, and the step is the slowest stage's. A
last smaller micro-batch computes its share of a full one, hides that share of its collectives'
time, and launches as many kernels.

Data parallelism, layer by layer: a collective for layer i is prefetched/launched while layer i-1
(or i+1 in the backward pass) computes, so per pass only the first collective and whatever each
later one takes beyond its layer's compute are exposed:
    exposed(c, f, L) = c + (L - 1) x max(0, c - DP_OVERLAP_FRACTION x f)
for per-layer collective time c (one layer's bytes, plus the ring's latency, which every collective
pays: at thousands of ranks it outweighs the bytes of a layer) and per-layer compute f. On the stage
that holds the embedding (the first, whose backward pass ends the step), the collective nothing
hides is the embedding's own bucket, gathered first and its gradient ready last (a whole parameter
is one bucket; FSDP gathers and reduces its root module, embedding and output layer, as one unit):
    exposed = c_embedding + L x max(0, c - DP_OVERLAP_FRACTION x f) + max(0, c_head -
    DP_OVERLAP_FRACTION x f)
with an untied output layer's collective behind the layers; at 128k-token vocabularies the embedding
is four to five layers of a 1-3B model. Which collectives run when depends on the framework:
Megatron (ZeRO 0/1) reduces gradients once per step behind the last micro-batch's backward and
(ZeRO-1) all-gathers parameters behind the next forward (buckets of max(40M, 1M x dp) parameters,
megatron-core 0.16 distributed_data_parallel.py: about a layer at scale), in its fp32 `main_grad`
under bf16; with interleaved stages only the chunk that ends the step lacks cover
(`_once_per_step`); Megatron-FSDP `optim_grads` reduce-scatters gradients every micro-batch and
gathers the updated parameters once per step, as ZeRO-1 does; ZeRO-3 (DeepSpeed, FSDP FULL_SHARD,
Megatron-FSDP `optim_grads_params`) gathers each layer before its forward and again before its
backward and reduce-scatters its gradient, every micro-batch; FSDP SHARD_GRAD_OP gathers once per
micro-batch forward and reduces once per step. DeepSpeed below stage 3 overlaps nothing (its
`overlap_comm` is off there): it all-reduces its gradient buckets on the compute stream, every
micro-batch under ZeRO-2 and on the last under ZeRO 0-1, and (ZeRO 1-2) all-gathers the updated
parameters inside the optimizer step (`_on_compute_stream`), all of it exposed whatever the compute.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import NamedTuple

from plan.models.methods import reference_forward_passes
from plan.models.stacks import stack_of
from plan.planner.estimate.cluster import Cluster
from plan.planner.estimate.compute import (
    MicroBatchCompute,
    Rates,
    micro_batch_compute,
    rates,
    recomputed_share,
    stage_recompute_s,
)
from plan.planner.estimate.factors import (
    CPU_OPTIMIZER_BYTES_PER_S,
    DP_OVERLAP_FRACTION,
    HOST_SECONDS_PER_LAYER_PASS,
    PCIE_GB_PER_S_PER_DIRECTION,
    QLORA_DEQUANT_BYTES_PER_PARAM,
)
from plan.planner.estimate.flops import QLORA_BITS_PER_PARAM, ModelShape
from plan.planner.estimate.memory import (
    ADAM_8BIT_STATE_BYTES,
    grad_buffer_bytes,
)
from plan.planner.estimate.split_comm import (
    cp_exposed_s,
    ep_exposed_s,
    p2p_s,
    tp_exposed_s,
)
from plan.planner.estimate.topology import GroupLink, hybrid_links
from plan.planner.estimate.types import (
    ADAPTER_METHODS,
    FULL_RECOMPUTE,
    QLORA_METHODS,
    Layout,
    TimeBreakdown,
)

OPTIMIZER_STEP_BYTES_PER_PARAM = {
    "adam": 28.0,
    "adam_8bit": 10.0,
    "paged_adam_8bit": 10.0,
    "adafactor": 14.0,
    "sgd": 22.0,
    "adam_precision_aware": 26.0,
    "adam_bf16": 14.0,
}
"""Bytes streamed per parameter by the optimizer step: Adam reads fp32 master/m/v (12) + gradient
(2), writes them (12) + the 16-bit weight (2); 8-bit Adam: states 2+2, weight 2+2, gradient 2;
Adafactor: master 4+4, gradient 2, weight 2, factored moments ~2; SGD with momentum: master and
momentum 8+8, gradient 2, weight 2, and 2 of slack for the update; precision-aware Adam: remainder,
moments and weight 2+8+2 read and written, gradient 2 read; pure BF16 Adam: weight and moments 2+4
read and written, gradient 2 read."""


def stage_lower_bound_s(shape: ModelShape, layout: Layout, cluster: Cluster, tp_link: GroupLink,
                        mb: MicroBatchCompute) -> float:
    """Seconds per micro-batch on the slowest stage that no layout with this tp, pp, cp and
    micro-batch can beat, whatever its ZeRO stage and recomputation: compute and tensor-parallel
    traffic without recomputation. A step takes at least (micro-batch equivalents + (pp - 1) / v)
    times this, plus the non-negative data-parallel, pipeline-transfer and optimizer terms of
    `step_time`."""
    return (mb.compute_s + tp_exposed_s(shape, layout, tp_link, 4, mb.layers)) / cluster.speedup


def _layered_exposed(layer_s: float, compute_s: float, layers: int, edge_s: float = 0.0,
                     overlapped_s: float = 0.0) -> float:
    """One pass's data-parallel collectives not hidden behind its compute (module docstring): the
    one nothing hides, plus what each of the others takes beyond a layer's compute. Nothing hides
    the embedding's bucket (`edge_s`: gathered first, its gradient ready last) where the stage holds
    one, else the first layer's; `overlapped_s` is the output layer's, which runs behind the
    layers."""
    hide = DP_OVERLAP_FRACTION * compute_s / max(1, layers)
    behind = max(0.0, overlapped_s - hide)
    if edge_s > 0:
        return edge_s + layers * max(0.0, layer_s - hide) + behind
    if layer_s <= 0:
        return behind
    return layer_s + (layers - 1) * max(0.0, layer_s - hide) + behind


def _edge_params(shape: ModelShape, layout: Layout) -> tuple[float, float]:
    """(front, back) parameters per GPU outside the layers, on the stage whose data-parallel tail
    sets the
    step: the first (in a pipeline it runs the step's last backward pass). Front: what the forward
    gathers first and the backward finishes last, the input embedding (tied or not); FSDP with one
    stage gathers and reduces the whole root module (embedding, final norm, output layer) as one
    unit. Back: the output layer, gathered last and reduced first, behind the layers (one stage
    only)."""
    embed, head = shape.embed_params / layout.tp, shape.head_params / layout.tp
    if layout.pp > 1:
        return embed, 0.0
    if stack_of(layout.framework).gathers_root_module:
        return embed + head, 0.0
    return embed, head


def stage_params_per_gpu(shape: ModelShape, layout: Layout) -> float:
    """Parameters per GPU on a pipeline stage of ceil(layers / pp) layers, with its share of the
    embedding and the output layer."""
    t, p = layout.tp, layout.pp
    return (shape.layer_params_per_gpu(t, layout.ep) * -(-shape.layers // p)
            + (shape.embed_params + shape.head_params) / t / p)


def trainable_stage_params(shape: ModelShape, method: str, layout: Layout) -> float:
    """Of those, the parameters that get gradients and optimizer states: the adapters' under LoRA
    and QLoRA, all of them otherwise."""
    if method in ADAPTER_METHODS:
        return (
            shape.adapter_params(layout.lora_rank or 0, layout.lora_targets) / layout.pp / layout.tp
        )
    return stage_params_per_gpu(shape, layout)


def sharding_links(
    cluster: Cluster, layout: Layout, dp_link: GroupLink
) -> tuple[GroupLink, GroupLink | None]:
    """The links a layout's ZeRO/FSDP collectives run on (`dp_exposed_s`): the data-parallel
    group's, or under hybrid sharding the shard group's and the replicas'
    (topology.hybrid_links)."""
    if not layout.shard_group:
        return dp_link, None
    return hybrid_links(cluster, layout.tp, layout.shard_group, layout.replicas)


class _ShardedParams(NamedTuple):
    """Per GPU on the stage whose data-parallel tail sets the step: the bytes one layer's gather
    moves, the parameters outside the layers (`front`, `back`: `_edge_params`), the parameters that
    get gradients (per layer, front, back) and the bytes of each gradient element reduced."""

    layer_gather_bytes: float
    front: float
    back: float
    layer_trained: float
    front_trained: float
    back_trained: float
    grad_bytes: float


def _sharded_params(shape: ModelShape, method: str, layout: Layout, layers: int) -> _ShardedParams:
    t = layout.tp
    per_layer = shape.layer_params_per_gpu(t, layout.ep)
    front, back = _edge_params(shape, layout)
    if method in QLORA_METHODS:
        linear = shape.layer_linear_total / t
        layer_gather_bytes = linear * QLORA_BITS_PER_PARAM / 8 + (per_layer - linear) * 2.0
    else:
        layer_gather_bytes = per_layer * 2.0
    grad_bytes = grad_buffer_bytes(layout)  # Megatron-LM reduces its fp32 main_grad under bf16
    if method in ADAPTER_METHODS:  # the embedding and the output layer are frozen
        trained = trainable_stage_params(shape, method, layout) / layers
        return _ShardedParams(layer_gather_bytes, front, back, trained, 0.0, 0.0, grad_bytes)
    return _ShardedParams(layer_gather_bytes, front, back, per_layer, front, back, grad_bytes)


class _Edged(NamedTuple):
    """Seconds of a collective for one layer, and for the stage's parameters outside the layers
    (`front`, `back`: `_edge_params`)."""

    layer: float
    front: float
    back: float

    def behind(self, window_s: float, layers: int) -> float:
        """Exposed in one pass of `window_s` seconds of compute (`_layered_exposed`)."""
        return _layered_exposed(self.layer, window_s, layers, self.front, self.back)

    def once_per_step(self, pass_s: float, layers: int, layout: Layout) -> float:
        """Exposed once per step behind the pass of `pass_s` seconds (`_once_per_step`)."""
        return _once_per_step(self.layer, pass_s, layers, layout, self.front, self.back)


def _pass_windows(method: str, layout: Layout, compute_mb: float,
                  recompute_mb: float) -> tuple[float, float]:
    """Seconds of a micro-batch's forward pass and of its backward pass (with recomputation): each
    forward pass (the policy's, and a DPO reference's) and the backward pass hide their own
    collectives, the windows adding up to the micro-batch's compute, none counted twice."""
    lin_bwd_factor = 1.0 if method in ADAPTER_METHODS else 2.0
    forward_mb = compute_mb / (1 + lin_bwd_factor + reference_forward_passes(method))
    return forward_mb, forward_mb * lin_bwd_factor + recompute_mb


def _each_micro_batch(layout: Layout, collective: _Edged, window_s: float, layers: int) -> float:
    """Exposure summed over the step's micro-batches, each behind its own pass of `window_s` (a
    full one). A last smaller micro-batch (its share of a full one) has that much less compute to
    hide its own collectives behind."""
    last = layout.last_micro_batch_share
    return ((layout.micro_batches - 1) * collective.behind(window_s, layers)
            + collective.behind(window_s * last, layers))


def _gathered_every_micro_batch(method: str, layout: Layout, params: _ShardedParams,
                                collective: Callable[[float], float], reduce: _Edged,
                                windows: tuple[float, float], layers: int, zero: int) -> float:
    """ZeRO-3, or FSDP's SHARD_GRAD_OP: every micro-batch gathers the layers for its forward pass;
    SHARD_GRAD_OP reduces once per step, behind the last backward pass, ZeRO-3 gathers each layer
    again for its backward pass (the root module stays gathered) and reduce-scatters its gradient
    there; a DPO reference forward gathers every layer once more (its own copy or the base)."""
    forward_mb, backward_mb = windows
    gather = _Edged(collective(params.layer_gather_bytes), collective(params.front * 2.0),
                    collective(params.back * 2.0))
    if layout.state_offload:  # each shard crosses PCIe before its gather, its gradient shard after
        pcie = PCIE_GB_PER_S_PER_DIRECTION["pcie"] * 1e9 * layout.shard_ranks
        gather = _Edged(gather.layer + params.layer_gather_bytes / pcie,
                        gather.front + params.front * 2.0 / pcie,
                        gather.back + params.back * 2.0 / pcie)
        reduce = _Edged(reduce.layer + params.layer_trained * params.grad_bytes / pcie,
                        reduce.front + params.front_trained * params.grad_bytes / pcie,
                        reduce.back + params.back_trained * params.grad_bytes / pcie)
    if zero == 2:
        last_backward = backward_mb * layout.last_micro_batch_share
        return (_each_micro_batch(layout, gather, forward_mb, layers)
                + reduce.behind(last_backward, layers))
    backward = _Edged(gather.layer + reduce.layer, reduce.front, gather.back + reduce.back)
    forwards = 1 + reference_forward_passes(method)
    return (forwards * _each_micro_batch(layout, gather, forward_mb, layers)
            + _each_micro_batch(layout, backward, backward_mb, layers))


DEEPSPEED_REDUCE_BUCKET_ELEMENTS = 5e8
"""Gradient elements per DeepSpeed all-reduce: ZeRO 1-2's `reduce_bucket_size` default
(deepspeed/runtime/zero/config.py) and ZeRO-0's MEMORY_OPT_ALLREDUCE_SIZE (runtime/engine.py), both
500,000,000 in DeepSpeed 0.19.8."""


def _on_compute_stream(params: _ShardedParams, layout: Layout, layers: int, link: GroupLink,
                       zero: int) -> float:
    """DeepSpeed's ZeRO 0-2 without `overlap_comm` (Stack.overlaps_unsharded_reduction): every
    collective waits on the compute stream, so all of it is exposed. Gradients are all-reduced
    bucket by bucket (ZeRO 1-2 too: `use_multi_rank_bucket_allreduce`, default on, all-reduces a
    bucket and each rank keeps its partition; stage_1_and_2.py `average_tensor`), on every
    micro-batch under ZeRO-2 and on the last under ZeRO 0-1; ZeRO 1-2 then all-gather the updated
    16-bit parameters in one collective inside the optimizer step (`all_gather_dp_groups`)."""
    trained = params.layer_trained * layers + params.front_trained + params.back_trained
    full, rest = divmod(trained, DEEPSPEED_REDUCE_BUCKET_ELEMENTS)
    reduced = (full * link.all_reduce_s(DEEPSPEED_REDUCE_BUCKET_ELEMENTS * params.grad_bytes)
               + link.all_reduce_s(rest * params.grad_bytes))
    reductions = layout.micro_batches if zero == 2 else 1
    gathered = link.reduce_scatter_s(trained * 2.0) if zero >= 1 else 0.0
    return reductions * reduced + gathered


def dp_exposed_s(shape: ModelShape, method: str, layout: Layout, dp_link: GroupLink, zero: int,
                 compute_mb: float, recompute_mb: float,
                 replicate_link: GroupLink | None = None) -> float:
    """Data-parallel traffic per step not hidden behind compute (module docstring). Under hybrid
    sharding `dp_link` is the shard group's and `replicate_link` the replicas': each gradient shard,
    once reduced in its node, is all-reduced across them in the same window (FSDP's
    post-backward)."""
    if layout.shard_ranks <= 1 and not layout.state_offload:
        return 0.0
    layers = -(-shape.layers // layout.pp)
    params = _sharded_params(shape, method, layout, layers)
    if zero <= 2 and not stack_of(layout.framework).overlaps_unsharded_reduction:
        return _on_compute_stream(params, layout, layers, dp_link, zero)
    # one collective (an all-gather takes what a reduce-scatter takes)
    collective = dp_link.reduce_scatter_s

    def across(nbytes: float) -> float:
        """The replicas' all-reduce of a reduced gradient shard (hybrid sharding)."""
        return (replicate_link.all_reduce_s(nbytes / layout.state_shards) if replicate_link
                else 0.0)

    def reduced(nbytes: float) -> float:
        return collective(nbytes) + across(nbytes)

    reduce = _Edged(reduced(params.layer_trained * params.grad_bytes),
                    reduced(params.front_trained * params.grad_bytes),
                    reduced(params.back_trained * params.grad_bytes))
    windows = _pass_windows(method, layout, compute_mb, recompute_mb)
    forward_mb, backward_mb = windows
    # the last micro-batch's backward pass ends the step
    last_backward = backward_mb * layout.last_micro_batch_share

    def updated_parameters_gathered() -> float:
        """The updated 16-bit parameters' all-gather once per step, behind the next step's first
        forward (the distributed optimizer, ZeRO-1, and Megatron-FSDP's optim_grads)."""
        gathered = _Edged(collective(params.layer_trained * 2.0),
                          collective(params.front_trained * 2.0),
                          collective(params.back_trained * 2.0))
        return gathered.once_per_step(forward_mb, layers, layout)

    if zero == 2 and stack_of(layout.framework).stage2_reduces_every_micro_batch:
        # Megatron-FSDP optim_grads reduce-scatters every micro-batch's gradients and, as ZeRO-1
        # does, all-gathers the updated 16-bit parameters after the step: the gradient shards are
        # all there is to accumulate into, so every micro-batch's backward reduce-scatters
        every = _each_micro_batch(layout, reduce, backward_mb, layers)
        return every + updated_parameters_gathered()
    if zero >= 2:
        return _gathered_every_micro_batch(method, layout, params, collective, reduce, windows,
                                           layers, zero)
    # Once per step (Megatron, ZeRO-0/1): the reduction behind the last micro-batch's backward pass
    # and (ZeRO-1) the updated parameters' all-gather behind the next step's first forward
    if zero == 1:
        return reduce.once_per_step(last_backward, layers, layout) + updated_parameters_gathered()
    # ZeRO-0 all-reduces (ring or tree, whichever NCCL times faster; topology module docstring)

    def all_reduced(nbytes: float) -> float:
        return dp_link.all_reduce_s(nbytes) + 2 * across(nbytes)

    return _once_per_step(all_reduced(params.layer_trained * params.grad_bytes), last_backward,
                          layers, layout, all_reduced(params.front_trained * params.grad_bytes),
                          all_reduced(params.back_trained * params.grad_bytes))


def _once_per_step(layer_s: float, pass_s: float, layers: int, layout: Layout, edge_s: float,
                   overlapped_s: float) -> float:
    """A once-per-step collective's exposed part (`_layered_exposed`). With interleaved stages a
    stage's layers form v chunks, and only the chunk that finishes the step (the first: its backward
    pass ends the step, its forward starts the next) lacks cover: each other chunk's final gradients
    are ready, and its parameters wanted, at least one round through the pp stages away from the
    step's end or start, with the stage's other chunks computing meanwhile (Narayanan et al. 2021
    schedule; megatron-core reduces each chunk's buckets as soon as they are ready,
    `overlap_grad_reduce`, and gathers them chunk by chunk, `overlap_param_gather`)."""
    v = layout.virtual_pipeline
    if v <= 1 or layout.pp <= 1:
        return _layered_exposed(layer_s, pass_s, layers, edge_s, overlapped_s)
    chunk = -(-layers // v)
    cover = DP_OVERLAP_FRACTION * layout.pp * pass_s * chunk / layers  # one round: pp chunk passes
    return (_layered_exposed(layer_s, pass_s * chunk / layers, chunk, edge_s, overlapped_s)
            + (v - 1) * max(0.0, chunk * layer_s - cover))


def optimizer_and_paging_s(
    shape: ModelShape,
    method: str,
    layout: Layout,
    r: Rates,
    paged_offload_params: float,
    layers: int,
) -> float:
    """Seconds per step (before the cluster's speed-up) of the optimizer step, paged optimizer
    states and QLoRA dequantization."""
    t = layout.tp
    opt_params = trainable_stage_params(shape, method, layout)
    if layout.zero >= 1:
        opt_params /= layout.state_shards
    step_bytes_per_s = CPU_OPTIMIZER_BYTES_PER_S if layout.state_offload else r.memory_bytes_per_s
    other = (
        opt_params * OPTIMIZER_STEP_BYTES_PER_PARAM.get(layout.optimizer, 28.0) / step_bytes_per_s
    )
    if paged_offload_params > 0:
        pcie = PCIE_GB_PER_S_PER_DIRECTION["pcie"] * 1e9
        other += paged_offload_params * 2 * ADAM_8BIT_STATE_BYTES / pcie
    if method in QLORA_METHODS:
        passes = (3 if layout.recompute in FULL_RECOMPUTE else 2) + reference_forward_passes(method)
        linear = shape.layer_linear_total * layers / t
        other += (
            layout.micro_batches
            * passes
            * linear
            * QLORA_DEQUANT_BYTES_PER_PARAM
            / r.memory_bytes_per_s
        )
    return other


def host_issue_s(method: str, layout: Layout, layers: int) -> float:
    """Seconds the host needs to issue one micro-batch's kernels on a stage of `layers` layers in an
    eager PyTorch stack (HOST_SECONDS_PER_LAYER_PASS); 0 for fused and compiled stacks. The GPU time
    of a micro-batch cannot be shorter."""
    if not layout.eager_modules:
        return 0.0
    passes = (
        3.0
        + (1.0 if layout.recompute in FULL_RECOMPUTE else 0.0)
        + reference_forward_passes(method)
    )
    per_pass = HOST_SECONDS_PER_LAYER_PASS["adapter" if method in ADAPTER_METHODS else "full"]
    return passes * per_pass * layers


def shared_link_excess_s(
    shape: ModelShape,
    method: str,
    layout: Layout,
    cp_link: GroupLink | None,
    shard_link: GroupLink,
    mbc: MicroBatchCompute,
    recompute_passes: float,
    compute_s: float,
    exposed_s: float,
) -> float:
    """Seconds a step's context-parallel K/V traffic and its ZeRO/FSDP collectives wait for each
    other where they share links (both inside a node, or both across nodes): each is hidden behind
    the same compute, each counted as if it had the link alone, but the link carries their sum, of
    which compute hides at most the step's compute. The excess of that bound over the two exposures
    counted apart (0 where they run on different links or one is absent); without it a faster GPU
    could come out slower, its shorter compute exposing each twice."""
    if (
        layout.cp <= 1
        or cp_link is None
        or layout.shard_ranks <= 1
        or cp_link.spans_nodes != shard_link.spans_nodes
    ):
        return 0.0
    # the traffic with nothing to hide behind: the links' busy time
    idle = replace(mbc, attention_fwd_s=0.0)
    cp_busy = layout.micro_batch_equivalents * cp_exposed_s(
        shape, layout, cp_link, idle, recompute_passes
    )
    dp_busy = dp_exposed_s(shape, method, layout, shard_link, layout.zero, 0.0, 0.0)
    return max(0.0, cp_busy + dp_busy - compute_s - exposed_s)


class _StageMicroBatch(NamedTuple):
    """One stage's micro-batch: its compute, the share of its layers recomputed, and seconds of
    recomputation, tensor-, context- and expert-parallel traffic exposed, and of the host's kernel
    issue."""

    compute: MicroBatchCompute
    redone: float
    recompute_s: float
    tp_s: float
    cp_s: float
    ep_s: float
    host_issue_s: float

    @property
    def gpu_s(self) -> float:
        return self.compute.compute_s + self.recompute_s + self.tp_s + self.cp_s + self.ep_s

    def host_excess_s(self, share: float = 1.0) -> float:
        """What the host needs beyond the GPU's work for a micro-batch of `share` of the full size:
        the host issues kernels while the GPU computes and while it waits on a collective, so a
        host-bound micro-batch takes the longer of the two (its critical path), not their sum.
        Counted against the recomputation too, more GPU work never shortens a step; a smaller
        micro-batch launches as many kernels."""
        return max(0.0, self.host_issue_s - self.gpu_s * share)

    @property
    def total_s(self) -> float:
        return self.gpu_s + self.host_excess_s()


def _stage_micro_batch(
    shape: ModelShape,
    method: str,
    layout: Layout,
    r: Rates,
    mbc: MicroBatchCompute,
    tp_link: GroupLink,
    cp_link: GroupLink | None,
    ep_link: GroupLink | None,
) -> _StageMicroBatch:
    layers = mbc.layers
    redone = recomputed_share(layout, layers)
    return _StageMicroBatch(mbc, redone, stage_recompute_s(shape, layout, r, mbc),
                            tp_exposed_s(shape, layout, tp_link, 4 + 2 * redone, layers),
                            cp_exposed_s(shape, layout, cp_link, mbc, redone),
                            ep_exposed_s(shape, layout, ep_link, layers, redone),
                            host_issue_s(method, layout, layers))


def step_time(shape: ModelShape, method: str, layout: Layout, cluster: Cluster, tp_link: GroupLink,
              dp_link: GroupLink, pp_link: GroupLink, paged_offload_params: float,
              cp_link: GroupLink | None = None, ep_link: GroupLink | None = None,
              compute: tuple[Rates, MicroBatchCompute] | None = None) -> TimeBreakdown:
    """Seconds per optimizer step, broken down (see module docstring). `compute` passes the rates
    and micro-batch compute already known for this layout's framework and micro-batch."""
    p, z, v = layout.pp, layout.zero, layout.virtual_pipeline
    m = layout.micro_batches
    work = layout.micro_batch_equivalents
    if compute is None:
        r = rates(shape, layout, cluster)
        mbc = micro_batch_compute(shape, method, layout, r)
    else:
        r, mbc = compute
    stages = [_stage_micro_batch(shape, method, layout, r, stage, tp_link, cp_link, ep_link)
              for stage in (mbc, mbc.other_stage) if stage is not None]
    # the slowest stage by its whole micro-batch (compute, recomputation, exposed traffic, the host)
    # paces the pipeline's fill and drain
    bubble = (p - 1) / v * max(stage.total_s for stage in stages) if p > 1 else 0.0
    p2p = m * v * p2p_s(shape, layout, pp_link)
    shard_link, replicate_link = sharding_links(cluster, layout, dp_link)
    last = layout.last_micro_batch_share
    speed = cluster.speedup

    def stage_step(stage: _StageMicroBatch) -> TimeBreakdown:
        """The step as this stage runs it: its micro-batches, its data-parallel traffic hidden
        behind its own passes, and the bubble."""
        compute_mb, recompute_mb, cp_mb = stage.compute.compute_s, stage.recompute_s, stage.cp_s
        # Context-parallel traffic stretches the passes the gathers and reductions hide behind:
        # counted against the compute alone, a faster card would expose each twice and could come
        # out slower. Where the two share a link, the link's busy time bounds the step
        # (shared_link_excess_s).
        dp_exposed = dp_exposed_s(
            shape, method, layout, shard_link, z, compute_mb + cp_mb, recompute_mb, replicate_link
        )
        dp_exposed += shared_link_excess_s(
            shape,
            method,
            layout,
            cp_link,
            shard_link,
            stage.compute,
            stage.redone,
            work * (compute_mb + recompute_mb),
            work * cp_mb + dp_exposed,
        )
        # ... and data-parallel waits the step exposes overlap the host's issuing in the same way
        host = (m - 1) * stage.host_excess_s() + stage.host_excess_s(last)
        host_step = max(0.0, host - dp_exposed)
        other = optimizer_and_paging_s(
            shape, method, layout, r, paged_offload_params, stage.compute.layers
        )
        return TimeBreakdown(
            compute_s=work * compute_mb / speed,
            tp_comm_s=work * stage.tp_s / speed,
            cp_comm_s=work * cp_mb / speed,
            ep_comm_s=work * stage.ep_s / speed,
            dp_comm_s=dp_exposed / speed,
            pp_bubble_s=(bubble + p2p) / speed,
            recompute_s=work * recompute_mb / speed,
            other_s=other / speed,
            host_s=host_step / speed,
        )

    # Each stage hides its own layers' data-parallel traffic behind its own passes: the step is the
    # slowest's (chosen by the micro-batch alone, a stage with less compute to hide behind could be
    # passed over)
    return max((stage_step(stage) for stage in stages), key=lambda step: step.total_s)
