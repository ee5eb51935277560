"""`plan export` on the shipped medical scenario: files for each stack, or exit 2 with one line."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from planner.cli.app import app
from tests.conftest import REPO
from tests.export.helpers import parse_all

runner = CliRunner()
MEDICAL = REPO / "scenarios" / "medical_hybrid.yaml"


@pytest.mark.parametrize("stack", ["deepspeed", "llamafactory", "accelerate", "torchrun-fsdp"])
def test_medical_exports_every_job_with_a_readme(stack, tmp_path):
    out = tmp_path / stack
    result = runner.invoke(app, ["export", str(MEDICAL), "--to", stack, "-o", str(out)])
    assert result.exit_code == 0, result.output
    readme = (out / "README.md").read_text()
    assert "Commands, in order:" in readme and "## domain-cpt" in readme and "## clinical-sft" in readme
    assert "TI-ONE" in readme or "tencent" in readme  # the managed platform's job form is named
    for job in ("domain-cpt", "clinical-sft"):
        files = {p.name: p.read_text() for p in (out / job).iterdir()}
        assert files and parse_all(files)


def test_stack_without_lora_exits_2_naming_the_capability(tmp_path):
    result = runner.invoke(app, ["export", str(MEDICAL), "--to", "megatron", "-o", str(tmp_path / "m")])
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
    bad_job = runner.invoke(app, ["export", str(MEDICAL), "--to", "megatron", "--job", "nope", "-o", str(tmp_path)])
    assert bad_job.exit_code == 2 and "nope" in bad_job.output
    bad_stack = runner.invoke(app, ["export", str(MEDICAL), "--to", "jax", "-o", str(tmp_path)])
    assert bad_stack.exit_code == 2
