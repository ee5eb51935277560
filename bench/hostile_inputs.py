"""Run the full hostile-input corpus against the `plan` command and count the outcomes.

Every case is one `plan` subprocess with a wall-clock timeout and an address-space cap. Outcomes:
exit 0/1/2/3/130, internal error (exit 70 or the words "internal error"), traceback (any
"Traceback" on stderr), hang (killed at the timeout), memory (MemoryError, or killed by the cap),
unsafe (the case's own check failed: a file written outside -o, an input overwritten, a temporary
file left, raw escapes on the terminal). Output cases (issue 52) run under a file-size or
open-file limit where they say so.
A case may say which exits it expects (a nonsense number must be refused: {2}); one that ends
otherwise is listed as unexpected, e.g. nonsense accepted with exit 0.

Usage: python bench/hostile_inputs.py [--jobs 2] [--timeout 30] [--only SUBSTRING] [--list]
The tests run a small table of these cases (tests/hardening/); this is the slow, full corpus.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import csv
import io
import json
import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.hardening.hostile_base import HOSTILE_BASE, set_field  # noqa: E402  (the tests' starting scenario)

PLAN = [sys.executable, "-c", "from plan.planner.cli.app import main; main()"]
MEMORY_CAP_BYTES = 3 * 1024**3  # per case: enough for any real scenario, far below the machine

HOSTILE_NUMBERS: list[Any] = [".inf", ".nan", -1, 0, 1e17, 1e-30, 2**70, "1e400", "²"]
NUMBER_FIELDS = [
    "budget",
    "deadline",
    "value_of_time_per_day",
    "confidence",
    "jobs.0.tokens",
    "jobs.0.seq_len",
    "jobs.0.global_batch",
    "jobs.0.gpus",
    "jobs.0.max_gpus",
    "jobs.0.min_gpus",
    "jobs.0.lora_rank",
    "jobs.0.deadline",
    "jobs.0.data.size",
    "solver.seed",
    "solver.work_limit",
    "solver.time_limit_s",
    "solver.gap",
    "solver.top_k",
    "solver.workers",
    "policy.memory_headroom",
    "policy.max_gpus_per_job",
    "policy.max_expected_interruptions",
    "owned.0.count",
    "owned.0.gpus_per_node",
    "owned.0.cost_per_gpu_hour",
]
# Values that are not numbers YAML reads as they look: written into the file as raw text.
RAW = {".inf", "-.inf", ".nan", "1e400"}


@dataclass
class Case:
    name: str
    args: list[str]  # after `plan`; {dir} is the case's folder
    files: dict[str, str] = field(default_factory=dict)  # name -> text written into {dir}
    setup: Callable[[Path], None] | None = None
    expect: frozenset[int] = frozenset({0, 1, 2, 3})
    stdin_sigint_after_s: float | None = None
    # added to the environment; {dir} is the case's folder
    env: dict[str, str] = field(default_factory=dict)
    # (case folder, stdout, stderr) -> a problem in words, or None: a write outside -o, a lost row,
    # ...
    check: Callable[[Path, str, str], str | None] | None = None
    file_size_limit: int | None = None  # RLIMIT_FSIZE for the process (bytes): EFBIG on a write
    open_files_limit: int | None = None  # RLIMIT_NOFILE for the process


def scenario_text(changes: dict[str, Any]) -> str:
    data = copy.deepcopy(HOSTILE_BASE)
    marks: dict[str, str] = {}
    for dotted, value in changes.items():
        if isinstance(value, str) and value in RAW:
            mark = f"RAW{len(marks)}MARK"
            marks[mark] = value
            value = mark
        set_field(data, dotted, value)
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    for mark, raw in marks.items():
        text = text.replace(mark, raw)
    return text


def _solve(
    changes: dict[str, Any], expect: frozenset[int] = frozenset({0, 1, 2, 3}), name: str = ""
) -> Case:
    return Case(name or f"solve {changes}", ["solve", "{dir}/s.yaml", "--format", "json"],
                {"s.yaml": scenario_text(changes)}, expect=expect)


def _fifo(d: Path) -> None:
    os.mkfifo(d / "fifo.yaml")


def _loop(d: Path) -> None:
    (d / "l1.yaml").symlink_to(d / "l2.yaml")
    (d / "l2.yaml").symlink_to(d / "l1.yaml")


def corpus() -> list[Case]:
    cases: list[Case] = []
    # 1. Every number field against every hostile value (nonsense must be refused: exit 2).
    for dotted in NUMBER_FIELDS:
        for value in HOSTILE_NUMBERS:
            cases.append(_solve({dotted: value}, name=f"number {dotted}={value!r}"))
    # 2. Overflow and nonsense named by the issue, each expected to be refused.
    refused = frozenset({2})
    for changes in (
        {"budget": ".inf"},
        {"budget": 1e17},
        {"budget": 1e308},
        {"jobs.0.tokens": ".inf"},
        {"deadline": "1e308d"},
        {"value_of_time_per_day": 1e308},
        {"solver.seed": 2**70},
        {"jobs.0.global_batch": 1e9},
        {"jobs.0.tokens": 1e-30},
        {"jobs.0.data.size": "1e30PB"},
        {"owned.0.gpus_per_node": 10**9, "owned.0.count": 10**9},
        {"jobs.0.tokens": 10**30},
        {"jobs.0.seq_len": 10**7},
        {"jobs.0.id": "[/]"},
        {"name": "[/bold] x\x1b[31m"},
        {"jobs.0.id": "a\x1b[2J"},
        {"currency": "ZZZ"},
        {"jobs.0.after": ["a"]},
        {"jobs.0.model": "../../../../etc/passwd"},
        {"jobs.0.model": "/dev/zero.yaml"},
    ):
        cases.append(_solve(changes, refused, name=f"issue {changes}"))
    extreme = {
        "budget": 10**12,
        "deadline": "3650d",
        "objective": "balanced",
        "value_of_time_per_day": 10**9,
        "owned": [
            {
                "id": "p",
                "site": "lab",
                "gpu": "h800",
                "count": 10**6,
                "gpus_per_node": 8,
                "cost_per_gpu_hour": 10**5,
            }
        ],
        "jobs": [
            {
                "id": "a",
                "model": "llama3.1-8b",
                "method": "pretrain",
                "tokens": 10**12,
                "seq_len": 4096,
            },
            {
                "id": "b",
                "model": "llama3.1-8b",
                "method": "lora",
                "tokens": "10M",
                "seq_len": 2048,
                "max_gpus": 10**6,
            },
        ],
    }
    cases.append(Case("every number at its bound", ["solve", "{dir}/s.yaml"],
                      {"s.yaml": scenario_text(dict(extreme))}, expect=frozenset({0, 1, 3})))
    rich_rates = ("exchange_rates: {rates: {USD: 1000000}}\nplatforms:\n  - id: "
                  "zhixingyun-pro\n    offers:\n      - {gpu: h800, billing: monthly, "
                  "price_per_gpu_period: 72000000, currency: USD, source: x, as_of: 2026-01-01}\n")
    cases.append(
        Case(
            "prices and rates at their bounds overflow int64",
            ["solve", "{dir}/s.yaml", "--catalog", "{dir}/o.yaml"],
            {"s.yaml": scenario_text(dict(extreme)), "o.yaml": rich_rates},
            expect=refused,
        )
    )
    cases.append(
        Case(
            "300 jobs, 5 s limit",
            ["solve", "{dir}/s.yaml"],
            {
                "s.yaml": scenario_text(
                    {
                        "jobs": [
                            {
                                "id": f"j{i}",
                                "model": "llama3-8b",
                                "method": "qlora",
                                "lora_rank": 16,
                                "tokens": "10M",
                                "seq_len": 2048,
                            }
                            for i in range(300)
                        ],
                        "solver": {"time_limit_s": 5},
                    }
                )
            },
            expect=frozenset({0, 1, 3}),
        )
    )
    # 3. Files that are not scenario files.
    cases += [
        Case("fifo as scenario", ["validate", "{dir}/fifo.yaml"], setup=_fifo, expect=refused),
        Case("/dev/zero as scenario", ["solve", "/dev/zero"], expect=refused),
        Case("/dev/urandom as scenario", ["solve", "/dev/urandom"], expect=refused),
        Case("folder as scenario", ["solve", "{dir}"], expect=refused),
        Case("symlink loop", ["solve", "{dir}/l1.yaml"], setup=_loop, expect=refused),
        Case("missing file", ["solve", "{dir}/nope.yaml"], expect=refused),
        Case("empty file", ["solve", "{dir}/e.yaml"], {"e.yaml": ""}, expect=refused),
        Case("binary file", ["solve", "{dir}/b.yaml"], {"b.yaml": "\x00\x01\x02"}, expect=refused),
        Case(
            "6 MB file",
            ["solve", "{dir}/big.yaml"],
            {"big.yaml": "# x\n" * 1_600_000},
            expect=refused,
        ),
        Case(
            "duplicate keys",
            ["solve", "{dir}/d.yaml"],
            {"d.yaml": "name: a\nname: b\n" + scenario_text({})},
            expect=refused,
        ),
        Case(
            "alias bomb",
            ["solve", "{dir}/a.yaml"],
            {
                "a.yaml": "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c "
                "[*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: "
                "[*d,*d,*d,*d,*d,*d,*d,*d,*d]\n"
            },
            expect=refused,
        ),
        Case(
            "deep nesting",
            ["solve", "{dir}/n.yaml"],
            {"n.yaml": "[" * 5000 + "]" * 5000},
            expect=refused,
        ),
        Case("not utf-8", ["solve", "{dir}/u.yaml"], {"u.yaml": "name: \udcff"}, expect=refused),
        Case("a list", ["solve", "{dir}/l.yaml"], {"l.yaml": "- 1\n- 2\n"}, expect=refused),
        Case(
            "fifo as model card",
            ["solve", "{dir}/s.yaml"],
            {"s.yaml": scenario_text({"jobs.0.model": "fifo.yaml"})},
            setup=_fifo,
            expect=refused,
        ),
        Case(
            "fifo as overlay",
            ["solve", "{dir}/s.yaml", "--catalog", "{dir}/fifo.yaml"],
            {"s.yaml": scenario_text({})},
            setup=_fifo,
            expect=refused,
        ),
    ]
    # 4. Catalog overlays of the wrong type or with nonsense numbers.
    offer = {
        "gpu": "rtx4090",
        "billing": "hourly",
        "price_per_gpu_period": 1.0,
        "currency": "CNY",
        "source": "x",
        "as_of": "2026-01-01",
    }
    overlays: list[Any] = [
        {"platforms": [{"id": "zhixingyun-pro", "offers": 5}]},
        {"platforms": [{"id": ["a", "b"]}]},
        {"exchange_rates": {"rates": [1, 2]}},
        {"exchange_rates": {"rates": {"USD": 0}}},
        {"exchange_rates": {"rates": {"USD": -7}}},
        {"exchange_rates": {"rates": {"USD": "RAWNAN"}}},
        {"exchange_rates": [1]},
        {"platforms": 7},
        {"models": [5]},
        {"gpus": {"a": 1}},
        {"platforms": [{"id": "zhixingyun-pro", "offers": [5, {"gpu": [1]}]}]},
        {"platforms": [{"id": "zhixingyun-pro", "limits": {"capacity": 5}}]},
        {
            "platforms": [
                {"id": "zhixingyun-pro", "offers": [{**offer, "price_per_gpu_period": "RAWINF"}]}
            ]
        },
        {
            "platforms": [
                {"id": "zhixingyun-pro", "offers": [{**offer, "price_per_gpu_period": 1e300}]}
            ]
        },
        {
            "platforms": [
                {"id": "zhixingyun-pro", "offers": [{**offer, "price_per_gpu_period": -1}]}
            ]
        },
        {"platforms": [{"id": "zhixingyun-pro", "offers": [{**offer, "gpus_per_node": 10**9}]}]},
        {"platforms": [{"id": "zhixingyun-pro", "offers": [{**offer, "currency": "XXX"}]}]},
        {
            "models": [
                {
                    "id": "fake",
                    "params": "70B",
                    "layers": 2,
                    "hidden_size": 64,
                    "ffn_hidden_size": 128,
                    "num_heads": 4,
                    "num_kv_heads": 4,
                    "vocab_size": 1000,
                    "max_positions": 4096,
                    "source": "x",
                }
            ]
        },
        {"unknown_section": 1},
        "just text",
        [1, 2],
    ]
    for i, overlay in enumerate(overlays):
        text = yaml.safe_dump(overlay).replace("RAWNAN", ".nan").replace("RAWINF", ".inf")
        cases.append(
            Case(
                f"overlay {i}: {str(overlay)[:70]}",
                ["solve", "{dir}/s.yaml", "--catalog", "{dir}/o.yaml"],
                {"s.yaml": scenario_text({}), "o.yaml": text},
                expect=refused,
            )
        )
    # 5. Command-line arguments.
    est = ["estimate", "--model", "llama3.1-8b", "--method", "lora", "--gpu", "h800"]
    for extra in (
        ["--gpus", "1000000000"],
        ["--gpus", "9" * 30],
        ["--gpus", "8", "--seq-len", "10000000"],
        ["--gpus", "8", "--headroom", "nan"],
        ["--gpus", "8", "--headroom", "inf"],
        ["--gpus", "8", "--tokens", "inf"],
        ["--gpus", "8", "--tokens", "1e-30"],
        ["--gpus", "8", "--tp", "0"],
        ["--gpus", "8", "--tp", "100000"],
        ["--gpus", "0"],
        ["--gpus", "8", "--global-batch", "1000000000"],
        ["--gpus", "8", "--model", "{dir}/fifo.yaml"],
    ):
        cases.append(
            Case(f"estimate {' '.join(extra)}", [*est, *extra], setup=_fifo, expect=refused)
        )
    cases.append(Case("estimate card 70B with a 1M shape",
                      [*est[:1], "--model", "{dir}/c.yaml", *est[3:], "--gpus", "1"],
                      {"c.yaml": yaml.safe_dump(overlays[17]["models"][0])}, expect=refused))
    for extra in (
        ["--gap", "inf"],
        ["--gap", "nan"],
        ["--time-limit", "nan"],
        ["--time-limit", "1e300"],
        ["--work-limit", "inf"],
        ["--top", "0"],
        ["--top", "1000"],
    ):
        cases.append(
            Case(
                f"solve {' '.join(extra)}",
                ["solve", "{dir}/s.yaml", *extra],
                {"s.yaml": scenario_text({})},
                expect=refused,
            )
        )
    for spec in (
        "billing=free",
        "gpus=²",
        "gpus=0",
        "gpus=99999999999999999999",
        "job=[/]",
        "platform=\x1b[31m",
        "nonsense",
        "gpu=",
        "job=zzz",
    ):
        cases.append(Case(f"why-not {spec!r}", ["explain", "{dir}/s.yaml", "--why-not", spec],
                          {"s.yaml": scenario_text({})}, expect=refused))
    # 5b. Structures of the wrong shape, and model cards.
    for changes in (
        {"jobs": {"a": 1}},
        {"jobs": []},
        {"jobs": "x"},
        {"owned": "x"},
        {"owned.0": 5},
        {"sites": [{"id": "lab", "links": 5}]},
        {"sites": [{"id": "lab", "links": [{"to": [1]}]}]},
        {"policy.allow_gpus": [[1]]},
        {"policy.allow_platforms": "x"},
        {"policy": 5},
        {"jobs.0.after": "a"},
        {"jobs.0.layout": {"tp": 10**9}},
        {"jobs.0.layout": 5},
        {"jobs.0": {"id": "a"}},
        {"purchase": [{"gpu": "h800", "price_per_gpu": ".inf"}]},
        {"purchase": [{"gpu": [1]}]},
        {"solver": [1]},
        {"catalog": "/dev/zero"},
        {"catalog": "."},
        {"jobs.0.model": "x" * 5000},
        {"name": "x" * 20000},
        {"currency": "usd"},
        {"jobs.0.method": "dpo"},
        {"jobs.0.precision": "fp4"},
        {"confidence": 0.99},
    ):
        cases.append(_solve(changes, refused, name=f"structure {str(changes)[:70]}"))
    card = {
        "id": "c",
        "params": "8B",
        "layers": 32,
        "hidden_size": 4096,
        "ffn_hidden_size": 14336,
        "num_heads": 32,
        "num_kv_heads": 8,
        "vocab_size": 128256,
        "max_positions": 8192,
        "source": "x",
    }
    for changes in (
        {"layers": 10**9},
        {"hidden_size": 0},
        {"num_kv_heads": 7},
        {"params": ".inf"},
        {"params": "1e400"},
        {"moe": {"experts": 10**9, "top_k": 1, "expert_ffn_hidden_size": 1}},
        {"moe": {"experts": 2, "top_k": 3, "expert_ffn_hidden_size": 1}},
        {"max_positions": 0},
        {"id": "[/]"},
        {"head_dim": 10**9},
        {"assumed": True},
        {"vocab_size": -1},
    ):
        text = (
            yaml.safe_dump({**card, **changes})
            .replace("'.inf'", ".inf")
            .replace("'1e400'", "1e400")
        )
        cases.append(
            Case(
                f"card {changes}",
                [*est[:1], "--model", "{dir}/c.yaml", *est[3:], "--gpus", "8"],
                {"c.yaml": text},
                expect=refused,
            )
        )
        cases.append(
            Case(
                f"card in a scenario {changes}",
                ["solve", "{dir}/s.yaml"],
                {"c.yaml": text, "s.yaml": scenario_text({"jobs.0.model": "c.yaml"})},
                expect=refused,
            )
        )
    for extra in (["--points", "1"], ["--points", "100000"], ["--z", "cost"], ["-o", "{dir}/f.exe"],
                  ["--plot", "{dir}/no/f.png"], ["--time-limit", "inf"]):
        cases.append(Case(f"pareto {' '.join(extra)}", ["pareto", "{dir}/s.yaml", *extra],
                          {"s.yaml": scenario_text({})}, expect=refused))
    for extra in (["catalog", "gpus", "--catalog", "{dir}/fifo.yaml"], ["catalog", "nothing"],
                  ["validate", "{dir}/fifo.yaml", "/dev/zero"]):
        cases.append(Case(" ".join(extra), extra, setup=_fifo, expect=refused))
    for sweep in (
        "budget=1..1e12:1",
        "jobs.0.tokens=.inf",
        "solver.seed=1e30",
        "nosuch=1,2",
        "budget=",
        "jobs.99.tokens=1",
        "=5",
        "budget=5..1:1",
    ):
        cases.append(
            Case(
                f"batch --sweep {sweep}",
                ["batch", "{dir}/s.yaml", "--sweep", sweep, "-j", "1"],
                {"s.yaml": scenario_text({})},
                expect=frozenset({1, 2}),
            )
        )
    # 6. Batch faults.
    cases += [
        Case(
            "batch: loop, fifo and device among inputs",
            [
                "batch",
                "{dir}/l1.yaml",
                "{dir}/fifo.yaml",
                "/dev/zero",
                "{dir}/s.yaml",
                "-j",
                "1",
                "-o",
                "{dir}/r.csv",
            ],
            {"s.yaml": scenario_text({})},
            setup=lambda d: (_loop(d), _fifo(d)),
            expect=frozenset({1}),
        ),
        Case(
            "batch: output in a missing folder",
            ["batch", "{dir}/s.yaml", "-o", "{dir}/no/r.csv"],
            {"s.yaml": scenario_text({})},
            expect=refused,
        ),
        Case(
            "batch: output is a folder",
            ["batch", "{dir}/s.yaml", "-o", "{dir}/x.csv"],
            {"s.yaml": scenario_text({})},
            setup=lambda d: (d / "x.csv").mkdir(),
            expect=refused,
        ),
        Case(
            "batch: output is not a results file",
            ["batch", "{dir}/s.yaml", "-o", "{dir}/x.csv"],
            {"s.yaml": scenario_text({}), "x.csv": "a,b\n1,2\n"},
            expect=refused,
        ),
        Case(
            "batch: bad sweep",
            ["batch", "{dir}/s.yaml", "--sweep", "budget=inf,nan"],
            {"s.yaml": scenario_text({})},
            expect=frozenset({2}),
        ),
        Case(
            "batch: sweep of 1e9 gpus_per_node",
            ["batch", "{dir}/s.yaml", "--sweep", "owned.0.gpus_per_node=1e9"],
            {"s.yaml": scenario_text({})},
            expect=frozenset({2}),
        ),
    ]
    # 7. Bounded parsing and `plan calibrate`'s inputs (issue 52 items 4 and 5).
    from bench.hostile_parsing import parsing_cases

    return cases + output_cases() + parsing_cases() + files_we_keep()


RUNS_CSV = "model,method,gpu,gpus,layout,seq_len,framework,tokens_per_s\n" + "".join(
    "qwen2.5-72b,lora,a800-80gb,4,tp=4 pp=1 dp=1 zero=0 mb=1 gb=128 "
    f"recompute=none,4096,megatron,{tps}\n"
    for tps in (900, 950, 1000))


def _two_jobs(second: str) -> str:
    base = copy.deepcopy(HOSTILE_BASE)
    return scenario_text({"jobs": [base["jobs"][0], {**base["jobs"][0], "id": second}]})


def _only_inside(out: str) -> Callable[[Path, str, str], str | None]:
    """Every file of the case folder lies under `out`, the scenario aside; no temporary file."""
    def check(d: Path, _stdout: str, _stderr: str = "") -> str | None:
        stray = [p for p in d.rglob("*") if p.is_file() and not p.is_relative_to(d / out)
                 and p.name not in ("s.yaml", "victim")]
        temporary = [p for p in d.rglob("*.tmp")]
        left = stray + temporary
        return f"written outside -o or left behind: {left}" if left else None
    return check


def _unchanged(name: str, text: str) -> Callable[[Path, str, str], str | None]:
    def check(d: Path, _stdout: str, _stderr: str = "") -> str | None:
        now = (d / name).read_text(encoding="utf-8") if (d / name).is_file() else None
        return None if now == text else f"{name} was overwritten"
    return check


def _nothing_written(*names: str) -> Callable[[Path, str, str], str | None]:
    def check(d: Path, _stdout: str, _stderr: str = "") -> str | None:
        left = [n for n in names if (d / n).exists()] + [str(p) for p in d.rglob("*.tmp")]
        return f"left after a failed write: {left}" if left else None
    return check


def _no_raw_controls(_d: Path, stdout: str, _stderr: str = "") -> str | None:
    raw = [c for c in "\u202e\u2066\x1b" if c in stdout]
    return f"raw {raw!r} reached the terminal" if raw else None


def _symlinked_launcher(d: Path) -> None:
    (d / "victim").write_text("precious\n", encoding="utf-8")
    (d / "out" / "a").mkdir(parents=True)
    (d / "out" / "a" / "launch.sh").symlink_to(d / "victim")


def output_cases() -> list[Case]:
    """Issue 52, items 1 and 6: paths we write, symlinks, outputs that are inputs, write failures,
    output text."""
    refused = frozenset({2})
    cases = [Case(f"export: job id {job!r} stays inside -o",
                  ["export", "{dir}/s.yaml", "--to", stack, "-o", "{dir}/out/deep"],
                  {"s.yaml": _two_jobs(job)}, expect=frozenset({0}), check=_only_inside("out/deep"))
             for job, stack in (("a/../../x", "deepspeed"), ("b/../../../y", "llamafactory"),
                                ("c/./d", "accelerate"), ("e/..", "torchrun-fsdp"))]
    scenario = scenario_text({})
    cases += [
        Case("export: a symlink in the output folder",
             ["export", "{dir}/s.yaml", "--to", "deepspeed", "-o", "{dir}/out"],
             {"s.yaml": _two_jobs("b")}, setup=_symlinked_launcher, expect=refused,
             check=_unchanged("victim", "precious\n")),
        Case("export: over its own scenario", ["export", "{dir}/train.yaml", "--to", "llamafactory",
                                               "-o", "{dir}"],
             {"train.yaml": scenario}, expect=refused, check=_unchanged("train.yaml", scenario)),
        Case("pareto: -o its own scenario", ["pareto", "{dir}/s.json", "-o", "{dir}/s.json", "-q"],
             {"s.json": scenario}, expect=refused, check=_unchanged("s.json", scenario)),
        Case("report: -o its own scenario", ["report", "{dir}/s.html", "-o", "{dir}/s.html"],
             {"s.html": scenario}, expect=refused, check=_unchanged("s.html", scenario)),
        Case("solve: --report its own overlay",
             ["solve", "{dir}/s.yaml", "--catalog", "{dir}/o.html", "--report", "{dir}/o.html"],
             {"s.yaml": scenario, "o.html": "{}\n"}, expect=refused,
             check=_unchanged("o.html", "{}\n")),
        Case("calibrate: -o the run's description",
             ["calibrate", "{dir}/t.log", "-o", "{dir}/run.yaml"],
             {"t.log": "iteration 1\n", "run.yaml": "model: x\n"}, expect=refused,
             check=_unchanged("run.yaml", "model: x\n")),
        Case("pareto: a symlinked -o", ["pareto", "{dir}/s.yaml", "-o", "{dir}/f.csv", "-q"],
             {"s.yaml": scenario, "victim": "precious\n"},
             setup=lambda d: (d / "f.csv").symlink_to(d / "victim"), expect=refused,
             check=_unchanged("victim", "precious\n")),
    ]
    for name, args, written in (
            ("pareto -o", ["pareto", "{dir}/s.yaml", "-o", "{dir}/f.csv", "-q"], "f.csv"),
            ("pareto --plot", ["pareto", "{dir}/s.yaml", "--plot", "{dir}/f.html", "-q"], "f.html"),
            ("export", ["export", "{dir}/s.yaml", "--to", "deepspeed", "-o", "{dir}/out"], "out"),
            ("report", ["report", "{dir}/s.yaml", "-o", "{dir}/r.html"], "r.html"),
            ("calibrate", ["calibrate", "{dir}/runs.csv", "-o", "{dir}/c.yaml"], "c.yaml")):
        cases.append(Case(f"{name} under a 300-byte file-size limit", args,
                          {"s.yaml": _two_jobs("b"), "runs.csv": RUNS_CSV},
                          expect=refused, file_size_limit=300, check=_nothing_written(written)))
    cases += [
        Case("solve with 6 open files at most", ["solve", "{dir}/s.yaml"], {"s.yaml": scenario},
             expect=frozenset({0, 2}), open_files_limit=6),
        Case("export with 6 open files at most",
             ["export", "{dir}/s.yaml", "--to", "deepspeed", "-o", "{dir}/out"],
             {"s.yaml": _two_jobs("b")}, expect=frozenset({0, 2}), open_files_limit=6),
        Case("bidi, escapes and newlines in a name", ["solve", "{dir}/s.yaml"],
             {"s.yaml": scenario_text({"name": "evil\u202eTXT\n\u2066forged\u2069 line"})},
             expect=frozenset({0}), check=_no_raw_controls),
        Case("escapes in a path", ["solve", "{dir}/x\x1b[2J\u202e.yaml"], expect=refused,
             check=lambda d, out, _err: _no_raw_controls(d, out)),
    ]
    return cases


def _cli(folder: Path, *args: str, cache: str = "off") -> str:
    """`plan ARGS` run by a case's setup; its stdout."""
    return subprocess.run(
        [*PLAN, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT), "PLAN_CACHE_DIR": cache},
    ).stdout


