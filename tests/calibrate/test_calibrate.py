"""Calibration from measured runs: every input form parses, the fit recovers a known factor, thin groups
are refused, the overlay records its runs, and plans that use it say so."""

# ruff: noqa: E501  (log lines below are kept verbatim, as the training stacks print them)

from __future__ import annotations

import csv
import json
import math

import pytest
import yaml
from typer.testing import CliRunner

from plan.models.catalog import builtin_catalog
from plan.planner.calibrate import Calibration, Observation, RunError, fit, lookup
from plan.planner.calibrate.parsers import read_runs
from plan.planner.calibrate.predict import predict
from plan.planner.calibrate.runs import Run
from plan.planner.cli.app import app
from tests.conftest import REPO

runner = CliRunner()
MEDICAL = REPO / "scenarios" / "medical_hybrid.yaml"
DESCRIPTION = {"model": "qwen2.5-72b", "method": "lora", "gpu": "a800-80gb", "gpus": 4,
               "layout": "tp=4 pp=1 dp=1 zero=0 mb=1 gb=128 recompute=none", "seq_len": 4096,
               "framework": "megatron"}
LAYOUTS = [("tp=4 pp=1 dp=1 zero=0 mb=1 gb=128 recompute=none", 4), ("tp=4 pp=1 dp=2 zero=0 mb=1 gb=128 "
           "recompute=none", 8), ("tp=8 pp=1 dp=1 zero=0 mb=1 gb=128 recompute=none", 8)]
TRUE_FACTOR = 0.8


def _predicted_tps(layout: str, gpus: int) -> float:
    run = read_runs_from({**DESCRIPTION, "layout": layout, "gpus": gpus, "tokens_per_s": 1.0})
    return predict(run, builtin_catalog()).tokens_per_s


def read_runs_from(row: dict) -> Run:
    from plan.planner.calibrate.parsers import run_from_fields

    return run_from_fields(row, "test")


@pytest.fixture(scope="module")
def runs_csv(tmp_path_factory):
    """Three a800 LoRA runs measured at 0.8 x the estimate, with +-3% scatter."""
    path = tmp_path_factory.mktemp("runs") / "runs.csv"
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=[*DESCRIPTION, "tokens_per_s", "peak_memory_gib"])
        w.writeheader()
        for (layout, gpus), scatter in zip(LAYOUTS, (0.97, 1.0, 1.03), strict=True):
            tps = _predicted_tps(layout, gpus) * TRUE_FACTOR * scatter
            w.writerow({**DESCRIPTION, "layout": layout, "gpus": gpus, "tokens_per_s": f"{tps:.1f}",
                        "peak_memory_gib": 60})
    return path


def test_fit_recovers_the_factor_and_keeps_its_runs(runs_csv, tmp_path):
    out = tmp_path / "calibration.yaml"
    result = runner.invoke(app, ["calibrate", str(runs_csv), "-o", str(out)])
    assert result.exit_code == 0, result.output
    cal = Calibration.load(out)
    factor = cal.throughput_factor("a800-80gb", "megatron", "lora")
    assert factor is not None and factor.factor == pytest.approx(TRUE_FACTOR, rel=0.01)
    assert factor.band[0] < TRUE_FACTOR < factor.band[1]
    assert factor.median_residual_after < factor.median_residual_before
    assert len(factor.runs) == 3 and all(str(runs_csv) in r for r in factor.runs)
    assert len(cal.runs) == 3  # the overlay records which runs it came from


def test_fewer_runs_than_parameters_is_refused(tmp_path):
    one = [Observation("a", "a800-80gb", "megatron", "lora", "throughput", 80.0, 100.0)]
    result = fit(one)
    assert result.factors == [] and any("1 run(s) for 2 parameters" in r for r in result.refused)
    path = tmp_path / "one.csv"
    path.write_text("model,method,gpu,gpus,layout,seq_len,framework,tokens_per_s\n"
                    "qwen2.5-72b,lora,a800-80gb,4,tp=4 pp=1 dp=1 zero=0 mb=1 gb=128,4096,megatron,1800\n")
    cli = runner.invoke(app, ["calibrate", str(path), "-o", str(tmp_path / "c.yaml")])
    assert cli.exit_code == 2 and "too few" in cli.output and not (tmp_path / "c.yaml").exists()


