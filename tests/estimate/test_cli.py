"""`plan estimate` through a local typer app: output, exit codes, one-line errors."""

from __future__ import annotations

import json
import re

import pytest
import typer
from typer.testing import CliRunner

from plan.planner.cli.estimate_cmd import estimate_command

app = typer.Typer()
app.command()(estimate_command)
runner = CliRunner()


def run(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_json_has_the_documented_keys() -> None:
    code, out, _ = run("--model", "qwen2.5-72b", "--method", "continued_pretrain", "--gpu", "h800",
                       "--gpus", "64", "--tokens", "10B", "--format", "json")
    assert code == 0
    data = json.loads(out)
    for key in ("model", "method", "gpu", "gpus", "layout", "memory_gib", "gpu_memory_gib", "fits",
                "flops_per_token", "step_time_s", "tokens_per_s", "tokens_per_s_per_gpu",
                "model_tflops_per_gpu", "mfu", "hours", "gpu_hours"):
        assert key in data, key
    assert set(data["layout"]) >= {
        "tp",
        "pp",
        "dp",
        "zero",
        "recompute",
        "micro_batch",
        "global_batch",
        "seq_len",
        "precision",
    }
    assert set(data["memory_gib"]) == {
        "weights",
        "gradients",
        "optimizer",
        "activations",
        "other",
        "total",
    }
    assert data["fits"] is True and data["gpu_hours"] == pytest.approx(data["hours"] * 64)
    # the stack it assumed and how sure it is
    assert (
        data["framework"] in ("megatron", "deepspeed", "fsdp")
        and data["layout"]["framework"] == data["framework"]
    )
    for key, point in (
        ("tokens_per_s_range", data["tokens_per_s"]),
        ("memory_gib_range", data["memory_gib"]["total"]),
        ("hours_range", data["hours"]),
    ):
        low, high = data[key]
        assert low < point < high, key
    assert data["gpu_hours_range"] == pytest.approx([x * 64 for x in data["hours_range"]], rel=1e-3)
    # Hopper, a dense model, 16-bit weights: all measured by published rows
    assert data["band_widened_by"] == []


def test_json_names_what_widened_the_band() -> None:
    code, out, _ = run(
        "--model",
        "qwen2.5-7b",
        "--method",
        "qlora",
        "--gpu",
        "ascend-910b",
        "--gpus",
        "1",
        "--seq-len",
        "2048",
        "--format",
        "json",
    )
    assert code == 0
    data = json.loads(out)
    assert data["band_widened_by"] == ["davinci GPUs' compute efficiency", "QLoRA dequantization"]
    low, high = data["tokens_per_s_range"]
    assert high / low > 1.5  # two assumed +-20% spreads on top of the calibrated band


def test_table_answers_the_qlora_question() -> None:
    code, out, _ = run(
        "--model",
        "qwen2.5-14b",
        "--method",
        "qlora",
        "--gpu",
        "rtx4090",
        "--gpus",
        "1",
        "--seq-len",
        "2048",
    )
    assert code == 0
    assert "memory per GPU" in out and "step time" in out and "MFU" in out and "searched" in out


def test_layout_that_does_not_fit_is_still_estimated() -> None:
    code, out, _ = run(
        "--model",
        "llama3.1-70b",
        "--method",
        "full_finetune",
        "--gpu",
        "rtx4090",
        "--gpus",
        "1",
        "--format",
        "json",
    )
    assert code == 0
    data = json.loads(out)
    assert data["fits"] is False and data["memory_gib"]["total"] > 24
    assert any("nothing fits" in note for note in data["notes"])



LLAMA3_405B_LAYOUT = (
    "--model",
    "llama3.1-405b",
    "--method",
    "pretrain",
    "--gpu",
    "h100-sxm",
    "--gpus",
    "16384",
    "--tp",
    "8",
    "--pp",
    "16",
    "--cp",
    "1",
    "--seq-len",
    "8192",
    "--global-batch",
    "2048",
)
"""Llama 3 405B's published layout (TP 8 x PP 16 at 8k on 80 GB, no context parallelism),
recomputation open."""
LLAMA3_405B_AS_PUBLISHED = (*LLAMA3_405B_LAYOUT, "--recompute", "none")
"""The same, without activation checkpointing, as the Llama 3 paper trained it (section 3.3.2)."""


def test_a_fixed_recomputation_that_fits_nowhere_names_the_one_that_fits() -> None:
    """Llama 3 405B's published layout (TP 8 x PP 16 at 8k on 80 GB, no context parallelism) without
    recomputation is over the card under Megatron's accounting; the estimate says so and which
    searched recomputation fits, and that layout does fit when asked for."""
    base = (*LLAMA3_405B_LAYOUT, "--format", "json")
    code, out, _ = run(*base, "--recompute", "none")
    assert code == 0
    data = json.loads(out)
    assert data["fits"] is False
    (hint,) = [n for n in data["notes"] if n.startswith("with recomputation searched (without "
                                                        "--recompute none)")]
    assert "recompute=full" in hint
    code, out, _ = run(*base)
    searched = json.loads(out)
    assert searched["fits"] is True and searched["layout"]["recompute"] == "full"
    assert f"at {searched['memory_gib']['total']:.1f} GiB" in hint


def test_a_layout_over_the_card_on_whole_gradient_buffers_names_the_sharding_that_fits() -> None:
    """The same published layout kept without recomputation: Megatron's distributed optimizer keeps
    whole fp32 gradient buffers; Megatron-FSDP's sharding (never searched) is named where it fits,
    and the layout it names fits when asked for by those flags."""
    base = (*LLAMA3_405B_AS_PUBLISHED, "--format", "json")
    data = json.loads(run(*base)[1])
    assert data["fits"] is False and data["layout"]["zero"] == 1
    (hint,) = [n for n in data["notes"] if n.startswith("with --framework megatron --zero")]
    zero = int(hint.split("--zero ")[1].split()[0])
    code, out, _ = run(*base, "--framework", "megatron", "--zero", str(zero))
    sharded = json.loads(out)
    assert code == 0 and sharded["fits"] is True and sharded["layout"]["recompute"] == "none"
    assert f"at {sharded['memory_gib']['total']:.1f} GiB" in hint
    assert sharded["memory_gib"]["gradients"] < data["memory_gib"]["gradients"] / 10
    # a job that fixes its stack to one that cannot shard so is not told
    fsdp = json.loads(run(*base, "--framework", "fsdp")[1])
    assert not any(n.startswith("with --framework megatron") for n in fsdp["notes"])

def test_a_layout_within_the_card_but_inside_the_headroom_is_told_apart_from_one_over_the_card():
    """Llama 3 405B's layout with its gradients sharded (ZeRO-2) peaks within the 80 GiB card but
    inside the 8% the planner keeps free: not "does NOT fit", which is kept for a layout over the
    card itself."""
    sharded = (*LLAMA3_405B_AS_PUBLISHED, "--framework", "megatron", "--zero", "2")
    data = json.loads(run(*sharded, "--format", "json")[1])
    total = data["memory_gib"]["total"]
    assert data["usable_memory_gib"] < total <= data["gpu_memory_gib"]
    assert data["fits"] is False and data["fits_card"] is True
    assert "it fits the card itself" in data["notes"][0]
    assert "fits the card, not its 8% headroom" in " ".join(run(*sharded)[1].split())
    whole = json.loads(run(*sharded, "--headroom", "0", "--format", "json")[1])
    assert whole["fits"] is True and whole["memory_gib"]["total"] == total
    # ZeRO-1: whole fp32 gradients
    over = json.loads(run(*LLAMA3_405B_AS_PUBLISHED, "--format", "json")[1])
    assert over["memory_gib"]["total"] > over["gpu_memory_gib"] and over["fits_card"] is False
    assert "does NOT fit the card" in " ".join(run(*LLAMA3_405B_AS_PUBLISHED)[1].split())


def test_a_layout_over_the_card_as_reserved_with_room_but_running_at_its_limit_says_so() -> None:
    """Interleaved as Meta ran it, the ZeRO-2 layout's reserved peak is over the card; squeezing the
    caching allocator it runs there (JSON memory_floor_gib), which the verdict and a note say, and
    no plan uses."""
    data = json.loads(
        run(
            *LLAMA3_405B_AS_PUBLISHED,
            "--vpp",
            "8",
            "--framework",
            "megatron",
            "--zero",
            "2",
            "--format",
            "json",
        )[1]
    )
    assert data["memory_gib"]["total"] > data["gpu_memory_gib"] >= data["memory_floor_gib"]
    assert data["fits_card"] is True and data["fits"] is False
    (note,) = [n for n in data["notes"] if n.startswith("at the card's limit")]
    assert f"needs about {data['memory_floor_gib']:.1f} GiB" in note
    table = run(*LLAMA3_405B_AS_PUBLISHED, "--vpp", "8", "--framework", "megatron", "--zero", "2")[
        1
    ]
    # (however the console wraps it)
    assert "runs only at the card's limit" in " ".join(table.split())


def test_a_sharding_that_fits_only_the_card_is_named_as_such() -> None:
    """Interleaved over 8 virtual stages the same layout holds every micro-batch at once: no
    Megatron-FSDP sharding fits within the headroom, and the one that fits the card is named with
    what it leaves out."""
    data = json.loads(run(*LLAMA3_405B_AS_PUBLISHED, "--vpp", "8", "--format", "json")[1])
    (hint,) = [n for n in data["notes"] if n.startswith("with --framework megatron --zero")]
    assert "it fits the card, not its headroom" in hint
    zero = int(hint.split("--zero ")[1].split()[0])
    named = json.loads(
        run(
            *LLAMA3_405B_AS_PUBLISHED,
            "--vpp",
            "8",
            "--framework",
            "megatron",
            "--zero",
            str(zero),
            "--format",
            "json",
        )[1]
    )
    assert named["fits"] is False and named["fits_card"] is True
    assert f"at {named['memory_gib']['total']:.1f} GiB" in hint


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--gpu", "h900"], "error: --gpu: unknown GPU 'h900'; did you mean"),
        (["--model", "llama9-8b"], "error: --model: unknown model"),
        (["--gpu", "a100-80gb", "--precision", "fp8"], "error: --precision:"),
        (["--tokens", "10Q"], "error: --tokens:"),
        (["--seq-len", "4M"], "error: --seq-len: unknown suffix"),
        (
            ["--method", "qlora", "--precision", "fp8"],
            "error: precision fp8 with qlora: bitsandbytes dequantizes",
        ),
        (["--seq-len", "0"], "error: --seq-len: must be at least 1"),
        (["--tp", "3"], "error: --tp:"),
        (["--method", "ppo"], "error: --method:"),
        (["--lora-rank", "8"], "error: --lora-rank:"),
        (["--platform", "nowhere"], "error: --platform: unknown platform"),
        (["--model", "missing-card.yaml"], "error: --model: no such model-card file"),
        (["--cp", "3"], "error: --cp:"),
        (["--vpp", "0"], "error: --vpp:"),
        (["--framework", "megatorn"], "error: --framework:"),
        (["--optimizer", "lion"], "error: --optimizer:"),
        (
            ["--optimizer", "adamw-precision-aware", "--framework", "fsdp"],
            "error: --optimizer: the precision-aware optimizer is Megatron's",
        ),
        (
            ["--optimizer", "adamw-precision-aware", "--method", "qlora"],
            "error: --optimizer: the precision-aware",
        ),
        (
            ["--optimizer", "paged-adamw-8bit", "--framework", "megatron"],
            "error: --optimizer: paged-adamw-8bit is a PyTorch optimizer (bitsandbytes, Adafactor, "
            "pure BF16 AdamW) that Megatron-LM",
        ),
        (["--attention", "sparse"], "error: --attention:"),
        (["--kernels", "fast"], "error: --kernels:"),
        (["--sequence-parallel", "yes"], "error: --sequence-parallel:"),
        (
            ["--framework", "fsdp", "--zero", "1"],
            "error: --zero: fsdp runs ZeRO stage 0 or 2 or 3, not 1",
        ),
        (
            ["--framework", "deepspeed", "--pp", "2", "--zero", "3"],
            "error: --zero: deepspeed runs ZeRO stage 0 or 1 under pipeline parallelism (pp=2",
        ),
        (  # LoRA on Megatron runs through Megatron-Bridge: ZeRO 0-1 only (issue 50 item 4)
            ["--method", "lora", "--lora-rank", "16", "--framework", "megatron", "--zero", "3"],
            "error: --zero: LoRA on Megatron trains through LLaMA-Factory's Megatron-Bridge "
            "backend, which shards the optimizer state only (ZeRO 0-1)",
        ),
        (
            ["--method", "qlora", "--framework", "megatron"],
            "error: --framework: megatron has no 4-bit QLoRA",
        ),
        (["--ep", "2"], "error: --ep: 2 expert-parallel ranks need an MoE model"),
        (
            ["--model", "qwen2.5-72b", "--gpus", "48", "--tp", "4", "--pp", "12", "--vpp", "2"],
            "error: --vpp: Megatron cannot split 80 layers over pp=12 stages of vpp=2 equal chunks",
        ),
        (["--ep", "0"], "error: --ep: must be at least 1"),
        (
            ["--model", "mixtral-8x7b", "--ep", "3"],
            "error: --ep: 3 does not divide the model's 8 experts",
        ),
        (
            ["--model", "mixtral-8x7b", "--ep", "4", "--tp", "2", "--pp", "2"],
            "error: --ep: 4 does not divide the 2 data-parallel ranks",
        ),
        (
            ["--model", "mixtral-8x7b", "--method", "lora", "--ep", "2"],
            "error: --ep: LoRA and QLoRA keep",
        ),
        (
            ["--capacity-factor", "1.25"],
            "error: --capacity-factor: 1.25 pads routed experts; this model is dense",
        ),
        (
            ["--model", "mixtral-8x7b", "--capacity-factor", "0.8"],
            "error: --capacity-factor: must be a number of at",
        ),
        (
            ["--model", "mixtral-8x7b", "--capacity-factor", "4.5"],
            "error: --capacity-factor: at most 4",
        ),
    ],
)
def test_bad_input_exits_2_with_one_line(args: list[str], expected: str) -> None:
    base = {"--model": "llama3.1-8b", "--method": "pretrain", "--gpu": "h100-sxm", "--gpus": "8"}
    for flag, value in zip(args[::2], args[1::2], strict=True):
        base[flag] = value
    code, out, err = run(*[x for pair in base.items() for x in pair])
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(expected), err
    assert "Traceback" not in err + out