def _plan_json(text: str) -> Any:
    data = json.loads(text)
    data.pop("solve_time_s", None)
    return data


def _forge_cache(folder: Path) -> None:
    """A solve fills the cache, then every row is forged with a matching checksum: a 100x faster
    step (the rates scaled with it, so only the step's parts give it away)."""
    from plan.planner.estimate.store import _checksum

    (folder / "honest.json").write_text(
        _cli(
            folder, "solve", str(folder / "s.yaml"), "--format", "json", cache=str(folder / "cache")
        )
    )
    with sqlite3.connect(folder / "cache" / "estimates.sqlite3") as db:
        for key, text in db.execute("SELECT key, value FROM estimates").fetchall():
            data = json.loads(text)
            if data["best"] is not None:
                data["best"]["step_time_s"] /= 100
                for name in ("tokens_per_s", "tokens_per_s_per_gpu", "model_tflops_per_gpu", "mfu"):
                    data["best"][name] *= 100
            new = json.dumps(data)
            db.execute(
                "UPDATE estimates SET value = ?, checksum = ? WHERE key = ?",
                (new, _checksum(key, new), key),
            )


def _plant_pickle(folder: Path) -> None:
    cache = folder / "cache"
    cache.mkdir(mode=0o700)
    with sqlite3.connect(cache / "estimates.sqlite3") as db:
        db.execute("CREATE TABLE results (key TEXT PRIMARY KEY, value BLOB NOT NULL, stored REAL "
                   "NOT NULL)")
        payload = b"cos\nsystem\n(S'touch " + str(folder / "pwned").encode() + b"'\ntR."
        db.execute("INSERT INTO results VALUES ('k', ?, 0)", (payload,))


