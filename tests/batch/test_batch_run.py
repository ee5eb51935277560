"""`plan batch` end to end on a small batch: rows, statuses, exit codes, sweeps, resume,
determinism."""

from __future__ import annotations

import json

import pytest
import yaml

import plan.planner.batch.local as local_backend
from plan.planner.batch import Row, build_tasks, expand_grid, expand_paths, run_batch
from plan.planner.batch.runner import reusable
from plan.planner.session import SolveOptions
from tests.batch.conftest import plan_batch, rows_of, timeless

# not alphabetical: rows must follow the arguments
ORDER = ("student", "broken", "tiny", "short_budget")


@pytest.fixture
def counted_solves(monkeypatch):
    """Count the scenarios actually solved (with --jobs 1 the work function runs in this
    process)."""
    calls: list[str] = []
    real = local_backend.run_task

    def counting(task):
        calls.append(f"{task.path.name} {task.variant}".strip())
        return real(task)

    monkeypatch.setattr(local_backend, "run_task", counting)
    return calls


def test_small_batch_rows_in_input_order_with_statuses_and_errors(batch_files, tmp_path):
    out = tmp_path / "results.csv"
    result = plan_batch(*(str(batch_files[n]) for n in ORDER), "-o", str(out), "--jobs", "1")
    assert result.exit_code == 1, result.output
    rows = rows_of(out)
    assert [r.file for r in rows] == [str(batch_files[n]) for n in ORDER]
    assert [r.status for r in rows] == ["optimal", "error", "optimal", "infeasible"]
    student, broken, tiny, short = rows
    assert student.plan.startswith("qwen14b-lora: ") and student.currency == "CNY"
    assert 0 < tiny.total_cost < student.total_cost and tiny.makespan_h > 0
    assert tiny.plan.count(";") == 1 and tiny.plan.startswith("a: ")  # both jobs, in one line
    assert (
        broken.error.startswith(f"{batch_files['broken']}: line ")
        and "malformed YAML" in broken.error
    )
    assert "\n" not in broken.error and broken.total_cost is None and not broken.plan
    assert short.total_cost is None and not short.error
    assert all(not r.error for r in rows if r.status != "error")
    assert len({r.hash for r in rows}) == 4
    assert "2 solved, 1 infeasible, 1 bad input" in result.stdout
    assert "Traceback" not in result.output


def test_jsonl_output_and_folder_argument(batch_files, tmp_path):
    out = tmp_path / "results.jsonl"
    result = plan_batch(str(batch_files["tiny"].parent), "-o", str(out), "--jobs", "1")
    assert result.exit_code == 1
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["file"].rsplit("/", 1)[-1] for r in records] == sorted(f"{n}.yaml" for n in ORDER)
    assert [r["status"] for r in records] == ["error", "infeasible", "optimal", "optimal"]


def test_swept_budget_is_applied(student_file, tmp_path):
    out = tmp_path / "sweep.csv"
    result = plan_batch(
        str(student_file), "--sweep", "budget=90,360", "-o", str(out), "--jobs", "1"
    )
    rows = rows_of(out)
    assert [r.variant for r in rows] == ["budget=90", "budget=360"]
    assert [r.status for r in rows] == ["infeasible", "optimal"]  # the plan costs ~159
    for r in rows:
        if r.status == "optimal":
            assert r.total_cost <= float(r.variant.split("=")[1])
    assert result.exit_code == 1 and "1 solved, 1 infeasible" in result.stdout


def test_sweep_grid_with_deadline(grant_file, tmp_path):
    # what each deadline costs without a budget, then a budget between the two: the grid combines
    # both
    alone = tmp_path / "alone.csv"
    plan_batch(str(grant_file), "--sweep", "deadline=2h,7d", "-o", str(alone), "--jobs", "1")
    cost = {r.variant: r.total_cost for r in rows_of(alone)}
    assert cost["deadline=7d"] < cost["deadline=2h"]  # a 2-hour deadline needs more GPUs at once
    budget = round((cost["deadline=7d"] + cost["deadline=2h"]) / 2)
    out = tmp_path / "grid.csv"
    plan_batch(
        str(grant_file),
        "--sweep",
        f"budget={budget},100k",
        "--sweep",
        "deadline=2h,7d",
        "-o",
        str(out),
        "--jobs",
        "1",
    )
    rows = rows_of(out)
    assert [r.variant for r in rows] == [f"budget={budget} deadline=2h", f"budget={budget} "
                                                                         "deadline=7d",
                                         "budget=100k deadline=2h", "budget=100k deadline=7d"]
    by_variant = {r.variant: r for r in rows}
    assert by_variant[f"budget={budget} deadline=7d"].status == "optimal"
    assert by_variant["budget=100k deadline=2h"].status == "optimal"
    for r in rows:
        if r.status == "optimal" and "deadline=2h" in r.variant:
            assert r.makespan_h <= 2
    assert by_variant[f"budget={budget} deadline=2h"].status == "infeasible"