def test_lookup_takes_the_most_specific_scope():
    obs = [Observation(str(i), gpu, fw, "lora", "throughput", m, 100.0)
           for i, (gpu, fw, m) in enumerate([("a800-80gb", "megatron", 80), ("a800-80gb", "megatron", 82),
                                             ("h800", "fsdp", 120), ("h800", "fsdp", 118)])]
    factors = fit(obs).factors
    assert lookup(factors, "throughput", "a800-80gb", "megatron", "lora").factor == pytest.approx(0.81, abs=0.01)
    assert lookup(factors, "throughput", "h800", "fsdp", "qlora").scope == ("h800", "fsdp", "*")
    everything = lookup(factors, "throughput", "b200", "deepspeed", "pretrain")
    assert everything.scope == ("*", "*", "*") and len(everything.runs) == 4


def test_plans_using_it_are_slower_and_say_so(runs_csv, tmp_path):
    out = tmp_path / "calibration.yaml"
    assert runner.invoke(app, ["calibrate", str(runs_csv), "-o", str(out)]).exit_code == 0
    plain = json.loads(runner.invoke(app, ["solve", str(MEDICAL), "--format", "json"]).output)
    cal = json.loads(runner.invoke(app, ["solve", str(MEDICAL), "--format", "json", "--calibration",
                                         str(out)]).output)
    sft = {p["rank"]: next(j for j in p["jobs"] if j["job"] == "clinical-sft") for p in cal["plans"]}
    base = next(j for j in plain["plans"][0]["jobs"] if j["job"] == "clinical-sft")
    assert sft[1]["platform"] == base["platform"] == "hospital-a800"
    if (sft[1]["gpus"], sft[1]["tp"]) == (base["gpus"], base["tp"]):  # same layout: speed scaled by the factor
        assert sft[1]["tokens_per_s"] == pytest.approx(base["tokens_per_s"] * TRUE_FACTOR, rel=0.02)
    notes = [a for a in cal["plans"][0]["assumptions"] if "calibrated from 3 runs on your a800-80gbs" in a]
    assert notes and "median residual" in notes[0]


def test_scenario_calibration_field_and_bad_files(runs_csv, tmp_path):
    out = tmp_path / "calibration.yaml"
    assert runner.invoke(app, ["calibrate", str(runs_csv), "-o", str(out)]).exit_code == 0
    data = yaml.safe_load(MEDICAL.read_text())
    data["calibration"] = "calibration.yaml"  # relative to the scenario file
    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump(data))
    result = runner.invoke(app, ["solve", str(scenario), "--format", "json"])
    assert result.exit_code == 0 and "calibrated from 3 runs" in result.output
    bad = tmp_path / "bad.yaml"
    bad.write_text("calibration: {factors: [{gpu: a800-80gb, framework: megatron, method: lora, metric: "
                   "throughput, factor: -1}]}\n")
    for cmd in (["solve", str(MEDICAL)], ["pareto", str(MEDICAL)], ["report", str(MEDICAL), "-o",
                str(tmp_path / "r.html")], ["batch", str(MEDICAL)]):
        res = runner.invoke(app, [*cmd, "--calibration", str(bad)])
        assert res.exit_code == 2, (cmd, res.output)
        assert "factor" in res.output and "Traceback" not in res.output
    data["calibration"] = "missing.yaml"
    scenario.write_text(yaml.safe_dump(data))
    res = runner.invoke(app, ["solve", str(scenario)])
    assert res.exit_code == 2 and "missing.yaml" in res.output


