"""The hostile inputs of issue #11, one row each: refused with exit 2 and ONE line naming the file
and field (or the option), never an internal error, a traceback, a hang or nonsense accepted."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.hardening.conftest import HOSTILE_BASE, invoke, with_field

# (dotted field, value as YAML text, words the one error line must contain)
NUMBERS = [
    ("budget", ".inf", "budget:"),
    ("budget", "1e17", "budget:"),
    ("budget", "1e308", "budget:"),
    ("jobs.0.tokens", ".inf", "jobs[0].tokens:"),
    ("jobs.0.tokens", "1e-30", "jobs[0].tokens:"),
    ("jobs.0.tokens", "1e30", "jobs[0].tokens:"),
    ("deadline", "1e308d", "deadline:"),
    ("value_of_time_per_day", "1e308", "value_of_time_per_day:"),
    ("solver.seed", str(2**70), "solver.seed:"),
    ("solver.gap", ".inf", "solver.gap:"),
    ("solver.time_limit_s", ".nan", "solver.time_limit_s:"),
    ("owned.0.gpus_per_node", "1000000000", "owned[0].gpus_per_node:"),
    ("jobs.0.global_batch", "1000000000", "jobs[0].global_batch:"),
    ("jobs.0.global_batch", "100000", "one optimizer step"),  # 100k x 2048 tokens > 10M tokens
    ("jobs.0.data.size", "1e30PB", "jobs[0].data.size:"),
    ("jobs.0.seq_len", "10000000", "jobs[0].seq_len:"),
    ("jobs.0.gpus", str(10**30), "jobs[0].gpus:"),
    ("jobs.0.id", "'[/]'", "jobs[0].id:"),
    ("name", '"[/bold] \\e[31m"', "name:"),
    ("jobs.0.id", '"a\\e[2J"', "jobs[0].id:"),
]


def _scenario_text(dotted: str, raw: str) -> str:
    text = yaml.safe_dump(with_field(dotted, "RAWVALUE"), sort_keys=False)
    return text.replace("RAWVALUE", raw)


@pytest.mark.parametrize(("dotted", "raw", "words"), NUMBERS)
def test_nonsense_numbers_and_text_are_refused_naming_the_field(
    tmp_path: Path, dotted: str, raw: str, words: str
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(_scenario_text(dotted, raw), encoding="utf-8")
    code, out, err, escaped = invoke("solve", str(path))
    assert escaped is None and code == 2, (code, err, escaped)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}: ") and words in lines[0], err
    assert out == ""


OVERLAYS: list[tuple[str, str]] = [
    ("platforms: [{id: zhixingyun-pro, offers: 5}]", "offers"),
    ("platforms: [{id: [a, b]}]", "platforms[0]"),
    ("exchange_rates: {rates: [1, 2]}", "exchange_rates.rates"),
    ("exchange_rates: {rates: {USD: 0}}", "exchange_rates.rates.USD"),
    ("exchange_rates: {rates: {USD: -7}}", "exchange_rates.rates.USD"),
    ("exchange_rates: {rates: {USD: .nan}}", "exchange_rates.rates.USD"),
    ("platforms: [{id: zhixingyun-pro, limits: {capacity: 5}}]", "limits.capacity"),
    ("platforms: [{id: zhixingyun-pro, offers: [{gpu: rtx4090, billing: hourly, "
     "price_per_gpu_period: .inf, "
     "currency: CNY, source: x, as_of: 2026-01-01}]}]", "price_per_gpu_period"),
]


@pytest.mark.parametrize(("overlay", "field"), OVERLAYS)
def test_bad_overlays_name_the_overlay_file_and_field(
    tmp_path: Path, overlay: str, field: str
) -> None:
    scenario = tmp_path / "s.yaml"
    scenario.write_text(yaml.safe_dump(HOSTILE_BASE), encoding="utf-8")
    (tmp_path / "o.yaml").write_text(overlay, encoding="utf-8")
    code, _, err, escaped = invoke("solve", str(scenario), "--catalog", str(tmp_path / "o.yaml"))
    assert escaped is None and code == 2, (err, escaped)
    assert all(
        line.startswith(f"error: {tmp_path / 'o.yaml'}: ") for line in err.strip().splitlines()
    ), err
    assert field in err


@pytest.mark.parametrize("name", ["fifo", "/dev/zero", "/dev/urandom", "loop", "folder"])
def test_only_regular_files_are_read(tmp_path: Path, name: str) -> None:
    if name == "fifo":
        path = tmp_path / "fifo.yaml"
        os.mkfifo(path)
    elif name == "loop":
        path = tmp_path / "l1.yaml"
        path.symlink_to(tmp_path / "l2.yaml")
        (tmp_path / "l2.yaml").symlink_to(path)
    elif name == "folder":
        path = tmp_path
    else:
        path = Path(name)
    # a FIFO read would block this test forever
    code, _, err, escaped = invoke("validate", str(path))
    assert escaped is None and code == 2
    assert err.strip().startswith(f"error: {path}: ") and len(err.strip().splitlines()) == 1


def test_a_file_over_the_cap_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.yaml"
    path.write_text("# padding\n" * 600_000, encoding="utf-8")
    code, _, err, _ = invoke("validate", str(path))
    assert code == 2 and "larger than the 5 MB allowed" in err


def test_duplicate_keys_are_an_error(tmp_path: Path) -> None:
    path = tmp_path / "d.yaml"
    path.write_text("name: a\n" + yaml.safe_dump(HOSTILE_BASE), encoding="utf-8")
    code, _, err, _ = invoke("validate", str(path))
    assert code == 2 and "duplicate key 'name'" in err


def test_a_card_whose_params_do_not_match_its_shape_is_refused(tmp_path: Path) -> None:
    card: dict[str, Any] = {
        "id": "fake",
        "params": "70B",
        "layers": 2,
        "hidden_size": 64,
        "ffn_hidden_size": 128,
        "num_heads": 4,
        "num_kv_heads": 4,
        "vocab_size": 1000,
        "max_positions": 4096,
        "source": "test",
    }
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(card), encoding="utf-8")
    code, _, err, _ = invoke(
        "estimate",
        "--model",
        str(tmp_path / "c.yaml"),
        "--method",
        "lora",
        "--gpu",
        "h800",
        "--gpus",
        "1",
    )
    assert code == 2 and "does not match the shape" in err
    card["params_note"] = "test card: the count is deliberately not the shape's"
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(card), encoding="utf-8")
    code, _, _, escaped = invoke(
        "estimate",
        "--model",
        str(tmp_path / "c.yaml"),
        "--method",
        "lora",
        "--gpu",
        "h800",
        "--gpus",
        "1",
    )
    assert escaped is None and code == 0


@pytest.mark.parametrize(("args", "words"), [
    (["--gpus", "8", "--seq-len", "10000000"], "--seq-len:"),
    (["--gpus", "1000000000"], "--gpus:"),
    (["--gpus", "8", "--tokens", "inf"], "--tokens:"),
    (["--gpus", "8", "--tokens", "1e-30"], "--tokens:"),
    (["--gpus", "8", "--tp", "100000"], "--tp:"),
])
def test_estimate_applies_the_same_checks_as_solve(args: list[str], words: str) -> None:
    code, _, err, escaped = invoke(
        "estimate", "--model", "llama3.1-8b", "--method", "lora", "--gpu", "h800", *args
    )
    assert escaped is None and code == 2
    assert err.strip().startswith(f"error: {words}") and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize(("spec", "words"), [
    ("billing=free", "hourly, daily, monthly, yearly, spot, owned, purchase"),
    ("gpus=²", "gpus must be a whole number"),
    ("gpus=0", "gpus must be a whole number"),
])
def test_why_not_names_what_is_allowed(tmp_path: Path, spec: str, words: str) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(HOSTILE_BASE), encoding="utf-8")
    code, _, err, escaped = invoke("explain", str(path), "--why-not", spec)
    assert escaped is None and code == 2 and words in err


@pytest.mark.parametrize("option", [["--gap", "inf"], ["--gap", "nan"], ["--time-limit", "nan"],
                                    ["--work-limit", "inf"]])
def test_solver_options_must_be_finite(tmp_path: Path, option: list[str]) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(HOSTILE_BASE), encoding="utf-8")
    code, _, _, escaped = invoke("solve", str(path), *option)
    assert escaped is None and code == 2


def test_markup_in_a_scenario_name_prints_as_text(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(with_field("name", "[/bold] [red]x")), encoding="utf-8")
    code, out, _, escaped = invoke("solve", str(path))
    assert escaped is None and code == 0 and "[/bold] [red]x" in out


def test_figures_that_would_overflow_the_solver_are_bad_input(tmp_path: Path) -> None:
    scenario = {
        **HOSTILE_BASE,
        "objective": "balanced",
        "value_of_time_per_day": 10**9,
        "deadline": "3650d",
        "jobs": [
            {"id": "a", "model": "llama3.1-8b", "method": "lora", "tokens": "10M", "seq_len": 2048}
        ],
    }
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(scenario), encoding="utf-8")
    (tmp_path / "o.yaml").write_text(
        "exchange_rates: {rates: {USD: 1000000}}\nplatforms:\n  - id: zhixingyun-pro\n    "
        "offers:\n      - {gpu: h800, billing: monthly, price_per_gpu_period: 72000000, currency: "
        "USD, source: x, "
        "as_of: 2026-01-01}\n", encoding="utf-8")
    code, _, err, escaped = invoke(
        "solve", str(tmp_path / "s.yaml"), "--catalog", str(tmp_path / "o.yaml")
    )
    assert escaped is None and code == 2, err
    assert (
        err.startswith(f"error: {tmp_path / 's.yaml'}: the money figures are too large")
        and err.count("\n") == 1
    )