@pytest.mark.parametrize(("left_out", "expected"), [
    ("--model", "error: --model: required: a catalog model id or name (plan catalog models)"),
    ("--method", "error: --method: required: one of pretrain, "),
    ("--gpu", "error: --gpu: required: a catalog GPU id or name (plan catalog gpus)"),
    ("--gpus", "error: --gpus: required: how many GPUs, e.g. --gpus 8"),
])
def test_a_required_flag_left_out_says_what_it_takes(left_out: str, expected: str) -> None:
    base = {"--model": "llama3.1-8b", "--method": "pretrain", "--gpu": "h100-sxm", "--gpus": "8"}
    del base[left_out]
    code, _, err = run(*[x for pair in base.items() for x in pair])
    assert code == 2 and err.strip().splitlines() == [err.strip()] and err.startswith(expected), err


def test_model_card_file(tmp_path: object) -> None:
    from pathlib import Path

    path = Path(str(tmp_path)) / "tiny.yaml"
    path.write_text("id: tiny-1b\nparams: 1.1B\nlayers: 22\nhidden_size: 2048\nffn_hidden_size: "
                    "5632\nnum_heads: 32\nnum_kv_heads: 4\nvocab_size: 32000\nmax_positions: "
                    "2048\nsource: test\n")
    code, out, _ = run(
        "--model",
        str(path),
        "--method",
        "lora",
        "--gpu",
        "rtx4090",
        "--gpus",
        "1",
        "--seq-len",
        "2048",
        "--format",
        "json",
    )
    assert code == 0 and json.loads(out)["model"] == "tiny-1b"


