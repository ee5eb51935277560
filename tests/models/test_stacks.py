"""The training stacks' descriptions (models/stacks.py): one per framework of the vocabulary,
consistent with itself, and `stack_gaps` saying what each gap rule says."""

from __future__ import annotations

import itertools

import pytest

from plan.models.layout import Framework, words
from plan.models.stacks import (
    STACKS,
    SplitFacts,
    may_run,
    pipeline_fp8_gap,
    ring_attention_gap,
    sequence_split_gap,
    stack_gaps,
    stated_has,
    stated_lacks,
    ulysses_fp8_gap,
    ulysses_head_gap,
)


def test_one_description_per_framework_of_the_vocabulary():
    assert tuple(STACKS) == words(Framework)
    assert all(stack.framework == name for name, stack in STACKS.items())


@pytest.mark.parametrize("stack", STACKS.values(), ids=STACKS)
def test_searched_and_pipelined_stages_are_stages_the_stack_runs(stack):
    assert set(stack.searched_zero) <= set(stack.zero_stages)
    assert set(stack.pipeline_zero_stages) <= set(stack.zero_stages)
    if not stack.state_offload:
        assert stack.offload_optimizers == ()


def test_an_unstated_framework_may_run_what_any_stack_runs_and_lacks_nothing():
    for capability in ("qlora", "leaner_losses", "distributed_optimizer", "hybrid_shard"):
        assert may_run(None, capability) == any(getattr(s, capability) for s in STACKS.values())
        assert not stated_lacks(None, capability)
        assert not stated_has(None, capability)
        for name, stack in STACKS.items():
            assert may_run(name, capability) == getattr(stack, capability)
            assert stated_lacks(name, capability) == (not getattr(stack, capability))


def test_stack_gaps_says_exactly_what_each_rule_says():
    """Over a grid of splits, the one query returns each rule's sentence and nothing else."""
    grid = itertools.product(STACKS, (1, 2, 4), (1, 2), (1, 2, 3, 4), (0, 12, 32),
                             (0, 4096, 4098), ("bf16", "fp8"), (True, False))
    for framework, tp, pp, cp, heads, seq_len, precision, flash in grid:
        facts = SplitFacts(tp=tp, pp=pp, cp=cp, heads=heads, seq_len=seq_len,
                           precision=precision, flash_attention=flash)
        expected = [reason for reason in (
            sequence_split_gap(framework, seq_len, cp),
            ring_attention_gap(framework, cp, flash),
            ulysses_head_gap(framework, heads, tp, cp),
            ulysses_fp8_gap(framework, precision, cp),
            pipeline_fp8_gap(framework, precision, pp)) if reason]
        assert [gap.reason for gap in stack_gaps(framework, facts)] == expected


def test_the_gap_rules_hold_their_stacks_facts():
    # Megatron: 2 x cp chunks per sequence; ring attention needs flash kernels
    assert sequence_split_gap("megatron", 4098, 4) and not sequence_split_gap("fsdp", 4098, 4)
    assert ring_attention_gap("megatron", 2, False) and ring_attention_gap("fsdp", 2, False)
    # DeepSpeed's Ulysses runs eager attention but needs whole heads per rank, and no FP8 split
    assert not ring_attention_gap("deepspeed", 2, False)
    assert ulysses_head_gap("deepspeed", 12, 1, 8) and not ulysses_head_gap("deepspeed", 32, 1, 8)
    assert ulysses_fp8_gap("deepspeed", "fp8", 2) and not ulysses_fp8_gap("megatron", "fp8", 2)
    assert pipeline_fp8_gap("deepspeed", "fp8", 2) and not pipeline_fp8_gap("fsdp", "fp8", 2)


def _has_type(value, annotation) -> bool:
    """Whether `value` fits a Stack field's annotation (bool, int, str, Literal, tuples, None)."""
    import types
    import typing

    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Literal:
        return value in args
    if origin in (typing.Union, types.UnionType):
        return any(_has_type(value, arg) for arg in args)
    if origin is tuple:
        return isinstance(value, tuple) and all(_has_type(v, args[0]) for v in value)
    if annotation is type(None):
        return value is None
    if annotation is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, annotation)


def test_every_fact_of_every_stack_has_its_fields_type():
    """The facts are written as a table (one row per field, side by side): each value must still
    be what the field declares, as the keyword form would have had mypy check."""
    import dataclasses
    import typing

    from plan.models.stacks import Stack

    hints = typing.get_type_hints(Stack)
    for stack in STACKS.values():
        for field in dataclasses.fields(Stack):
            value = getattr(stack, field.name)
            assert _has_type(value, hints[field.name]), (stack.framework, field.name, value)
