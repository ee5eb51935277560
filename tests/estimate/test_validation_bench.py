"""bench/validate_estimates.py on rows it has not seen: a row it cannot state is reported, never the
end of the run, and what a row leaves implicit (context parallelism, the batch and sharding of a
multi-GPU memory row, torchtune's optimizer) is derived from what it gives."""

from __future__ import annotations

import csv
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.bench_modules import load_bench

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "bench" / "data"


def _bench(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("PLAN_CACHE_DIR", "off")
    return load_bench("validate_estimates", monkeypatch)


def _write(path: Path, template: Path, rows: list[dict[str, str]]) -> None:
    with template.open(newline="") as f:
        columns = next(csv.reader(f))
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        for row in rows:
            writer.writerow({column: row.get(column, "") for column in columns})


# Probe rows: their values are placeholders for the bench's handling, not published figures.
LLAMA405 = dict(
    model="llama3.1-405b",
    params_b="405",
    layers="126",
    hidden="16384",
    heads="128",
    vocab="128256",
    gpu="h100-sxm",
    precision="bf16",
    metric="model_tflops_per_gpu",
    value="400",
    unit="TFLOP/s",
    source="probe",
)
THROUGHPUT_PROBES = [
    # tp x pp x dp leave 16 of the 16,384 GPUs per replica to context parallelism
    {
        **LLAMA405,
        "id": "PROBE-CP",
        "seq_len": "131072",
        "num_gpus": "16384",
        "tp": "8",
        "pp": "16",
        "dp": "8",
        "global_batch_tokens": "16777216",
    },
    # a layout the estimator judges not to fit (TP 8 x PP 16, 8k tokens, no recomputation)
    {
        **LLAMA405,
        "id": "PROBE-OOM",
        "seq_len": "8192",
        "num_gpus": "8192",
        "tp": "8",
        "pp": "16",
        "dp": "64",
        "zero": "1",
        "recompute": "none",
        "global_batch_tokens": "16777216",
    },
    {**LLAMA405, "id": "PROBE-GPU", "seq_len": "8192", "num_gpus": "8", "gpu": "v100-32gb"},
    {
        **LLAMA405,
        "id": "PROBE-MODEL",
        "model": "Mystery-7B",
        "layers": "",
        "seq_len": "4096",
        "num_gpus": "8",
    },
    {
        **LLAMA405,
        "id": "PROBE-METRIC",
        "model": "llama3.1-8b",
        "seq_len": "8192",
        "num_gpus": "8",
        "metric": "watts",
    },
    {
        **LLAMA405,
        "id": "PROBE-SPLIT",
        "seq_len": "8192",
        "num_gpus": "1000",
        "tp": "8",
        "pp": "16",
        "dp": "8",
    },
    {**LLAMA405, "id": "PROBE-CELL", "seq_len": "", "num_gpus": "8"},
    # whole runs stated as GPU-hours, the tokens in the notes
    {
        **LLAMA405,
        "id": "PROBE-RUN",
        "model": "llama3.1-70b",
        "seq_len": "8192",
        "num_gpus": "2048",
        "metric": "gpu_hours",
        "value": "7000000",
        "unit": "GPU-h",
        "notes": "15T tokens",
    },
    {
        **LLAMA405,
        "id": "PROBE-RUN-TOKENS",
        "model": "llama3.1-70b",
        "seq_len": "8192",
        "num_gpus": "2048",
        "metric": "gpu_hours",
        "value": "7000000",
        "unit": "GPU-h",
    },
]
MEMORY_PROBES = [
    # an FSDP memory row on 64 GPUs: one micro-batch per data-parallel rank
    dict(
        id="PROBEM-DP",
        source="probe",
        model="llama3.1-8b",
        params_b="8",
        method="full",
        precision="bf16",
        optimizer="AdamW",
        micro_batch="2",
        seq_len="8192",
        gpu="h100-sxm",
        num_gpus="64",
        tp="1",
        pp="1",
        zero="3",
        recompute="full",
        peak_memory="40",
        unit="GiB",
    ),
    dict(
        id="PROBEM-METHOD",
        source="probe",
        model="llama3.1-8b",
        params_b="8",
        method="distillation",
        precision="bf16",
        micro_batch="1",
        seq_len="2048",
        gpu="h100-sxm",
        num_gpus="1",
        peak_memory="40",
        unit="GiB",
    ),
    # a torchtune row (by its source) on 8 GPUs that leaves the sharding blank and says CPU offload
    # in its notes
    dict(
        id="TUNE-PROBE",
        source="pytorch/torchtune README (probe)",
        model="Llama3.1-70B",
        params_b="70",
        method="full",
        precision="bf16",
        optimizer="not stated",
        micro_batch="2",
        seq_len="2048",
        gpu="a100-80gb",
        num_gpus="8",
        tp="1",
        pp="1",
        recompute="full",
        peak_memory="14",
        unit="GiB",
        notes="uses CPU offload with fused optimizer",
    ),
    # a full fine-tune on one GPU with the optimizer named in the cell, bitsandbytes' paged 8-bit
    # AdamW
    dict(
        id="PROBEM-8BIT",
        source="probe",
        model="llama3.1-8b",
        params_b="8",
        method="full",
        precision="bf16",
        optimizer="paged AdamW 8-bit (bitsandbytes)",
        micro_batch="1",
        seq_len="2048",
        gpu="h100-sxm",
        num_gpus="1",
        recompute="full",
        peak_memory="40",
        unit="GiB",
    ),
    # a QLoRA row of no known family that names FSDP and its rank in the notes, the sharding left
    # blank
    dict(
        id="PROBEM-FSDP",
        source="probe blog post",
        model="llama3.1-70b",
        params_b="70",
        method="qlora",
        precision="nf4 + bf16",
        optimizer="AdamW",
        micro_batch="1",
        seq_len="2048",
        gpu="rtx4090",
        num_gpus="2",
        recompute="full",
        peak_memory="22",
        unit="GiB",
        notes="FSDP + QLoRA, lora_r: 8, CPU offload",
    ),
    # a row of a stack that names Unsloth: its fused linear cross-entropy and fused layers
    dict(
        id="UNSLOTH-PROBE",
        source="probe",
        model="llama3.1-8b",
        params_b="8",
        method="qlora",
        precision="nf4 + bf16",
        micro_batch="1",
        seq_len="16384",
        gpu="h100-sxm",
        num_gpus="1",
        recompute="full",
        peak_memory="20",
        unit="GiB",
        notes="Unsloth, gradient checkpointing",
    ),
]


@pytest.fixture
def probe_dir(tmp_path: Path) -> Path:
    for name in ("throughput_public.csv", "memory_public.csv", "whole_runs.csv"):
        shutil.copy(DATA / name, tmp_path / name)
    _write(tmp_path / "throughput_probe.csv", DATA / "throughput_public.csv", THROUGHPUT_PROBES)
    _write(tmp_path / "memory_probe.csv", DATA / "memory_public.csv", MEMORY_PROBES)
    _write(
        tmp_path / "whole_runs_probe.csv",
        DATA / "whole_runs.csv",
        [
            dict(
                id="PROBE-RUN",
                source="probe",
                model="mystery-176b",
                gpu="a100-80gb",
                num_gpus="384",
                seq_len="2048",
                tokens="3.66e11",
                gpu_hours="1000000",
            )
        ],
    )
    return tmp_path


def test_rows_the_bench_cannot_state_are_reported_and_the_rest_still_run(
    monkeypatch: pytest.MonkeyPatch, probe_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = _bench(monkeypatch)
    assert bench.main(["--validation-dir", str(probe_dir)]) == 0
    out = capsys.readouterr().out
    rows = {r.id: r for r in bench.public_rows(probe_dir)}
    public = [r for r in rows.values() if not r.id.startswith("PROBE")]
    # the published rows all still run
    assert public and all(r.predicted is not None for r in public)
    why = {rid: rows[rid].problem for rid in rows if rid.startswith("PROBE") and rows[rid].problem}
    assert "unknown GPU 'v100-32gb'" in why["PROBE-GPU"]
    assert "unknown model 'Mystery-7B'" in why["PROBE-MODEL"] and "shape" in why["PROBE-MODEL"]
    assert "metric 'watts'" in why["PROBE-METRIC"]
    assert "does not divide the row's 1000 GPUs" in why["PROBE-SPLIT"]
    assert "seq_len is blank" in why["PROBE-CELL"]
    assert "method 'distillation'" in why["PROBEM-METHOD"]
    assert "needs its tokens in the notes" in why["PROBE-RUN-TOKENS"]
    assert not any(w.startswith("bug:") for w in why.values())
    assert "PROBE-RUN   not estimated: unknown model 'mystery-176b'" in out
    assert f"rows not estimated: {len(why)}" in out
    for rid in why:  # reported, and left out of the statistics
        assert rows[rid].error is None


def test_what_a_row_leaves_implicit_is_derived_from_what_it_gives(monkeypatch: pytest.MonkeyPatch,
                                                                 probe_dir: Path) -> None:
    bench = _bench(monkeypatch)
    rows = {r.id: r for r in bench.public_rows(probe_dir)}
    cp_row = rows["PROBE-CP"].estimate.layout
    # the GPUs tp x pp x dp leave over
    assert (cp_row.tp, cp_row.pp, cp_row.cp, cp_row.dp) == (8, 16, 16, 8)
    dp_row = rows["PROBEM-DP"].estimate.layout
    assert (dp_row.dp, dp_row.micro_batch, dp_row.global_batch) == (64, 2, 128)
    # a speed is estimated on the fastest layout the row states, as if memory were no limit
    # (interleaved, as the search picks it), and the row is still reported as judged not to fit
    oom = rows["PROBE-OOM"].estimate
    assert not oom.fits and oom.layout.recompute == "none" and oom.layout.virtual_pipeline > 1
    # a torchtune row by its source: FSDP's full shard, torchtune's pure BF16 AdamW, offloaded
    tune = rows["TUNE-PROBE"].estimate.layout
    assert (tune.zero, tune.state_offload, tune.optimizer, tune.framework) == (
        3,
        True,
        "adam_bf16",
        "fsdp",
    )
    # the stack the notes name: its loss and kernels
    unsloth = rows["UNSLOTH-PROBE"].estimate.layout
    assert (unsloth.loss, unsloth.kernels, unsloth.framework) == ("fused", "fused", "fsdp")
    # a row of no named stack: the plain loss, eager layers
    dp_loss = rows["PROBEM-DP"].estimate.layout
    assert (dp_loss.loss, dp_loss.kernels) == ("plain", "eager")
    # as the cell names it
    assert rows["PROBEM-8BIT"].estimate.layout.optimizer == "paged_adam_8bit"
    assert [
        bench._memory_row_optimizer(cell, "other", False)
        for cell in ("AdamW", "Adafactor", "adamw_8bit", "SGD")
    ] == ["adam", "adafactor", "adam_8bit", "sgd"]
    fsdp = rows["PROBEM-FSDP"].estimate.layout  # the stack, sharding and rank the notes name
    assert (fsdp.framework, fsdp.zero, fsdp.lora_rank, fsdp.state_offload) == ("fsdp", 3, 8, True)
    notes = (
        "ZeRO-2 offload",
        "ZeRO stage 3",
        "FULL_SHARD",
        "SHARD_GRAD_OP",
        "no sharding",
        "HYBRID_SHARD",
        "HYBRID_SHARD_ZERO2",
    )
    assert [bench.stated_zero({"zero": "", "notes": note}) for note in notes] == [
        2,
        3,
        3,
        2,
        None,
        3,
        2,
    ]
    # hybrid sharding where the notes name it over several nodes; the full shard otherwise (every
    # stack's default)
    assert [
        bench.stated_hybrid_shard({"notes": note}, gpus, 8)
        for note, gpus in (
            ("FSDP HYBRID_SHARD", 32),
            ("HSDP over 4 nodes", 32),
            ("hybrid shard", 8),
            ("FULL_SHARD", 32),
        )
    ] == [True, True, False, False]
    assert bench.stated_zero({"zero": "1", "notes": "ZeRO-3"}) == 1  # the cell first
    assert bench.framework_of({"source": "Megatron-DeepSpeed (probe)"}, "other") == "deepspeed"
    # the family first
    assert bench.framework_of({"source": "Megatron-LM (probe)"}, "torchtune") == "fsdp"
    assert [
        bench.stated_lora_rank(n)
        for n in ("rank 16 on q, k and v", "r=64", "max over PP ranks", "tp 8")
    ] == [16, 64, None, None]
    # GPU-hours of the run the notes give, whole-run overhead and failures included
    run = rows["PROBE-RUN"]
    assert run.predicted == pytest.approx(run.estimate.run(15e12).gpu_hours)


def test_an_estimator_failure_is_a_reported_bug_and_the_bench_exits_1(
    monkeypatch: pytest.MonkeyPatch, probe_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = _bench(monkeypatch)
    search = bench.search_layout

    def failing(card: Any, method: str, cluster: Any, spec: Any) -> Any:
        if spec.cp == 16:  # PROBE-CP alone
            raise ZeroDivisionError("probe")
        return search(card, method, cluster, spec)

    monkeypatch.setattr(bench, "search_layout", failing)
    assert bench.main(["--validation-dir", str(probe_dir)]) == 1
    captured = capsys.readouterr()
    assert "not estimated: bug: ZeroDivisionError: probe" in captured.out
    assert "the estimator raised on 1 rows: PROBE-CP" in captured.err
    assert "band coverage" in captured.out  # the other rows were all reported


def test_a_row_dated_before_fused_attention_ran_the_attention_of_its_day(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Stacks described before 2023 stored the s x s attention scores (FlashAttention reached
    PyTorch and Megatron-LM in 2023) unless the row names a fused kernel; before 2022 they had no
    sequence parallelism."""
    bench = _bench(monkeypatch)
    year_2022 = {"source": "Smith et al. 2022, Megatron-Turing NLG (probe)", "notes": ""}
    named = {"source": "probe 2022 run", "notes": "FlashAttention kernels"}
    undated = {"source": "mosaicml/llm-foundry benchmarking README (probe)", "notes": ""}
    assert bench.source_year(year_2022) == 2022
    assert not bench.fused_attention(year_2022)
    assert bench.fused_attention(named) and bench.fused_attention(undated)
    assert bench.fused_attention({"source": "Touvron et al. 2023 (probe)"})
    assert bench.before(
        {"source": "Narayanan et al. 2021 (April 2021)"}, bench.SEQUENCE_PARALLEL_YEAR
    )
    assert not bench.before(year_2022, bench.SEQUENCE_PARALLEL_YEAR) and not bench.before(
        undated, 2100
    )


def test_the_estimate_of_a_2022_row_keeps_its_attention_scores(monkeypatch: pytest.MonkeyPatch,
                                                               tmp_path: Path) -> None:
    bench = _bench(monkeypatch)
    row = {
        **LLAMA405,
        "model": "llama3.1-8b",
        "seq_len": "2048",
        "num_gpus": "8",
        "tp": "8",
        "pp": "1",
        "dp": "1",
        "metric": "mfu",
        "value": "50",
        "unit": "%",
    }
    _write(tmp_path / "throughput_public.csv", DATA / "throughput_public.csv", [
        {**row, "id": "OLD", "source": "Korthikanti et al. 2022 (probe)", "recompute": "selective"},
        {**row, "id": "NEW", "source": "probe, 2024", "recompute": "selective"},
        {**row, "id": "OLDEST", "source": "Narayanan et al. 2021 (probe)", "recompute": "full"}])
    rows = {r.id: r for r in bench.public_rows(tmp_path)}
    old, new, oldest = (rows[i].estimate.layout for i in ("OLD", "NEW", "OLDEST"))
    assert not old.flash_attention and new.flash_attention and not oldest.flash_attention
    # tp 8: searched, and chosen where it exists
    assert not oldest.sequence_parallel and old.sequence_parallel
    # the scores cost time, selective recompute re-runs them
    assert rows["OLD"].predicted < rows["NEW"].predicted


def test_the_metrics_a_row_may_give_are_converted(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The same run stated in each metric the bench reads: every figure is the one estimate,
    converted."""
    bench = _bench(monkeypatch)
    run = {
        **LLAMA405,
        "model": "llama3.1-8b",
        "seq_len": "4096",
        "num_gpus": "16",
        "tp": "2",
        "pp": "1",
        "dp": "8",
        "zero": "1",
        "recompute": "full",
        "global_batch_tokens": "1048576",
        "micro_batch": "2",
        "source": "probe, 2024",
    }
    metrics = {
        "PER-GPU": ("tokens_per_s_per_gpu", "tok/s"),
        "TOTAL": ("tokens_per_s", "tok/s"),
        "SAMPLES": ("samples_per_s", "seq/s"),
        "STEP": ("step_time_s", "s"),
        "MFU-FRACTION": ("mfu", ""),
        "MFU": ("mfu", "%"),
        "TFLOPS": ("tflops_per_gpu", "TFLOP/s"),
        "MODEL": ("model_tflops_per_gpu", "TFLOP/s"),
    }
    rows = [
        {
            **run,
            "id": rid,
            "metric": metric,
            "unit": unit,
            "value": "0.4" if rid == "MFU-FRACTION" else "40",
        }
        for rid, (metric, unit) in metrics.items()
    ]
    of_2022 = {**run, "source": "probe, 2022", "unit": "TFLOP/s", "value": "40"}
    rows += [{**of_2022, "id": "TFLOPS-2022", "metric": "tflops_per_gpu"},
             {**of_2022, "id": "ACHIEVED-2022", "metric": "achieved_tflops_per_gpu"},
             {**of_2022, "id": "MODEL-2022", "metric": "model_tflops_per_gpu"}]
    _write(tmp_path / "throughput_public.csv", DATA / "throughput_public.csv", rows)
    got = {r.id: r for r in bench.public_rows(tmp_path)}
    assert not any(r.problem for r in got.values())
    per_gpu = got["PER-GPU"].predicted
    assert got["TOTAL"].predicted == pytest.approx(16 * per_gpu)
    assert got["SAMPLES"].predicted == pytest.approx(16 * per_gpu / 4096)
    assert got["STEP"].predicted == pytest.approx(1048576 / (16 * per_gpu))
    assert got["MFU-FRACTION"].predicted == pytest.approx(got["MFU"].predicted / 100)
    # an unqualified TFLOP/s: model FLOPs today, the recomputed forward counted too in a 2022 source
    assert got["TFLOPS"].predicted == pytest.approx(got["MODEL"].predicted)
    assert got["TFLOPS-2022"].predicted == pytest.approx(got["ACHIEVED-2022"].predicted)
    assert got["ACHIEVED-2022"].predicted > got["MODEL-2022"].predicted


def test_the_words_a_row_uses_for_its_settings_are_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bench = _bench(monkeypatch)
    cells = ("Activation checkpointing", "full_ac", "SAC", "op-level", "no", "", "full")
    assert [bench.recompute_of(cell) for cell in cells] == [
        "full",
        "full",
        "selective",
        "selective",
        "none",
        None,
        "full",
    ]
    with pytest.raises(bench.RowProblem, match="recompute 'sometimes'"):
        bench.recompute_of("sometimes")
    assert [
        bench.precision_of(cell)
        for cell in (
            "FP8 (Transformer Engine)",
            "mixed fp16",
            "bfloat16",
            "nf4 + bf16",
            "torch.float16",
        )
    ] == ["fp8", "fp16", "bf16", "bf16", "fp16"]
    assert [bench.memory_unit_per_gib(unit) for unit in ("GiB", " gb", "MiB")] == pytest.approx(
        [1.0, 1.073741824, 1024.0])
    # the same run's memory in MiB is the GiB figure x 1024, and an MFU against the FP8 peak where
    # the row says so
    run = {
        **LLAMA405,
        "model": "llama3.1-8b",
        "seq_len": "4096",
        "num_gpus": "8",
        "tp": "1",
        "pp": "1",
        "dp": "8",
        "zero": "1",
        "recompute": "Activation checkpointing",
        "global_batch_tokens": "262144",
        "micro_batch": "2",
        "source": "probe, 2024",
        "precision": "FP8",
        "metric": "mfu",
        "unit": "%",
        "value": "30",
    }
    _write(tmp_path / "throughput_public.csv", DATA / "throughput_public.csv", [
        {**run, "id": "MFU-BF16"}, {**run, "id": "MFU-FP8", "notes": "MFU against the FP8 peak"}])
    memory = dict(
        source="probe",
        model="llama3.1-8b",
        params_b="8",
        method="full",
        precision="bf16",
        optimizer="AdamW",
        micro_batch="1",
        seq_len="2048",
        gpu="h100-sxm",
        num_gpus="1",
        recompute="gradient checkpointing",
        peak_memory="40",
    )
    _write(tmp_path / "memory_public.csv", DATA / "memory_public.csv", [
        {**memory, "id": "GIB", "unit": "GiB"}, {**memory, "id": "MIB", "unit": "MiB"}])
    rows = {r.id: r for r in bench.public_rows(tmp_path)}
    assert not any(r.problem for r in rows.values())
    assert (
        rows["MFU-BF16"].estimate.layout.recompute == "full"
        and rows["MFU-BF16"].estimate.layout.precision == "fp8"
    )
    # twice the peak
    assert rows["MFU-FP8"].predicted == pytest.approx(rows["MFU-BF16"].predicted / 2, rel=0.01)
    assert rows["MIB"].predicted == pytest.approx(1024 * rows["GIB"].predicted)


def test_cells_are_read_as_sources_print_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Numbers with separators or suffixes, cells that state nothing, a ZeRO stage or a
    recomputation named in words, a metric named by its unit: each read as the row means it, or
    reported as the row's problem."""
    bench = _bench(monkeypatch)
    cells = sys.modules["row_cells"]
    assert [cells.count(text) for text in ("1,024", "2048.0", " 16 ", "", "n/a", "auto", "-")] == [
        1024, 2048, 16, None, None, None, None]
    assert [cells.size(text) for text in ("8k", "128K", "4M", "16,777,216", "4096")] == [
        8192, 131072, 4194304, 16777216, 4096]
    assert cells.number("15T") == 15e12 and cells.number("2.5e12") == 2.5e12
    for bad, reader in (("eight", cells.count), ("2.5", cells.count), ("4Q", cells.size)):
        with pytest.raises(cells.RowProblem):
            reader(bad)
    zeros = (
        "3",
        "3 (FSDP)",
        "ZeRO-3",
        "zero3",
        "FULL_SHARD",
        "FSDP",
        "HSDP",
        "SHARD_GRAD_OP",
        "ZeRO stage 1",
        "DDP",
        "3+offload",
        "n/a",
        "",
    )
    assert [cells.zero_cell(text) for text in zeros] == [
        3,
        3,
        3,
        3,
        3,
        3,
        3,
        2,
        1,
        0,
        3,
        None,
        None,
    ]
    with pytest.raises(cells.RowProblem, match="zero 'sometimes'"):
        cells.zero_cell("sometimes")
    assert [
        bench.recompute_of(text)
        for text in (
            "selective (attention core)",
            "full (uniform, 1 layer)",
            "none - 8k fits",
            "n/a",
        )
    ] == ["selective", "full", "none", None]
    metrics = [
        ("TFLOPs/GPU", ""),
        ("tokens/s/GPU", ""),
        ("tok/sec/gpu", ""),
        ("MFU (%)", ""),
        ("hardware_tflops_per_gpu", ""),
        ("Model TFLOP/s per GPU", ""),
        ("throughput", "tok/s"),
        ("throughput", "TFLOP/s"),
        ("throughput", "%"),
        ("GPU hours", ""),
        ("samples/s/GPU", ""),
    ]
    assert [cells.metric_name(metric, unit) for metric, unit in metrics] == [
        "tflops_per_gpu",
        "tokens_per_s_per_gpu",
        "tokens_per_s_per_gpu",
        "mfu",
        "achieved_tflops_per_gpu",
        "model_tflops_per_gpu",
        "tokens_per_s_per_gpu",
        "tflops_per_gpu",
        "mfu",
        "gpu_hours",
        "samples_per_s_per_gpu",
    ]


def test_a_stack_that_cannot_run_the_stated_zero_stage_is_not_the_rows(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """FSDP has no ZeRO-1: a row whose notes name FSDP and whose ZeRO cell says 1 is estimated at
    ZeRO-1 on a stack that runs it (the estimator refused the pair), the same row without the cell
    on FSDP."""
    bench = _bench(monkeypatch)
    run = {
        **LLAMA405,
        "model": "llama3.1-8b",
        "seq_len": "4,096",
        "num_gpus": "1,024",
        "tp": "1",
        "pp": "1",
        "dp": "1024",
        "global_batch_tokens": "4M",
        "source": "probe, 2024",
        "metric": "TFLOPs/GPU",
        "notes": "4D parallelism with FSDP",
        "recompute": "selective (attention)",
    }
    _write(tmp_path / "throughput_public.csv", DATA / "throughput_public.csv", [
        {**run, "id": "ONE", "zero": "1"}, {**run, "id": "BLANK", "zero": "n/a"}])
    rows = {r.id: r for r in bench.public_rows(tmp_path)}
    assert not any(r.problem for r in rows.values())
    one, blank = rows["ONE"].estimate.layout, rows["BLANK"].estimate.layout
    assert one.zero == 1 and one.framework != "fsdp" and blank.framework == "fsdp"
    assert one.global_batch == blank.global_batch == 1024 and one.dp == 1024


def test_a_row_without_a_gpu_count_takes_it_from_its_layout_or_a_whole_run_assumption(
        monkeypatch: pytest.MonkeyPatch) -> None:
    bench = _bench(monkeypatch)
    assert bench.gpus_of({"num_gpus": "64"}) == 64
    assert (
        bench.gpus_of(
            {"num_gpus": "", "tp": "8", "pp": "16", "dp": "8", "notes": "context parallel 16"}
        )
        == 16384
    )
    assert bench.gpus_of({"num_gpus": "", "metric": "gpu_hours"}) == bench.WHOLE_RUN_ASSUMED_GPUS
    with pytest.raises(bench.RowProblem, match="num_gpus is blank"):
        bench.gpus_of({"num_gpus": "", "metric": "hours"})  # wall-clock hours hang on the count


def test_a_throughput_row_says_its_method_by_a_column_its_name_or_its_notes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bench = _bench(monkeypatch)
    rows = [
        ({"model": "Llama2-7B SFT"}, "full_finetune"),
        ({"model": "Llama2-7B LoRA"}, "lora"),
        ({"model": "Llama-3.1-70B", "notes": "QLoRA, rank 64"}, "qlora"),
        ({"model": "llama3-8b", "precision": "nf4 + bf16"}, "qlora"),
        ({"model": "Llama 3 8B", "notes": "DPO on UltraFeedback"}, "dpo"),
        ({"model": "mistral-7b", "notes": "full fine-tuning, packed"}, "full_finetune"),
        ({"model": "GPT", "notes": ""}, "pretrain"),
        ({"model": "x", "method": "sft"}, "full_finetune"),
    ]
    assert [bench.method_of(row) for row, _ in rows] == [method for _, method in rows]
    with pytest.raises(bench.RowProblem, match="method 'distill'"):
        bench.method_of({"model": "x", "method": "distill"})


def test_a_memory_row_runs_the_accumulation_its_notes_state(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    bench = _bench(monkeypatch)
    notes = (
        "batch_size 1 with gradient accumulation 16",
        "grad accum 3",
        "gradient_accumulation_steps: 4",
        "none",
    )
    assert [bench.stated_accumulation(n) for n in notes] == [16, 3, 4, 1]
    rows = {r.id: r for r in bench.public_rows(DATA)}
    # the 405B QLoRA recipe's 16 steps of batch 1
    assert rows["TTU-08"].estimate.layout.micro_batches == 16


def test_batch_sizes_and_virtual_stages_a_row_gives_only_in_its_notes_are_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bench = _bench(monkeypatch)
    global_batch, micro_batch = (
        r"global[_ ]batch(?:[_ ]size)?",
        r"micro[-_ ]?batch(?:[_ ]size)?|mbs",
    )
    assert [bench.stated_count(n, global_batch) for n in ("global batch 512 sequences", "global "
                                                                                        "batch "
                                                                                        "size 1024",
                                                          "global batch 4M tokens", "global batch "
                                                                                    "4,194,304 "
                                                                                    "tokens")] \
        == [512, 1024, None, None]  # a batch in tokens is not a count of sequences
    assert [
        bench.stated_count(n, micro_batch)
        for n in ("micro batch 4", "micro-batch size 2", "mbs=2", "")
    ] == [4, 2, 2, None]
    row = {
        **LLAMA405,
        "id": "NOTES",
        "model": "llama3.1-70b",
        "seq_len": "4096",
        "num_gpus": "64",
        "tp": "4",
        "pp": "4",
        "dp": "4",
        "zero": "1",
        "recompute": "full",
        "framework": "",
        "source": "probe, 2024",
        "notes": "Megatron; global batch 256 sequences; micro batch 2; vpp=2",
    }
    _write(tmp_path / "throughput_public.csv", DATA / "throughput_public.csv", [row])
    (got,) = bench.public_rows(tmp_path)
    lay = got.estimate.layout
    assert (lay.global_batch, lay.micro_batch, lay.virtual_pipeline) == (256, 2, 2)


def test_a_deepspeed_pipeline_is_not_interleaved_and_a_round_batch_is_shared_by_whole_replicas(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bench = _bench(monkeypatch)
    # Megatron-DeepSpeed pipelines on DeepSpeed's engine (1F1B only); a Megatron-LM row's schedule
    # is searched
    row = {
        **LLAMA405,
        "id": "MDS",
        "model": "llama3.1-70b",
        "seq_len": "2048",
        "num_gpus": "128",
        "tp": "4",
        "pp": "8",
        "dp": "4",
        "zero": "1",
        "recompute": "full",
        "global_batch_tokens": "1048576",
        "source": "probe (Megatron-DeepSpeed), 2022",
    }
    megatron = {**row, "id": "MLM", "source": "probe (Megatron-LM), 2022"}
    # "2M tokens" at 2k: 976 sequences, which 124 replicas cannot share: the nearest batch they can,
    # 992
    rounded = {
        **row,
        "id": "ROUND",
        "num_gpus": "496",
        "pp": "1",
        "dp": "124",
        "global_batch_tokens": "2000000",
        "source": "probe (Megatron-LM), 2022",
    }
    _write(
        tmp_path / "throughput_public.csv", DATA / "throughput_public.csv", [row, megatron, rounded]
    )
    got = {r.id: r for r in bench.public_rows(tmp_path)}
    assert got["MDS"].estimate.layout.virtual_pipeline == 1
    # the search interleaves where the stack can
    assert got["MLM"].estimate.layout.virtual_pipeline > 1
    assert got["ROUND"].estimate.layout.global_batch == 992
    assert "taken as 992, a multiple of dp=124" in got["ROUND"].note
    assert [bench.whole_replicas_batch(n, 124) for n in (976, 992, 40, None)] == [
        992,
        992,
        124,
        None,
    ]


def test_a_whole_run_and_a_row_run_the_precision_and_parallelism_they_state(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bench = _bench(monkeypatch)
    run = dict(
        id="RUN",
        source="probe",
        model="deepseek-v3",
        gpu="h800",
        num_gpus="256",
        gpus_stated="yes",
        seq_len="4096",
        tokens="1e12",
        global_batch_tokens="8388608",
        gpu_hours="200000",
    )
    rows = [{**run, "id": "BF16"}, {**run, "id": "FP8", "notes": "FP8 mixed precision"},
            {**run, "id": "FP8-EP8", "notes": "FP8 mixed precision; PP 8 EP 8; CP 1"},
            {**run, "id": "COLUMNS", "precision": "fp8", "ep": "8", "cp": "1"}]
    path = tmp_path / "whole_runs.csv"
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=[*run, "precision", "ep", "cp", "notes", "tp", "pp"])
        writer.writeheader()
        writer.writerows(rows)
    runs, failed = bench.whole_runs(path)
    assert failed == []
    got = {r.id: r for r in runs}
    for rid in ("FP8-EP8", "COLUMNS"):
        assert "ep=8" in got[rid].layout and "cp=" not in got[rid].layout
        assert got[rid].predicted_gpu_hours == got["FP8-EP8"].predicted_gpu_hours
    # the FP8 its notes state was run
    assert got["FP8"].predicted_gpu_hours < got["BF16"].predicted_gpu_hours
    row = {**LLAMA405, "id": "MOE", "model": "qwen3-30b-a3b", "seq_len": "4096", "num_gpus": "16",
           "notes": "expert parallel 4", "source": "probe, 2025"}
    _write(tmp_path / "throughput_public.csv", DATA / "throughput_public.csv", [row])
    (moe,) = bench.public_rows(tmp_path)
    assert moe.estimate.layout.ep == 4


def test_a_whole_run_of_an_older_model_the_catalog_lacks_is_estimated(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Whole-run rows carry no shape columns: LLaMA-1 and BLOOM, which the planner's catalog lacks,
    are read from the bench's own shapes under the names sources print ("LLaMA-7B", "LLaMA 33B",
    "BLOOM-176B")."""
    bench = _bench(monkeypatch)
    run = dict(
        source="probe",
        gpu="a100-80gb",
        num_gpus="2048",
        gpus_stated="no",
        seq_len="2048",
        tokens="1e12",
        global_batch_tokens="4194304",
        gpu_hours="100000",
    )
    rows = [
        {**run, "id": "L7", "model": "LLaMA-7B"},
        {**run, "id": "L33", "model": "LLaMA 33B"},
        {**run, "id": "B", "model": "BLOOM-176B", "num_gpus": "384"},
        {**run, "id": "X", "model": "Mystery-9B"},
    ]
    path = tmp_path / "whole_runs.csv"
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["id", "model", *run, "tp", "pp", "notes"])
        writer.writeheader()
        writer.writerows(rows)
    runs, failed = bench.whole_runs(path)
    got = {r.id: r for r in runs}
    assert set(got) == {"L7", "L33", "B"}, failed
    assert [rid for rid, _ in failed] == ["X"]
    # GPU-hours for the same tokens grow with the model
    assert (
        got["L7"].predicted_gpu_hours
        < got["L33"].predicted_gpu_hours
        < got["B"].predicted_gpu_hours
    )
    card = bench.row_shape_card("LLaMA_65B")
    assert card is not None and card.layers == 80 and abs(card.params - 65.2e9) < 1e6
    assert bench.row_shape_card("llama3.1-8b") is None  # the catalog's models are the catalog's


def test_an_unnamed_model_of_a_catalog_shape_takes_that_architecture(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A row naming a model the catalog lacks is rebuilt from its columns, which give no FFN width
    or KV heads: where a catalog card has the same layers, hidden size, heads and vocabulary and
    nearly the same parameter count, the row's model is that architecture (Llama 3.3 70B is Llama
    3.1 70B's: GQA with 8 KV heads, a 28672-wide FFN, not multi-head attention and 8h/3). LLaMA-65B
    has Llama 2 70B's dimensions but 6% fewer parameters (multi-head attention, a narrower FFN): it
    stays rebuilt from its columns."""
    bench = _bench(monkeypatch)
    row = {
        "id": "PROBE",
        "model": "Llama-3.3-70B",
        "params_b": "70.6",
        "layers": "80",
        "hidden": "8192",
        "heads": "64",
        "vocab": "128256",
        "seq_len": "8192",
    }
    card = bench._card(row, row["model"])
    assert (card.num_kv_heads, card.ffn_hidden_size) == (8, 28672)
    old = {**row, "model": "LLaMA-65B", "params_b": "65.2", "vocab": "32000", "seq_len": "2048"}
    rebuilt = bench._card(old, old["model"])
    assert (rebuilt.num_kv_heads, rebuilt.ffn_hidden_size) == (64, 22016)


def test_the_stack_loss_and_adapter_targets_a_row_names_are_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Memory at the edges (issue 49): a table's Hugging Face column ran eager modules and PyTorch's
    # cross-entropy although its source is Unsloth's README; a compiled loss holds no fp32 logits;
    # adapters on q, k and v alone are attention-only.
    bench = _bench(monkeypatch)
    source = {"source": "unslothai/unsloth README, Context length benchmarks"}
    hf = {**source, "notes": "the Hugging Face + FA2 column; compared with Unsloth"}
    uns = {**source, "notes": "Unsloth (offloaded gradient checkpointing)"}
    assert (bench.loss_of(hf, "other"), bench.compiled(hf)) == ("plain", False)
    assert (bench.loss_of(uns, "other"), bench.compiled(uns)) == ("fused", True)
    for said in ("compiled loss", "torch.compile on the model and the loss", "compile_loss: true"):
        assert bench.loss_of({"source": "", "notes": said}, "other") == "chunked"
    assert bench.loss_of({"source": "", "notes": "torch.compile; fused AdamW"}, "other") == "plain"
    assert bench.stated_lora_targets("rank 16 on q, k and v, activation checkpointing") == (
        "attention")
    assert bench.stated_lora_targets("rank 32 on q, k, v, o, gate, up and down") == "all"
    assert bench.stated_lora_targets("") == "all"
    # a 1B model with a 100k vocabulary at 8 x 4,096 tokens on an 80 GB card: with the compiled
    # loss it fits; read as PyTorch's plain fp32 loss it would not
    row = dict(
        id="OLMO-1B", source="a training recipe", model="olmo-1b", params_b="1.48", method="full",
        precision="bf16", optimizer="AdamW", micro_batch="8", seq_len="4096", gpu="h100-sxm",
        num_gpus="8", tp="1", pp="1", zero="3", recompute="none", peak_memory="70", unit="GiB",
        exact_or_approx="approx",
        layers="16", hidden="2048", heads="16", vocab="100352",
    )
    compiled = {**row, "notes": "torch.compile, compiled loss"}
    plain = {**row, "id": "OLMO-1B-plain", "notes": "torch.compile"}
    with (tmp_path / "memory_public.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(compiled))
        writer.writeheader()
        writer.writerows([compiled, plain])
    rows = {r.id: r for r in bench.public_rows(tmp_path)}
    assert not any(r.problem for r in rows.values()), [r.problem for r in rows.values()]
    assert rows["OLMO-1B"].estimate.layout.loss == "chunked"
    assert rows["OLMO-1B"].estimate.fits_card
    assert not rows["OLMO-1B-plain"].estimate.fits_card