def test_estimate_takes_a_calibration(runs_csv, tmp_path):
    out = tmp_path / "calibration.yaml"
    assert runner.invoke(app, ["calibrate", str(runs_csv), "-o", str(out)]).exit_code == 0
    args = ["estimate", "--model", "qwen2.5-72b", "--method", "lora", "--gpu", "a800-80gb", "--gpus", "4",
            "--tp", "4", "--framework", "megatron", "--format", "json"]
    plain = json.loads(runner.invoke(app, args).output)
    cal = json.loads(runner.invoke(app, [*args, "--calibration", str(out)]).output)
    assert cal["tokens_per_s"] == pytest.approx(plain["tokens_per_s"] * TRUE_FACTOR, rel=0.02)
    assert math.isclose(cal["step_time_s"] * cal["tokens_per_s"], plain["step_time_s"] * plain["tokens_per_s"],
                        rel_tol=1e-6)
    assert any("calibrated from" in n for n in cal["notes"])


MEGATRON_LOG = """\
 [2026-08-01 10:00:00] iteration        1/     100 | consumed samples:          128 | elapsed time per iteration (ms): 999000.0 | learning rate: 1.000000E-05 | global batch size:   128 | lm loss: 2.100000E+00 | loss scale: 1.0 | grad norm: 0.500 | number of skipped iterations:   0 | number of nan iterations:   0 |
[Rank 0] (after 1 iterations) memory (MB) | allocated: 40000.0 | max allocated: 60000.0 | reserved: 62000.0 | max reserved: 62464.0
 [2026-08-01 10:05:00] iteration        3/     100 | consumed samples:          384 | elapsed time per iteration (ms): 250000.0 | learning rate: 1.000000E-05 | global batch size:   128 | lm loss: 2.000000E+00 | loss scale: 1.0 | grad norm: 0.400 | number of skipped iterations:   0 | number of nan iterations:   0 |
 [2026-08-01 10:10:00] iteration        4/     100 | consumed samples:          512 | elapsed time per iteration (ms): 262144.0 | learning rate: 1.000000E-05 | global batch size:   128 | lm loss: 1.900000E+00 | loss scale: 1.0 | grad norm: 0.400 | number of skipped iterations:   0 | number of nan iterations:   0 |
 [2026-08-01 10:15:00] iteration        5/     100 | consumed samples:          640 | elapsed time per iteration (ms): 270000.0 | learning rate: 1.000000E-05 | global batch size:   128 | lm loss: 1.800000E+00 | loss scale: 1.0 | grad norm: 0.400 | number of skipped iterations:   0 | number of nan iterations:   0 |
"""

TITAN_LOG = """\
[titan] 2026-08-01 10:00:00,000 - root - INFO - \x1b[31mstep:  1  \x1b[32mloss: 12.0000  \x1b[33mmemory: 70.00GiB(88.61%)  \x1b[34mtps: 10  \x1b[36mtflops: 1.00  \x1b[35mmfu: 0.10%\x1b[39m
[titan] 2026-08-01 10:01:00,000 - root - INFO - step:  3  loss: 11.0000  memory: 61.00GiB(77.22%)  tps: 500  tflops: 100.00  mfu: 30.00%
[titan] 2026-08-01 10:02:00,000 - root - INFO - step:  4  loss: 10.0000  memory: 62.50GiB(79.11%)  tps: 520  tflops: 104.00  mfu: 31.00%
[titan] 2026-08-01 10:03:00,000 - root - INFO - step:  5  loss: 9.0000  memory: 62.00GiB(78.48%)  tps: 1,000  tflops: 200.00  mfu: 60.00%
"""


def test_every_input_form_parses(tmp_path):
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(DESCRIPTION))
    jsonl = tmp_path / "runs.jsonl"
    jsonl.write_text(json.dumps({**DESCRIPTION, "step_time_s": 262.144}) + "\n")
    state = tmp_path / "trainer_state.json"
    state.write_text(json.dumps({"log_history": [{"loss": 2.0, "step": 10},
                                                 {"train_runtime": 100.0, "train_samples_per_second": 0.5}]}))
    megatron = tmp_path / "megatron.log"
    megatron.write_text(MEGATRON_LOG)
    titan = tmp_path / "titan.log"
    titan.write_text(TITAN_LOG)
    runs = {r.source.rsplit("/", 1)[-1]: r for r in read_runs([jsonl, state, megatron, titan])}
    assert runs["runs.jsonl:1"].tokens_per_s == pytest.approx(128 * 4096 / 262.144)
    assert runs["trainer_state.json"].tokens_per_s == pytest.approx(0.5 * 4096)
    m = runs["megatron.log"]  # warm-up iterations dropped; median of 250, 262.144, 270 s
    assert m.tokens_per_s == pytest.approx(128 * 4096 / 262.144) and m.peak_memory_gib == pytest.approx(61.0)
    t = runs["titan.log"]  # tps is per GPU in torchtitan's log: x 4 GPUs; colour codes stripped
    assert t.tokens_per_s == pytest.approx(520 * 4) and t.peak_memory_gib == pytest.approx(62.5)
    assert all(r.group == ("a800-80gb", "megatron", "lora") for r in runs.values())


