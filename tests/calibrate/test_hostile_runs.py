"""`plan calibrate`'s inputs as untrusted input (issue 52 item 5): linear-time log reading, capped
lines, non-finite and absurd numbers refused per row, encodings and binary refused in one line, deep
JSON and alias bombs refused, repeated columns refused; and what it writes is always a file
`--calibration` accepts, whatever acceptable runs it came from."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from plan.models.errors import InputError
from plan.planner.calibrate import Calibration, CalibrationError, Observation, fit, log_lines
from plan.planner.calibrate.fit import FACTOR_RANGE
from plan.planner.calibrate.log_lines import scan_log
from plan.planner.calibrate.parsers import read_runs
from plan.planner.cli.app import app
from tests.calibrate.test_calibrate import DESCRIPTION, LAYOUTS, MEGATRON_LOG, _predicted_tps

runner = CliRunner()
HEADER = "model,method,gpu,gpus,layout,seq_len,framework,tokens_per_s,peak_memory_gib\n"


def _rows(*cells: tuple[str, str]) -> str:
    """One row per (tokens_per_s, peak_memory_gib), on the test's a800 LoRA layouts."""
    return HEADER + "".join(
        f"qwen2.5-72b,lora,a800-80gb,{gpus},{layout},4096,megatron,{tps},{mem}\n"
        for (layout, gpus), (tps, mem) in zip(LAYOUTS, cells, strict=False)
    )


def _refused(tmp_path: Path, name: str, content: str | bytes, **beside: str) -> list[str]:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    for other, text in beside.items():
        (tmp_path / other.replace("_", ".")).write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_runs([path])
    cli = runner.invoke(app, ["calibrate", str(path), "-o", str(tmp_path / "c.yaml")])
    assert (
        cli.exit_code == 2
        and "internal error" not in cli.output
        and not (tmp_path / "c.yaml").exists()
    )
    return err.value.problems


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e300", "0", "-1", "1" * 400, "NaN"])
def test_a_non_finite_or_absurd_number_is_refused_naming_its_row(
    tmp_path: Path, value: str
) -> None:
    (line,) = _refused(tmp_path, "runs.csv", _rows(("1500", "60"), (value, "60"), ("2900", "60")))
    assert line.startswith(f"{tmp_path / 'runs.csv'}:3: tokens_per_s") and "finite number" in line


def test_every_bad_row_is_named(tmp_path: Path) -> None:
    lines = _refused(tmp_path, "runs.csv", _rows(("nan", "60"), ("1500", "inf"), ("1e300", "60")))
    assert [line.split(": ")[0].rsplit(":", 1)[1] for line in lines] == ["2", "3", "4"]


def test_a_measurement_no_factor_could_hold_is_refused_naming_its_row(tmp_path: Path) -> None:
    """1e-300 tokens/s is a number, but 1e-303 x the estimate: the written file would be refused."""
    path = tmp_path / "runs.csv"
    path.write_text(_rows(("1500", "60"), ("1e-300", "60"), ("2900", "60")), encoding="utf-8")
    cli = runner.invoke(app, ["calibrate", str(path), "-o", str(tmp_path / "c.yaml")])
    assert cli.exit_code == 2 and f"{path}:3: throughput" in cli.output and "0.05-20" in cli.output


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (
            _rows(("1500", "60"), ("3000", "60"))
            .encode()
            .replace(b"megatron,3000", b"megatron\xe9,3000"),
            "line 3: byte 0xe9 is not UTF-8",
        ),
        (b"\x00\x01" + _rows(("1500", "60")).encode(), "line 1: binary data"),
        (
            HEADER.replace("tokens_per_s", "Tokens_Per_S ,tokens_per_s"),
            "appears twice (columns 8 and 9)",
        ),
        (_rows(("1500", "60")) + "x" * 1_200_000 + "\n", "line 3: 1,200,000 characters"),
        (_rows(("1500", "60")) + '"' + "a\n" * 100_000 + '"\n', "not CSV"),
    ],
)
def test_bad_bytes_and_shapes_in_a_csv_are_one_line(
    tmp_path: Path, content: str | bytes, words: str
) -> None:
    (line,) = _refused(tmp_path, "runs.csv", content)
    assert words in line


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"model": "a", "model": "b"}', "key 'model' appears twice"),
        ('{"gpus": 4, "tokens_per_s": NaN}', "NaN is not a measurement"),
        ('{"tokens_per_s": 1e999}', "beyond a double"),
        ('{"gpus": ' + "9" * 5000 + "}", "an integer of 5,000 digits"),
        ("[" * 20_000 + "]" * 20_000, "nested too deeply"),
    ],
)
def test_hostile_jsonl_is_one_line_naming_the_row(tmp_path: Path, text: str, words: str) -> None:
    (line,) = _refused(tmp_path, "runs.jsonl", text + "\n")
    assert line.startswith(f"{tmp_path / 'runs.jsonl'}:1: ") and words in line