def test_expert_parallel_size_is_taken_as_given_and_reported() -> None:
    code, out, _ = run(
        "--model",
        "mixtral-8x7b",
        "--method",
        "full_finetune",
        "--gpu",
        "a100-80gb",
        "--gpus",
        "16",
        "--ep",
        "4",
        "--format",
        "json",
    )
    data = json.loads(out)
    assert code == 0 and data["layout"]["ep"] == 4
    assert data["time_s"]["ep_comm"] > 0  # the all-to-all of four expert ranks is charged
    code, table, _ = run(
        "--model",
        "mixtral-8x7b",
        "--method",
        "full_finetune",
        "--gpu",
        "a100-80gb",
        "--gpus",
        "16",
        "--ep",
        "4",
    )
    assert code == 0 and any(line.split("│")[1:3] and line.split("│")[1].strip() == "ep"
                             and line.split("│")[2].strip() == "4" for line in table.splitlines())


def test_a_capacity_factor_is_taken_as_given_and_reported() -> None:
    args = (
        "--model",
        "mixtral-8x7b",
        "--method",
        "pretrain",
        "--gpu",
        "h100-sxm",
        "--gpus",
        "16",
        "--ep",
        "4",
        "--tp",
        "1",
        "--pp",
        "1",
        "--zero",
        "1",
        "--recompute",
        "full",
        "--micro-batch",
        "1",
        "--format",
        "json",
    )
    data = {cf: json.loads(run(*args, "--capacity-factor", cf)[1]) for cf in ("1", "1.25")}
    assert (
        "capacity_factor" not in data["1"]["layout"]
        and data["1.25"]["layout"]["capacity_factor"] == 1.25
    )
    assert data["1.25"]["time_s"]["ep_comm"] > data["1"]["time_s"]["ep_comm"]
    assert data["1.25"]["step_time_s"] > data["1"]["step_time_s"]
    assert data["1.25"]["flops_per_token"] == data["1"]["flops_per_token"]
    assert any("capacity factor 1.25" in note for note in data["1.25"]["notes"])


