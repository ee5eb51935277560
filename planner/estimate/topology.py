"""Topology as a networkx graph, and collective-communication times over it.

Graph: GPUs; inside a node an NVLink/HCCS switch (every GPU joined at its link bandwidth), NVLink
bridges between GPU pairs plus the PCIe host, or PCIe only; between nodes each GPU's NIC share of
the fabric. Edge capacity is GB/s in one direction (datasheet NVLink figures are bidirectional, so
halved; fabric Gb/s divided by 8). A parallel group's bandwidth is the bottleneck edge on the ring
paths between consecutive members (ranks placed Megatron-style: tp fastest, then dp, then pp), the
slowest group of its kind counted (groups of 3 on 8-GPU nodes: ranks 6-8 straddle two), so a group
that crosses nodes gets the fabric's bandwidth, not NVLink's: per node, the NICs of the group's
members in that node together (NCCL spreads its rings over all of them; the catalog's fabric figure
is per GPU, i.e. one 400 Gb/s card per GPU on rail-optimised H100 nodes), capped by the links inside
the node.

Collective times (ring algorithms, Patarasuk & Yuan 2009; NCCL):
    reduce-scatter  (n-1)/n x bytes / bw    + ring latency      (all-gather the same)
    all-reduce      the faster of NCCL's ring and tree:
      ring          2 (n-1)/n x bytes / bw  + base + 2 x hops (x plateau across nodes)
      tree          2 x bytes / (0.92 bw c) + base + 2 x ((n/nodes - 1) hops + log2(nodes) net hops)
with bw the group's bottleneck bandwidth x COLLECTIVE_BANDWIDTH_EFFICIENCY. The latencies are
NCCL's own model (NCCL 2.29.7 src/graph/tuning.cc; factors.COLLECTIVE_LATENCY_S, TREE_LATENCY_S):
a base per collective plus, along the n - 1 steps of a ring pass, nodes - 1 network hops and the
rest NVLink or PCIe hops. NCCL pipelines its rings, so the hops add up instead of each step waiting
for the slowest link. Every collective pays it: a layer-by-layer schedule pays it once per layer,
which at thousands of ranks outweighs a layer's bytes. NCCL times every algorithm it may run and
picks the fastest (`ncclTopoGetAlgoTime`); reduce-scatter and all-gather run on rings (its PAT
algorithm serves one GPU per node only, not modelled), an all-reduce on a ring or a double binary
tree, whose latency grows with log2 of the nodes instead of their number: at hundreds of nodes the
tree wins every all-reduce short of hundreds of megabytes. c is NCCL's size-dependent correction of
the tree's bandwidth (factors.TREE_CORRECTION_SIMPLE), the plateau its multiplier on a multi-node
ring all-reduce's latency (factors.RING_ALL_REDUCE_PLATEAU).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache

import networkx as nx

from plan.planner.estimate.cluster import Cluster
from plan.planner.estimate.factors import (
    COLLECTIVE_BANDWIDTH_EFFICIENCY,
    COLLECTIVE_LATENCY_S,
    NCCL_CHANNELS,
    PCIE_GB_PER_S_PER_DIRECTION,
    RING_ALL_REDUCE_PLATEAU,
    TREE_BUS_BANDWIDTH_FACTOR,
    TREE_CORRECTION_SIMPLE,
    TREE_LATENCY_S,
)

PCIE_HOST_GB_PER_S = PCIE_GB_PER_S_PER_DIRECTION["pcie"]
SWITCHED_LINKS = ("nvlink", "hccs", "mlu_link")
"""In-node links that join every card of a domain (`max_group`) at the link's bandwidth: NVLink
switches, Ascend's HCCS full mesh, Cambricon's MLU-Link bridge (a full mesh of 4 cards)."""


@dataclass(frozen=True, slots=True)
class GroupLink:
    """A parallel group's ring: bottleneck bandwidth (GB/s, one direction) and whether it spans
    nodes."""

    size: int
    bandwidth_gb_per_s: float
    spans_nodes: bool
    bottleneck: str  # "nvlink", "pcie", "fabric", "self"
    # NICs (one per member in the node) the group's inter-node traffic spreads over
    nics_per_node: int = 0
    intra_link: str = "nvlink"  # "nvlink" or "pcie": the kind of the hops inside a node
    # one pass of a ring collective, `ring_latency(...)` of the fields above: stored, since every
    # collective the search times reads it
    ring_latency_s: float = 0.0
    # a ring all-reduce's latency (both passes, one base) and a tree all-reduce's (`all_reduce_s`)
    ring_all_reduce_latency_s: float = 0.0
    tree_latency_s: float = 0.0

    @property
    def latency_s(self) -> float:
        """Latency of one hop on the slowest kind of link the group uses (point-to-point
        transfers)."""
        return COLLECTIVE_LATENCY_S["inter" if self.spans_nodes else self.intra_link]

    @staticmethod
    def ring_latency(size: int, spans_nodes: bool, nics_per_node: int, intra_link: str) -> float:
        """Latency of one pass of a ring collective (reduce-scatter or all-gather): NCCL's base plus
        its n - 1 hops, nodes - 1 of them between nodes (module docstring)."""
        if size <= 1:
            return 0.0
        nodes = -(-size // nics_per_node) if spans_nodes and nics_per_node else 1
        inter = min(size - 1, nodes - 1)
        return (COLLECTIVE_LATENCY_S["base"] + inter * COLLECTIVE_LATENCY_S["inter"]
                + (size - 1 - inter) * COLLECTIVE_LATENCY_S[intra_link])

    @staticmethod
    def all_reduce_latencies(
        size: int, spans_nodes: bool, nics_per_node: int, intra_link: str
    ) -> tuple[float, float]:
        """NCCL's latency of a ring all-reduce (2 (n - 1) steps, 2 (nodes - 1) of them between
        nodes, one base) and of a tree all-reduce (module docstring), before the ring's plateau."""
        if size <= 1:
            return 0.0, 0.0
        nodes = -(-size // nics_per_node) if spans_nodes and nics_per_node else 1
        inter = min(size - 1, nodes - 1)
        ring = (COLLECTIVE_LATENCY_S["base"] + 2 * inter * COLLECTIVE_LATENCY_S["inter"]
                + 2 * (size - 1 - inter) * COLLECTIVE_LATENCY_S[intra_link])
        per_node = size // nodes
        tree = TREE_LATENCY_S["base"] + 2 * ((per_node - 1) * TREE_LATENCY_S[intra_link]
                                             + int(math.log2(nodes)) * TREE_LATENCY_S["inter"])
        return ring, tree

    def _bw_bytes_per_s(self) -> float:
        return self.bandwidth_gb_per_s * 1e9 * COLLECTIVE_BANDWIDTH_EFFICIENCY

    def all_reduce_s(self, nbytes: float) -> float:
        """The faster of NCCL's ring and tree all-reduce of `nbytes` (module docstring)."""
        if self.size <= 1 or nbytes <= 0:
            return 0.0
        if self.bandwidth_gb_per_s <= 0:
            return float("inf")
        n = self.size
        seconds_per_byte = 2.0 / self._bw_bytes_per_s()
        ring_latency = self.ring_all_reduce_latency_s
        if self.spans_nodes and nbytes >= 64 * NCCL_CHANNELS * n:
            ring_latency *= RING_ALL_REDUCE_PLATEAU
        ring = (n - 1) / n * nbytes * seconds_per_byte + ring_latency
        tree_bytes_s = nbytes * seconds_per_byte / TREE_BUS_BANDWIDTH_FACTOR
        if ring <= tree_bytes_s + self.tree_latency_s:  # the tree's correction only slows it
            return ring
        size_class = int(math.log2(nbytes / 64)) if nbytes >= 64 else -1
        if 0 <= size_class < len(TREE_CORRECTION_SIMPLE):
            tree_bytes_s /= TREE_CORRECTION_SIMPLE[size_class]
        return min(ring, tree_bytes_s + self.tree_latency_s)

    def reduce_scatter_s(self, nbytes: float) -> float:
        """Also the all-gather time; `nbytes` is the full (unsharded) buffer."""
        if self.size <= 1 or nbytes <= 0:
            return 0.0
        if self.bandwidth_gb_per_s <= 0:
            return float("inf")
        n = self.size
        return (n - 1) / n * nbytes / self._bw_bytes_per_s() + self.ring_latency_s

    def p2p_s(self, nbytes: float) -> float:
        if self.size <= 1 or nbytes <= 0:
            return 0.0
        if self.bandwidth_gb_per_s <= 0:
            return float("inf")
        return nbytes / self._bw_bytes_per_s() + self.latency_s


def _link_key(cluster: Cluster) -> tuple[object, ...]:
    link = cluster.gpu.intra_node_link
    return (link.kind, link.bandwidth_gb_per_s, link.max_group, cluster.gpus_per_node,
            cluster.fabric_kind, cluster.fabric_gbps_per_gpu, cluster.gpus > cluster.gpus_per_node)


@lru_cache(maxsize=256)
def _graph(key: tuple[object, ...]) -> nx.Graph:
    """Two nodes' worth of GPUs (enough for every pair type by symmetry), edges in GB/s one way."""
    kind, link_bw, max_group, per_node, fabric_kind, fabric_gbps, multi = key
    assert isinstance(per_node, int) and isinstance(link_bw, float)
    g = nx.Graph()
    nodes = 2 if multi else 1
    for k in range(nodes):
        host = f"host{k}"
        for i in range(per_node):
            gpu = (k, i)
            g.add_node(gpu)
            pcie = min(PCIE_HOST_GB_PER_S, link_bw / 2) if kind == "pcie" else PCIE_HOST_GB_PER_S
            g.add_edge(gpu, host, capacity=pcie, kind="pcie")
            if kind in SWITCHED_LINKS:
                domain = max_group if isinstance(max_group, int) else per_node
                g.add_edge(gpu, f"switch{k}.{i // domain}", capacity=link_bw / 2, kind="nvlink")
            elif kind == "nvlink_bridge" and i % 2 == 1:
                g.add_edge((k, i - 1), gpu, capacity=link_bw / 2, kind="nvlink")
            if (
                multi
                and isinstance(fabric_gbps, float)
                and fabric_gbps > 0
                and fabric_kind != "none"
            ):
                g.add_edge(gpu, "fabric", capacity=fabric_gbps / 8, kind="fabric")
    return g


def _pair_bottleneck(g: nx.Graph, a: tuple[int, int], b: tuple[int, int]) -> tuple[float, str]:
    try:
        path = nx.shortest_path(g, a, b, weight=lambda u, v, d: 1.0 / d["capacity"])
    except nx.NetworkXNoPath:
        return 0.0, "none"
    edges = [g.edges[u, v] for u, v in itertools.pairwise(path)]
    worst = min(edges, key=lambda d: d["capacity"])
    return float(worst["capacity"]), str(worst["kind"])


@lru_cache(maxsize=8192)
def _pair_type_bottleneck(
    key: tuple[object, ...], a: int, b: int, same_node: bool
) -> tuple[float, str]:
    """Bottleneck between GPU `a` of node 0 and GPU `b` of node 0 (same_node) or node 1."""
    g = _graph(key)
    # Inside a node, traffic stays on NVLink/PCIe; it does not hairpin through the fabric switch.
    view = nx.restricted_view(g, ["fabric"], []) if same_node and "fabric" in g else g
    return _pair_bottleneck(view, (0, a), (0 if same_node else 1, b))


def group_link(cluster: Cluster, size: int, stride: int) -> GroupLink:
    """The slowest of the layout's rings of this kind: every group of `size` ranks `stride` apart
    (members base, base + stride, ...; the groups' bases are the ranks r with (r // stride) % size
    == 0). Groups differ where they sit across a node boundary: with 8 GPUs per node,
    tensor-parallel groups of 3 are ranks 0-2, 3-5 and 6-8, and the third crosses the network."""
    # (the pattern repeats every gpus_per_node blocks)
    blocks = max(1, cluster.gpus // (stride * size))
    return _group_link(_link_key(cluster), size, stride, min(blocks, cluster.gpus_per_node))


def layout_links(cluster: Cluster, tp: int, pp: int, cp: int, dp: int, ep: int = 1
                 ) -> tuple[GroupLink, GroupLink, GroupLink, GroupLink, GroupLink]:
    """The links of a layout's (tp, cp, dp, pp, ep) groups. Ranks are numbered tensor-parallel
    fastest, then context-parallel, data-parallel and pipeline; ZeRO shards over dp x cp, experts
    over dp ranks."""
    return (
        group_link(cluster, tp, 1),
        group_link(cluster, cp, tp),
        group_link(cluster, dp * cp, tp),
        group_link(cluster, min(pp, 2), tp * cp * dp),
        group_link(cluster, ep, tp * cp),
    )


def hybrid_links(
    cluster: Cluster, tp: int, shard_group: int, replicas: int
) -> tuple[GroupLink, GroupLink]:
    """The links of a hybrid-sharded layout's data-parallel groups (`Layout.shard_group`): the shard
    group, its ranks consecutive after tensor parallelism (one node's), and the replica group, one
    rank of each shard group (one per node)."""
    return group_link(cluster, shard_group, tp), group_link(cluster, replicas, tp * shard_group)


def _group_bases(per_node: int, size: int, stride: int, blocks: int) -> tuple[int, ...]:
    """The positions inside a node (rank mod per_node) at which the groups start, over the first
    `blocks` blocks of stride x size ranks. Where the stride and the block both tile the node (or
    the node tiles them), every group is a copy of the first one, on the same kind of links: only
    rank 0 is looked at."""
    block = stride * size
    if (per_node % stride == 0 or stride % per_node == 0) and (
        per_node % block == 0 or block % per_node == 0
    ):
        return (0,)
    return tuple(sorted({(j * stride * size + i) % per_node
                         for j in range(blocks) for i in range(min(stride, per_node))}))


@lru_cache(maxsize=8192)
def _group_link(key: tuple[object, ...], size: int, stride: int, blocks: int) -> GroupLink:
    if size <= 1:
        return GroupLink(size, float("inf"), False, "self")
    per_node = key[3]
    assert isinstance(per_node, int)
    links = [
        _ring_from(key, per_node, size, stride, base)
        for base in _group_bases(per_node, size, stride, blocks)
    ]
    return min(links, key=lambda link: (link.bandwidth_gb_per_s, -link.ring_latency_s))


def _ring_from(
    key: tuple[object, ...], per_node: int, size: int, stride: int, base: int
) -> GroupLink:
    """The ring over positions base, base + stride, ... (size members), base inside node 0."""
    # Neighbours (k, k+1) repeat their (local index, local index, same node) pattern every
    # per_node / gcd(stride, per_node) steps, so one period and the wrap-around pair cover the ring.
    period = per_node // math.gcd(stride, per_node)
    pairs = [(base + k * stride, base + (k + 1) * stride) for k in range(min(size - 1, period))]
    pairs.append((base + (size - 1) * stride, base))
    pair_types = {(a % per_node, b % per_node, a // per_node == b // per_node) for a, b in pairs}
    spans = any(not same for _, _, same in pair_types)
    # NCCL runs one ring per channel and spreads the channels over every NIC of the node
    # (rail-optimised nodes have one NIC per GPU), so a group crosses nodes at the NICs of its
    # members there: the node holding the fewest of them bounds it (a group that straddles a node
    # boundary has few on one side).
    nics = _fewest_members_per_node(per_node, size, stride, base) if spans else 0
    best_bw, best_kind = float("inf"), "self"
    for ia, ib, same in pair_types:
        if (0, ia) == ((0 if same else 1), ib):
            continue
        bw, kind = _pair_type_bottleneck(key, ia, ib, same)
        if not same and kind == "fabric":
            bw *= nics
        if bw < best_bw:
            best_bw, best_kind = bw, kind
    intra = "nvlink" if key[0] in SWITCHED_LINKS else "pcie"
    return GroupLink(
        size,
        best_bw,
        spans,
        best_kind,
        nics,
        intra,
        GroupLink.ring_latency(size, spans, nics, intra),
        *GroupLink.all_reduce_latencies(size, spans, nics, intra),
    )


def _fewest_members_per_node(per_node: int, size: int, stride: int, base: int) -> int:
    """The fewest members of the group on any node it touches: the first and the last node may hold
    a part, the nodes between them at least per_node // stride."""
    if stride >= per_node:
        return 1
    last = base + (size - 1) * stride
    last_node = last // per_node
    if last_node == 0:
        return size
    first = -(-(per_node - base) // stride)
    on_last = (last - last_node * per_node) // stride + 1
    return min(first, on_last, per_node // stride) if last_node > 1 else min(first, on_last)