def test_a_deep_trainer_state_is_refused(tmp_path: Path) -> None:
    (line,) = _refused(
        tmp_path,
        "trainer_state.json",
        "[" * 100_000 + "]" * 100_000,
        run_yaml=yaml.safe_dump(DESCRIPTION),
    )
    assert "nested too deeply" in line


BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{b}: &{b} [{','.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdef", "bcdefg", strict=True)
)


@pytest.mark.parametrize(
    ("description", "words"),
    [
        (BOMB, "aliases expand to more than 200,000 values"),
        ("[" * 300 + "]" * 300, "nested deeper than 200 levels"),
        (
            yaml.safe_dump(DESCRIPTION).replace("gpus: 4", "gpus: " + "9" * 5000),
            "an integer of 5,000 digits",
        ),
        ("model: a\nmodel: b\n", "duplicate key 'model'"),
    ],
)
def test_run_yaml_has_the_scenarios_yaml_limits(
    tmp_path: Path, description: str, words: str
) -> None:
    (line,) = _refused(tmp_path, "train.log", MEGATRON_LOG, run_yaml=description)
    assert line.startswith(f"{tmp_path / 'run.yaml'}: ") and words in line


@pytest.mark.parametrize(
    ("number", "words"),
    [("1.2.3", "'1.2.3' is not a number"), ("0", "above 0"), ("9" * 400, "finite number")],
)
def test_a_log_number_that_is_not_one_is_refused_with_its_line(
    tmp_path: Path, number: str, words: str
) -> None:
    log = MEGATRON_LOG.replace("(ms): 250000.0", f"(ms): {number}")
    (line,) = _refused(tmp_path, "train.log", log, run_yaml=yaml.safe_dump(DESCRIPTION))
    assert line.startswith(f"{tmp_path / 'train.log'}:3: elapsed time (ms)") and words in line


def test_log_lines_are_read_in_linear_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 1.2 MB line of repeated start words took minutes with `.*?` patterns (300 kB: 9 s). Read
    with the line cap lifted, so that the scan itself meets it, and with the cap (skipped)."""
    lines = (
        "iteration 1/ 1 |" * 75_000,
        "step: 1 " + "memory: 1.0GiB " * 80_000,
        "x" + "iteration 1/ 1 |" * 75_000 + "elapsed time per iteration (ms): 1.5 |",
        "step: 1 memory: 1.0GiB " + "tps: x " * 170_000,
    )
    for cap in (10**7, log_lines.MAX_LINE_CHARS):
        monkeypatch.setattr(log_lines, "MAX_LINE_CHARS", cap)
        for line in lines:
            started = time.perf_counter()
            figures = scan_log(MEGATRON_LOG + line + "\n", tmp_path / "t.log")
            assert time.perf_counter() - started < 5.0  # linear: ~0.1 s; the patterns: minutes
            assert [it for it, _ in figures.megatron_steps][:4] == [1, 3, 4, 5]
            assert figures.long_lines == (cap < len(line))


ANSI = st.sampled_from(["", "\x1b[31m", "\x1b[0m", "\x1b[1;32m"])
FILLER = st.text(st.sampled_from("abc |:=-[]()%0123456789 "), max_size=30)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.integers(1, 10**6),
            st.floats(0.001, 1e7),
            st.integers(1, 10**5),
            FILLER,
            ANSI,
            st.sampled_from([" ", "   ", "\t"]),
        ),
        min_size=1,
        max_size=6,
    )
)
def test_scan_log_reads_back_the_figures_written_whatever_surrounds_them(
    tmp_path_factory, lines
) -> None:
    text = ""
    for it, ms, batch, filler, color, gap in lines:
        text += (
            f"{filler}{color}iteration{gap}{it}/{gap}100 |{filler}elapsed time per iteration "
            f"(ms):{gap}{ms!r} |{color}global batch size:{gap}{batch} |{filler}\n"
        )
    figures = scan_log(text, Path("t.log"))
    assert figures.megatron_steps == [(it, ms) for it, ms, *_ in lines]
    assert figures.global_batch == lines[-1][2]


FACTORS = st.floats(FACTOR_RANGE[0], FACTOR_RANGE[1])
SOURCES = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            SOURCES,
            st.sampled_from(["a800-80gb", "h800"]),
            st.sampled_from(["megatron", "fsdp"]),
            st.sampled_from(["lora", "pretrain"]),
            st.sampled_from(["throughput", "memory"]),
            FACTORS,
            st.floats(1e-3, 1e9),
        ),
        min_size=2,
        max_size=30,
    )
)
def test_what_calibrate_writes_from_acceptable_runs_is_accepted_back(
    tmp_path_factory, runs
) -> None:
    """Any runs within the range a factor may have, any names: the file reads back, same factors."""
    obs = [
        Observation(src, gpu, fw, method, metric, ratio * predicted, predicted)
        for src, gpu, fw, method, metric, ratio, predicted in runs
    ]
    result = fit(obs)
    records = [
        {"source": o.source, "gpu": o.gpu, "framework": o.framework, "method": o.method}
        for o in obs
    ]
    calibration = Calibration(result.factors, records, result.refused)
    path = tmp_path_factory.mktemp("cal") / "c.yaml"
    path.write_text(calibration.checked_yaml(str(path)), encoding="utf-8")
    back = Calibration.load(path)
    assert [f.scope for f in back.factors] == [f.scope for f in result.factors]
    for read, fitted in zip(back.factors, result.factors, strict=True):
        assert math.isclose(read.factor, fitted.factor, rel_tol=1e-3) and read.runs == fitted.runs


def test_edge_runs_calibrate_and_the_file_is_used(tmp_path: Path) -> None:
    """Runs at 0.0501 x and 19.99 x the estimate, quoted cells with thousands separators, CRLF, a
    byte-order mark and a file name with a newline, an escape and a right-to-left mark: written,
    then applied."""
    rows = "".join(
        f'qwen2.5-72b,lora,a800-80gb,{gpus},"{layout}",4096,megatron,'
        f'"{_predicted_tps(layout, gpus) * scale:,.3f}",\r\n'
        for (layout, gpus), scale in zip(LAYOUTS, (0.0501, 19.99, 1.0), strict=True)
    )
    path = tmp_path / "runs \u202e\x1b[31m\n.csv"
    path.write_bytes(b"\xef\xbb\xbf" + (HEADER.replace("\n", "\r\n") + rows).encode("utf-8"))
    out = tmp_path / "c.yaml"
    cli = runner.invoke(app, ["calibrate", str(path), "-o", str(out)])
    assert cli.exit_code == 0, cli.output
    factor = Calibration.load(out).throughput_factor("a800-80gb", "megatron", "lora")
    assert factor is not None and FACTOR_RANGE[0] <= factor.factor <= FACTOR_RANGE[1]
    used = runner.invoke(
        app,
        [
            "estimate",
            "--model",
            "qwen2.5-72b",
            "--method",
            "lora",
            "--gpu",
            "a800-80gb",
            "--gpus",
            "8",
            "--calibration",
            str(out),
            "--format",
            "json",
        ],
    )
    assert used.exit_code == 0, used.output
    assert any("calibrated from" in note for note in json.loads(used.stdout)["notes"])


F = "factors: [{gpu: a, framework: megatron, method: lora, metric: throughput, factor: 0.8, "


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (
            F + "log_sd: .nan}]",
            "log_sd",
        ),
        (
            F + "fitted: 0.8, log_se: .inf}]",
            "finite",
        ),
        (
            F + "runs: 5}]",
            "list",
        ),
        ("factors: []\nrefused: 5", "calibration.refused"),
    ],
)
def test_a_hostile_calibration_file_is_one_line(tmp_path: Path, body: str, words: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("calibration:\n  " + body.replace("\n", "\n  ") + "\n", encoding="utf-8")
    with pytest.raises(CalibrationError) as err:
        Calibration.load(path)
    (line,) = err.value.problems
    assert line.startswith(str(path)) and words in line


def test_a_calibration_alias_bomb_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(BOMB, encoding="utf-8")
    with pytest.raises(CalibrationError, match="aliases expand"):
        Calibration.load(path)
