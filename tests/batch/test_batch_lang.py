"""`plan batch --lang zh` (issue 51 item 6): the table, its statuses, the tally line and each row's
plan or problems said in Chinese, also for rows solved in worker processes and rows re-used from a
results file written before rows carried gap and bound; the results file itself is data, byte for
byte the same in either language."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from plan.planner import candidates
from plan.planner.batch import plan_reuse, work
from plan.planner.batch.rows import COLUMNS, LEGACY_COLUMNS
from plan.planner.cli.app import app
from tests.batch.conftest import _tiny
from tests.planner.test_i18n_coverage import english_runs

ENGLISH_LOCALE = {"LC_ALL": None, "LC_MESSAGES": None, "LANG": "C.UTF-8"}


@pytest.fixture(autouse=True)
def _wide_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """A table wide enough that no cell wraps (a sentence broken inside a cell is not read as
    one)."""
    from plan.planner.cli.common import console

    monkeypatch.setattr(console, "_width", 400)


@pytest.fixture
def mixed_files(batch_files: dict[str, Path]) -> list[str]:
    """tiny, student (solved), short_budget (infeasible), broken (malformed YAML), a bad budget,
    a file that does not exist and a pattern that matches nothing."""
    bad = _tiny()
    bad["budget"] = "lots"
    folder = batch_files["tiny"].parent
    (folder / "bad_budget.yaml").write_text(yaml.safe_dump(bad), encoding="utf-8")
    names = ("tiny", "student", "short_budget", "broken")
    return [*(str(batch_files[n]) for n in names), str(folder / "bad_budget.yaml"),
            str(folder / "missing.yaml"), str(folder / "none-*.yaml")]


def _run(*args: str) -> Any:
    return CliRunner().invoke(app, ["batch", *args], env=ENGLISH_LOCALE)


def test_chinese_batch_says_every_row_in_chinese(mixed_files: list[str], tmp_path: Path) -> None:
    """Rows solved in worker processes (--jobs 2): their problems keep their keys through the
    pickle, their plans read back through their template."""
    result = _run(*mixed_files, "--jobs", "2", "--lang", "zh")
    assert result.exit_code == 1, result.output
    assert "已证明最优" in result.output and "无可行方案" in result.output  # statuses
    assert "YAML 格式有误" in result.output and "应为金额" in result.output  # problems
    assert "上 2 张 rtx4090" in result.output  # a plan
    assert "2 个已求解，1 个无可行方案，4 个输入有误" in result.output  # the tally
    assert english_runs(result.output, []) == []
    english = _run(*mixed_files, "--jobs", "1", "--lang", "en")
    assert "2 solved, 1 infeasible, 4 bad input" in english.output
    assert "malformed YAML" in english.output and len(english_runs(english.output, [])) > 5


def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows as a new process makes them (no build or answer kept from the last run), each solved
    in 0 s: what the file holds then depends on the inputs alone."""
    candidates._BUILT.clear()
    plan_reuse.forget()
    monkeypatch.setattr(work, "time", SimpleNamespace(perf_counter=lambda: 0.0))


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_the_results_file_is_the_same_in_either_language(
        mixed_files: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        suffix: str) -> None:
    written = {}
    for lang in ("en", "zh"):
        _fresh(monkeypatch)
        out = tmp_path / f"{lang}{suffix}"
        result = _run(*mixed_files, "--jobs", "1", "--lang", lang, "-o", str(out))
        assert result.exit_code == 1, result.output
        written[lang] = out.read_bytes()
    assert written["en"] == written["zh"]
    text = written["en"].decode("utf-8")
    assert "malformed YAML" in text and "张" not in text  # English data


def test_chinese_resume_of_a_file_from_before_gap_and_bound(
        batch_files: dict[str, Path], tmp_path: Path) -> None:
    """An old file's rows are re-used, and their plans said in Chinese all the same."""
    files = [str(batch_files[n]) for n in ("tiny", "student", "short_budget")]
    out = tmp_path / "old.csv"
    assert _run(*files, "--jobs", "1", "-o", str(out)).exit_code == 1
    with out.open(encoding="utf-8", newline="") as file:
        rows = list(csv.DictReader(file))
    assert tuple(rows[0]) == COLUMNS
    with out.open("w", encoding="utf-8", newline="") as file:
        writer = csv.DictWriter(file, fieldnames=LEGACY_COLUMNS, extrasaction="ignore",
                                lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    result = _run(*files, "--jobs", "1", "-o", str(out), "--lang", "zh")
    assert result.exit_code == 1, result.output
    assert "（3 行沿用自" in result.output
    assert "上 2 张 rtx4090" in result.output
    assert english_runs(result.output, []) == []


def test_stored_rows_that_fail_their_check_are_named_in_chinese(
        batch_files: dict[str, Path], tmp_path: Path) -> None:
    """Python's own words (a JSON decode error, a float that is not one) are said through keys."""
    out = tmp_path / "rows.jsonl"
    tiny = str(batch_files["tiny"])
    assert _run(tiny, "--jobs", "1", "-o", str(out)).exit_code == 0
    row = json.loads(out.read_text(encoding="utf-8"))
    out.write_text("\n".join([json.dumps({**row, "total_cost": "x"}), '{"file": x}', "[1]",
                              json.dumps(row)]) + "\n", encoding="utf-8")
    english = _run(tiny, "--jobs", "1", "-o", str(out), "--lang", "en")
    # (lines that are no JSON first: they are found while the file is read)
    assert ("(row 2: not JSON (Expecting value: line 1 column 10 (char 9)); row 1: total_cost is "
            "not a number: 'x'; row 3: expected columns file, ") in english.output
    out.write_text("\n".join([json.dumps({**row, "total_cost": "x"}), '{"file": x}',
                              json.dumps(row)]) + "\n", encoding="utf-8")
    chinese = _run(tiny, "--jobs", "1", "-o", str(out), "--lang", "zh")
    assert ("（第 2 行：不是 JSON（此处应有一个值：第 1 行第 10 列（偏移 9））；第 1 行："
            "total_cost 不是数：'x'）") in chinese.output
    assert english_runs(chinese.output, []) == []
