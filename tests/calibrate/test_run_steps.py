"""`plan calibrate` takes model-card files as `plan estimate` does, refuses a log whose figures are
the warm-up's (fewer than two iterations after it), and weighs each run by the steady iterations it
measured."""

# ruff: noqa: E501  (log lines below are kept verbatim, as Megatron-LM prints them)

from __future__ import annotations

import csv
import itertools
import math
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from plan.models.catalog import builtin_catalog
from plan.planner.calibrate import Observation, RunError, fit
from plan.planner.calibrate.fit import FULL_WEIGHT_STEPS, run_weight
from plan.planner.calibrate.parsers import MIN_STEADY_STEPS, WARMUP_STEPS, read_runs
from plan.planner.calibrate.predict import predict
from plan.planner.cli.app import app
from tests.conftest import REPO

runner = CliRunner()
CARD = REPO / "docs" / "examples" / "files" / "lab-3b.yaml"
DESCRIPTION = {"model": "qwen2.5-72b", "method": "lora", "gpu": "a800-80gb", "gpus": 4,
               "layout": "tp=4 pp=1 dp=1 zero=0 mb=1 gb=128 recompute=none", "seq_len": 4096,
               "framework": "megatron"}
LINE = (" [2026-08-01 10:00:00] iteration {it:8d}/     100 | consumed samples:          128 | elapsed time "
        "per iteration (ms): {ms:.1f} | learning rate: 1.000000E-05 | global batch size:   128 | lm loss: "
        "2.100000E+00 | loss scale: 1.0 | grad norm: 0.500 | number of skipped iterations:   0 | number of "
        "nan iterations:   0 |\n")


def _megatron_log(folder: Path, iterations: list[int], name: str = "train.log") -> Path:
    (folder / "run.yaml").write_text(yaml.safe_dump(DESCRIPTION))
    path = folder / name
    path.write_text("".join(LINE.format(it=it, ms=250000.0 + it) for it in iterations))
    return path


@pytest.mark.parametrize("iterations", [[1], [1, 2], [1, 2, 3]])
def test_a_log_of_the_warm_up_alone_is_refused_naming_the_file(tmp_path, iterations):
    log = _megatron_log(tmp_path, iterations)
    with pytest.raises(RunError, match="warm-up") as caught:
        read_runs([log])
    assert str(log) in caught.value.problems[0]
    cli = runner.invoke(app, ["calibrate", str(log), "-o", str(tmp_path / "c.yaml")])
    lines = cli.output.strip().splitlines()
    assert cli.exit_code == 2 and len(lines) == 1 and str(log) in cli.output
    assert f"at least {MIN_STEADY_STEPS}" in cli.output and not (tmp_path / "c.yaml").exists()


def test_a_log_counts_the_steady_iterations_its_lines_cover(tmp_path):
    every = read_runs([_megatron_log(tmp_path, [1, 2, 3, 4, 5, 6])])[0]
    assert every.steps == 6 - WARMUP_STEPS
    # Megatron's log interval: each line averages the iterations since the one before
    sparse = read_runs([_megatron_log(tmp_path, [10, 20, 30, 40], "sparse.log")])[0]
    assert sparse.steps == 40 - 2  # the line at 10 holds the warm-up's two iterations too


def test_a_row_states_its_steps_and_one_step_is_refused(tmp_path):
    path = tmp_path / "runs.csv"
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=[*DESCRIPTION, "tokens_per_s", "steps"])
        w.writeheader()
        w.writerow({**DESCRIPTION, "tokens_per_s": 1000, "steps": 5})
    (run,) = read_runs([path])
    assert run.steps == 5
    path.write_text(path.read_text().replace(",5\r\n", ",1\r\n").replace(",5\n", ",1\n"))
    with pytest.raises(RunError, match=r"runs\.csv:2: steps.*1 steady iteration"):
        read_runs([path])


def test_weight_rises_with_steps_up_to_full_and_unknown_is_full():
    weights = [run_weight(s) for s in range(MIN_STEADY_STEPS, 3 * FULL_WEIGHT_STEPS)]
    assert all(0 < a <= b <= 1 for a, b in itertools.pairwise(weights))
    assert run_weight(FULL_WEIGHT_STEPS) == 1 == run_weight(None) == run_weight(10**6)


def _obs(ratios_steps: list[tuple[float, int | None]]) -> list[Observation]:
    return [Observation(f"r{i}", "a800-80gb", "megatron", "lora", "throughput", 100 * ratio, 100.0, steps)
            for i, (ratio, steps) in enumerate(ratios_steps)]


def _raw(observations: list[Observation]) -> float:
    factor = next(f for f in fit(observations).factors if f.scope == ("a800-80gb", "megatron", "lora"))
    assert factor.raw_factor is not None
    return factor.raw_factor


def test_a_short_run_moves_a_factor_less_than_a_long_one():
    base = [(0.8, 100), (0.8, 100)]
    short, long = _raw(_obs([*base, (1.2, 2)])), _raw(_obs([*base, (1.2, 100)]))
    assert 0.8 < short < long  # the outlier measured over 2 steps pulls less
    expected = math.exp((2 * math.log(0.8) + 0.2 * math.log(1.2)) / 2.2)
    assert short == pytest.approx(expected)
    # every run at full weight, or none stating its steps: the unweighted fit, unchanged
    assert _raw(_obs([(0.8, None), (0.9, None)])) == pytest.approx(_raw(_obs([(0.8, 50), (0.9, 10)])))
    assert _raw(_obs([(0.8, None), (0.9, None)])) == pytest.approx(math.sqrt(0.8 * 0.9))


def test_calibrate_takes_a_model_card_file_named_beside_the_runs(tmp_path):
    shutil.copy(CARD, tmp_path / "lab-3b.yaml")
    row = {"model": "lab-3b.yaml", "method": "lora", "gpu": "a800-80gb", "gpus": 1,
           "layout": "tp=1 pp=1 dp=1 zero=0 mb=1 gb=8 recompute=none", "seq_len": 2048,
           "framework": "fsdp"}
    path = tmp_path / "runs.csv"
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=[*row, "tokens_per_s"])
        w.writeheader()
        w.writerow({**row, "tokens_per_s": 1.0})
    (probe,) = read_runs([path])
    est = predict(probe, builtin_catalog())
    assert est.model_id == "lab-3b" and est.tokens_per_s > 0
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=[*row, "tokens_per_s"])
        w.writeheader()
        for scatter in (0.97, 1.03):
            w.writerow({**row, "tokens_per_s": f"{est.tokens_per_s * 0.8 * scatter:.2f}"})
    out = tmp_path / "c.yaml"
    cli = runner.invoke(app, ["calibrate", str(path), "-o", str(out)])
    assert cli.exit_code == 0, cli.output
    records = yaml.safe_load(out.read_text())
    assert "lab-3b" in str(records)


def test_a_missing_model_card_file_is_one_line_naming_the_row(tmp_path):
    path = tmp_path / "runs.csv"
    path.write_text("model,method,gpu,gpus,seq_len,framework,tokens_per_s\n"
                    "cards/none.yaml,lora,a800-80gb,1,2048,fsdp,100\n")
    cli = runner.invoke(app, ["calibrate", str(path), "-o", str(tmp_path / "c.yaml")])
    assert cli.exit_code == 2 and len(cli.output.strip().splitlines()) == 1
    assert f"{path}:2: model: no such model-card file" in cli.output