def test_nothing_fits_names_the_leaner_megatron_optimizer_when_it_would_fit() -> None:
    # NeMo's Llama 2 70B fine-tune layout on 16 H100s: plain mixed-precision Adam with Megatron's
    # fp32 gradient buffers needs ~93 GiB; the precision-aware optimizer NeMo runs brings it under
    # the card
    args = [
        "--model",
        "llama2-70b",
        "--method",
        "full_finetune",
        "--gpu",
        "h100-sxm",
        "--gpus",
        "16",
        "--tp",
        "4",
        "--pp",
        "4",
        "--precision",
        "fp8",
        "--global-batch",
        "32",
        "--recompute",
        "selective",
        "--headroom",
        "0",
        "--framework",
        "megatron",
        "--format",
        "json",
    ]
    code, out, _ = run(*args)
    assert code == 0
    data = json.loads(out)
    assert data["fits"] is False
    (hint,) = [n for n in data["notes"] if "adamw-precision-aware" in n]
    fitting_gib = float(re.search(r"at ([\d.]+) GiB", hint).group(1))  # type: ignore[union-attr]
    assert fitting_gib <= 80.0 < data["memory_gib"]["total"]
    code, out, _ = run(*args[:-2], "--optimizer", "adamw-precision-aware", "--format", "json")
    assert code == 0 and json.loads(out)["fits"] is True
    assert json.loads(out)["memory_gib"]["total"] == pytest.approx(fitting_gib, abs=0.05)
    # and no hint where the plain optimizer already fits (32 GPUs: the distributed optimizer shards
    # over dp 2)
    code, out, _ = run(*["32" if a == "16" else a for a in args])
    assert code == 0 and json.loads(out)["fits"] is True
    assert not [n for n in json.loads(out)["notes"] if "adamw-precision-aware" in n]