@pytest.mark.parametrize("text, expect", [
    ("model,method,gpu,gpus,seq_len,framework\nqwen2.5-72b,lora,a800-80gb,4,4096,megatron\n", "no measurement"),
    ("model,method,gpu,gpus,seq_len,framework,tokens_per_s\nqwen2.5-72b,lora,a800-80gb,4,4096,jax,10\n",
     "framework must be"),
    ("model,method,gpus,seq_len,framework,tokens_per_s\nqwen2.5-72b,lora,4,4096,megatron,10\n", "missing gpu"),
    ("model,method,gpu,gpus,seq_len,framework,tokens_per_s,layout\nqwen2.5-72b,lora,a800-80gb,4,4096,megatron,"
     "10,tp=x\n", "tp must be a whole number"),
])
def test_bad_run_rows_name_file_and_field(tmp_path, text, expect):
    path = tmp_path / "runs.csv"
    path.write_text(text)
    with pytest.raises(RunError, match=expect):
        read_runs([path])
    cli = runner.invoke(app, ["calibrate", str(path), "-o", str(tmp_path / "c.yaml")])
    assert cli.exit_code == 2 and str(path) in cli.output and len(cli.output.strip().splitlines()) == 1


def stated_layout(row: dict) -> str:
    return row["layout"] + " kernels=fused loss=fused optimizer=paged-adamw-8bit"


def test_a_run_states_how_it_trained_and_is_predicted_so():
    # an Unsloth-style QLoRA run: fused layers, a fused linear loss, paged 8-bit AdamW, offloaded checkpoints
    base = {"model": "llama3.1-8b", "method": "qlora", "gpu": "l40s", "gpus": 1, "seq_len": 32768,
            "framework": "fsdp", "peak_memory_gib": 20.0, "layout": "tp=1 pp=1 dp=1 zero=0 mb=1 gb=8 recompute=full"}
    plain = read_runs_from(base)
    stated = read_runs_from({**base, "layout": stated_layout(base)})
    columns = read_runs_from({**base, "kernels": "fused", "loss": "fused", "optimizer": "paged-adamw-8bit"})
    assert (stated.kernels, stated.loss, stated.optimizer) == ("fused", "fused", "paged_adam_8bit") == (
        columns.kernels, columns.loss, columns.optimizer)
    catalog = builtin_catalog()
    est, base_est = predict(stated, catalog), predict(plain, catalog)
    assert (est.layout.kernels, est.layout.loss, est.layout.optimizer) == ("fused", "fused", "paged_adam_8bit")
    assert (base_est.layout.kernels, base_est.layout.loss) == ("eager", "plain")
    assert est.memory.total_gib < base_est.memory.total_gib - 5  # the logits alone are 15 GiB at 12 B each
    attention = predict(read_runs_from({**base, "layout": stated_layout(base), "lora_targets": "attention"}),
                        catalog)
    assert attention.layout.lora_targets == "attention" and attention.memory.total_gib < est.memory.total_gib


