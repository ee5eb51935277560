"""Valid and invalid scenarios through the public loader: one line per problem, naming file and
field."""

from __future__ import annotations

import time

import pytest

from plan.models.errors import InputError
from plan.models.loading import load_scenario
from tests.conftest import SCENARIOS


def test_base_scenario_loads(base_scenario, write_scenario):
    loaded = load_scenario(write_scenario(base_scenario))
    s = loaded.scenario
    assert s.budget == 10_000 and s.deadline_h == 168
    assert s.jobs[0].tokens == 10e6
    assert loaded.models["a"].id == "llama3-8b"
    assert loaded.models["b"].id == "qwen2.5-7b"


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.name)
def test_every_shipped_scenario_is_valid(path):
    loaded = load_scenario(path)
    assert loaded.scenario.jobs


def test_at_least_seven_scenarios():
    assert len(SCENARIOS) >= 7
    assert any(p.name == "medical_hybrid.yaml" for p in SCENARIOS)


def test_alias_resolves_to_catalog_id(base_scenario, write_scenario):
    base_scenario["jobs"][0]["model"] = "chatglm4-9b"
    assert load_scenario(write_scenario(base_scenario)).models["a"].id == "glm-4-9b"


def test_model_card_file(base_scenario, write_scenario, tmp_path):
    (tmp_path / "my-model.yaml").write_text(
        "id: my-7b\nparams: 7B\nlayers: 32\nhidden_size: 4096\nffn_hidden_size: 11008\nnum_heads: "
        "32\nnum_kv_heads: 32\nvocab_size: 32000\nmax_positions: 4096\nsource: our own "
        "config.json\n")
    base_scenario["jobs"][0]["model"] = "./my-model.yaml"
    loaded = load_scenario(write_scenario(base_scenario))
    assert loaded.models["a"].id == "my-7b" and loaded.models["a"].params == 7e9


def _mutate(data, path, value):
    target = data
    for key in path[:-1]:
        target = target[key]
    if value is _DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


_DELETE = object()

INVALID = [
    # (field path to change, new value, substring expected in the one error line)
    (("budget",), "-5k", "budget"),
    (("budget",), "lots", "budget: expected an amount of money"),
    (("deadline",), "soon", "deadline: expected a duration"),
    (("deadline",), 30, "deadline: a duration needs a unit"),
    (("jobs", 0, "model"), "llama3-8bb", "jobs[0].model: unknown model 'llama3-8bb'; did you mean "
                                         "'llama3-8b'"),
    (("owned", 0, "gpu"), "a900", "owned[0].gpu: unknown GPU 'a900'; did you mean"),
    (("jobs", 0, "methd"), "lora", "jobs[0].methd: unknown field"),
    (("jobs", 0, "method"), "ppo", "jobs[0].method: got 'ppo'"),
    (("jobs", 1, "after"), ["zzz"], "jobs[1].after: unknown job 'zzz'"),
    (("jobs", 1, "id"), "a", "jobs[1].id: duplicate id 'a'"),
    (("jobs", 0, "data", "at"), "nowhere", "jobs[0].data.at: 'nowhere' is not a declared site"),
    (("owned", 0, "site"), "mars", "owned[0].site: 'mars' is not a declared site"),
    (("jobs", 1, "lora_rank"), 0, "jobs[1].lora_rank"),
    (("jobs", 0, "tokens"), "-1B", "jobs[0].tokens"),
    (("jobs", 0, "seq_len"), 0, "jobs[0].seq_len"),
    (("policy",), {"forbid_platforms": ["alyun-pia"]}, "policy.forbid_platforms[0]: unknown "
                                                       "platform 'alyun-pia'"),
    (("objective",), "fastest", "objective: got 'fastest'"),
    (("jobs",), [], "jobs"),
    (("name",), _DELETE, "name: Field required"),
    (("currency",), "XYZ", "currency: no exchange rate for 'XYZ'"),
    (("jobs", 0, "seq_len"), 10_000_000, "exceeds llama3-8b's max_positions"),
]


