"""Every method the scenario accepts exports as what it is: sft as supervised fine-tuning, the DPO
variants as DPO (with their adapters and 4-bit base), or a one-line refusal from a stack that has no
DPO."""

from __future__ import annotations

import pytest
import yaml

from plan.models.catalog import builtin_catalog
from plan.models.methods import METHODS
from plan.models.scenario import Job
from plan.planner.export import ExportError, build_layout, render_stack
from tests.export.helpers import check_identities
from tests.export.test_export_golden import _plan

STACKS = ["deepspeed", "megatron", "torchtitan", "llamafactory", "accelerate", "torchrun-fsdp"]


def _layout(method: str):
    adapters = method in ("lora", "qlora", "lora_dpo", "qlora_dpo")
    job = Job(id="j", model="llama3-8b", method=method, lora_rank=16 if adapters else None,
              tokens=32 * 4096 * 100, seq_len=4096, global_batch=32)
    plan = _plan(
        "j",
        8,
        1,
        dp=8,
        zero=2 if not adapters else 0,
        recompute="full",
        global_batch=32,
        seq_len=4096,
        framework="fsdp",
    )
    return build_layout(plan, job, builtin_catalog().model("llama3-8b"))


@pytest.mark.parametrize("method", METHODS)
def test_every_method_exports_or_is_refused_in_one_line(method):
    layout = _layout(method)
    for stack in STACKS:
        try:
            files, _ = render_stack(layout, stack)
        except ExportError as exc:
            # one line that starts with the stack (torchrun-fsdp is rendered by the accelerate
            # exporter)
            assert "\n" not in str(exc) and str(exc).split(":")[0] in {*STACKS, "accelerate"}, exc
            continue
        check_identities(stack, layout, files)


@pytest.mark.parametrize(("method", "stage", "adapters", "bits"), [
    ("sft", "sft", False, None), ("dpo", "dpo", False, None), ("lora_dpo", "dpo", True, None),
    ("qlora_dpo", "dpo", True, 4)])
def test_llamafactory_gets_the_stage_adapters_and_quantization(method, stage, adapters, bits):
    layout = _layout(method)
    files, _ = render_stack(layout, "llamafactory")
    cfg = next(yaml.safe_load(text) for name, text in files.items() if name.endswith(".yaml")
               and "stage" in (yaml.safe_load(text) or {}))
    assert cfg["stage"] == stage
    assert cfg["finetuning_type"] == ("lora" if adapters else "full")
    assert cfg.get("quantization_bit") == bits
    assert "template" in cfg


@pytest.mark.parametrize("stack", ["megatron", "torchtitan"])
@pytest.mark.parametrize("method", ["dpo", "lora_dpo", "qlora_dpo"])
def test_stacks_without_dpo_refuse_it(stack, method):
    with pytest.raises(ExportError, match="DPO"):
        render_stack(_layout(method), stack)


def test_dpo_layouts_carry_the_method_notes():
    layout = _layout("lora_dpo")
    assert layout.lora_rank == 16 and layout.quant_bits is None
    assert any("reference" in note for note in layout.notes)


def test_the_precision_aware_optimizer_exports_to_megatron_only():
    job = Job(
        id="j",
        model="llama3-8b",
        method="full_finetune",
        tokens=32 * 4096 * 100,
        seq_len=4096,
        global_batch=32,
        optimizer="adamw-precision-aware",
    )
    # one data-parallel rank: the plan says zero 0, yet the flag needs the distributed optimizer
    plan = _plan(
        "j",
        8,
        1,
        tp=4,
        pp=2,
        dp=1,
        zero=0,
        recompute="selective",
        global_batch=32,
        seq_len=4096,
        optimizer="adam_precision_aware",
    )
    layout = build_layout(plan, job, builtin_catalog().model("llama3-8b"))
    files, _ = render_stack(layout, "megatron")
    script = "\n".join(files.values())
    assert "--use-precision-aware-optimizer --main-grads-dtype bf16" in script
    assert "--use-distributed-optimizer" in script
    check_identities("megatron", layout, files)
    for stack in ("deepspeed", "torchtitan", "llamafactory", "accelerate", "torchrun-fsdp"):
        with pytest.raises(ExportError) as refused:
            render_stack(layout, stack)
        assert "\n" not in str(refused.value) and "megatron" in str(refused.value), stack


def test_sgd_exports_to_megatron_as_its_sgd():
    """Megatron runs SGD (`--optimizer sgd`, launch-configs.md section 2), and the planner plans it
    there: the export refused it as 'not a Megatron optimizer (adam, sgd, ...)'."""
    job = Job(
        id="j",
        model="llama3-8b",
        method="full_finetune",
        tokens=32 * 4096 * 100,
        seq_len=4096,
        global_batch=32,
        optimizer="sgd",
    )
    plan = _plan(
        "j",
        8,
        1,
        tp=2,
        dp=4,
        zero=1,
        recompute="full",
        global_batch=32,
        seq_len=4096,
        optimizer="sgd",
    )
    layout = build_layout(plan, job, builtin_catalog().model("llama3-8b"))
    files, _ = render_stack(layout, "megatron")
    words = " ".join(files["train.sh"].split())
    assert "--optimizer sgd" in words and "--optimizer adam" not in words
    check_identities("megatron", layout, files)


