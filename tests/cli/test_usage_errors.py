"""Bad command-line options get the same treatment as bad files: one line on stderr, exit 2."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

STUDENT = str(REPO / "scenarios" / "student_no_ops.yaml")


def _plan(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "plan.planner.cli.app", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, COLUMNS="80"),
    )


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["solve", STUDENT, "--gap", "inf"], ["--gap"]),
        (["solve", STUDENT, "--top", "0"], ["--top"]),
        (["solve", STUDENT, "--bogus"], ["--bogus"]),
        (["sovle", STUDENT], ["sovle", "solve"]),
        (["solve"], ["file"]),
        (["catalog"], ["section", "models", "gpus"]),
        (["pareto", STUDENT, "--points", "1"], ["--points"]),
        (
            [
                "estimate",
                "--model",
                "mixtral-8x7b",
                "--method",
                "pretrain",
                "--gpu",
                "h100-sxm",
                "--gpus",
                "8",
                "--capacity-factor",
                "nan",
            ],
            ["--capacity-factor"],
        ),
    ],
)
def test_a_bad_option_is_one_line_naming_it(args: list[str], words: list[str]) -> None:
    done = _plan(*args)
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert done.returncode == 2 and done.stdout == ""
    assert len(lines) == 1 and lines[0].startswith("error: plan"), done.stderr
    assert all(word in lines[0] for word in words), lines[0]
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr


def test_help_and_version_still_work() -> None:
    assert _plan("--version").stdout.startswith("plan ")
    helped = _plan("solve", "--help")
    assert helped.returncode == 0 and "--objective" in helped.stdout
    bare = _plan()
    assert bare.returncode == 2 and "solve" in bare.stdout  # the command list, as typer shows it