def test_nothing_fits_names_the_least_change_of_optimizer_that_fits_a_full_fine_tune() -> None:
    # torchtune's 70B full fine-tune on 8 A100s: mixed-precision Adam's 131 GiB of states per GPU
    # fit neither the card nor the host; Megatron's precision-aware optimizer (14 bytes) is not
    # enough, pure BF16 AdamW (8 bytes, torchtune's default) is, so the hint names it rather than
    # the 8-bit one (4 bytes)
    args = [
        "--model",
        "llama3.1-70b",
        "--method",
        "full_finetune",
        "--gpu",
        "a100-80gb",
        "--gpus",
        "8",
        "--seq-len",
        "2048",
        "--cpu-offload",
        "off",
        "--format",
        "json",
    ]
    code, out, _ = run(*args)
    assert code == 0 and json.loads(out)["fits"] is False
    hints = [n for n in json.loads(out)["notes"] if n.startswith("with --optimizer")]
    assert len(hints) == 1 and hints[0].startswith("with --optimizer adamw-bf16"), hints
    code, out, _ = run(*args, "--optimizer", "adamw-bf16")
    assert code == 0 and json.loads(out)["fits"] is True
    code, out, _ = run(*args, "--optimizer", "adamw-precision-aware")
    assert code == 0 and json.loads(out)["fits"] is False


def test_nothing_fits_names_the_qlora_recipes_8bit_optimizer_when_it_would_fit() -> None:
    # Llama 3.1 70B QLoRA on one 48 GB card at 2.3k tokens: AdamW's 12 bytes per adapter parameter
    # put it just over (with CPU offload of the model states off: with it, the 4-bit base waits in
    # host memory and it fits). Fused layers (Unsloth's, Liger's): eager Hugging Face modules
    # prepared by peft hold the embeddings, the output layer and the residual stream in fp32, which
    # no optimizer saves (memory at the edges, issue 49)
    args = [
        "--model",
        "llama3.1-70b",
        "--method",
        "qlora",
        "--gpu",
        "rtx-a6000",
        "--gpus",
        "1",
        "--seq-len",
        "2304",
        "--global-batch",
        "1",
        "--cpu-offload",
        "off",
        "--kernels",
        "fused",
        "--format",
        "json",
    ]
    code, out, _ = run(*args)
    assert code == 0
    data = json.loads(out)
    assert data["fits"] is False
    (offload,) = [n for n in data["notes"] if n.startswith("with --cpu-offload on")]
    assert "zero=3+cpu-offload" in offload
    (hint,) = [n for n in data["notes"] if n.startswith("with --optimizer paged-adamw-8bit")]
    fitting_gib = float(re.search(r"at ([\d.]+) GiB", hint).group(1))  # type: ignore[union-attr]
    code, out, _ = run(*args, "--optimizer", "paged-adamw-8bit")
    assert code == 0 and json.loads(out)["fits"] is True
    assert json.loads(out)["memory_gib"]["total"] == pytest.approx(fitting_gib, abs=0.05)
    assert fitting_gib < data["memory_gib"]["total"]


