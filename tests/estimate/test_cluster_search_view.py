"""The cluster the layout search sees: reliability and (on one node) the fabric between nodes play
no part, and the candidate builder keys its searches by that view without building it."""

from __future__ import annotations

import pytest

from plan.models.catalog import builtin_catalog
from plan.planner.estimate.cluster import Cluster

CATALOG = builtin_catalog()


@pytest.mark.parametrize("gpus", [1, 8, 16, 64])
@pytest.mark.parametrize("spot", [False, True])
def test_the_search_key_is_the_key_of_the_cluster_the_search_sees(gpus, spot):
    for platform in CATALOG.platforms.values():
        for gpu_id in list(CATALOG.gpus)[:6]:
            cluster = Cluster.of(CATALOG.gpus[gpu_id], gpus, platform, spot=spot)
            seen = cluster.for_layout_search()
            assert cluster.layout_search_key() == seen.key()
            assert (
                seen.gpu_mtbf_h,
                seen.restart_min,
                seen.checkpoint_write_min,
                seen.spot_preemptions_per_day,
                seen.assumptions,
            ) == (1.0, 0.0, 0.0, 0.0, ())
            one_node = gpus <= cluster.gpus_per_node
            assert (seen.fabric_kind == "none") == (one_node or cluster.fabric_kind == "none")
            assert (
                seen.gpus == cluster.gpus
                and seen.gpu is cluster.gpu
                and seen.speedup == cluster.speedup
            )


def test_the_typical_node_size_is_an_assumption_only_where_it_is_used() -> None:
    # Consumer and PCIe cards come 4-10 per server: the catalog's 8 is said wherever it shapes the
    # cluster (more than one GPU, no server size given), and nowhere else.
    gpu = builtin_catalog().gpus["rtx4090"]
    assert gpu.gpus_per_node_assumption and not gpu.assumed
    note = gpu.gpus_per_node_assumption
    assert note in Cluster.of(gpu, 4).assumptions
    assert note not in Cluster.of(gpu, 4, gpus_per_node=4).assumptions
    assert note not in Cluster.of(gpu, 1).assumptions
    assert not builtin_catalog().gpus["h100-sxm"].gpus_per_node_assumption
