"""The Ray backend on a local Ray instance with 2 CPUs: the same rows as the process pool.

Skipped where Ray is not installed (it is an optional extra: pip install -e '.[ray]').
"""

from __future__ import annotations

import pytest

from tests.batch.conftest import plan_batch, rows_of, timeless

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray instance for the module; the backend uses it and leaves it running."""
    # address="local": a new instance even if a `ray start` cluster happens to run on this machine
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_rows_equal_local_rows(local_ray, batch_files, tmp_path):
    names = ("student", "broken", "tiny", "short_budget")
    args = [*(str(batch_files[n]) for n in names), "--sweep", "budget=2,360", "--jobs", "2"]
    on_ray, on_pool = tmp_path / "ray.csv", tmp_path / "local.csv"
    result = plan_batch(*args, "--backend", "ray", "-o", str(on_ray))
    assert result.exit_code == 1, result.output
    plan_batch(*args, "--backend", "local", "-o", str(on_pool))
    ray_rows = rows_of(on_ray)
    assert len(ray_rows) == 8 and timeless(ray_rows) == timeless(rows_of(on_pool))
    # optimal at budget=360 for each readable scenario (the sweep overrides short_budget's 1 CNY);
    # at budget=2 only where the plan costs that little; never above the swept budget
    assert [r.status for r in ray_rows if r.variant == "budget=360"].count("optimal") == 3
    for r in ray_rows:
        assert r.status != "optimal" or r.total_cost <= float(r.variant.split("=")[1])
    assert ray.is_initialized()  # the fixture's instance was used, not shut down by the command

