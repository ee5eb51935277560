"""Exports that start the job they describe on the version they name (issue 50): Megatron's save
interval, accelerate's pure tensor-parallel layout, DeepSpeed's AutoTP batch counters, torchtitan's
flavor and release, LLaMA-Factory's release and Megatron-Bridge install, and `--target-version`.
"""

from __future__ import annotations

import dataclasses

import pytest
from typer.testing import CliRunner

from plan.models.catalog import builtin_catalog
from plan.models.scenario import Job
from plan.planner.cli.app import app
from plan.planner.export import ExportError, build_layout, render_stack
from plan.planner.export.checkpoint import save_interval_steps
from plan.planner.export.torchtitan_models import FLAVORS
from plan.planner.export.versions import bad_target, check_target, parse_version
from tests.conftest import REPO
from tests.export.helpers import flag, render_checked
from tests.export.test_export_golden import CASES, _plan

runner = CliRunner()
MEDICAL = REPO / "scenarios" / "medical_hybrid.yaml"


def _golden(stack: str):
    job_plan, job = CASES[stack]
    return build_layout(job_plan, job, builtin_catalog().model(job.model))


def test_megatron_saves_at_the_plans_checkpoint_interval():
    """--save-interval = the Young/Daly interval in steps, stated in the notes; without one, an
    assumed tenth."""
    layout = dataclasses.replace(_golden("megatron"), checkpoint_interval_h=2.0, step_time_s=36.0)
    parsed, _, notes = render_checked(layout, "megatron")
    assert flag(parsed["train.sh"], "--save-interval") == "200"  # 2 h x 3600 s / 36 s per step
    assert any(
        "checkpoint every 200 steps" in n and "2.00 h" in n and "--save-interval" in n
        for n in notes
    )
    bare = _golden("megatron")
    every, why = save_interval_steps(bare)
    assert every == -(-bare.train_steps // 10) and "assumed" in why
    # an interval longer than the run saves once, at its end
    long = dataclasses.replace(bare, checkpoint_interval_h=1e6, step_time_s=1.0)
    assert save_interval_steps(long)[0] == long.train_steps


def test_a_solved_plan_carries_its_checkpoint_interval_into_the_megatron_readme(tmp_path):
    result = runner.invoke(
        app,
        ["export", str(MEDICAL), "--to", "megatron", "--job", "domain-cpt", "-o", str(tmp_path)],
    )
    assert result.exit_code == 0, result.output
    readme = (tmp_path / "README.md").read_text()
    words = (tmp_path / "train.sh").read_text().split()
    every = words[words.index("--save-interval") + 1]
    assert f"checkpoint every {every} steps: the plan's checkpoint interval of" in readme


def test_accelerate_writes_pure_tensor_parallelism_without_an_fsdp_plugin():
    """dp 1, tp 4: accelerate 1.16 refuses FSDP2 with nothing to shard; MULTI_GPU + tp_size is
    accepted."""
    job = Job(
        id="sft",
        model="llama3-8b",
        method="lora",
        lora_rank=16,
        tokens=32 * 4096 * 10,
        seq_len=4096,
        global_batch=32,
    )
    plan = _plan(
        "sft",
        4,
        1,
        tp=4,
        dp=1,
        zero=3,
        global_batch=32,
        seq_len=4096,
        framework="fsdp",
        lora_rank=16,
    )
    layout = build_layout(plan, job, builtin_catalog().model("llama3-8b"))
    for stack in ("accelerate", "torchrun-fsdp"):
        parsed, files, notes = render_checked(layout, stack)
        cfg = parsed["accelerate_config.yaml"]
        assert cfg["distributed_type"] == "MULTI_GPU" and "fsdp_config" not in cfg
        assert cfg["parallelism_config"]["parallelism_config_tp_size"] == 4 == cfg["num_processes"]
        assert any("MULTI_GPU" in n and "accelerate 1.16" in n for n in notes)
    assert (
        "fully_shard with" not in files["launch.sh"]
    )  # torchrun-fsdp's comment: a tp plan, no FSDP mesh


def test_deepspeed_autotp_states_the_batch_its_counters_read():
    job = Job(
        id="sft",
        model="llama3-8b",
        method="full_finetune",
        tokens=128 * 4096 * 10,
        seq_len=4096,
        global_batch=128,
    )
    plan = _plan(
        "sft",
        8,
        1,
        tp=4,
        dp=2,
        zero=1,
        micro_batch=2,
        global_batch=128,
        seq_len=4096,
        framework="deepspeed",
    )
    layout = build_layout(plan, job, builtin_catalog().model("llama3-8b"))
    for stack in ("deepspeed", "llamafactory"):
        parsed, _, notes = render_checked(layout, stack)
        assert "train_batch_size" not in parsed["ds_config.json"]
        note = next(n for n in notes if "AutoTP" in n)
        assert "train_batch_size = micro-batch 2 x accumulation 32 x 8 = 512" in note
        assert "4x the plan's 128" in note and "global_samples" in note


def test_torchtitan_flavors_have_the_catalogs_shape():
    """Each mapped flavor is the catalog card's architecture: layers, width and heads agree."""
    catalog = builtin_catalog()
    for model_id, spec in FLAVORS.items():
        card = catalog.model(model_id)
        assert (card.layers, card.hidden_size, card.num_heads, card.num_kv_heads) == spec[2:], (
            model_id
        )
        assert spec.flavor != "debugmodel"


def test_torchtitan_sets_the_flavor_and_pins_its_release():
    parsed, files, notes = render_checked(_golden("torchtitan"), "torchtitan")
    assert (
        parsed["job.toml"]["model"]["name"] == "llama3"
        and parsed["job.toml"]["model"]["flavor"] == "8B"
    )
    guard = files["launch.sh"].splitlines()[3]
    assert '!= "0.2.2"' in guard and "exit 2" in guard  # stops before torchrun on another release
    assert files["launch.sh"].index(guard) < files["launch.sh"].index("torchrun")
    assert any("pip install torchtitan==0.2.2" in n for n in notes)


def test_llamafactory_names_the_release_or_the_install_it_needs():
    _, files, notes = render_checked(_golden("llamafactory"), "llamafactory")
    assert "pip install llamafactory==0.9.5" in files["launch.sh"] and any(
        "0.9.5" in n for n in notes
    )
    bridge = build_layout(
        *CASES["megatron"], builtin_catalog().model("llama3-8b")
    )  # pp 2: Megatron-Bridge
    _, files, notes = render_checked(bridge, "llamafactory")
    script = files["launch.sh"]
    assert (
        "LLaMA-Factory.git@ff6d4d1" in script
        and "megatron-bridge" in script
        and ", megatron.bridge;" in script
    )
    assert script.index("exit 2") < script.index("llamafactory-cli train")
    assert any("release 0.9.5 rejects" in n for n in notes)


def test_target_versions_are_checked_before_anything_is_written(tmp_path):
    bridge = build_layout(*CASES["megatron"], builtin_catalog().model("llama3-8b"))
    hf = _golden("llamafactory")
    for release in ("0.9.5", "v0.9.4", "0.9.5rc1"):
        with pytest.raises(
            ExportError, match=r"^llamafactory: release .* has no Megatron-Bridge keys"
        ):
            check_target(bridge, "llamafactory", release)
    for ok in ("main", "0.9.6.dev0", "0.10.0"):
        check_target(bridge, "llamafactory", ok)
    check_target(hf, "llamafactory", "0.9.5")
    with pytest.raises(ExportError, match=r"checked against release 0\.9\.5 and main"):
        check_target(hf, "llamafactory", "0.9.4")
    with pytest.raises(
        ExportError, match=r"^torchtitan: .* \(0\.3\.0 and later read Python configs"
    ):
        check_target(_golden("torchtitan"), "torchtitan", "0.3.0")
    assert parse_version("0.9.6.dev0") == (0, 9, 6, True) and parse_version("latest") is None
    assert (
        bad_target("deepspeed", "0.19.8")
        and bad_target("llamafactory", "x.y")
        and not bad_target("llamafactory", "main")
    )
    out = tmp_path / "lf"
    result = runner.invoke(
        app,
        [
            "export",
            str(MEDICAL),
            "--to",
            "llamafactory",
            "--target-version",
            "0.9.5",
            "-o",
            str(out),
        ],
    )
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert (
        result.exit_code == 2
        and len(lines) == 1
        and "domain-cpt" in lines[0]
        and "ff6d4d1" in lines[0]
    )
    assert not out.exists()
    result = runner.invoke(
        app,
        ["export", str(MEDICAL), "--to", "megatron", "--target-version", "0.19", "-o", str(out)],
    )
    assert result.exit_code == 2 and "--target-version" in result.output and not out.exists()
    result = runner.invoke(
        app,
        [
            "export",
            str(MEDICAL),
            "--to",
            "llamafactory",
            "--target-version",
            "main",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output


def test_render_refuses_a_model_torchtitan_has_no_flavor_of():
    job = Job(
        id="cpt",
        model="qwen2.5-7b",
        method="continued_pretrain",
        tokens=32 * 4096 * 10,
        seq_len=4096,
        global_batch=32,
    )
    plan = _plan("cpt", 8, 1, dp=8, zero=3, global_batch=32, seq_len=4096, framework="fsdp")
    with pytest.raises(
        ExportError, match=r"^torchtitan: v0\.2\.2 has no train spec and flavor for qwen2\.5-7b"
    ):
        render_stack(build_layout(plan, job, builtin_catalog().model("qwen2.5-7b")), "torchtitan")
