"""The Ray backend on a two-node local cluster (ray.cluster_utils.Cluster): every row arrives once,
and the rows are the process pool's.

Skipped where Ray is not installed (it is an optional extra: pip install -e '.[ray]').
"""

from __future__ import annotations

import pytest

from tests.batch.conftest import plan_batch, rows_of, timeless

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def two_nodes():
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    ray.init(address=cluster.address, log_to_driver=False)
    yield cluster
    ray.shutdown()
    cluster.shutdown()


def test_every_row_arrives_once_from_two_nodes(two_nodes, batch_files, tmp_path):
    assert ray.cluster_resources().get("CPU") == 2 and len(ray.nodes()) == 2
    budgets = (2, 50, 100, 160, 360, 1000)
    args = [str(batch_files["tiny"]), str(batch_files["student"]),
            "--sweep", "budget=" + ",".join(map(str, budgets)), "--jobs", "2"]
    on_ray, on_pool = tmp_path / "ray.csv", tmp_path / "local.csv"
    result = plan_batch(*args, "--backend", "ray", "-o", str(on_ray))
    assert result.exit_code in (0, 1), result.output
    plan_batch(*args, "--backend", "local", "-o", str(on_pool))
    rows = rows_of(on_ray)
    wanted = [(str(batch_files[name]), f"budget={b}") for name in ("tiny", "student")
              for b in budgets]
    assert [(r.file, r.variant) for r in rows] == wanted  # each once, in the batch's order
    assert timeless(rows) == timeless(rows_of(on_pool))
    assert all(r.status in ("optimal", "infeasible") for r in rows), [r.error for r in rows]