@pytest.mark.parametrize("layout, expect", [
    ("tp=1 loss=fuzed", "loss must be one of plain, chunked, fused"),
    ("tp=1 kernels=liger", "kernels must be one of eager, fused"),
    ("tp=1 optimizer=lion", "optimizer must be one of adamw"),
    ("tp=1 lora_targets=mlp", "lora_targets must be one of all, attention"),
    ("tp=1 recompute=some", "recompute must be one of none, selective, full, full_offload, offload"),
])
def test_a_setting_it_cannot_state_is_named(layout, expect):
    with pytest.raises(RunError, match=expect):
        read_runs_from({**DESCRIPTION, "framework": "fsdp", "layout": layout, "tokens_per_s": 10})


def test_a_pytorch_loss_on_megatron_is_refused():
    with pytest.raises(RunError, match="loss fused is a PyTorch stack's loss"):
        read_runs_from({**DESCRIPTION, "loss": "fused", "tokens_per_s": 10})


def test_batch_uses_the_calibration_and_it_joins_the_resume_hash(runs_csv, tmp_path):
    out = tmp_path / "calibration.yaml"
    assert runner.invoke(app, ["calibrate", str(runs_csv), "-o", str(out)]).exit_code == 0
    rows = {}
    for name, extra in (("plain", []), ("calibrated", ["--calibration", str(out)])):
        results = tmp_path / f"{name}.jsonl"
        res = runner.invoke(app, ["batch", str(MEDICAL), "-o", str(results), "--jobs", "1", *extra])
        assert res.exit_code == 0, res.output
        (rows[name],) = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    assert rows["plain"]["hash"] != rows["calibrated"]["hash"]
    assert rows["calibrated"]["total_cost"] != rows["plain"]["total_cost"]  # slower a800s change the plan's cost


def test_own_runs_on_an_assumed_gpu_narrow_its_band_back(tmp_path):
    """No published row measures Ascend, so its throughput band is widened; a team's own runs on it
    measure exactly that, and an estimate calibrated by them is widened no more (on that GPU only)."""
    ascend = {"model": "qwen2.5-7b", "method": "lora", "gpu": "ascend-910b", "seq_len": 4096, "framework": "megatron"}
    layouts = [("tp=1 pp=1 dp=1 zero=0 mb=1 gb=64 recompute=none", 1), ("tp=1 pp=1 dp=2 zero=1 mb=1 gb=64 "
               "recompute=none", 2), ("tp=2 pp=1 dp=2 zero=1 mb=1 gb=64 recompute=none", 4)]
    runs = tmp_path / "ascend_runs.csv"
    with runs.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=[*ascend, "layout", "gpus", "tokens_per_s"])
        w.writeheader()
        for (layout, gpus), scatter in zip(layouts, (0.97, 1.0, 1.03), strict=True):
            run = read_runs_from({**ascend, "layout": layout, "gpus": gpus, "tokens_per_s": 1.0})
            tps = predict(run, builtin_catalog()).tokens_per_s * 0.7 * scatter
            w.writerow({**ascend, "layout": layout, "gpus": gpus, "tokens_per_s": f"{tps:.1f}"})
    cal = tmp_path / "calibration.yaml"
    assert runner.invoke(app, ["calibrate", str(runs), "-o", str(cal)]).exit_code == 0

    def estimate(gpu: str, *extra: str) -> dict:
        result = runner.invoke(app, ["estimate", "--model", "qwen2.5-7b", "--method", "lora", "--gpu", gpu,
                                     "--gpus", "2", "--framework", "megatron", "--seq-len", "4096",
                                     "--format", "json", *extra])
        assert result.exit_code == 0, result.output
        return json.loads(result.output)

    plain, calibrated = estimate("ascend-910b"), estimate("ascend-910b", "--calibration", str(cal))
    assert plain["band_widened_by"] == ["davinci GPUs' compute efficiency"]
    assert calibrated["band_widened_by"] == []
    assert calibrated["tokens_per_s"] == pytest.approx(0.7 * plain["tokens_per_s"], rel=0.05)
    low, high = calibrated["tokens_per_s_range"]
    plain_low, plain_high = plain["tokens_per_s_range"]
    assert high / low < plain_high / plain_low
    # the same file on another assumed GPU it did not measure: still widened
    assert estimate("rtx4090", "--calibration", str(cal))["band_widened_by"] == ["ada GPUs' compute efficiency"]