@pytest.mark.parametrize(
    ("path", "value", "expected"), INVALID, ids=[str(case[2])[:40] for case in INVALID]
)
def test_invalid_scenarios(base_scenario, write_scenario, path, value, expected):
    file = write_scenario(_mutate(base_scenario, path, value))
    with pytest.raises(InputError) as err:
        load_scenario(file)
    assert any(expected in line for line in err.value.problems), err.value.problems
    assert all(line.startswith(str(file)) for line in err.value.problems)
    assert all("\n" not in line for line in err.value.problems)


def test_lora_rank_on_full_finetune(base_scenario, write_scenario):
    base_scenario["jobs"][1]["method"] = "full_finetune"
    base_scenario["jobs"][1]["lora_rank"] = 8
    with pytest.raises(InputError, match="lora_rank is only for lora or qlora"):
        load_scenario(write_scenario(base_scenario))


def test_cycle_is_named(base_scenario, write_scenario):
    base_scenario["jobs"][0]["after"] = ["b"]
    with pytest.raises(InputError, match=r"cycle (a -> b -> a|b -> a -> b)"):
        load_scenario(write_scenario(base_scenario))


@pytest.mark.parametrize(("content", "expected"), [
    ("", "empty scenario file"),
    ("   \n# only a comment\n", "empty scenario file"),
    ("name: [unclosed\n", "malformed YAML"),
    ("- just\n- a list\n", "expected a mapping"),
    (b"\x00\x01\x02binary", "binary file"),
    (b"\xff\xfe\xfa not utf8", "not UTF-8"),
])
def test_unreadable_files(tmp_path, content, expected):
    path = tmp_path / "bad.yaml"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(InputError, match=expected):
        load_scenario(path)


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="not found"):
        load_scenario(tmp_path / "nope.yaml")


def test_alias_bomb_refused_quickly(tmp_path):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 12)]
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n")
    started = time.perf_counter()
    with pytest.raises(InputError, match="aliases expand"):
        load_scenario(path)
    assert time.perf_counter() - started < 5  # generous: the expanded tree would be 10^12 nodes


def test_overlay_overrides_a_price(base_scenario, write_scenario, tmp_path):
    (tmp_path / "quotes.yaml").write_text(
        "platforms:\n  - id: zhixingyun\n    offers:\n      - {gpu: rtx4090, billing: hourly, "
        "price_per_gpu_period: 0.99, currency: CNY,\n         source: our quote, as_of: "
        "2026-11-20}\n")
    base_scenario["catalog"] = "quotes.yaml"
    loaded = load_scenario(write_scenario(base_scenario))
    offers = {(o.gpu, o.billing): o for o in loaded.catalog.platform("zhixingyun").offers}
    assert offers[("rtx4090", "hourly")].price_per_gpu_period == 0.99
    assert offers[("rtx4090", "hourly")].source == "our quote"
    assert len(offers) > 1  # the other built-in offers survive the overlay


def test_missing_overlay(base_scenario, write_scenario):
    base_scenario["catalog"] = "quotes.yaml"
    with pytest.raises(InputError, match=r"catalog: overlay file 'quotes\.yaml' not found"):
        load_scenario(write_scenario(base_scenario))


@pytest.mark.parametrize(("fields", "expected"), [
    ({"framework": "fsdp", "method": "lora"}, "it needs framework megatron, not fsdp"),
    ({}, "it needs a method other than qlora"),  # job a is a QLoRA job
    ({"method": "lora", "layout": {"zero": 3}}, "it needs ZeRO stage 1, not layout.zero 3"),
])
def test_precision_aware_optimizer_is_megatrons(base_scenario, write_scenario, fields, expected):
    base_scenario["jobs"][0].update({"optimizer": "adamw-precision-aware", **fields})
    with pytest.raises(InputError) as err:
        load_scenario(write_scenario(base_scenario))
    assert any(expected in line for line in err.value.problems), err.value.problems


@pytest.mark.parametrize("optimizer", ["adamw-8bit", "paged-adamw-8bit", "adafactor", "adamw-bf16"])
def test_pytorch_optimizers_are_not_megatrons(base_scenario, write_scenario, optimizer):
    base_scenario["jobs"][0].update(
        {"optimizer": optimizer, "framework": "megatron", "method": "lora"}
    )
    with pytest.raises(InputError) as err:
        load_scenario(write_scenario(base_scenario))
    assert any(f"optimizer {optimizer} is a PyTorch optimizer" in line and "Megatron-LM does not "
                                                                           "run" in line
               for line in err.value.problems), err.value.problems