def test_lora_with_block_recomputation_goes_through_megatron_bridge():
    # A Megatron plan that recomputes only some layers of each chunk: LLaMA-Factory's
    # Megatron-Bridge backend runs it (recompute_method block) with the adapters; its Hugging Face
    # path cannot.
    job = Job(
        id="j",
        model="llama3-8b",
        method="lora",
        lora_rank=16,
        tokens=32 * 4096 * 100,
        seq_len=4096,
        global_batch=32,
    )
    plan = _plan(
        "j",
        1,
        1,
        dp=1,
        zero=0,
        recompute="full",
        global_batch=32,
        seq_len=4096,
        framework="megatron",
        recompute_layers=3,
    )
    layout = build_layout(plan, job, builtin_catalog().model("llama3-8b"))
    files, _ = render_stack(layout, "llamafactory")
    cfg = yaml.safe_load(files["train.yaml"])
    assert cfg["recompute_method"] == "block" and cfg["recompute_num_layers"] == 3
    assert cfg["finetuning_type"] == "lora" and cfg["pipeline_model_parallel_size"] == 1
    assert "USE_MEGATRON_BRIDGE=1" in "\n".join(files.values())
    check_identities("llamafactory", layout, files)


@pytest.mark.parametrize("stack", ["accelerate", "torchrun-fsdp"])
def test_a_refusal_names_the_stack_asked_for(stack: str) -> None:
    # accelerate and torchrun-fsdp share one writer; each refusal names the one the user chose
    job = Job(
        id="pt",
        model="llama3-8b",
        method="pretrain",
        tokens=32 * 4096 * 100,
        seq_len=4096,
        global_batch=32,
    )
    piped = _plan("pt", 8, 1, pp=2, dp=4, zero=1, framework="fsdp", global_batch=32, seq_len=4096)
    with pytest.raises(ExportError, match=rf"^{stack}: no pipeline parallelism"):
        render_stack(build_layout(piped, job, builtin_catalog().model("llama3-8b")), stack)
    selective = _plan(
        "pt", 8, 1, zero=3, recompute="selective", framework="fsdp", global_batch=32, seq_len=4096
    )
    with pytest.raises(ExportError, match=rf"^{stack}: no selective recompute"):
        render_stack(build_layout(selective, job, builtin_catalog().model("llama3-8b")), stack)


def test_lora_with_megatrons_selective_recomputation_goes_through_megatron_bridge():
    """Megatron's selective recomputation (the attention core) has no flag on LLaMA-Factory's
    Hugging Face path, which checkpoints whole layers: a Megatron LoRA plan that uses it goes to the
    Megatron-Bridge backend."""
    job = Job(
        id="j",
        model="llama3-8b",
        method="lora",
        lora_rank=16,
        tokens=32 * 4096 * 100,
        seq_len=4096,
        global_batch=32,
    )
    plan = _plan(
        "j",
        8,
        1,
        dp=8,
        zero=1,
        recompute="selective",
        global_batch=32,
        seq_len=4096,
        framework="megatron",
    )
    layout = build_layout(plan, job, builtin_catalog().model("llama3-8b"))
    files, _ = render_stack(layout, "llamafactory")
    cfg = yaml.safe_load(files["train.yaml"])
    assert (
        cfg["recompute_granularity"] == "selective"
        and "USE_MEGATRON_BRIDGE=1" in files["launch.sh"]
    )
    check_identities("llamafactory", layout, files)


def test_dpo_is_not_written_for_llamafactorys_megatron_bridge_backend():
    """LLaMA-Factory's Megatron-Bridge backend trains stages pt and sft (launch-configs.md section
    4): a DPO plan that needs it (pipelined on Megatron, where a job names Megatron for its own DPO)
    is refused, not written as stage dpo there; without a pipeline the Hugging Face path writes
    it."""
    job = Job(
        id="j",
        model="llama3-8b",
        method="dpo",
        tokens=32 * 4096 * 100,
        seq_len=4096,
        global_batch=32,
    )
    piped = _plan("j", 8, 1, pp=2, dp=4, zero=1, recompute="full", global_batch=32, seq_len=4096,
                  framework="megatron")
    with pytest.raises(ExportError, match=r"^llamafactory: the Megatron-Bridge backend .* trains "
                                          r"stages pt and sft, "
                                          r"not dpo"):
        render_stack(build_layout(piped, job, builtin_catalog().model("llama3-8b")), "llamafactory")
    flat = _plan(
        "j",
        8,
        1,
        dp=8,
        zero=1,
        recompute="full",
        global_batch=32,
        seq_len=4096,
        framework="megatron",
    )
    files, _ = render_stack(
        build_layout(flat, job, builtin_catalog().model("llama3-8b")), "llamafactory"
    )
    assert yaml.safe_load(files["train.yaml"])["stage"] == "dpo"
