"""Hostile cases of issue 52 items 4 and 5 for bench/hostile_inputs.py: bounded parsing (huge
integers, files under the byte cap that build millions of values, thousands of problems, repeated
overlay entries) and `plan calibrate`'s inputs (long lines, NaN and absurd numbers, Latin-1 and
binary bytes, deep JSON, alias bombs in run.yaml, repeated columns), and calibration files that
`plan calibrate` wrote from hostile but acceptable runs, used by `plan solve --calibration`.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.hostile_inputs import PLAN, Case, scenario_text

REFUSED = frozenset({2})
DIGITS = "9" * 5000  # past Python's 4,300-digit conversion limit
DESCRIPTION = (
    "model: qwen2.5-72b\nmethod: lora\ngpu: a800-80gb\ngpus: 4\nseq_len: 4096\nframework: "
    "megatron\nlayout: tp=4 pp=1 dp=1 zero=0 mb=1 gb=128 recompute=none\n"
)
HEADER = "model,method,gpu,gpus,layout,seq_len,framework,tokens_per_s,peak_memory_gib\n"
LAYOUTS = (
    ("tp=4 pp=1 dp=1 zero=0 mb=1 gb=128 recompute=none", 4),
    ("tp=4 pp=1 dp=2 zero=0 mb=1 gb=128 recompute=none", 8),
    ("tp=8 pp=1 dp=1 zero=0 mb=1 gb=128 recompute=none", 8),
)
MEGATRON = (
    " [2026-08-01 10:0{i}:00] iteration        {i}/     100 | consumed samples: 128 | elapsed time "
    "per iteration (ms): {ms} | learning rate: 1.0E-05 | global batch size:   128 | lm loss: 2.0 "
    "|\n"
)
TITAN = "[titan] step: {i}  loss: 9.0  memory: {gib}GiB(78.48%)  tps: {tps}  mfu: 30.00%\n"
# 9^7 values once expanded, in 7 short lines
ALIAS_BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{b}: &{b} [{','.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdef", "bcdefg", strict=True)
)
MODEL = (
    "{id: m1, params: 8B, layers: 32, hidden_size: 4096, ffn_hidden_size: 14336, num_heads: 32, "
    "num_kv_heads: 8, vocab_size: 128256, max_positions: 8192, source: x}"
)
JSON_ROW = (
    '{"model": "qwen2.5-72b", "method": "lora", "gpu": "a800-80gb", "gpus": 4, "seq_len": 4096, '
    '"framework": "megatron", "layout": "tp=4 pp=1 dp=1 zero=0 mb=1 gb=128 recompute=none", '
)


def _row(layout: str, gpus: int, tps: str, memory: str = "60") -> str:
    return f"qwen2.5-72b,lora,a800-80gb,{gpus},{layout},4096,megatron,{tps},{memory}\n"


def _runs(first_tps: str, first_memory: str = "60") -> str:
    """Three runs of one scope; the first one's measurements as given (the hostile cell)."""
    (l1, g1), (l2, g2), (l3, g3) = LAYOUTS
    return (
        HEADER + _row(l1, g1, first_tps, first_memory) + _row(l2, g2, "3000") + _row(l3, g3, "2900")
    )


def _calibrate(
    name: str, args: list[str], files: dict[str, str | bytes], expect: frozenset[int] = REFUSED
) -> Case:
    return Case(
        f"calibrate: {name}",
        ["calibrate", *args, "-o", "{dir}/c.yaml"],
        setup=lambda d: _write(d, files),
        expect=expect,
    )


