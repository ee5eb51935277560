"""How the Ray backend cuts a batch into chunks (planner/batch/ray_backend.py): every task once, in
order, runs of consecutive variants, and enough chunks to keep every CPU busy."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from plan.planner.batch.ray_backend import CHUNKS_PER_CPU, MAX_CHUNK, chunks
from plan.planner.batch.tasks import Task
from plan.planner.session import SolveOptions


def _tasks(n: int) -> list[Task]:
    return [Task(index=i, path=Path("s.yaml"), variant=f"budget={i}", assignments=(),
                 overlays=(), options=SolveOptions(), hash=str(i)) for i in range(n)]


@given(n=st.integers(0, 2_000), cpus=st.integers(1, 256))
def test_chunks_cover_every_task_once_in_order(n, cpus):
    tasks = _tasks(n)
    cut = chunks(tasks, cpus)
    assert [t.index for chunk in cut for t in chunk] == list(range(n))
    assert all(1 <= len(chunk) <= MAX_CHUNK for chunk in cut)
    # every CPU gets work while there are tasks for it, and chunks are as large as that allows
    assert len(cut) >= min(n, cpus)
    if cut and len(cut[0]) < MAX_CHUNK:
        assert len(cut) <= cpus * CHUNKS_PER_CPU
