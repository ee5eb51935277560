"""The cluster the layout search sees: reliability and (on one node) the fabric between nodes play no
part, and the candidate builder keys its searches by that view without building it."""

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
            assert (seen.gpu_mtbf_h, seen.restart_min, seen.checkpoint_write_min, seen.spot_preemptions_per_day,
                    seen.assumptions) == (1.0, 0.0, 0.0, 0.0, ())
            one_node = gpus <= cluster.gpus_per_node
            assert (seen.fabric_kind == "none") == (one_node or cluster.fabric_kind == "none")
            assert seen.gpus == cluster.gpus and seen.gpu is cluster.gpu and seen.speedup == cluster.speedup