def test_nothing_fits_names_fused_kernels_when_they_would_fit() -> None:
    # Llama 3.1 8B LoRA at 4 x 4,096 tokens without recomputation on one H200 ran out of memory
    # eagerly (bench/data/measured_h200.csv H200-02); compiled layers keep the fused formula's
    # activations
    args = [
        "--model",
        "llama3.1-8b",
        "--method",
        "lora",
        "--gpu",
        "h200",
        "--gpus",
        "1",
        "--seq-len",
        "4096",
        "--micro-batch",
        "4",
        "--global-batch",
        "4",
        "--recompute",
        "none",
        "--framework",
        "fsdp",
        "--format",
        "json",
    ]
    code, out, _ = run(*args)
    data = json.loads(out)
    assert code == 0 and data["fits"] is False and data["layout"]["kernels"] == "eager"
    (hint,) = [n for n in data["notes"] if "--kernels fused" in n and "it fits" in n]
    fitting_gib = float(re.search(r"at ([\d.]+) GiB", hint).group(1))  # type: ignore[union-attr]
    code, out, _ = run(*args[:-2], "--kernels", "fused", "--format", "json")
    fused = json.loads(out)
    assert code == 0 and fused["fits"] is True and fused["layout"]["kernels"] == "fused"
    assert fused["memory_gib"]["total"] == pytest.approx(fitting_gib, abs=0.05)
    assert not [n for n in fused["notes"] if "--kernels fused (" in n and "it fits" in n]


def test_seq_len_takes_what_a_scenario_takes() -> None:
    # "8k" is 8192 tokens in a scenario (models/units.parse_seq_len), and so on the command line
    base = (
        "--model",
        "llama3.1-8b",
        "--method",
        "lora",
        "--gpu",
        "h100-sxm",
        "--gpus",
        "8",
        "--format",
        "json",
    )
    outs = [run(*base, "--seq-len", value) for value in ("8k", "8192", "8K")]
    assert all(code == 0 for code, _, _ in outs)
    first, *rest = (json.loads(out) for _, out, _ in outs)
    assert first["layout"]["seq_len"] == 8192 and all(other == first for other in rest)


def test_a_fused_loss_is_named_when_it_would_fit_and_chunked_can_be_stated() -> None:
    # Qwen3 8B QLoRA at 8k tokens on one 24 GB card: its 151,669-token vocabulary's logits are what
    # does not fit; Liger's and Unsloth's fused linear cross-entropy never holds them whole
    args = [
        "--model",
        "qwen3-8b",
        "--method",
        "qlora",
        "--gpu",
        "rtx4090",
        "--gpus",
        "1",
        "--seq-len",
        "8192",
        "--cpu-offload",
        "off",
        "--format",
        "json",
    ]
    code, out, _ = run(*args)
    data = json.loads(out)
    assert code == 0 and data["fits"] is False and data["layout"]["loss"] == "plain"
    (hint,) = [n for n in data["notes"] if n.startswith("with --loss fused")]
    fitting_gib = float(re.search(r"at ([\d.]+) GiB", hint).group(1))  # type: ignore[union-attr]
    code, out, _ = run(*args[:-2], "--loss", "fused", "--format", "json")
    fused = json.loads(out)
    assert code == 0 and fused["fits"] is True and fused["layout"]["loss"] == "fused"
    assert fused["memory_gib"]["total"] == pytest.approx(fitting_gib, abs=0.05)
    assert not [n for n in fused["notes"] if n.startswith("with --loss")]
    # torchtune's chunked loss, which keeps the bf16 logits, can be stated too, and holds more than
    # the fused one
    code, out, _ = run(
        *args[:-2],
        "--loss",
        "chunked",
        "--micro-batch",
        str(fused["layout"]["micro_batch"]),
        "--recompute",
        fused["layout"]["recompute"],
        "--format",
        "json",
    )
    chunked = json.loads(out)
    assert code == 0 and chunked["layout"]["loss"] == "chunked"
    assert chunked["memory_gib"]["total"] > fused["memory_gib"]["total"]


@pytest.mark.parametrize(("extra", "message"), [
    (["--loss", "fused-linear"], "error: --loss:"),
    (["--loss", "chunked", "--framework", "megatron"], "error: --loss: chunked is a PyTorch "
                                                       "stack's loss"),
    (["--loss", "fused", "--framework", "megatron"], "error: --loss: fused is a PyTorch stack's "
                                                     "loss"),
])
def test_loss_bad_values_exit_2(extra: list[str], message: str) -> None:
    code, _, err = run(
        "--model", "qwen3-8b", "--method", "lora", "--gpu", "h100-sxm", "--gpus", "8", *extra
    )
    assert code == 2 and message in err, err