def _shared_cache(folder: Path) -> None:
    (folder / "shared").mkdir()
    (folder / "shared").chmod(0o777)


FOREIGN_ROW = ("/elsewhere/other.yaml,budget=5,optimal,12.5,CNY,3.0,a: 1x rtx-4090 on autodl,0.2,,"
               "00000000000000aa,0.0,12.5\n")


def _results_with(rows: str) -> Callable[[Path], None]:
    def setup(folder: Path) -> None:
        from plan.planner.batch.rows import COLUMNS
        (folder / "r.csv").write_text(",".join(COLUMNS) + "\n" + rows.replace("{dir}", str(folder)))
    return setup


def _forged_row(folder: Path) -> None:
    """A row for s.yaml with its true content hash and a NaN cost: it must be solved again."""
    from plan.planner.batch import Task, build_tasks, expand_paths
    from plan.planner.batch.sweep import expand_grid, parse_sweeps
    from plan.planner.session import SolveOptions

    task = next(
        t
        for t in build_tasks(
            expand_paths([str(folder / "s.yaml")]),
            expand_grid(parse_sweeps([])),
            (),
            SolveOptions(top_k=1, workers=1),
        )
        if isinstance(t, Task)
    )
    _results_with(f"{folder}/s.yaml,,optimal,nan,CNY,3.0,a: forged,0.2,,{task.hash},0.0,0.0\n")(
        folder
    )


