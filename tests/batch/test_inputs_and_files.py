"""PATH expansion, results files (round trip, atomic replace, refusing foreign files) and the
tally."""

from __future__ import annotations

import os

import pytest

from plan.planner import atomic_file
from plan.planner.batch import Row, Tally, expand_paths, read_rows, results_format, write_rows
from plan.planner.batch.results_file import ResultsFileError


def row(i: int, status: str = "optimal", error: str = "") -> Row:
    solved = status in ("optimal", "feasible")
    return Row(
        file=f"s{i}.yaml",
        variant=f"budget={i}000",
        status=status,
        total_cost=1234.5 + i if solved else None,
        currency="CNY",
        makespan_h=12.25 if solved else None,
        plan="a: 8x a800 on x (monthly)" if solved else "",
        solve_time_s=0.123,
        error=error,
        hash=f"{i:016x}",
    )


def test_folders_sorted_globs_sorted_files_as_given_no_duplicates(tmp_path):
    for name in ("b.yaml", "a.yml", "c.txt"):
        (tmp_path / name).write_text("x")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "z.yaml").write_text("x")
    found = expand_paths(
        [str(tmp_path / "sub" / "z.yaml"), str(tmp_path), str(tmp_path / "*.yaml")]
    )
    # not recursive; b.yaml once
    assert [i.path.name for i in found] == ["z.yaml", "a.yml", "b.yaml"]
    assert all(i.problem is None for i in found)


def test_arguments_that_name_no_scenario_become_problems(tmp_path):
    (tmp_path / "empty").mkdir()
    found = expand_paths(
        [str(tmp_path / "nothing-*.yaml"), str(tmp_path / "empty"), str(tmp_path / "gone.yaml")]
    )
    assert "no files match this pattern" in found[0].problem
    assert "no *.yaml or *.yml files in this folder" in found[1].problem
    assert found[2].problem is None  # a missing file is the loader's to report, as for `plan solve`


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_rows_round_trip(tmp_path, suffix):
    rows = [
        row(1),
        row(2, "infeasible"),
        row(3, "error", "s3.yaml: budget: must be > 0"),
        row(4, "unknown"),
    ]
    path = tmp_path / f"results{suffix}"
    write_rows(path, rows)
    assert read_rows(path) == rows
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_unknown_suffix_is_refused(tmp_path):
    with pytest.raises(ResultsFileError, match=r"use a \.csv or \.jsonl file"):
        results_format(tmp_path / "results.xlsx")


def test_a_crash_while_writing_leaves_the_old_file_whole(tmp_path, monkeypatch):
    path = tmp_path / "results.csv"
    write_rows(path, [row(1)])
    before = path.read_bytes()

    def crash(fd: int) -> None:
        raise KeyboardInterrupt  # Ctrl-C after the new content is written to the temporary file

    monkeypatch.setattr(atomic_file.os, "fsync", crash)
    with pytest.raises(KeyboardInterrupt):
        write_rows(path, [row(1), row(2), row(3)])
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["results.csv"]  # and the temporary file is gone


def test_a_foreign_file_is_never_overwritten(tmp_path):
    path = tmp_path / "results.csv"
    path.write_text("name,score\nalice,3\n")
    with pytest.raises(ResultsFileError, match="not a `plan batch` results file"):
        read_rows(path)
    jsonl = tmp_path / "results.jsonl"
    jsonl.write_text('{"half": ')
    with pytest.raises(ResultsFileError):
        read_rows(jsonl)


def test_tally_line_and_exit_codes():
    solved = [row(1), row(2, "feasible")]
    bad = row(3, "error", "s3.yaml: malformed YAML")
    internal = row(4, "error", "internal error: ZeroDivisionError: division by zero")
    assert Tally.of(solved).exit_code() == 0 and Tally.of(solved).line() == "2 solved"
    mixed = Tally.of([*solved, row(5, "infeasible"), row(6, "unknown"), bad, internal])
    assert (
        mixed.line()
        == "2 solved, 1 infeasible, 1 no solution in time, 1 bad input, 1 internal error"
    )
    assert mixed.exit_code() == 1
    assert Tally.of([bad, bad]).exit_code() == 2  # nothing could be read
    assert Tally.of([internal]).exit_code() == 1  # read, but our fault
