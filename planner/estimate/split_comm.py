"""Exposed communication of the model's splits, per micro-batch: tensor parallelism's collectives,
context parallelism's ring K/V exchange (or DeepSpeed's Ulysses all-to-alls), expert parallelism's
token all-to-alls and the pipeline's point-to-point activations (what `timing.step_time` adds to a
stage's compute where the kernels cannot hide it)."""

from __future__ import annotations

from plan.models.stacks import stack_of
from plan.planner.estimate.compute import MicroBatchCompute, tokens_per_gpu_micro_batch
from plan.planner.estimate.factors import COLLECTIVE_BANDWIDTH_EFFICIENCY, TP_COMM_EXPOSED_FRACTION
from plan.planner.estimate.flops import ModelShape
from plan.planner.estimate.topology import GroupLink
from plan.planner.estimate.types import Layout


def tp_exposed_s(shape: ModelShape, layout: Layout, tp_link: GroupLink, collectives: float,
                 layers: int | None = None) -> float:
    """Exposed tensor-parallel traffic per micro-batch: `collectives` all-reduces per layer."""
    if layout.tp <= 1:
        return 0.0
    ar_bytes = tokens_per_gpu_micro_batch(layout) * shape.hidden * 2.0
    n = layers if layers is not None else -(-shape.layers // layout.pp)
    return TP_COMM_EXPOSED_FRACTION * collectives * n * tp_link.all_reduce_s(ar_bytes)


def cp_exposed_s(
    shape: ModelShape,
    layout: Layout,
    cp_link: GroupLink | None,
    mbc: MicroBatchCompute,
    recompute_passes: float,
) -> float:
    """Ring-attention K/V traffic per micro-batch beyond what the attention kernels hide (DeepSpeed:
    Ulysses' all-to-alls, `ulysses_s`)."""
    if layout.cp <= 1 or cp_link is None:
        return 0.0
    if stack_of(layout.framework).context_parallel == "ulysses":
        return ulysses_s(shape, layout, cp_link, mbc.layers, recompute_passes)
    chunk = tokens_per_gpu_micro_batch(layout) * 2 * shape.kv_dim / layout.tp * 2.0
    per_layer_fwd = (layout.cp - 1) * cp_link.p2p_s(chunk)
    attn_layer_fwd = mbc.attention_fwd_s / mbc.layers
    # forward (and recomputed forwards), backward (K/V and their grads)
    passes = (1 + recompute_passes, 2)
    exposed = (passes[0] * max(0.0, per_layer_fwd - attn_layer_fwd)
               + max(0.0, passes[1] * per_layer_fwd - 2 * attn_layer_fwd))
    return exposed * mbc.layers


def ulysses_s(
    shape: ModelShape, layout: Layout, cp_link: GroupLink, layers: int, recompute_passes: float
) -> float:
    """DeepSpeed Ulysses (its `sequence_parallel_size`, the cp it runs; launch-configs.md) per
    micro-batch: around each attention an all-to-all turns the local sequence's q, k and v into the
    whole sequence's share of the heads, and another turns the output back; the backward pass runs
    the same four on the gradients, and each recomputed forward its two again. Each sends (cp - 1) /
    cp of the rank's 16-bit q, k, v and output; where the KV heads are fewer than cp, each is sent
    to cp / kv_heads ranks (ALST replicates them). Not overlapped with compute."""
    kv_copies = max(1.0, layout.cp / max(1, shape.kv_heads))
    per_token = (2 * shape.q_dim + 2 * shape.kv_dim * kv_copies) / layout.tp * 2.0
    nbytes = tokens_per_gpu_micro_batch(layout) * per_token
    return (2 + recompute_passes) * layers * all_to_all_s(cp_link, nbytes, layout.cp)


def all_to_all_s(link: GroupLink, nbytes: float, size: int) -> float:
    """An all-to-all of `nbytes` per rank over `size` ranks: (size - 1) / size of it leaves the
    rank; across nodes only what goes to other nodes, each GPU's share through its own NIC."""
    remote = nbytes * (size - 1) / size
    if not link.spans_nodes:
        return link.p2p_s(remote)
    in_node = max(1, link.nics_per_node)
    per_gpu = link.bandwidth_gb_per_s / in_node  # one NIC's worth for each GPU
    remote = remote * max(0, size - in_node) / (size - 1)
    return remote / (per_gpu * 1e9 * COLLECTIVE_BANDWIDTH_EFFICIENCY) + link.latency_s


def ep_exposed_s(shape: ModelShape, layout: Layout, ep_link: GroupLink | None, layers: int,
                 recompute_passes: float) -> float:
    """All-to-all dispatch and combine per micro-batch on one GPU: 2 per MoE layer forward (and per
    recomputed forward), 2 backward; each sends top_k x hidden 16-bit values per token, (ep - 1)/ep
    of them to other ranks, padded to the experts' capacity (`Layout.capacity_factor`: GShard-style
    runs use 1.25-2.0 and move that much more). Across nodes each GPU's share leaves through its own
    NIC. Not overlapped (DeepSeek-V3's DualPipe hides it; Megatron's default schedule does not)."""
    if layout.ep <= 1 or ep_link is None or not shape.moe_layers:
        return 0.0
    moe_layers = layers * shape.moe_layers / shape.layers
    nbytes = (tokens_per_gpu_micro_batch(layout) * shape.moe_top_k * shape.hidden / layout.tp * 2.0
              * layout.capacity_factor)
    return (2 * (1 + recompute_passes) + 2) * moe_layers * all_to_all_s(ep_link, nbytes, layout.ep)


def p2p_s(shape: ModelShape, layout: Layout, pp_link: GroupLink) -> float:
    """Pipeline point-to-point seconds per micro-batch per virtual stage (forward and backward):
    each tensor-parallel rank sends its 1/tp slice (Narayanan et al. 2021, scatter/gather)."""
    if layout.pp <= 1:
        return 0.0
    return 2 * pp_link.p2p_s(tokens_per_gpu_micro_batch(layout) * shape.hidden * 2.0 / layout.tp)