_HELD_LOCKS: list[int] = []


def _locked_through_link(folder: Path) -> None:
    """r.csv's lock held by this process; the case names r.csv through a symlink."""
    import fcntl

    (folder / "link.csv").symlink_to(folder / "r.csv")
    fd = os.open(folder / ".r.csv.lock", os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    _HELD_LOCKS.append(fd)


def _rows(folder: Path) -> list[dict[str, str]]:
    csv.field_size_limit(10**9)
    return list(csv.DictReader(io.StringIO((folder / "r.csv").read_text())))


def _kept(text: str) -> Callable[[Path, str, str], str | None]:
    def check(folder: Path, _out: str, _err: str) -> str | None:
        return None if text in (folder / "r.csv").read_text() else "an earlier row was lost"
    return check


def files_we_keep() -> list[Case]:
    """7. The estimate cache and the batch results file (issue 52: items 2 and 3)."""
    base = {"s.yaml": scenario_text({})}
    batch = ["batch", "{dir}/s.yaml", "-j", "1", "-o", "{dir}/r.csv"]
    long_row = "/elsewhere/long.yaml,,error,,,,,0.0," + "x" * 300_000 + ",,,\n"
    formula = {"s.yaml": scenario_text({"jobs.0.id": "=1+2"})}
    return [
        Case(
            "cache: forged rows give the honest plan",
            ["solve", "{dir}/s.yaml", "--format", "json"],
            base,
            setup=_forge_cache,
            env={"PLAN_CACHE_DIR": "{dir}/cache"},
            expect=frozenset({0}),
            check=lambda d, out, _: (
                None
                if _plan_json(out) == _plan_json((d / "honest.json").read_text())
                else "the plan changed"
            ),
        ),
        Case(
            "cache: a planted pickle is never loaded",
            ["solve", "{dir}/s.yaml"],
            base,
            setup=_plant_pickle,
            env={"PLAN_CACHE_DIR": "{dir}/cache"},
            expect=frozenset({0}),
            check=lambda d, _o, _e: "the pickle ran" if (d / "pwned").exists() else None,
        ),
        Case(
            "cache: a folder others may write",
            ["solve", "{dir}/s.yaml"],
            base,
            setup=_shared_cache,
            env={"PLAN_CACHE_DIR": "{dir}/shared"},
            expect=frozenset({0}),
            check=lambda d, _o, err: (
                "used"
                if (d / "shared" / "estimates.sqlite3").exists() or err.count("estimate cache") != 1
                else None
            ),
        ),
        Case(
            "batch: a re-run keeps rows of other inputs",
            batch,
            base,
            setup=_results_with(FOREIGN_ROW),
            expect=frozenset({0}),
            check=_kept(FOREIGN_ROW.strip()),
        ),
        Case(
            "batch: a forged stored row is solved again",
            batch,
            base,
            setup=_forged_row,
            expect=frozenset({0}),
            check=lambda d, _o, err: (
                None
                if "failed their check" in err
                and all(r["total_cost"] not in ("nan", "") for r in _rows(d))
                else "the forged row was re-used"
            ),
        ),
        Case(
            "batch: a symlinked -o takes the same lock",
            [*batch[:-1], "{dir}/link.csv"],
            base,
            setup=_locked_through_link,
            expect=frozenset({2}),
        ),
        Case(
            "batch: a 300 kB cell reads back",
            batch,
            base,
            setup=_results_with(long_row),
            expect=frozenset({0}),
            check=lambda d, _o, _e: None if len(_rows(d)) == 2 else "rows lost",
        ),
        Case(
            "batch: a formula cell is escaped",
            batch,
            formula,
            expect=frozenset({0, 1, 2}),
            check=lambda d, _o, _e: next(
                (
                    f"cell {c[:20]!r}"
                    for r in _rows(d)
                    for c in r.values()
                    if c.startswith(("=", "+", "-", "@"))
                ),
                None,
            ),
        ),
        Case(
            "batch: 30,000 variants need --max-variants",
            ["batch", "{dir}/s.yaml", "--sweep", "budget=1..30000:1"],
            base,
            expect=frozenset({2}),
        ),
    ]


@dataclass
class Outcome:
    case: Case
    kind: str  # "exit N", "internal error", "traceback", "hang", "memory", "unsafe"
    code: int | None
    seconds: float
    tail: str

    @property
    def unexpected(self) -> bool:
        return not self.kind.startswith("exit ") or self.code not in self.case.expect


def _limits(case: Case) -> Callable[[], None]:
    """The child's set-up: the memory cap, the case's file-size and open-file limits."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP_BYTES, MEMORY_CAP_BYTES))
        if case.file_size_limit is not None:  # Python ignores SIGXFSZ: a write fails with EFBIG
            resource.setrlimit(resource.RLIMIT_FSIZE, (case.file_size_limit,) * 2)
        if case.open_files_limit is not None:
            resource.setrlimit(resource.RLIMIT_NOFILE, (case.open_files_limit,) * 2)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.setsid()
    return limit


def run_case(case: Case, timeout_s: float) -> Outcome:
    folder = Path(tempfile.mkdtemp(prefix="hostile-"))
    try:
        for name, text in case.files.items():
            (folder / name).write_text(text, encoding="utf-8", errors="surrogateescape")
        if case.setup is not None:
            case.setup(folder)
        args = [a.replace("{dir}", str(folder)) for a in case.args]
        started = time.perf_counter()
        proc = subprocess.Popen(
            [*PLAN, *args],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            preexec_fn=_limits(case),
            env={
                **os.environ,
                "COLUMNS": "200",
                "PYTHONPATH": str(ROOT),
                **{k: v.replace("{dir}", str(folder)) for k, v in case.env.items()},
            },
        )
        try:
            out, err = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            _, err = proc.communicate()
            return Outcome(
                case,
                "hang",
                None,
                time.perf_counter() - started,
                err.decode(errors="replace")[-300:],
            )
        seconds = time.perf_counter() - started
        text = err.decode(errors="replace")
        code = proc.returncode
        if "MemoryError" in text or code in (-9, 137):
            kind = "memory"
        elif "Traceback" in text:
            kind = "traceback"
        elif code == 70 or "internal error" in text:
            kind = "internal error"
        else:
            kind = f"exit {code}"
        problem = case.check(folder, out.decode(errors="replace"), text) if case.check else None
        if problem is not None:  # a write outside -o, an input or a row lost, raw escapes shown
            kind, text = "unsafe", f"{problem}; {text}"
        return Outcome(case, kind, code, seconds, " ".join(text.split())[-300:])
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("--only", default="")
    parser.add_argument("--list", action="store_true")
    opts = parser.parse_args()
    cases = [c for c in corpus() if opts.only in c.name]
    if opts.list:
        for case in cases:
            print(case.name)
        return 0
    started = time.perf_counter()
    with ThreadPoolExecutor(opts.jobs) as pool:
        outcomes = list(pool.map(lambda c: run_case(c, opts.timeout), cases))
    counts = Counter(o.kind for o in outcomes)
    print(f"{len(outcomes)} hostile inputs in {time.perf_counter() - started:.0f} s "
          f"(timeout {opts.timeout:g} s, memory cap {MEMORY_CAP_BYTES / 1024**3:g} GiB)")
    for kind in ("exit 0", "exit 1", "exit 2", "exit 3", "exit 130", "internal error", "traceback",
                 "hang", "memory", "unsafe"):
        print(f"  {kind:15} {counts.get(kind, 0)}")
    for kind in sorted(
        set(counts)
        - {
            "exit 0",
            "exit 1",
            "exit 2",
            "exit 3",
            "exit 130",
            "internal error",
            "traceback",
            "hang",
            "memory",
            "unsafe",
        }
    ):
        print(f"  {kind:15} {counts[kind]}")
    slowest = max(outcomes, key=lambda o: o.seconds)
    print(f"  slowest: {slowest.seconds:.1f} s ({slowest.case.name})")
    accepted = [o.case.name for o in outcomes if o.kind == "exit 0"]
    print(f"accepted with exit 0 ({len(accepted)}): {'; '.join(accepted)}")
    unexpected = [o for o in outcomes if o.unexpected]
    print(f"unexpected outcomes: {len(unexpected)}")
    for o in unexpected:
        print(f"  - {o.case.name}: {o.kind} (expected exit {sorted(o.case.expect)}): "
              f"{o.tail[-200:]}")
    bad = sum(counts.get(k, 0) for k in ("internal error", "traceback", "hang", "memory", "unsafe"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