def test_an_eight_bit_optimizer_plans_pytorch_stacks_only(base_scenario, write_scenario):
    from plan.planner.candidates import build_problem

    base_scenario["jobs"] = [
        {**base_scenario["jobs"][0], "method": "lora", "optimizer": "paged-adamw-8bit"}
    ]
    layouts = [
        c.layout
        for c in build_problem(load_scenario(write_scenario(base_scenario))).candidates["a"]
        if c.layout
    ]
    assert layouts and all(lay.framework != "megatron" and lay.optimizer == "paged_adam_8bit"
                           for lay in layouts)


def test_precision_aware_optimizer_plans_megatron_layouts_with_its_smaller_states(
    base_scenario, write_scenario
):
    from plan.planner.candidates import build_problem

    base_scenario["jobs"] = [
        {**base_scenario["jobs"][0], "method": "full_finetune", "lora_rank": None}
    ]
    plain = build_problem(load_scenario(write_scenario(base_scenario))).candidates["a"]
    base_scenario["jobs"][0]["optimizer"] = "adamw-precision-aware"
    loaded = load_scenario(write_scenario(base_scenario))
    assert loaded.scenario.jobs[0].optimizer == "adamw-precision-aware"
    aware = build_problem(loaded).candidates["a"]
    layouts = [c.layout for c in aware if c.layout]
    assert layouts and all(lay.framework == "megatron" and lay.optimizer == "adam_precision_aware"
                           for lay in layouts)
    # every Megatron layout that fits with mixed-precision Adam fits with smaller states, and the
    # step is no slower, so where plain Adam's best was Megatron's the precision-aware best is at
    # least as fast
    by_option = {(c.platform, c.gpu, c.gpus): c for c in plain if c.layout}
    same = [(by_option[k], c) for c in aware if (k := (c.platform, c.gpu, c.gpus)) in by_option
            and by_option[k].layout.framework == "megatron"]
    assert same and all(
        a.figures.estimate.step_time_s <= p.figures.estimate.step_time_s for p, a in same
    )
    # and some option that plain Adam could not use at all (nothing fitted) becomes possible
    assert {(c.platform, c.gpu, c.gpus) for c in aware} - set(by_option)


def test_the_scenario_and_the_cli_name_the_same_optimizers():
    from typing import get_args

    from plan.models.fields import OptimizerChoice
    from plan.planner.estimate.types import OPTIMIZER_ALIASES, OPTIMIZER_NAMES, OPTIMIZERS

    assert set(get_args(OptimizerChoice)) == set(OPTIMIZER_NAMES)
    assert {OPTIMIZER_ALIASES.get(name, name) for name in OPTIMIZER_NAMES} == set(OPTIMIZERS)


@pytest.mark.parametrize("method", ["qlora", "qlora_dpo"])
def test_qlora_in_fp8_is_refused_with_why(base_scenario, write_scenario, method):
    # bitsandbytes dequantizes the 4-bit base to 16-bit for its matmuls: there is no FP8 QLoRA to
    # plan
    base_scenario["jobs"][0].update({"method": method, "precision": "fp8"})
    with pytest.raises(InputError) as err:
        load_scenario(write_scenario(base_scenario))
    assert any(
        "precision fp8 with qlora" in line and "jobs[0]" in line for line in err.value.problems
    ), err.value.problems
    base_scenario["jobs"][0].update({"method": "lora"})  # LoRA in FP8 is a plan
    load_scenario(write_scenario(base_scenario))


@pytest.mark.parametrize("precision", ["fp16", "fp8"])
def test_pure_bf16_adamw_refuses_fp16_and_fp8_training(base_scenario, write_scenario, precision):
    # fp8 too: of the stacks plan export writes for, only DeepSpeed (ZeRO 1-3) runs FP8 matmuls on
    # pure BF16 weights, so a one-GPU plan would be one no stack runs
    base_scenario["jobs"][0].update(
        {"optimizer": "adamw-bf16", "precision": precision, "method": "lora"}
    )
    with pytest.raises(InputError) as err:
        load_scenario(write_scenario(base_scenario))
    assert any("adamw-bf16 is pure BF16 training" in line and "not fp16 or fp8" in line
               for line in err.value.problems), err.value.problems