def test_loss_and_kernels_together_are_named_where_neither_alone_fits() -> None:
    # Llama 3.1 8B LoRA at 24k tokens on one 24 GB card: fused layers alone save nothing under
    # recomputation and the fused loss alone leaves it over the card, its checkpoints offloaded too;
    # Liger and Unsloth run both
    args = [
        "--model",
        "llama3.1-8b",
        "--method",
        "lora",
        "--gpu",
        "rtx4090",
        "--gpus",
        "1",
        "--seq-len",
        "24576",
        "--cpu-offload",
        "off",
        "--format",
        "json",
    ]
    code, out, _ = run(*args)
    data = json.loads(out)
    assert code == 0 and data["fits"] is False
    hints = [n for n in data["notes"] if n.startswith("with --") and "it fits" in n]
    (hint,) = hints
    assert hint.startswith("with --loss fused --kernels fused")
    for alone in (["--loss", "fused"], ["--kernels", "fused"]):
        code, out, _ = run(*args[:-2], *alone, "--format", "json")
        assert code == 0 and json.loads(out)["fits"] is False
    code, out, _ = run(*args[:-2], "--loss", "fused", "--kernels", "fused", "--format", "json")
    both = json.loads(out)
    fitting_gib = float(re.search(r"at ([\d.]+) GiB", hint).group(1))  # type: ignore[union-attr]
    assert code == 0 and both["fits"] is True
    assert both["memory_gib"]["total"] == pytest.approx(fitting_gib, abs=0.05)


def test_loss_chunked_keeps_a_searched_stack_to_pytorch() -> None:
    # Llama 3.1 70B pre-training on 64 H100s searches to Megatron; a chunked loss (torchtune,
    # flash-attn) says the job runs a PyTorch stack, so the search stays on FSDP and the layout
    # holds the chunked loss
    args = (
        "--model",
        "llama3.1-70b",
        "--method",
        "pretrain",
        "--gpu",
        "h100-sxm",
        "--gpus",
        "64",
        "--format",
        "json",
    )
    code, out, _ = run(*args)
    assert code == 0 and json.loads(out)["layout"]["framework"] == "megatron"
    code, out, _ = run(*args, "--loss", "chunked")
    data = json.loads(out)
    assert (
        code == 0 and data["layout"]["framework"] == "fsdp" and data["layout"]["loss"] == "chunked"
    )


def test_a_clearly_faster_offloaded_layout_left_out_by_the_search_is_named_with_its_assumptions():
    # Llama 3.1 70B full fine-tune on 64 RTX 4090s: the search offloads only where nothing fits
    # without it, and Megatron's tp 8 x pp 8 over PCIe fits; ZeRO-3 with the states in host memory,
    # whose speed rests on an assumed host bandwidth, is estimated far faster. The user is told,
    # with the figures it rests on, and stating --cpu-offload on gives that layout
    args = [
        "--model",
        "llama3.1-70b",
        "--method",
        "full_finetune",
        "--gpu",
        "rtx-4090",
        "--gpus",
        "64",
        "--seq-len",
        "2048",
        "--format",
        "json",
    ]
    code, out, _ = run(*args)
    assert code == 0
    data = json.loads(out)
    assert data["fits"] and not data["layout"].get("state_offload")
    (hint,) = [n for n in data["notes"] if n.startswith("--cpu-offload on")]
    assert "no measurement" in hint and "GB/s of host memory traffic" in hint
    faster = float(re.search(r"([\d,]+) tokens/s", hint).group(1).replace(",", ""))  # type: ignore[union-attr]
    assert faster >= data["tokens_per_s"] * 1.1
    code, out, _ = run(*args, "--cpu-offload", "on")
    assert code == 0 and json.loads(out)["tokens_per_s"] == pytest.approx(faster, rel=1e-3)
    # where offloading would not help, nothing is said
    code, out, _ = run(
        "--model",
        "llama3.1-8b",
        "--method",
        "pretrain",
        "--gpu",
        "h100-sxm",
        "--gpus",
        "8",
        "--format",
        "json",
    )
    assert code == 0 and not [
        n for n in json.loads(out)["notes"] if n.startswith("--cpu-offload on")
    ]


