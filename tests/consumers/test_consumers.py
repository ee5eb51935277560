"""Exports read by their consumers' own code (issue 50 item 2; tests/consumers/checks.py).

Where the `.[consumers]` extra is installed, every golden export and every export of every shipped
scenario and docs example must be parsed by its consumer at the named version with no error, and
started as far as a CPU goes; without it these tests skip, saying which package is missing (CI does
not install the extra). Megatron-LM's own parser is in no registry package: train.sh is checked
against the argument list the export cites (`megatron_flags`), which needs no extra and always
runs.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest

from plan.planner.export import ExportError, build_layout, render_stack
from tests.consumers.checks import Cell, check_export, installed, shell_words
from tests.consumers.megatron_flags import cited_flags, megatron_flags, rule_problems
from tests.export.test_export_golden import CASES
from tests.planner.builders import WALL_NET_S

ROOT = Path(__file__).resolve().parents[2]
CONSUMER = {"megatron": "torch", "deepspeed": "deepspeed", "accelerate": "accelerate",
            "torchrun-fsdp": "accelerate", "torchtitan": "torchtitan",
            "llamafactory": "deepspeed"}
"""The package each stack's files need (LLaMA-Factory's train.yaml: its own environment, checked
where llamafactory 0.9.5 is installed; its ds_config.json: DeepSpeed)."""


def _golden(stack: str):
    plan, job = CASES[stack]
    from plan.models.catalog import builtin_catalog

    layout = build_layout(plan, job, builtin_catalog().model(job.model))
    return layout, render_stack(layout, stack)[0]


def _script_words(train_sh: str, layout) -> list[str]:
    line = next(w for w in shell_words(train_sh, layout) if w[0] == "torchrun")
    return line[line.index("pretrain_gpt.py") + 1:]


def test_the_megatron_golden_passes_the_cited_list_and_validate_args_rules():
    layout, files = _golden("megatron")
    cell = Cell()
    megatron_flags(cell, layout, _script_words(files["train.sh"], layout))
    assert not cell.failures and cell.fallback


@pytest.mark.parametrize("drop, rule", [
    ("--save-interval", "--save without --save-interval"),
    ("--overlap-grad-reduce", "--overlap-param-gather without"),
    ("--recompute-granularity", None),
])
def test_validate_args_rules_catch_what_megatron_refuses(drop, rule):
    layout, files = _golden("megatron")
    words = _script_words(files["train.sh"], layout)
    values: dict[str, str | None] = {}
    for i, word in enumerate(words):
        if word.startswith("--") and word != drop:
            nxt = words[i + 1] if i + 1 < len(words) else "--"
            values[word] = None if nxt.startswith("--") else nxt
    problems = rule_problems(values, layout.world_size)
    if rule is None:
        assert problems == []  # no recomputation is valid
    else:
        assert any(p.startswith(rule) for p in problems), problems


def test_a_flag_outside_the_cited_list_fails():
    layout, files = _golden("megatron")
    cell = Cell()
    megatron_flags(cell, layout, [*_script_words(files["train.sh"], layout), "--no-such-flag"])
    assert cell.failures and "--no-such-flag" in cell.failures[0]
    assert "--save-interval" in cited_flags() and "--lora-r" in cited_flags()


LLAMAFACTORY_PYTHON = os.environ.get("PLAN_LLAMAFACTORY_PYTHON")
"""The interpreter of an environment with llamafactory 0.9.5 (its pins conflict with the
accelerate export's 1.16.0), as bench/consumers.py --llamafactory-python takes it."""
MEGATRON_PYTHON = os.environ.get("PLAN_MEGATRON_PYTHON")
"""The interpreter of an environment with megatron-core 0.19.0 (Python >= 3.12), as
bench/consumers.py --megatron-python takes it."""


@pytest.mark.parametrize("stack", sorted(CASES))
def test_golden_exports_are_read_by_their_consumers(stack):
    why = installed(CONSUMER[stack]) or installed("torch")
    if why:
        pytest.skip(why)
    layout, files = _golden(stack)
    cell = check_export(stack, layout, files, LLAMAFACTORY_PYTHON, MEGATRON_PYTHON)
    if cell.skipped and not cell.parsed:
        pytest.skip("; ".join(cell.skipped))
    assert not cell.failures, cell.failures
    assert cell.parsed and cell.started, cell


def test_a_torchrun_line_that_disagrees_with_the_plan_fails():
    why = installed("torch")
    if why:
        pytest.skip(why)
    layout, files = _golden("torchrun-fsdp")
    files = {"launch.sh": files["launch.sh"].replace("--nproc-per-node=8", "--nproc-per-node=4")}
    cell = check_export("torchrun-fsdp", layout, files)
    assert cell.failures and "AssertionError" in cell.failures[0]
    assert shlex.split("a b") == ["a", "b"]


def _shipped():
    return sorted((ROOT / "scenarios").glob("*.yaml")) + sorted(
        (ROOT / "docs/examples").glob("*.yaml"))


@pytest.mark.parametrize("path", _shipped(), ids=lambda p: p.stem)
def test_every_shipped_export_is_read_by_its_consumer(path):
    missing = [why for name in ("torch", "deepspeed", "accelerate", "torchtitan")
               if (why := installed(name))]
    if missing:
        pytest.skip("; ".join(missing))
    from plan.models.loading import load_scenario
    from plan.planner.export import STACKS
    from plan.planner.session import SolveOptions
    from plan.planner.solve import solve

    loaded = load_scenario(path)
    result = solve(loaded, SolveOptions(time_limit_s=WALL_NET_S))
    jobs = {j.id: j for j in loaded.scenario.jobs}
    for jp in result.plans[0].jobs:
        layout = build_layout(jp, jobs[jp.job], loaded.models[jp.job],
                              loaded.catalog.gpu(jp.gpu))
        for stack in STACKS:
            try:
                files = render_stack(layout, stack)[0]
            except ExportError:
                continue
            cell = check_export(stack, layout, files, LLAMAFACTORY_PYTHON, MEGATRON_PYTHON)
            assert not cell.failures, (jp.job, stack, cell.failures)
            assert cell.parsed or cell.fallback or cell.skipped, (jp.job, stack)


def test_megatron_validate_args_passes_the_golden_and_refuses_a_save_without_interval():
    """Megatron-LM's own parse_args + validate_args (megatron-core 0.19.0, in its own environment)
    pass the golden train.sh and trip the assert issue 50 found without --save-interval."""
    if not MEGATRON_PYTHON:
        pytest.skip("PLAN_MEGATRON_PYTHON names no interpreter with megatron-core 0.19.0 "
                    "(pip install megatron-core==0.19.0 triton torch, Python >= 3.12)")
    from tests.consumers.megatron_check import exported_env, run_megatron

    layout, files = _golden("megatron")
    words = ["pretrain_gpt.py", *_script_words(files["train.sh"], layout)]
    env = exported_env(files["train.sh"])
    good = run_megatron(MEGATRON_PYTHON, words, env, layout)
    assert good["started"] and good["sizes"][:4] == [layout.tp, layout.pp, layout.cp, layout.dp]
    at = words.index("--save-interval")
    bad = run_megatron(MEGATRON_PYTHON, words[:at] + words[at + 2:], env, layout)
    assert bad["parsed"] and not bad["started"] and "AssertionError" in bad["error"], bad
