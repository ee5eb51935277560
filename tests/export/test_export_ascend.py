"""Jobs planned on Ascend NPUs export MindSpeed-LLM's launch (issue 50 item 3): its entry points,
torch_npu and HCCL environment, a ModelArts job spec on ModelArts, and no CUDA-only variable or flag
anywhere; other stacks and CUDA-only settings are refused in one line.
"""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from plan.models.catalog import builtin_catalog
from plan.models.scenario import Job
from plan.planner.cli.app import app
from plan.planner.export import STACKS, ExportError, build_layout, render_stack
from tests.conftest import REPO
from tests.export.helpers import flag, render_checked
from tests.export.test_export_golden import _plan

runner = CliRunner()
ASCEND = REPO / "scenarios" / "domestic_ascend.yaml"
CUDA_ONLY = re.compile(
    r"cuda|nccl|pretrain_gpt\.py .*--use-megatron-fsdp|--fp8|transformer[-_]engine|"
    r"precision-aware|bitsandbytes|--main-grads-dtype|tokenizer-type HuggingFaceTokenizer",
    re.IGNORECASE,
)
"""CUDA-only variables and flags: CUDA_* and NCCL_* variables, nccl, Transformer Engine's fp8 and
precision-aware
optimizer, Megatron-FSDP, bitsandbytes, and the CUDA Megatron-LM script's tokenizer flags."""


def _npu(method: str = "full_finetune", **layout):
    job = Job(
        id="ft",
        model="glm-4-9b",
        method=method,
        tokens=64 * 4096 * 100,
        seq_len=4096,
        global_batch=64,
        lora_rank=16 if "lora" in method else None,
    )
    lay = {
        "tp": 2,
        "dp": 8,
        "zero": 1,
        "recompute": "full",
        "global_batch": 64,
        "seq_len": 4096,
        **layout,
    }
    plan = _plan("ft", 16, 2, **lay)
    plan = type(plan)(**{**plan.__dict__, "gpu": "ascend-910b"})
    return build_layout(plan, job, builtin_catalog().model("glm-4-9b"))


@pytest.mark.parametrize(
    ("method", "entry"),
    [
        ("full_finetune", "posttrain_gpt.py"),
        ("continued_pretrain", "pretrain_gpt.py"),
        ("lora", "posttrain_gpt.py"),
    ],
)
def test_npu_jobs_export_mindspeed_llm_with_no_cuda_setting(method, entry):
    layout = _npu(method)
    assert layout.on_npu
    parsed, files, notes = render_checked(layout, "megatron")
    script = files["train.sh"]
    words = parsed["train.sh"]
    assert entry in words and "--use-mcore-models" in words and "import torch_npu" in script
    assert "source" in words and "/usr/local/Ascend/cann/set_env.sh" in words
    assert "export HCCL_CONNECT_TIMEOUT=1800" in script and "PYTORCH_NPU_ALLOC_CONF" in script
    assert flag(words, "--nproc_per_node") == "8" and flag(words, "--save-interval")
    for name, text in files.items():
        assert not CUDA_ONLY.search(text), (name, CUDA_ONLY.search(text))
    assert ("--lora-r" in words) == (method == "lora")
    assert ("--finetune" in words) == (entry == "posttrain_gpt.py")
    assert any("MindSpeed-LLM" in n and "torch_npu" in n for n in notes)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"precision": "fp8"}, "fp8 is CUDA-only"),
        ({"optimizer": "adam_precision_aware"}, "Transformer Engine"),
        ({"zero": 3}, "optimizer states only"),
        # 40 layers over pp 16: uneven, which only CUDA Megatron's
        # split flags express
        ({"tp": 1, "pp": 16, "dp": 1}, "do not split evenly"),
    ],
)
def test_cuda_only_or_unsourced_settings_are_refused_in_one_line(change, why):
    with pytest.raises(ExportError) as err:
        render_stack(_npu(**change), "megatron")
    message = str(err.value)
    assert (
        "\n" not in message
        and message.startswith("megatron: MindSpeed-LLM on Ascend")
        and why in message
    )


def test_qlora_on_an_npu_is_refused_as_cuda_only():
    with pytest.raises(
        ExportError,
        match=r"^megatron: MindSpeed-LLM on Ascend: a 4-bit NF4 base \(bitsandbytes\) is CUDA-only",
    ):
        render_stack(_npu("qlora"), "megatron")


@pytest.mark.parametrize("stack", [s for s in STACKS if s != "megatron"])
def test_other_stacks_refuse_npu_jobs_naming_the_one_that_runs_them(stack):
    with pytest.raises(ExportError) as err:
        render_stack(_npu(), stack)
    message = str(err.value)
    assert message.startswith(f"{stack}: ") and "Ascend" in message and "--to megatron" in message


def test_the_shipped_ascend_scenario_exports_to_mindspeed_and_modelarts(tmp_path):
    result = runner.invoke(app, ["export", str(ASCEND), "--to", "megatron", "-o", str(tmp_path)])
    assert result.exit_code == 0, result.output
    readme = (tmp_path / "README.md").read_text()
    assert "MindSpeed-LLM" in readme and "--save-interval" not in readme.split("## ")[0]
    for job in ("glm4-full-ft", "glm4-lora"):
        script = (tmp_path / job / "train.sh").read_text()
        spec = json.loads((tmp_path / job / "modelarts_job.json").read_text())
        assert (
            not CUDA_ONLY.search(script)
            and "$MA_NUM_HOSTS" in script
            and "$VC_TASK_INDEX" in script
        )
        assert spec["kind"] == "job" and spec["spec"]["resource"]["node_count"] >= 1
        assert spec["algorithm"]["command"].endswith("bash train.sh")
        assert spec["spec"]["resource"]["flavor_id"].startswith("modelarts.pool.visual.")
    deepspeed = runner.invoke(
        app, ["export", str(ASCEND), "--to", "deepspeed", "-o", str(tmp_path / "ds")]
    )
    lines = [line for line in deepspeed.output.splitlines() if line.strip()]
    assert deepspeed.exit_code == 2 and len(lines) == 1 and "Ascend" in lines[0]
    assert not (tmp_path / "ds").exists()
