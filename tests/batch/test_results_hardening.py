"""The results file keeps everything and trusts nothing: rows appended, never lost on a re-run with
other inputs, every stored row checked before re-use, one lock per file however it is named, every
cell readable back and none run as a formula by a spreadsheet, a bound on one run's rows."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

import plan.planner.batch.local as local_backend
from plan.planner import atomic_file
from plan.planner.batch import Row, Task, run_batch
from plan.planner.batch import results_append as append_module
from plan.planner.batch.output_lock import locked_output
from plan.planner.batch.results_file import FORMULA_STARTS, read_results, write_rows
from tests.batch.conftest import plan_batch, rows_of, timeless


@pytest.fixture
def counted_solves(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    calls: list[str] = []
    real = local_backend.run_task

    def counting(task: Task) -> Row:
        calls.append(f"{task.path.name} {task.variant}".strip())
        return real(task)

    monkeypatch.setattr(local_backend, "run_task", counting)
    return calls


def _row(i: int, **changes: object) -> Row:
    base = Row(
        file=f"s{i}.yaml",
        variant=f"budget={i}",
        status="optimal",
        total_cost=10.0 + i,
        currency="CNY",
        makespan_h=5.0,
        plan="a: 1x rtx-4090 on autodl",
        solve_time_s=0.1,
        error="",
        hash=f"{i:016x}",
        gap=0.0,
        bound=10.0 + i,
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def test_a_rerun_with_other_inputs_keeps_the_earlier_rows(
    batch_files: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "results.csv"
    assert plan_batch(str(batch_files["student"]), "-o", str(out), "--jobs", "1").exit_code == 0
    first = rows_of(out)
    assert plan_batch(str(batch_files["tiny"]), "-o", str(out), "--jobs", "1").exit_code == 0
    rows = rows_of(out)
    assert rows[:1] == first and [r.file for r in rows] == [
        str(batch_files[n]) for n in ("student", "tiny")
    ]
    # the same file with other contents is other inputs too: its earlier row stays beside the new
    # one
    batch_files["student"].write_text(batch_files["student"].read_text() + "\n# edited\n")
    assert plan_batch(str(batch_files["student"]), "-o", str(out), "--jobs", "1").exit_code == 0
    after = rows_of(out)
    assert first[0] in after and len(after) == 3 and len({r.hash for r in after}) == 3


@pytest.mark.parametrize(("column", "forged"), [("total_cost", "nan"), ("total_cost", "-5"),
                                                ("makespan_h", "inf"), ("status", "optimal-ish"),
                                                ("gap", "0.5"), ("plan", "")])
def test_a_forged_stored_row_is_solved_again_and_said(
    batch_files: dict[str, Path],
    tmp_path: Path,
    counted_solves: list[str],
    column: str,
    forged: str,
) -> None:
    out = tmp_path / "results.csv"
    assert plan_batch(str(batch_files["student"]), "-o", str(out), "--jobs", "1").exit_code == 0
    honest = rows_of(out)
    records = list(csv.DictReader(io.StringIO(out.read_text())))
    records[0][column] = forged
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(records[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(records)
    out.write_text(buffer.getvalue())
    counted_solves.clear()
    result = plan_batch(str(batch_files["student"]), "-o", str(out), "--jobs", "1")
    assert result.exit_code == 0, result.output
    assert counted_solves == ["student.yaml"], "the forged row was not re-used"
    assert "failed their check" in result.stderr and "row 1" in result.stderr
    assert timeless(rows_of(out)) == timeless(honest)


def test_a_torn_last_line_is_dropped_and_solved_again(tmp_path: Path) -> None:
    out = tmp_path / "results.csv"
    write_rows(out, [_row(1), _row(2)])
    with open(out, "a", encoding="utf-8") as file:
        file.write("s3.yaml,budget=3,optimal,13.0,CN")  # a run killed inside its last write
    stored = read_results(out)
    assert stored.rows == [_row(1), _row(2)] and "incomplete" in stored.problems[0]


def test_a_symlinked_output_takes_the_same_lock(
    batch_files: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "results.csv"
    link = tmp_path / "other-name.csv"
    link.symlink_to(out)
    with locked_output(out):
        result = plan_batch(str(batch_files["student"]), "-o", str(link), "--jobs", "1")
    assert result.exit_code == 2 and "another `plan batch`" in result.stderr
    assert not out.exists()
    assert plan_batch(str(batch_files["student"]), "-o", str(link), "--jobs", "1").exit_code == 0
    assert link.is_symlink() and len(rows_of(out)) == 1, "written through to the file it names"


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_a_long_cell_reads_back(tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"results{suffix}"
    long_error = "x" * 300_000  # over the csv module's default 128 KiB field limit
    rows = [_row(1), _row(2, status="error", total_cost=None, makespan_h=None, plan="", gap=None,
                           bound=None, error=long_error)]
    write_rows(out, rows)
    assert read_results(out).rows == rows


def test_formula_cells_are_escaped_and_read_back(tmp_path: Path) -> None:
    out = tmp_path / "results.csv"
    rows = [_row(1, plan="=HYPERLINK(\"http://x\")", variant="+1", file="-s.yaml"),
            _row(2, status="error", total_cost=None, makespan_h=None, plan="", gap=None, bound=None,
                 error="@SUM(A1)", currency="'quoted"),
            _row(3, plan="\t=1+1")]
    write_rows(out, rows)
    for record in csv.reader(io.StringIO(out.read_text())):
        assert not any(cell.startswith(FORMULA_STARTS[:-1]) for cell in record), record
    assert read_results(out).rows == rows


def _instant(tasks: Sequence[Task]) -> Iterator[tuple[int, Row]]:
    for task in tasks:
        yield (
            task.index,
            _row(task.index, file=str(task.path), variant=task.variant, hash=task.hash),
        )


def _tasks(n: int, tmp_path: Path) -> list[Task]:
    from plan.planner.session import SolveOptions

    return [
        Task(
            index=i,
            path=tmp_path / "s.yaml",
            variant=f"budget={i}",
            assignments=(),
            overlays=(),
            options=SolveOptions(),
            hash=f"{i:016x}",
        )
        for i in range(n)
    ]


def test_rows_are_appended_not_the_file_rewritten(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "results.csv"
    rewrites: list[int] = []
    real = append_module.write_atomically

    def counting(path: Path, data: str | bytes) -> None:
        rewrites.append(len(data))
        real(path, data)

    monkeypatch.setattr(append_module, "write_atomically", counting)
    fsyncs: list[int] = []
    real_fsync = atomic_file.os.fsync
    monkeypatch.setattr(append_module.os, "fsync", lambda fd: fsyncs.append(fd) or real_fsync(fd))
    outcome = run_batch(_tasks(300, tmp_path), _instant, output=out)
    assert len(outcome.rows) == 300 and rows_of(out) == outcome.rows
    assert len(rewrites) == 1, "only the new file's header was written whole"
    assert len(fsyncs) <= 3, "fsynced about once a second and at the end, not per row"
    resumed = run_batch(_tasks(300, tmp_path), _instant, output=out, previous=rows_of(out))
    assert resumed.reused == 300 and len(rewrites) == 1, "a finished file is not written again"


def test_max_variants_bounds_one_run(
    batch_files: dict[str, Path], counted_solves: list[str]
) -> None:
    result = plan_batch(
        str(batch_files["student"]),
        str(batch_files["tiny"]),
        "--sweep",
        "budget=1..30:1",
        "--max-variants",
        "50",
    )
    assert (
        result.exit_code == 2
        and "60 rows; at most 50" in result.stderr
        and "--max-variants" in result.stderr
    )
    assert counted_solves == [] and "Traceback" not in result.output


def test_a_pool_the_open_file_limit_cannot_hold_is_not_started(tmp_path: Path) -> None:
    """Under `ulimit -n 20` a forkserver pool's children die while starting and print tracebacks
    no caller can catch: the batch says so in one line and solves one at a time instead."""
    import resource
    import subprocess
    import sys

    from tests.conftest import REPO

    def low_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (20, 20))

    out = tmp_path / "r.csv"
    scenarios = [str(REPO / "scenarios" / name) for name in ("student_no_ops.yaml",
                                                             "grant_qlora_compare.yaml")]
    done = subprocess.run([sys.executable, "-m", "plan.planner.cli.app", "--no-cache", "batch",
                           *scenarios, "-j", "4", "-o", str(out)], capture_output=True, text=True,
                          preexec_fn=low_limit, timeout=600)
    assert "Traceback" not in done.stderr and done.returncode == 0, done.stderr[-500:]
    assert "open-file limit (20" in done.stderr
    assert len(out.read_text(encoding="utf-8").splitlines()) == 3  # header and both rows
