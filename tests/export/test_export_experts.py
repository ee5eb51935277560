"""Expert parallelism exports in the keys of the stacks that split experts (Megatron's
--expert-model-parallel-size, torchtitan's expert_parallel_degree, LLaMA-Factory's Megatron-Bridge
expert_model_parallel_size; docs/sources/launch-configs.md), with the experts split over tp as the
estimate counts them; the stacks whose Hugging Face MoE models keep every expert on every rank
refuse it in one line; and a Megatron script for an MoE model says the MoE shape it must be given,
or pretrain_gpt.py builds a dense model."""

from __future__ import annotations

import pytest

from plan.models.catalog import builtin_catalog
from plan.models.loading import load_scenario
from plan.models.scenario import Job
from plan.planner.export import ExportError, build_layout, render_stack
from plan.planner.session import SolveOptions
from plan.planner.solve import solve
from tests.export.helpers import flag, parse_all, render_checked
from tests.export.test_export_golden import _plan
from tests.planner.builders import WALL_NET_S


def _layout(framework: str = "megatron", ep: int = 8, tp: int = 2, model: str = "mixtral-8x7b"):
    job = Job(
        id="cpt",
        model=model,
        method="continued_pretrain",
        tokens=64 * 4096 * 100,
        seq_len=4096,
        global_batch=64,
    )
    plan = _plan(
        "cpt",
        64,
        8,
        tp=tp,
        dp=64 // tp,
        zero=1 if framework == "megatron" else 3,
        recompute="full",
        global_batch=64,
        seq_len=4096,
        framework=framework,
        ep=ep,
    )
    return build_layout(plan, job, builtin_catalog().model(model))


def test_the_layout_carries_the_expert_split_and_the_moe_shape():
    layout = _layout()
    assert layout.moe is not None and (layout.ep, layout.moe.experts, layout.moe.top_k) == (8, 8, 2)
    assert "ep=8" in layout.paragraph()
    assert "ep=" not in _layout(ep=1).paragraph()


def test_megatron_splits_the_experts_and_names_the_moe_shape():
    parsed, _, notes = render_checked(_layout(), "megatron")
    words = parsed["train.sh"]
    assert (
        flag(words, "--expert-model-parallel-size") == "8"
        and flag(words, "--expert-tensor-parallel-size") == "2"
    )
    assert any(
        "num_moe_experts 8, moe_router_topk 2, moe_ffn_hidden_size 14336" in note for note in notes
    )
    # without expert parallelism the MoE shape is still said; a dense model's script says nothing of
    # it
    parsed, _, notes = render_checked(_layout(ep=1), "megatron")
    assert flag(parsed["train.sh"], "--expert-model-parallel-size") is None
    assert any("builds a dense model" in note for note in notes)


def test_a_megatron_moe_script_stops_unless_given_the_moe_shape():
    """The MoE shape's flags are the checkout's (launch-configs.md names the parallel sizes only):
    the script asks for them in MOE_ARGS and stops before launch without them, rather than train a
    dense model silently."""
    from plan.planner.export.megatron import MOE_ARGS_GUARD

    files, _ = render_stack(_layout(), "megatron")
    script = files["train.sh"]
    guard, launch = script.index(MOE_ARGS_GUARD), script.index("torchrun")
    assert guard < launch and script.rstrip().endswith("$MOE_ARGS")
    assert "${MOE_ARGS:?" in MOE_ARGS_GUARD  # bash's set-or-stop expansion
    dense = Job(
        id="cpt",
        model="llama3.1-8b",
        method="continued_pretrain",
        tokens=64 * 4096 * 100,
        seq_len=4096,
        global_batch=64,
    )
    plan = _plan("cpt", 8, 8, tp=1, dp=8, zero=1, recompute="full", global_batch=64, seq_len=4096,
                 framework="megatron")
    files, _ = render_stack(
        build_layout(plan, dense, builtin_catalog().model("llama3.1-8b")), "megatron"
    )
    assert "MOE_ARGS" not in files["train.sh"]


def test_torchtitan_splits_the_experts():
    """On an MoE model torchtitan v0.2.2 has a flavor of (Qwen3 30B-A3B); Mixtral it has none of,
    and refuses."""
    parsed, _, _ = render_checked(_layout("fsdp", model="qwen3-30b-a3b"), "torchtitan")
    par = parsed["job.toml"]["parallelism"]
    assert par["expert_parallel_degree"] == 8 and par["expert_tensor_parallel_degree"] == 2
    assert parsed["job.toml"]["model"] == {"name": "qwen3", "flavor": "30B-A3B",
                                           "hf_assets_path": "./assets/hf/Qwen/Qwen3-30B-A3B"}
    whole, _, _ = render_checked(_layout("fsdp", ep=1, model="qwen3-30b-a3b"), "torchtitan")
    assert "expert_parallel_degree" not in whole["job.toml"]["parallelism"]
    with pytest.raises(ExportError, match=r"^torchtitan: v0\.2\.2 has no train spec and flavor for "
                                          r"mixtral-8x7b"):
        render_stack(_layout("fsdp"), "torchtitan")


def test_llamafactory_splits_the_experts_on_its_megatron_bridge_backend():
    layout = _layout()
    files, _ = render_stack(layout, "llamafactory")
    cfg = parse_all(files)["train.yaml"]
    assert cfg["expert_model_parallel_size"] == 8 and "USE_MEGATRON_BRIDGE=1" in files["launch.sh"]


@pytest.mark.parametrize("stack", ["deepspeed", "accelerate", "torchrun-fsdp"])
def test_the_stacks_that_keep_experts_whole_refuse_a_split(stack):
    framework = "deepspeed" if stack == "deepspeed" else "fsdp"
    with pytest.raises(ExportError, match=rf"^{stack}: no expert parallelism \(the plan splits "
                                          r"each layer's 8 "
                                          r"experts over ep=8 ranks"):
        render_stack(_layout(framework), stack)
    render_stack(_layout(framework, ep=1), stack)  # the same MoE model with whole experts exports


def test_a_solved_moe_plan_says_its_expert_split_and_exports_it(tmp_path):
    """End to end: Mixtral continued pre-training on Megatron; the plan line names ep where the
    experts are split, and the Megatron script carries the same split."""
    path = tmp_path / "moe.yaml"
    path.write_text("name: moe\ncurrency: CNY\nbudget: 200万元\ndeadline: 10d\nops_skill: "
                    "expert\njobs:\n  - {id: cpt, model: mixtral-8x7b, method: continued_pretrain, "
                    "tokens: 20B, seq_len: 4096, "
                    "framework: megatron}\n", encoding="utf-8")
    loaded = load_scenario(path)
    result = solve(loaded, SolveOptions(time_limit_s=WALL_NET_S))
    split = [(plan, j) for plan in result.plans for j in plan.jobs if j.ep > 1]
    assert split, "Megatron splits Mixtral's experts on these clusters"
    for plan, j in split:
        assert any(f" ep={j.ep} dp={j.dp} " in line for line in plan.explanation)
        layout = build_layout(j, loaded.scenario.jobs[0], builtin_catalog().model("mixtral-8x7b"))
        words = parse_all(render_stack(layout, "megatron")[0])["train.sh"]
        assert flag(words, "--expert-model-parallel-size") == str(j.ep)
