"""Run a batch: re-use rows an earlier run already solved, solve the rest on a backend, keep the
results file current (each finished row appended at once, also up to Ctrl-C; see results_append)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from plan.planner.batch.results_append import ResultsAppender, final_rows
from plan.planner.batch.rows import Row
from plan.planner.batch.tasks import Task
from plan.planner.interrupts import Interrupted, sigint_deferred

# (tasks to solve) -> (task.index, row) as each finishes, in any order
Backend = Callable[[Sequence[Task]], Iterator[tuple[int, Row]]]
# (index, row, reused from the earlier run)
OnRow = Callable[[int, Row, bool], None]


@dataclass(frozen=True)
class BatchOutcome:
    rows: list[Row]  # in input order
    reused: int  # rows taken from the earlier run's results file


def reusable(
    previous: Sequence[Row], reuse_unproven: bool = False
) -> dict[tuple[str, str, str], Row]:
    """Earlier rows by (file, variant, hash). Error rows are not re-used: loading is cheap, and an
    internal error may have been transient. Rows not proven (feasible, unknown: the search stopped
    first) are solved again unless `reuse_unproven`: a busy machine must not leave a poor row
    cached."""
    return {(r.file, r.variant, r.hash): r for r in previous
            if r.status != "error" and (r.proven or reuse_unproven)}


def run_batch(items: Sequence[Task | Row], backend: Backend, output: Path | None = None,
              previous: Sequence[Row] = (), on_row: OnRow | None = None,
              reuse_unproven: bool = False, rewrite: bool = False) -> BatchOutcome:
    """Solve every Task in `items` (a Row stands for itself: an input that named no scenario).

    Rows come back in the order of `items` whatever the backend finishes first. With `output` (which
    holds `previous`; `rewrite`: and rows to leave out, see results_append), each row is appended as
    it finishes and the file ends as `final_rows` says: earlier rows of other inputs kept, this
    run's in input order. Any exception is re-raised after what finished is on disk, and Ctrl-C
    becomes `Interrupted` saying which rows were kept (an interrupted task leaves no row: it is
    solved again on resume).
    """
    done: list[Row | None] = [None] * len(items)
    known = reusable(previous, reuse_unproven)
    todo: list[Task] = []
    position: dict[int, int] = {}  # task.index -> place in `items`
    reused = 0
    # rows that stand for an input naming no scenario: new, written at once
    standing: list[Row] = []
    for place, item in enumerate(items):
        if isinstance(item, Row):
            row, was_reused = item, False
            standing.append(item)
        else:
            old = known.get((str(item.path), item.variant, item.hash))
            if old is None:
                todo.append(item)
                position[item.index] = place
                continue
            row, was_reused = old, True
            reused += 1
        done[place] = row
        if on_row:
            on_row(place, row, was_reused)

    def finished() -> list[Row]:
        return [row for row in done if row is not None]

    with sigint_deferred():  # a Ctrl-C now waits until the file is whole
        appender = ResultsAppender(output, previous, rewrite) if output is not None else None
        if appender is not None:
            for row in standing:
                appender.append(row)
    try:
        for index, row in backend(todo) if todo else ():
            done[position[index]] = row
            if on_row:
                on_row(position[index], row, False)
            if appender is not None:
                appender.append(row)
    except KeyboardInterrupt:
        if appender is not None:
            appender.close()
        kept = len(finished())
        where = (
            f"written to {output}; run the same command again to resume"
            if output is not None
            else "not written (no -o file)"
        )
        raise Interrupted(f"{kept} of {len(items)} rows had finished and were {where}; rows still "
                          "solving "
                          f"were dropped") from None
    except BaseException:
        if appender is not None:
            appender.close()
        raise
    if appender is not None:
        with sigint_deferred():
            appender.finish(final_rows(previous, finished()))
    return BatchOutcome(rows=finished(), reused=reused)
