"""An all-reduce takes the faster of NCCL's ring and tree (NCCL 2.29.7 src/graph/tuning.cc): the
tree's latency grows with log2 of the nodes, the ring's with the ranks; large buffers stay on the
ring, which moves bytes faster; inside a node the ring always wins."""

from __future__ import annotations

import itertools
import math

import pytest

from plan.models.gpu import GPU
from plan.planner.estimate import Cluster
from plan.planner.estimate.factors import (
    COLLECTIVE_BANDWIDTH_EFFICIENCY,
    RING_ALL_REDUCE_PLATEAU,
)
from plan.planner.estimate.topology import GroupLink, group_link

US = 1e-6
NODE_COUNTS = (2, 4, 8, 16, 64, 256, 512)


def _ring_all_reduce_s(link: GroupLink, nbytes: float, plateau: float) -> float:
    bw = link.bandwidth_gb_per_s * 1e9 * COLLECTIVE_BANDWIDTH_EFFICIENCY
    return 2 * (link.size - 1) / link.size * nbytes / bw + plateau * link.ring_all_reduce_latency_s


def test_a_small_all_reduce_grows_with_log2_of_the_nodes_not_the_ranks(h100: GPU) -> None:
    times = [group_link(Cluster.of(h100, 8 * nodes), 8 * nodes, 1).all_reduce_s(4096.0)
             for nodes in NODE_COUNTS]
    assert all(a <= b for a, b in itertools.pairwise(times))
    # 16 to 4,096 GPUs: the ring's latency grows about 256-fold, the tree's by less than log2(512)
    assert times[-1] / times[0] < math.log2(NODE_COUNTS[-1])
    biggest = group_link(Cluster.of(h100, 4096), 4096, 1)
    assert biggest.all_reduce_s(4096.0) < biggest.ring_all_reduce_latency_s / 50
    assert biggest.all_reduce_s(4096.0) == pytest.approx(biggest.tree_latency_s, rel=0.01)


def test_a_large_buffer_on_two_nodes_stays_on_the_ring_with_nccls_plateau(h100: GPU) -> None:
    link = group_link(Cluster.of(h100, 16), 16, 1)
    big = 1e9  # the tree's 0.92 x half bandwidth costs more than the ring's few hops
    assert link.spans_nodes
    assert link.all_reduce_s(big) == pytest.approx(
        _ring_all_reduce_s(link, big, RING_ALL_REDUCE_PLATEAU))


@pytest.mark.parametrize("nbytes", [1.0, 4096.0, 1e6, 1e8, 1e10])
def test_inside_a_node_the_ring_always_wins(h100: GPU, nbytes: float) -> None:
    link = group_link(Cluster.of(h100, 8), 8, 1)
    assert not link.spans_nodes
    assert link.all_reduce_s(nbytes) == pytest.approx(_ring_all_reduce_s(link, nbytes, 1.0))


def test_an_all_reduce_never_exceeds_either_algorithm(h100: GPU) -> None:
    for gpus in (16, 128, 1024):
        link = group_link(Cluster.of(h100, gpus), gpus, 1)
        for nbytes in (64.0, 1e5, 1e7, 1e9):
            ring = _ring_all_reduce_s(link, nbytes, RING_ALL_REDUCE_PLATEAU)
            assert 0 < link.all_reduce_s(nbytes) <= ring * (1 + 1e-9)
            assert link.all_reduce_s(nbytes) >= link.tree_latency_s
