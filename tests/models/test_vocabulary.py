"""The vocabularies of plan.models.layout: each word once, in the order messages and help list it,
and the same words where a scenario, `plan estimate` and the estimator take them."""

from __future__ import annotations

from typing import get_args

import pytest
from pydantic import ValidationError

from plan.models.fields import (
    FrameworkChoice,
    KernelsChoice,
    LoraTargetsChoice,
    LossChoice,
    ObjectiveChoice,
    OptimizerChoice,
    PrecisionChoice,
    RecomputePolicy,
)
from plan.models.layout import (
    OPTIMIZER_ALIASES,
    OPTIMIZER_NAME_OF,
    Framework,
    Kernels,
    LoraTargets,
    Loss,
    Objective,
    Optimizer,
    Precision,
    Recompute,
    words,
)
from plan.models.scenario import Scenario
from plan.planner.estimate import types


def test_words_in_order() -> None:
    assert words(Framework) == ("megatron", "deepspeed", "fsdp")
    assert words(Optimizer) == ("adam", "adam_8bit", "paged_adam_8bit", "adafactor", "sgd",
                                "adam_precision_aware", "adam_bf16")
    assert words(Recompute) == ("none", "selective", "full", "full_offload", "offload")
    assert words(Precision) == ("bf16", "fp16", "fp8")
    assert words(Loss) == ("plain", "chunked", "fused")
    assert words(Kernels) == ("eager", "fused")
    assert words(LoraTargets) == ("all", "attention")
    assert words(Objective) == ("cost", "time", "balanced", "lexicographic")
    assert all(type(word) is str for word in words(Framework))


def test_scenario_fields_take_the_vocabularies() -> None:
    for field_type, vocabulary in ((FrameworkChoice, Framework), (KernelsChoice, Kernels),
                                   (LossChoice, Loss), (LoraTargetsChoice, LoraTargets),
                                   (ObjectiveChoice, Objective), (PrecisionChoice, Precision),
                                   (RecomputePolicy, Recompute)):
        assert get_args(field_type) == words(vocabulary)
    assert get_args(OptimizerChoice) == tuple(OPTIMIZER_NAME_OF.values())


def test_estimator_tuples_are_the_vocabularies() -> None:
    assert words(Framework) == types.FRAMEWORKS
    assert words(Optimizer) == types.OPTIMIZERS
    assert types.OPTIMIZER_NAMES == ("adamw", "adamw-8bit", "paged-adamw-8bit", "adafactor", "sgd",
                                     "adamw-precision-aware", "adamw-bf16")
    assert words(Recompute) == types.RECOMPUTE
    assert words(Precision) == types.PRECISIONS
    assert words(Loss) == types.LOSSES
    assert words(Kernels) == types.KERNELS
    assert words(LoraTargets) == types.LORA_TARGETS


@pytest.mark.parametrize(("written", "optimizer"), [
    ("adamw", "adam"), ("adam", "adam"), ("adamw-8bit", "adam_8bit"), ("adam_8bit", "adam_8bit"),
    ("paged_adamw_8bit", "paged_adam_8bit"), ("adafactor", "adafactor"), ("sgd", "sgd"),
    ("adam-precision-aware", "adam_precision_aware"), ("adamw_bf16", "adam_bf16"),
    ("lion", "lion")])
def test_optimizer_id_of_both_spellings(written: str, optimizer: str) -> None:
    assert Optimizer.id_of(written) == optimizer


def test_every_written_name_and_alias_names_an_optimizer() -> None:
    assert {Optimizer.id_of(name) for name in OPTIMIZER_NAME_OF.values()} == set(words(Optimizer))
    assert set(OPTIMIZER_ALIASES.values()) <= set(words(Optimizer))


def test_scenario_keeps_plain_words() -> None:
    scenario = Scenario.model_validate({"name": "s", "objective": "time", "jobs": [
        {"id": "a", "model": "m", "method": "sft", "tokens": 10**9, "framework": "fsdp",
         "precision": "fp16", "loss": "fused", "kernels": "fused", "optimizer": "adamw-8bit"}]})
    job = scenario.jobs[0]
    assert type(scenario.objective) is str and scenario.objective == "time"
    assert (job.framework, job.precision, job.loss, job.kernels, job.optimizer) == (
        "fsdp", "fp16", "fused", "fused", "adamw-8bit")
    with pytest.raises(ValidationError, match="Input should be 'megatron', 'deepspeed' or 'fsdp'"):
        Scenario.model_validate({"name": "s", "jobs": [
            {"id": "a", "model": "m", "method": "sft", "tokens": 10**9, "framework": "jax"}]})