def _write(folder: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        data = content if isinstance(content, bytes) else content.encode("utf-8")
        (folder / name).write_bytes(data)


def yaml_cases() -> list[Case]:
    """Item 4: integers past the conversion limit, files that build too much, floods of problems."""
    deep_alias = (
        "a: &a " + "[" * 150 + "x" + "]" * 150 + "\nb: " + "[" * 100 + "*a" + "]" * 100 + "\n"
    )
    cases = [
        Case(
            "scenario: a 5,000-digit integer",
            ["solve", "{dir}/s.yaml"],
            {"s.yaml": scenario_text({}).replace("budget: 50k", f"budget: {DIGITS}")},
            expect=REFUSED,
        ),
        Case(
            "scenario: a 5,000-digit integer as a key",
            ["validate", "{dir}/s.yaml"],
            {"s.yaml": f"? {DIGITS}\n: 1\n" + scenario_text({})},
            expect=REFUSED,
        ),
        Case(
            "scenario: a sexagesimal integer of 600 parts",
            ["solve", "{dir}/s.yaml"],
            {"s.yaml": scenario_text({}).replace("seq_len: 2048", "seq_len: 1" + ":59" * 600)},
            expect=REFUSED,
        ),
        Case(
            "scenario: a 20,000-digit binary integer",
            ["solve", "{dir}/s.yaml"],
            {"s.yaml": scenario_text({}).replace("seq_len: 2048", "seq_len: 0b" + "1" * 20000)},
            expect=REFUSED,
        ),
        Case(
            "model card: a 5,000-digit integer",
            [
                "estimate",
                "--model",
                "{dir}/c.yaml",
                "--method",
                "lora",
                "--gpu",
                "h800",
                "--gpus",
                "8",
            ],
            {"c.yaml": f"id: c\nlayers: {DIGITS}\n"},
            expect=REFUSED,
        ),
        Case(
            "overlay: a 5,000-digit price",
            ["solve", "{dir}/s.yaml", "--catalog", "{dir}/o.yaml"],
            {
                "s.yaml": scenario_text({}),
                "o.yaml": "exchange_rates: {rates: {USD: " + DIGITS + "}}\n",
            },
            expect=REFUSED,
        ),
        Case(
            "--sweep: a 5,000-digit value",
            ["batch", "{dir}/s.yaml", "--sweep", f"budget={DIGITS}"],
            {"s.yaml": scenario_text({})},
            expect=REFUSED,
        ),
        Case(
            "4.8 MB list of 1.2M values",
            ["validate", "{dir}/l.yaml"],
            {"l.yaml": "- 1\n" * 1_200_000},
            expect=REFUSED,
        ),
        Case(
            "4.8 MB flow list of 2.4M values",
            ["validate", "{dir}/l.yaml"],
            {"l.yaml": "[" + "1," * 2_400_000 + "1]\n"},
            expect=REFUSED,
        ),
        Case(
            "4.6 MB mapping of 300k keys",
            ["validate", "{dir}/m.yaml"],
            {"m.yaml": "".join(f"k{i}: {i}\n" for i in range(300_000))},
            expect=REFUSED,
        ),
        Case(
            "100k plain keys",
            ["solve", "{dir}/m.yaml"],
            {"m.yaml": "".join(f"k{i}: 1\n" for i in range(100_000))},
            expect=REFUSED,
        ),
        Case(
            "50k unknown fields",
            ["solve", "{dir}/s.yaml"],
            {"s.yaml": scenario_text({}) + "".join(f"zz{i}: 1\n" for i in range(50_000))},
            expect=REFUSED,
        ),
        Case(
            "5,000 jobs with a bad field each",
            ["solve", "{dir}/s.yaml"],
            {
                "s.yaml": scenario_text(
                    {
                        "jobs": [
                            {
                                "id": f"j{i}",
                                "model": "llama3-8b",
                                "method": "qlora",
                                "tokens": "-1",
                                "seq_len": 2048,
                            }
                            for i in range(5000)
                        ]
                    }
                )
            },
            expect=REFUSED,
        ),
        Case(
            "aliases nest past 200 levels",
            ["validate", "{dir}/a.yaml"],
            {"a.yaml": deep_alias},
            expect=REFUSED,
        ),
        Case(
            "alias bomb as a catalog overlay",
            ["catalog", "gpus", "--catalog", "{dir}/o.yaml"],
            {"o.yaml": ALIAS_BOMB},
            expect=REFUSED,
        ),
    ]
    offer = (
        "{gpu: rtx4090, billing: hourly, price_per_gpu_period: %s, currency: CNY, source: q, "
        "as_of: 2026-11-20}"
    )
    for name, text in (
        (
            "two entries for one platform",
            "platforms:\n  - {id: zhixingyun, name: a}\n  - {id: zhixingyun, name: b}\n",
        ),
        (
            "two offers for one GPU and billing",
            "platforms:\n  - id: zhixingyun\n    offers:\n      - "
            + offer % "0.99"
            + "\n      - "
            + offer % "0.5"
            + "\n",
        ),
        ("two entries for one model", f"models:\n  - {MODEL}\n  - {MODEL.replace('8B', '9B')}\n"),
    ):
        cases.append(
            Case(
                f"overlay: {name}",
                ["solve", "{dir}/s.yaml", "--catalog", "{dir}/o.yaml"],
                {"s.yaml": scenario_text({}), "o.yaml": text},
                expect=REFUSED,
            )
        )
    return cases


def calibrate_cases() -> list[Case]:
    """Item 5: `plan calibrate` inputs."""
    long_megatron = (
        "iteration 1/ 1 |" * 75_000
    )  # 1.2 MB, no "elapsed": every start rescanned the rest
    long_titan = "step: 1 " + "memory: 1.0GiB " * 80_000  # 1.2 MB, no "tps"
    csv = ["{dir}/r.csv"]
    cases = [
        _calibrate(f"tokens_per_s {value[:12]}", csv, {"r.csv": _runs(value)})
        for value in ("nan", "inf", "-inf", "1e300", "1e-300", "0", "-5", "1" * 400)
    ]
    log, two, desc = ["{dir}/a.log"], ["{dir}/a.log", "{dir}/b.log"], {"run.yaml": DESCRIPTION}
    first = MEGATRON.format(i=3, ms="250000.0")
    cases += [
        _calibrate("peak_memory_gib nan", csv, {"r.csv": _runs("1500", "nan")}),
        _calibrate(
            "a Latin-1 byte in a CSV",
            csv,
            {
                "r.csv": _runs("1500")
                .encode("utf-8")
                .replace(b"megatron,3000", b"megatron\xe9,3000")
            },
        ),
        _calibrate(
            "binary bytes in a CSV", csv, {"r.csv": b"\x00\x01\x02" + _runs("1500").encode("utf-8")}
        ),
        _calibrate(
            "a column twice",
            csv,
            {
                "r.csv": HEADER.strip()
                + ",tokens_per_s\n"
                + "".join(line + ",1\n" for line in _runs("1500").splitlines()[1:])
            },
        ),
        _calibrate("a 1.2 MB CSV line", csv, {"r.csv": _runs("1500") + "x" * 1_200_000 + "\n"}),
        _calibrate(
            "a 200 kB quoted CSV cell",
            csv,
            {"r.csv": _runs("1500") + '"' + "a\n" * 100_000 + '"\n'},
        ),
        _calibrate(
            "3,000 rows",
            csv,
            {"r.csv": HEADER + "".join(_row(*LAYOUTS[0], "1500") for _ in range(3000))},
        ),
        _calibrate(
            "JSONL NaN",
            ["{dir}/r.jsonl"],
            {"r.jsonl": JSON_ROW + '"tokens_per_s": NaN}\n' + JSON_ROW + '"tokens_per_s": 1500}\n'},
        ),
        _calibrate(
            "JSONL key twice",
            ["{dir}/r.jsonl"],
            {
                "r.jsonl": JSON_ROW + '"tokens_per_s": 1, '
                '"tokens_per_s": 1500}\n' + JSON_ROW + '"tokens_per_s": 1500}\n'
            },
        ),
        _calibrate(
            "JSONL 5,000-digit integer",
            ["{dir}/r.jsonl"],
            {"r.jsonl": '{"gpus": ' + DIGITS + "}\n"},
        ),
        _calibrate(
            "JSONL nested 50,000 deep",
            ["{dir}/r.jsonl"],
            {"r.jsonl": "[" * 50_000 + "]" * 50_000 + "\n"},
        ),
        _calibrate(
            "JSONL nested 20,000 deep",
            ["{dir}/r.jsonl"],
            {"r.jsonl": "[" * 20_000 + "]" * 20_000 + "\n"},
        ),
        _calibrate(
            "trainer_state.json nested 100,000 deep",
            ["{dir}/trainer_state.json"],
            {"trainer_state.json": "[" * 100_000 + "]" * 100_000, **desc},
        ),
        _calibrate(
            "trainer_state.json samples/s 'NaN'",
            ["{dir}/a/trainer_state.json", "{dir}/b/trainer_state.json"],
            {
                "a/trainer_state.json": json.dumps(
                    {"log_history": [{"train_samples_per_second": "NaN"}]}
                ),
                "b/trainer_state.json": json.dumps(
                    {"log_history": [{"train_samples_per_second": 0.5}]}
                ),
                "a/run.yaml": DESCRIPTION,
                "b/run.yaml": DESCRIPTION,
            },
        ),
        _calibrate("run.yaml alias bomb", log, {"a.log": first, "run.yaml": ALIAS_BOMB}),
        _calibrate(
            "run.yaml nested 5,000 deep", log, {"a.log": first, "run.yaml": "[" * 5000 + "]" * 5000}
        ),
        _calibrate(
            "run.yaml 5,000-digit gpus",
            log,
            {"a.log": first, "run.yaml": DESCRIPTION.replace("gpus: 4", f"gpus: {DIGITS}")},
        ),
        _calibrate("log elapsed 1.2.3", log, {"a.log": MEGATRON.format(i=3, ms="1.2.3"), **desc}),
        _calibrate("log elapsed 0", log, {"a.log": MEGATRON.format(i=3, ms="0"), **desc}),
        _calibrate(
            "log with a Latin-1 byte",
            two,
            {"a.log": first.encode() + b"\xe9\n", "b.log": first, **desc},
        ),
        _calibrate(
            "titan memory of 400 digits",
            two,
            {
                "a.log": TITAN.format(i=3, gib="9" * 400, tps="500"),
                "b.log": TITAN.format(i=3, gib="60", tps="500"),
                **desc,
            },
        ),
    ]
    megatron = "".join(MEGATRON.format(i=i, ms=ms) for i, ms in ((3, 250000.0), (4, 262144.0)))
    titan = "".join(TITAN.format(i=i, gib=60, tps=tps) for i, tps in ((3, 500), (4, 520)))
    for name, good, line in (("megatron", megatron, long_megatron), ("titan", titan, long_titan)):
        logs = {f"{r}.log": good + line + "\n" + line[:60_000] + "\n" for r in ("a", "b")}
        cases.append(
            _calibrate(
                f"1.2 MB and 60 kB {name} lines in two logs",
                ["{dir}/a.log", "{dir}/b.log"],
                {**logs, **desc},
                expect=frozenset({0, 2}),
            )
        )
    return cases


def _calibrated_from_edges(folder: Path) -> None:
    """`plan calibrate` on runs at the edges of what it accepts (0.05 x and 20 x the estimate,
    quoted cells, CRLF, a byte-order mark, odd file names): the case then uses the file written."""
    from plan.models.catalog import builtin_catalog
    from plan.planner.calibrate.parsers import run_from_fields
    from plan.planner.calibrate.predict import predict

    rows = []
    for (layout, gpus), scale in zip(LAYOUTS, (0.0501, 19.99, 1.0), strict=True):
        row = {
            "model": "qwen2.5-72b",
            "method": "lora",
            "gpu": "a800-80gb",
            "gpus": gpus,
            "layout": layout,
            "seq_len": 4096,
            "framework": "megatron",
            "tokens_per_s": 1.0,
        }
        predicted = predict(run_from_fields(row, "bench"), builtin_catalog()).tokens_per_s
        rows.append(
            f'qwen2.5-72b,lora,a800-80gb,{gpus},"{layout}",4096,megatron,'
            f'"{predicted * scale:,.3f}",\r\n'
        )
    name = folder / "runs \u202e\x1b[31m\n.csv"
    name.write_bytes(
        b"\xef\xbb\xbf" + (HEADER.replace("\n", "\r\n") + "".join(rows)).encode("utf-8")
    )
    subprocess.run(
        [*PLAN, "calibrate", str(name), "-o", str(folder / "c.yaml")],
        capture_output=True,
        check=False,
        timeout=120,
    )


def round_trip_cases() -> list[Case]:
    case = Case(
        "calibration written from edge runs, then used",
        ["solve", "{dir}/s.yaml", "--calibration", "{dir}/c.yaml"],
        {"s.yaml": scenario_text({})},
        setup=_calibrated_from_edges,
        expect=frozenset({0, 1, 3}),
    )
    return [case]


def parsing_cases() -> list[Case]:
    return [*yaml_cases(), *calibrate_cases(), *round_trip_cases()]


if __name__ == "__main__":
    print("\n".join(c.name for c in parsing_cases()), file=sys.stderr)