def test_bad_sweep_field_is_one_line_exit_2(student_file):
    result = plan_batch(str(student_file), "--sweep", "budgt=1k,2k")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        "error: --sweep 'budgt=1k,2k': unknown or unsweepable field 'budgt'; did you mean 'budget' "
        "or 'budget_basis'? (sweepable: "
        + result.stderr.split("(sweepable: ", 1)[1].strip()]


def test_bad_swept_value_is_a_row_with_the_loaders_message(student_file, tmp_path):
    out = tmp_path / "r.csv"
    result = plan_batch(
        str(student_file), "--sweep", "budget=-5,200", "-o", str(out), "--jobs", "1"
    )
    bad, good = rows_of(out)
    assert bad.status == "error" and bad.error.startswith(f"{student_file}: budget: got ")
    assert bad.error.endswith("must be above 0")
    assert good.status == "optimal" and result.exit_code == 1


def test_nothing_readable_is_exit_2(tmp_path):
    assert plan_batch(str(tmp_path / "none-*.yaml")).exit_code == 2
    (tmp_path / "junk.yaml").write_text("just a string\n")
    result = plan_batch(str(tmp_path / "junk.yaml"), str(tmp_path / "missing.yaml"), "--jobs", "1")
    assert result.exit_code == 2
    assert (
        "0 solved, 2 bad input" in result.stdout
        and "error: no scenario could be read" in result.stderr
    )


def test_output_argument_checks(student_file, tmp_path):
    assert (
        "use a .csv or .jsonl file"
        in plan_batch(str(student_file), "-o", str(tmp_path / "r.xlsx")).stderr
    )
    foreign = tmp_path / "mine.csv"
    foreign.write_text("name,score\nalice,3\n")
    result = plan_batch(str(student_file), "-o", str(foreign))
    assert result.exit_code == 2 and foreign.read_text() == "name,score\nalice,3\n"
    assert plan_batch(str(student_file), "--address", "auto").exit_code == 2  # --address is for ray


def test_resume_skips_rows_with_the_same_hash(batch_files, tmp_path, counted_solves):
    out = tmp_path / "results.csv"
    args = [
        *(str(batch_files[n]) for n in ORDER),
        "--sweep",
        "budget=2,100",
        "-o",
        str(out),
        "--jobs",
        "1",
    ]
    plan_batch(*args)
    first = rows_of(out)
    assert len(counted_solves) == 8 and len(first) == 8
    counted_solves.clear()

    again = plan_batch(*args)
    rows = rows_of(out)
    assert timeless(rows) == timeless(first)
    # solved and infeasible rows are identical, times included: re-used, not re-solved
    assert [r for r in rows if r.status != "error"] == [r for r in first if r.status != "error"]
    # error rows re-run
    assert sorted(counted_solves) == ["broken.yaml budget=100", "broken.yaml budget=2"]
    assert "(6 re-used from" in again.stdout

    counted_solves.clear()
    tiny = batch_files["tiny"]
    tiny.write_text(tiny.read_text() + "# edited\n")  # new bytes, new hash: solved again
    plan_batch(*args)
    assert sorted(counted_solves) == ["broken.yaml budget=100", "broken.yaml budget=2",
                                      "tiny.yaml budget=100", "tiny.yaml budget=2"]
    counted_solves.clear()
    plan_batch(*args, "--time-limit", "4")  # other solve options: every row again
    assert len(counted_solves) == 8


def test_interrupted_batch_keeps_finished_rows_and_resumes(batch_files, tmp_path):
    out = tmp_path / "results.jsonl"
    options = SolveOptions(top_k=1, workers=1)
    items = list(
        build_tasks(
            expand_paths([str(batch_files[n]) for n in ORDER]), expand_grid([]), (), options
        )
    )

    def interrupted(tasks):
        for n, task in enumerate(tasks):
            if n == 2:
                raise KeyboardInterrupt
            yield task.index, local_backend.run_task(task)

    with pytest.raises(KeyboardInterrupt):
        run_batch(items, interrupted, output=out)
    kept = rows_of(out)
    assert [r.file for r in kept] == [str(batch_files[n]) for n in ORDER[:2]]

    solved: list[int] = []

    def counting(tasks):
        for task in tasks:
            solved.append(task.index)
            yield task.index, local_backend.run_task(task)

    outcome = run_batch(items, counting, output=out, previous=kept)
    assert solved == [1, 2, 3]  # the student row was kept; the broken one (an error row) is retried
    assert outcome.reused == 1 and rows_of(out) == outcome.rows and len(outcome.rows) == 4