def test_where_the_search_offloaded_the_settings_that_fit_without_it_are_named_with_their_speed():
    # Qwen3 32B QLoRA on two 24 GB cards at 4k tokens: with the plain loss's fp32 logits nothing
    # fits, so the search, as its last resort, puts the states in host memory; a fused loss fits
    # without that, and the user is told so with both speeds, before relying on an assumed host
    args = [
        "--model",
        "qwen3-32b",
        "--method",
        "qlora",
        "--gpu",
        "rtx4090",
        "--gpus",
        "2",
        "--format",
        "json",
    ]
    code, out, _ = run(*args)
    assert code == 0
    data = json.loads(out)
    assert data["fits"] and (data["layout"].get("state_offload") or data["layout"]["recompute"] in (
        "offload", "full_offload"))
    (hint,) = [n for n in data["notes"] if n.startswith("without offloading, --loss fused")]
    speed = float(re.search(r"GiB, ([\d,]+) tokens/s", hint).group(1).replace(",", ""))  # type: ignore[union-attr]
    assert f"against the offloaded layout's {data['tokens_per_s']:,.0f}" in hint
    # the hint is what stating it gives: a layout that fits with nothing in host memory
    code, out, _ = run(*args, "--loss", "fused", "--cpu-offload", "off")
    fused = json.loads(out)
    assert code == 0 and fused["fits"] and not fused["layout"].get("state_offload")
    assert fused["layout"]["recompute"] not in ("offload", "full_offload")
    assert fused["tokens_per_s"] == pytest.approx(speed, rel=1e-3)
    # nothing is said where nothing was offloaded
    code, out, _ = run(
        "--model",
        "qwen2.5-7b",
        "--method",
        "qlora",
        "--gpu",
        "rtx4090",
        "--gpus",
        "1",
        "--format",
        "json",
    )
    assert code == 0 and not [n for n in json.loads(out)["notes"] if n.startswith("without "
                                                                                  "offloading")]


def test_cpu_offload_on_says_when_the_host_cannot_hold_the_states() -> None:
    # Qwen2.5 72B full fine-tune on eight A800s: ZeRO-3's 16 bytes a parameter over 8 GPUs are ~135
    # GiB per GPU, more than the 128 GiB of host memory assumed free per GPU; FSDP offloads all or
    # none, so nothing offloaded fits, and the user is told that, not that the layout cannot offload
    from plan.models.catalog import builtin_catalog
    from plan.planner.estimate.flops import shape_of

    args = [
        "--model",
        "qwen2.5-72b",
        "--method",
        "full_finetune",
        "--gpu",
        "a800-80gb",
        "--gpus",
        "8",
        "--seq-len",
        "4096",
        "--cpu-offload",
        "on",
        "--format",
        "json",
    ]
    code, out, _ = run(*args)
    assert code == 0
    data = json.loads(out)
    (said,) = [n for n in data["notes"] if n.startswith("--cpu-offload on:")]
    states_gib = float(
        re.search(r"the ([\d.]+) GiB of model states per GPU exceed the 128 GiB", said).group(1)
    )  # type: ignore[union-attr]
    params = shape_of(builtin_catalog().model("qwen2.5-72b")).total_params
    assert states_gib == pytest.approx(params * 16 / 8 / 2**30, rel=0.01)
    assert "host_memory_gib_per_gpu" in said
    # where the user fixed a layout that cannot offload, that is what is said
    code, out, _ = run(*args, "--tp", "8")
    (said,) = [n for n in json.loads(out)["notes"] if n.startswith("--cpu-offload on:")]
    assert "cannot offload (it needs ZeRO-3" in said


def test_a_stated_eager_kernels_answered_with_megatron_says_so() -> None:
    # --kernels says how a PyTorch stack runs its layers; where the search picks Megatron (always
    # fused) for a stated --kernels eager, the answer says the flag did not apply and how to keep to
    # an eager stack
    args = (
        "--model",
        "llama3.1-8b",
        "--method",
        "lora",
        "--gpu",
        "rtx-4090",
        "--gpus",
        "8",
        "--zero",
        "0",
        "--format",
        "json",
    )
    code, out, _ = run(*args, "--kernels", "eager")
    data = json.loads(out)
    assert (
        code == 0
        and data["layout"]["framework"] == "megatron"
        and data["layout"]["kernels"] == "fused"
    )
    assert any(n.startswith("--kernels eager says how a PyTorch stack") for n in data["notes"])
    code, out, _ = run(*args)
    assert code == 0 and not any("--kernels eager" in n for n in json.loads(out)["notes"])
    code, out, _ = run(*args, "--kernels", "eager", "--framework", "fsdp")
    data = json.loads(out)
    assert code == 0 and data["layout"]["kernels"] == "eager"
    assert not any("--kernels eager" in n for n in data["notes"])
