"""Bounded parsing (issue 52 item 4): integers past Python's conversion limit, files under the byte
cap that would build millions of values, floods of problems and repeated overlay entries are each
refused with a few clear lines, quickly, naming the real cause; libyaml's loader reads as PyYAML's
does."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plan.models import errors as errors_module
from plan.models.catalog import load_catalog
from plan.models.errors import MAX_PROBLEMS, InputError, capped
from plan.models.loading import load_scenario
from plan.models.yaml_io import MAX_INT_DIGITS, UniqueKeyLoader, parse_yaml_text, read_yaml
from plan.planner.batch.sweep import SweepError, parse_sweep
from tests.hardening.conftest import HOSTILE_BASE, invoke

DIGITS = "9" * 5000


def _refused(text: str, tmp_path: Path, name: str = "s.yaml") -> list[str]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_yaml(path)
    return err.value.problems


@pytest.mark.parametrize(
    "text",
    [
        f"budget: {DIGITS}\n",
        f"? {DIGITS}\n: 1\n",
        f"a: [1, -{DIGITS}]\n",
        "a: 0b" + "1" * 20_000 + "\n",
        "a: 1" + ":59" * 600 + "\n",
        "a: 0x" + "f" * 200 + "\n",
    ],
)
def test_an_integer_past_the_digit_limit_is_one_line_naming_its_line(
    tmp_path: Path, text: str
) -> None:
    (line,) = _refused(text, tmp_path)
    assert "line 1" in line and f"at most {MAX_INT_DIGITS} digits" in line


def test_an_integer_at_the_digit_limit_is_read(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(f"a: {'9' * MAX_INT_DIGITS}\nb: 1_000\n", encoding="utf-8")
    assert read_yaml(path) == {"a": int("9" * MAX_INT_DIGITS), "b": 1000}


def test_a_sweep_value_past_the_digit_limit_is_a_sweep_error() -> None:
    with pytest.raises(SweepError, match="at most 100 digits"):
        parse_sweep(f"budget={DIGITS}")


def test_a_file_under_the_byte_cap_that_builds_too_much_is_refused_fast_and_small(
    tmp_path: Path,
) -> None:
    """1.2M values in 4.8 MB: the pure-Python composer took 50-170 s and 0.8-1.7 GB to refuse it."""
    path = tmp_path / "list.yaml"
    path.write_text("- 1\n" * 1_200_000, encoding="utf-8")
    probe = (
        "import sys\nfrom pathlib import Path\nfrom plan.models.errors import "
        "InputError\nfrom plan.models.yaml_io import read_yaml\ntry:\n    "
        "read_yaml(Path(sys.argv[1]))\nexcept InputError as exc:\n    "
        "print(exc.problems[0])\n"
        # (this program's own peak: ru_maxrss keeps the forking test process's size across exec;
        # VmHWM belongs to the new image)
        "print(next(l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM:')))\n"
    )
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", probe, str(path)], capture_output=True, text=True, timeout=120
    )
    seconds = time.perf_counter() - started
    message, peak_kib = done.stdout.strip().splitlines()
    assert "more than 200,000 YAML values" in message and "alias" not in message
    # was 50-170 s and 0.8-1.7 GB
    assert seconds < 30 and int(peak_kib) < 300 * 1024, (seconds, peak_kib)


def test_plain_keys_are_not_blamed_on_aliases_and_a_bomb_is(tmp_path: Path) -> None:
    (keys,) = _refused("".join(f"k{i}: 1\n" for i in range(100_001)), tmp_path)
    assert "more than 200,000 YAML values" in keys and "alias" not in keys
    bomb = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{b}: &{b} [{','.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdef", "bcdefg", strict=True)
    )
    (line,) = _refused(bomb, tmp_path)
    assert "aliases expand to more than 200,000 values" in line


@pytest.mark.parametrize(
    "text",
    [
        "[" * 300 + "]" * 300,
        "a: &a " + "[" * 150 + "x" + "]" * 150 + "\nb: " + "[" * 100 + "*a" + "]" * 100,
    ],
)
def test_nesting_is_bounded_through_aliases_too(tmp_path: Path, text: str) -> None:
    (line,) = _refused(text + "\n", tmp_path)
    assert "nested deeper than 200 levels" in line or "nesting depth" in line


def test_the_fast_loader_keeps_the_duplicate_key_check(tmp_path: Path) -> None:
    if yaml.__with_libyaml__:
        assert issubclass(UniqueKeyLoader, yaml.CSafeLoader)
    (line,) = _refused("jobs:\n  - id: a\n    id: b\n", tmp_path)
    assert "line 3: duplicate key 'id'" in line
    path = tmp_path / "merge.yaml"
    path.write_text("base: &b {x: 1}\nmine:\n  <<: *b\n  y: 2\n", encoding="utf-8")
    assert read_yaml(path)["mine"] == {"x": 1, "y": 2}


KEYS = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]), min_size=1, max_size=8
)
DOCS = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**30), 10**30),
        st.floats(allow_nan=False),
        st.text(max_size=20),
    ),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(KEYS, kids, max_size=4),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(DOCS, st.sampled_from([None, True]))
def test_the_bounded_loader_reads_what_pyyaml_reads(doc: object, flow: bool | None) -> None:
    text = yaml.safe_dump({"doc": doc}, default_flow_style=flow, allow_unicode=True)
    assert parse_yaml_text(text, "t.yaml") == yaml.load(text, Loader=yaml.SafeLoader)


def test_fifty_thousand_problems_are_twenty_lines_and_a_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        yaml.safe_dump(HOSTILE_BASE) + "".join(f"zz{i}: 1\n" for i in range(50_000)),
        encoding="utf-8",
    )
    worded: list[str] = []  # the problems put into words (each looks up the closest field names)
    real = errors_module.did_you_mean
    monkeypatch.setattr(
        errors_module, "did_you_mean", lambda *a, **k: worded.append(a[0]) or real(*a, **k)
    )
    with pytest.raises(InputError) as err:
        load_scenario(path)
    assert len(worded) <= MAX_PROBLEMS  # the other 49,980 are counted, not worded
    lines = err.value.problems
    assert (
        len(lines) == MAX_PROBLEMS + 1
        and lines[-1] == f"{path}: ... and 49,980 more problems (the first 20 are shown)"
    )
    code, _, stderr, escaped = invoke("validate", str(path))
    assert escaped is None and code == 2 and len(stderr.strip().splitlines()) <= MAX_PROBLEMS + 2


@given(st.integers(0, 60), st.integers(0, 60))
def test_capping_twice_counts_every_problem_once(first: int, second: int) -> None:
    a, b = [f"a{i}" for i in range(first)], [f"b{i}" for i in range(second)]
    lines = capped([*capped(a), *capped(b)])
    shown = [line for line in lines if "... and" not in line]
    found = re.search(r"\.\.\. and ([\d,]+) more", lines[-1]) if lines else None
    more = int(found.group(1).replace(",", "")) if found else 0
    assert len(shown) == min(first + second, MAX_PROBLEMS) and len(shown) + more == first + second


OFFER = (
    "{gpu: rtx4090, billing: hourly, price_per_gpu_period: %s, currency: CNY, source: q, as_of: "
    "2026-11-20}"
)
MODEL = (
    "{id: m1, params: %s, layers: 32, hidden_size: 4096, ffn_hidden_size: 14336, num_heads: 32, "
    "num_kv_heads: 8, vocab_size: 128256, max_positions: 8192, source: x}"
)


@pytest.mark.parametrize(
    ("text", "first", "second"),
    [
        (
            "platforms:\n  - {id: zhixingyun, name: a}\n  - {id: zhixingyun, name: b}\n",
            "platforms[0]",
            "platforms[1]",
        ),
        (
            f"platforms:\n  - id: zhixingyun\n    offers: [{OFFER % 1}, {OFFER % 2}]\n",
            "platforms[0].offers[0]",
            "platforms[0].offers[1]",
        ),
        (
            "platforms:\n  - id: zhixingyun\n    limits:\n      capacity:\n        - {gpu: "
            "rtx4090, max_gpus: 8}\n        - {gpu: rtx4090, max_gpus: 16}\n",
            "capacity[0]",
            "capacity[1]",
        ),
        (f"models:\n  - {MODEL % '8B'}\n  - {MODEL % '9B'}\n", "models[0]", "models[1]"),
    ],
)
def test_two_overlay_entries_for_one_thing_are_refused_naming_both(
    tmp_path: Path, text: str, first: str, second: str
) -> None:
    path = tmp_path / "o.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_catalog([path])
    (line,) = err.value.problems
    assert line.startswith(f"{path}: ") and first in line and second in line and "silently" in line