def test_jobs_1_and_jobs_2_give_the_same_rows(batch_files, tmp_path):
    one, two = tmp_path / "one.csv", tmp_path / "two.csv"
    args = [*(str(batch_files[n]) for n in ORDER), "--sweep", "budget=2,100"]
    plan_batch(*args, "-o", str(one), "--jobs", "1")
    result = plan_batch(*args, "-o", str(two), "--jobs", "2")
    assert result.exit_code == 1, result.output
    assert timeless(rows_of(one)) == timeless(rows_of(two))
    assert len(rows_of(one)) == 8


def test_ray_missing_says_how_to_install(student_file, monkeypatch):
    import plan.planner.batch.ray_backend as ray_backend

    monkeypatch.setattr(ray_backend, "ray_available", lambda: False)
    result = plan_batch(str(student_file), "--backend", "ray")
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [f"error: {ray_backend.INSTALL_HINT}"]


def test_reusable_ignores_error_rows():
    ok = Row("a.yaml", "", "optimal", 1.0, "CNY", 1.0, "p", 0.1, "", "h1")
    bad = Row("b.yaml", "", "error", None, "", None, "", 0.0, "b.yaml: malformed", "h2")
    assert reusable([ok, bad]) == {("a.yaml", "", "h1"): ok}


def test_yaml_of_the_fixture_is_what_the_docstring_says(batch_files):
    assert yaml.safe_load(batch_files["short_budget"].read_text())["budget"] == 1


def test_rows_carry_gap_and_bound(batch_files, tmp_path):
    for suffix in ("csv", "jsonl"):
        out = tmp_path / f"r.{suffix}"
        plan_batch(
            str(batch_files["tiny"]),
            str(batch_files["short_budget"]),
            "-o",
            str(out),
            "--jobs",
            "1",
        )
        tiny, short = rows_of(out)
        assert (
            tiny.status == "optimal"
            and tiny.gap == 0.0
            and tiny.bound == pytest.approx(tiny.total_cost)
        )
        assert short.status == "infeasible" and short.gap is None and short.bound is None
    header = (tmp_path / "r.csv").read_text().splitlines()[0].split(",")
    assert {"status", "gap", "bound"} <= set(header)


def test_resume_solves_unproven_rows_again_unless_told(batch_files, tmp_path, counted_solves):
    out = tmp_path / "results.csv"
    args = [
        str(batch_files["tiny"]),
        str(batch_files["short_budget"]),
        "-o",
        str(out),
        "--jobs",
        "1",
    ]
    plan_batch(*args)
    proven = rows_of(out)
    # As if a busy machine had stopped the first row early: feasible, with a gap.
    from dataclasses import replace

    from plan.planner.batch.results_file import write_rows

    write_rows(out, [replace(proven[0], status="feasible", gap=0.5, total_cost=9999.0), proven[1]])
    counted_solves.clear()
    plan_batch(*args)
    assert counted_solves == ["tiny.yaml"]  # the infeasible row is proven: re-used
    assert (
        rows_of(out)[0].status == "optimal" and rows_of(out)[0].total_cost == proven[0].total_cost
    )

    write_rows(out, [replace(proven[0], status="feasible", gap=0.5, total_cost=9999.0), proven[1]])
    counted_solves.clear()
    plan_batch(*args, "--reuse-unproven")
    assert counted_solves == [] and rows_of(out)[0].total_cost == 9999.0


def test_results_file_from_before_gap_and_bound_still_resumes(
    batch_files, tmp_path, counted_solves
):
    from plan.planner.batch.rows import LEGACY_COLUMNS

    out = tmp_path / "old.csv"
    out.write_text(",".join(LEGACY_COLUMNS) + "\n")
    result = plan_batch(str(batch_files["tiny"]), "-o", str(out), "--jobs", "1")
    assert result.exit_code == 0, result.output
    assert counted_solves == ["tiny.yaml"] and rows_of(out)[0].gap == 0.0


def test_a_long_batch_with_a_results_file_draws_its_first_rows(student_file, tmp_path,
                                                                monkeypatch):
    """The terminal table stops at TABLE_ROWS_WITH_FILE rows when the file holds them all; without
    a file every row is drawn (it is the only record)."""
    from plan.planner.cli import batch_cmd

    monkeypatch.setattr(batch_cmd, "TABLE_ROWS_WITH_FILE", 2)
    out = tmp_path / "rows.csv"
    args = [str(student_file), "--sweep", "budget=1000,2000,3000", "--jobs", "1"]
    with_file = plan_batch(*args, "-o", str(out))
    assert with_file.exit_code == 0, with_file.output
    assert len(rows_of(out)) == 3
    assert "3 rows (the first 2; all in" in with_file.output
    assert "budget=2000" in with_file.output and "budget=3000" not in with_file.output
    alone = plan_batch(*args)
    assert alone.exit_code == 0 and "budget=3000" in alone.output
    assert "the first" not in alone.output
