"""`plan export` on the shipped medical scenario: files for each stack, or exit 2 with one line."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from plan.planner.cli.app import app
from tests.conftest import REPO
from tests.export.helpers import parse_all

runner = CliRunner()
MEDICAL = REPO / "scenarios" / "medical_hybrid.yaml"


STACKS = ["deepspeed", "megatron", "torchtitan", "llamafactory", "accelerate", "torchrun-fsdp"]


@pytest.mark.parametrize("job", ["domain-cpt", "clinical-sft"])
def test_each_medical_job_exports_to_the_stacks_that_can_run_it(job, tmp_path):
    """Per stack: parsable files and a README with the commands, or one line naming the job and what
    the stack lacks (and nothing written). Each job has at least two stacks that can run its
    layout."""
    exported = []
    for stack in STACKS:
        out = tmp_path / stack
        result = runner.invoke(
            app, ["export", str(MEDICAL), "--to", stack, "--job", job, "-o", str(out)]
        )
        if result.exit_code == 2:
            lines = [line for line in result.output.splitlines() if line.strip()]
            assert (
                len(lines) == 1 and f"job {job}" in lines[0] and stack.split("-")[0] in lines[0]
            ), lines
            assert not out.exists()  # a refusal writes nothing
            continue
        assert result.exit_code == 0, result.output
        readme = (out / "README.md").read_text()
        assert "Commands, in order:" in readme and f"## {job}" in readme
        files = {
            p.name: p.read_text() for p in out.rglob("*") if p.is_file() and p.name != "README.md"
        }
        assert files and parse_all(files)
        exported.append(stack)
    assert len(exported) >= 2, exported


def test_stack_without_lora_exits_2_naming_the_capability(tmp_path):
    result = runner.invoke(
        app, ["export", str(MEDICAL), "--to", "megatron", "-o", str(tmp_path / "m")]
    )
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "LoRA" in lines[0] and "clinical-sft" in lines[0]
    assert not (tmp_path / "m").exists()  # a refusal writes nothing


def test_one_job_exports_to_megatron(tmp_path):
    result = runner.invoke(app, ["export", str(MEDICAL), "--to", "megatron", "--job", "domain-cpt",
                                 "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    words = parse_all({"train.sh": (tmp_path / "train.sh").read_text()})["train.sh"]
    assert "pretrain_gpt.py" in words and "--global-batch-size" in words


def test_unknown_job_and_stack_are_bad_input(tmp_path):
    bad_job = runner.invoke(
        app, ["export", str(MEDICAL), "--to", "megatron", "--job", "nope", "-o", str(tmp_path)]
    )
    assert bad_job.exit_code == 2 and "nope" in bad_job.output
    bad_stack = runner.invoke(app, ["export", str(MEDICAL), "--to", "jax", "-o", str(tmp_path)])
    assert bad_stack.exit_code == 2
