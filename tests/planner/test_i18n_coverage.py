"""Chinese output says everything in Chinese (issue 51 item 6, "every message exists in both
languages"): the shipped scenarios that reach the most sentences (capacity and instance notes,
assumed efficiencies and widened bands, residual values, reservations and purchases, budgets per
period, alternatives) solved with --lang zh print no run of three English words, apart from what
is quoted on purpose: the catalog's and the scenario's own notes (evidence, quoted as written),
ids, units and layout fields (none of which makes such a run)."""

from __future__ import annotations

import ast
import copy
import dataclasses
import re
import string
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from pydantic import BaseModel
from typer.testing import CliRunner

from plan.models.catalog import builtin_catalog
from plan.models.loading import load_scenario
from plan.planner import i18n
from plan.planner.candidates.build import MEMORY_NOTE_KEYS
from plan.planner.cli.app import app
from plan.planner.estimate.band import uncalibrated_band_note
from plan.planner.estimate.memory_notes import HOST_SHORTFALL_NOTE
from plan.planner.i18n.plan_words import billing_line
from plan.planner.i18n.said import local, phrase, say, say_as, word
from tests.hardening.hostile_base import HOSTILE_BASE, set_field

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = ("medical_hybrid", "rubin_buy_or_rent", "finance_year")
ENGLISH_LOCALE = {"LC_ALL": None, "LC_MESSAGES": None, "LANG": "C.UTF-8"}

# a word: ASCII letters (an apostrophe or hyphen inside), not part of an id, a number, a unit
# (Gb/s, tokens/s), a field (tp=4) or a dotted name (solver.work_limit)
_WORD = r"(?<![A-Za-z0-9_./=+-])[A-Za-z][A-Za-z'-]*(?![A-Za-z0-9_./=+'-])"
ENGLISH_RUN = re.compile(rf"{_WORD}(?:[ ,;:()\"]+{_WORD}){{2,}}")
BOX = "│┃┏┡└┗┣┠╇┩━─"


def _strings(value: object) -> Iterator[str]:
    """Every string inside a catalog or scenario (its notes, names and sources)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, BaseModel):
        yield from _strings(value.model_dump())
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        yield from _strings({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from _strings(item)


def _quoted_notes(path: Path) -> list[str]:
    """The notes the answer quotes as written, longest first (one may hold another)."""
    loaded = load_scenario(path)
    found = {text for text in _strings((loaded.catalog, loaded.scenario)) if text.count(" ") >= 2}
    return sorted(found, key=len, reverse=True)


def _unwrapped(output: str) -> list[str]:
    """The printed lines with the console's wrapping undone: a line starting at the margin (not
    an item, a heading or a table row) continues the one before it."""
    lines: list[str] = []
    for line in output.splitlines():
        starts = line[:1]
        if lines and starts and not starts.isspace() and starts not in BOX:
            # a break between two ASCII words lost its space where the line was full
            gap = " " if lines[-1][-1:].isascii() and starts.isascii() else ""
            lines[-1] += (gap if not lines[-1].endswith(" ") else "") + line
        else:
            lines.append(line)
    return lines


def english_runs(output: str, quoted: list[str]) -> list[str]:
    left = []
    for line in _unwrapped(output):
        for note in quoted:
            line = line.replace(note, "")
        left += [f"{run!r} in: {line.strip()[:160]}" for run in
                 (m.group(0) for m in ENGLISH_RUN.finditer(line))]
    return left


def test_the_detector_finds_english_and_passes_ids_units_and_layouts() -> None:
    english = "  - lambda rents b200 (hourly) only as whole 8-GPU instances"
    chinese = ("  - domain-cpt：aliyun-pai 上 48 张 h800（按量计费），megatron: tp=4 pp=6 dp=2 "
               "zero=1 recompute=none mb=1；吞吐 46,577 tokens/秒，MFU 45%；1 Gb/s 互联网链路")
    assert english_runs(english, []) != []
    assert english_runs(chinese, []) == []
    assert english_runs(f"{chinese}：a note quoted as written", ["a note quoted as written"]) == []
    wrapped = "  - 规划期末残值（60% of the \nprice: straight-line）"
    assert english_runs(wrapped, []) != []


@pytest.mark.parametrize("stem", SCENARIOS)
def test_chinese_solve_output_holds_no_english_sentence(stem: str) -> None:
    path = REPO / "scenarios" / f"{stem}.yaml"
    result = CliRunner().invoke(app, ["solve", str(path), "--lang", "zh"], env=ENGLISH_LOCALE)
    assert result.exit_code == 0, result.output
    assert "方案 1" in result.output  # it is the Chinese answer
    assert english_runs(result.output, _quoted_notes(path)) == []


def test_estimate_notes_read_back_as_plain_text_are_said_again() -> None:
    """An estimate's notes and mechanisms come back from the store as plain text: the plan still
    says them in Chinese, read back through their English templates."""
    note = say("memory.shortfall", host_gib=300.0, host_cap=64.0, said=phrase("assumed"))
    assert note.startswith(HOST_SHORTFALL_NOTE)
    assert note == ("CPU offload: the 300.0 GiB of model states per GPU exceed the 64 GiB of host "
                    "memory per GPU assumed free; they stay on the GPU")
    stored = str(note)  # what the estimate store gives back
    line = say("note.of", who="sft", note=phrase(stored, *MEMORY_NOTE_KEYS))
    band = uncalibrated_band_note(("blackwell GPUs' compute efficiency", "CPU offload traffic"))
    assert line == f"sft: {stored}"
    with i18n.kept_language():
        i18n.choose("zh")
        assert local(line) == ("sft：CPU 卸载：每卡 300.0 GiB 的模型状态超过每卡 64 GiB 的"
                               "空闲主机内存（假设值），因此仍留在显卡上")
        assert "blackwell 架构显卡的计算效率、CPU 卸载的数据传输" in local(band)
        assert local(phrase("an unknown phrase").text()) == "an unknown phrase"


def test_reservation_and_purchase_labels_follow_the_language() -> None:
    label = say("label.reservation", billing=word("billing", "monthly"), gpu="h800",
                platform="autodl")
    alone = say("label.held_alone", label=label, job="sft")
    bought = say("label.buy_cash", gpu="a800-80gb", unit=say("label.unit", n=8), price=150_000,
                 currency="CNY")
    assert alone == "monthly reservation of h800 on autodl, held for sft alone"
    assert bought == "buy a800-80gb in 8-GPU units at 150,000 CNY/GPU, paid in cash"
    assert billing_line(alone) == alone  # English: the label as it always was
    with i18n.kept_language():
        i18n.choose("zh")
        assert billing_line(alone) == "autodl 上 h800 的包月预留，由 sft 独占"
        assert local(bought) == "采购 a800-80gb（每 8 张卡为一单位），每卡 150,000 CNY，现金支付"
        assert english_runs(billing_line(f"reservation: {local(label)}"), []) == []


BAD_INPUTS = {  # (a change to student_no_ops.yaml, what the English line says)
    "budget: -5": "budget: got -5; must be above 0",
    "seq_len: 0": "jobs[0].seq_len: got 0; must be above 0",
    "method: lorra": "jobs[0].method: got 'lorra'; input should be 'pretrain',",
    "model: qwen2.5-14x": "jobs[0].model: unknown model 'qwen2.5-14x'; did you mean",
    "ops_skill: expert1": "ops_skill: got 'expert1'; input should be 'none', 'basic' or 'expert'",
}


@pytest.mark.parametrize("change", BAD_INPUTS)
def test_input_errors_are_said_in_chinese_and_unchanged_in_english(
        change: str, tmp_path: Path) -> None:
    text = (REPO / "scenarios" / "student_no_ops.yaml").read_text(encoding="utf-8")
    field = change.split(":")[0]
    changed = re.sub(rf"(?m)^(\s*){field}: .*$", rf"\g<1>{change}", text, count=1)
    assert changed != text
    path = tmp_path / "bad.yaml"
    path.write_text(changed, encoding="utf-8")
    english = CliRunner().invoke(app, ["solve", str(path)], env=ENGLISH_LOCALE)
    assert english.exit_code == 2
    assert BAD_INPUTS[change] in english.output
    chinese = CliRunner().invoke(app, ["solve", str(path), "--lang", "zh"], env=ENGLISH_LOCALE)
    assert chinese.exit_code == 2
    assert chinese.output.startswith("错误：")
    assert re.search("收到|未知的模型", chinese.output)
    assert english_runs(chinese.output, []) == [], chinese.output


def _hostile(changes: dict[str, object]) -> str:
    """The hardening tests' starting scenario with `changes` (dotted paths) made."""
    data = copy.deepcopy(HOSTILE_BASE)
    for dotted, value in changes.items():
        set_field(data, dotted, value)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


_OVERLAY_ARGS = ["--catalog", "{dir}/o.yaml"]
# (files written into the case's folder, the scenario named, more arguments, what the English
# line says): a representative share of bench/hostile_inputs.py's bad inputs
HOSTILE_CASES: dict[str, tuple[dict[str, str], str, list[str], str]] = {
    "missing file": ({}, "nope.yaml", [], "nope.yaml: scenario file not found"),
    "folder": ({"d/x": "x"}, "d", [], "d: is a folder, expected a scenario file"),
    "empty file": ({"s.yaml": "  \n"}, "s.yaml", [], "s.yaml: empty scenario file"),
    "binary file": ({"s.yaml": "\x00\x01"}, "s.yaml", [], "binary file, expected YAML text"),
    "duplicate keys": ({"s.yaml": "name: a\nname: b\n"}, "s.yaml", [],
                       "line 2: duplicate key 'name'; each key may appear once"),
    "a list": ({"s.yaml": "- 1\n"}, "s.yaml", [],
               "expected a mapping of scenario fields (name, jobs, ...), got list"),
    "no jobs": ({"s.yaml": _hostile({"jobs": []})}, "s.yaml", [],
                "jobs: List should have at least 1 item after validation, not 0"),
    "jobs not a list": ({"s.yaml": _hostile({"jobs": "x"})}, "s.yaml", [],
                        "jobs: Input should be a valid list"),
    "pool not a mapping": ({"s.yaml": _hostile({"owned.0": 5})}, "s.yaml", [],
                           "owned[0]: Input should be a valid dictionary or instance of OwnedPool"),
    "currency pattern": ({"s.yaml": _hostile({"currency": "usd"})}, "s.yaml", [],
                         "currency: String should match pattern '^[A-Z]{3}$'"),
    "unknown currency": ({"s.yaml": _hostile({"currency": "ZZZ"})}, "s.yaml", [],
                         "currency: no exchange rate for 'ZZZ'; known: CNY, USD"),
    "after itself": ({"s.yaml": _hostile({"jobs.0.after": ["a"]})}, "s.yaml", [],
                     "jobs[0].after: job 'a' cannot come after itself"),
    "bad id": ({"s.yaml": _hostile({"jobs.0.id": "[/]"})}, "s.yaml", [],
               "jobs[0].id: '[/]' is not a valid id (1-128 characters"),
    "money suffix": ({"s.yaml": _hostile({"purchase": [{"gpu": "h800",
                                                         "price_per_gpu": ".inf"}]})},
                     "s.yaml", [], "unknown suffix 'inf' in '.inf'; allowed: a number"),
    "overlay section": ({"s.yaml": _hostile({}), "o.yaml": "unknown_section: 1\n"}, "s.yaml",
                        _OVERLAY_ARGS, "unknown_section: unknown section; allowed: models"),
    "overlay not a list": ({"s.yaml": _hostile({}), "o.yaml": "platforms: 7\n"}, "s.yaml",
                           _OVERLAY_ARGS, "o.yaml: platforms: expected a list of entries"),
    "optimizer not on megatron": ({"s.yaml": _hostile({"jobs.0.method": "lora",
                                                       "jobs.0.framework": "megatron",
                                                       "jobs.0.optimizer": "adamw-8bit"})},
                                  "s.yaml", [], "jobs[0]: optimizer adamw-8bit is a PyTorch "
                                  "optimizer (bitsandbytes, Adafactor, pure BF16 AdamW) that "
                                  "Megatron-LM does not run"),
    "loss not on megatron": ({"s.yaml": _hostile({"jobs.0.method": "lora",
                                                  "jobs.0.framework": "megatron",
                                                  "jobs.0.loss": "chunked"})},
                             "s.yaml", [], "loss chunked is a PyTorch stack's loss (fsdp, "
                             "deepspeed); Megatron's vocab-parallel cross-entropy"),
    "hybrid shard on megatron": ({"s.yaml": _hostile({"jobs.0.method": "lora",
                                                      "jobs.0.framework": "megatron",
                                                      "jobs.0.hybrid_shard": True})},
                                 "s.yaml", [], "hybrid_shard: hybrid sharding is FSDP's (HSDP); "
                                 "framework megatron has none: leave hybrid_shard out"),
    "card shape": ({"s.yaml": _hostile({"jobs.0.model": "c.yaml"}), "c.yaml": yaml.safe_dump(
        {"id": "c", "params": "70B", "layers": 2, "hidden_size": 64, "ffn_hidden_size": 128,
         "num_heads": 4, "num_kv_heads": 4, "vocab_size": 1000, "max_positions": 4096,
         "source": "x"})}, "s.yaml", [], "does not match the shape"),
}


@pytest.mark.parametrize("case", HOSTILE_CASES)
def test_bad_inputs_are_said_in_chinese_and_unchanged_in_english(case: str,
                                                                 tmp_path: Path) -> None:
    files, name, more, english_line = HOSTILE_CASES[case]
    for file, text in files.items():
        (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / file).write_text(text, encoding="utf-8")
    args = ["solve", str(tmp_path / name), *(a.replace("{dir}", str(tmp_path)) for a in more)]
    english = CliRunner().invoke(app, args, env=ENGLISH_LOCALE)
    assert english.exit_code == 2
    assert english.output.startswith("error: ") and english_line in english.output
    chinese = CliRunner().invoke(app, [*args, "--lang", "zh"], env=ENGLISH_LOCALE)
    assert chinese.exit_code == 2
    assert chinese.output.startswith("错误：")
    assert english_runs(chinese.output, []) == [], chinese.output


def test_the_pareto_front_is_said_in_chinese() -> None:
    path = REPO / "scenarios" / "student_no_ops.yaml"
    english = CliRunner().invoke(app, ["pareto", str(path), "-q"], env=ENGLISH_LOCALE)
    chinese = CliRunner().invoke(app, ["pareto", str(path), "-q", "--lang", "zh"],
                                 env=ENGLISH_LOCALE)
    assert english.exit_code == chinese.exit_code == 0
    assert "points on the cost/time front" in english.output and "hourly" in english.output
    assert "费用/工期前沿" in chinese.output and "总费用（元）" in chinese.output
    assert english_runs(chinese.output, _quoted_notes(path)) == []


CLI_FILES = (*(REPO / "planner" / "cli").glob("*.py"), REPO / "planner/explain/why_not.py",
             REPO / "planner/cpsat/run.py", REPO / "planner/cpsat/overflow_guard.py",
             REPO / "planner/output_target.py", REPO / "planner/export/writer.py",
             REPO / "planner/batch/sweep.py", REPO / "planner/batch/results_file.py",
             REPO / "planner/batch/output_lock.py", REPO / "planner/batch/rows.py",
             REPO / "planner/batch/row_check.py", *(REPO / "planner" / "export").glob("*.py"),
             REPO / "planner/estimate/stages.py", REPO / "planner/estimate/spec_check.py",
             REPO / "planner/estimate/layout_checks.py", REPO / "planner/estimate/refusal.py",
             REPO / "planner/estimate/stack_rules.py", REPO / "planner/estimate/types.py",
             REPO / "planner/estimate/memory_notes.py", REPO / "planner/batch/ray_backend.py",
             REPO / "planner/pareto/plot.py",
             *(REPO / "planner" / "calibrate").glob("*.py"))


def test_every_command_line_template_is_the_english_tables_own() -> None:
    """A command's error line keeps its English in the call (`say_as`): the table holds the very
    template, so English output is unchanged, and the Chinese table the same fields."""
    used: dict[str, set[str]] = {}
    for path in CLI_FILES:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "say_as"):
                key, template = (ast.literal_eval(arg) for arg in node.args[:2])
                used.setdefault(key, set()).add(template)
    assert len(used) >= 30
    assert {key: found for key, found in used.items()
            if found != {i18n.TABLES["en"].get(key)}} == {}
    for key in used:
        fields = {name for _, name, _, _ in string.Formatter().parse(i18n.TABLES["en"][key])
                  if name}
        assert fields == {name for _, name, _, _ in string.Formatter().parse(
            i18n.TABLES["zh"][key]) if name}, key


_SWEEP = "student_no_ops.yaml"
_EST = ["estimate", "--model", "qwen2.5-7b", "--method", "sft", "--gpu", "h800"]
# (arguments, the English line): errors of the command line, each exit 2
CLI_ERRORS: dict[str, tuple[list[str], str]] = {
    "required": (_EST, "--gpus: required: how many GPUs, e.g. --gpus 8"),
    "not one of": ([*_EST, "--gpus", "8", "--recompute", "bogus"],
                   "--recompute: 'bogus' is not one of none, selective, full, full_offload, "
                   "offload"),
    "at least one": ([*_EST, "--gpus", "0"], "--gpus: must be at least 1, got 0"),
    "at most": ([*_EST, "--gpus", "8", "--tp", "99999"], "--tp: at most 4,096, got 99,999"),
    "headroom": ([*_EST, "--gpus", "8", "--headroom", "5"],
                 "--headroom: a fraction of the card from 0 to 0.5, got 5"),
    "adapter only": ([*_EST, "--gpus", "8", "--lora-rank", "8"],
                     "--lora-rank: only for lora, qlora, lora_dpo, qlora_dpo, not for sft"),
    "tokens range": ([*_EST, "--gpus", "8", "--tokens", "0"], "--tokens: from 1 to 1e+15, got '0'"),
    "seq len unit": ([*_EST, "--gpus", "8", "--seq-len", "1M"],
                     "--seq-len: unknown suffix 'M' in '1M'; allowed: a whole number of tokens"),
    "positions": ([*_EST, "--gpus", "8", "--seq-len", "200k"],
                  "--seq-len: 204800 exceeds qwen2.5-7b's max_positions 131072"),
    "tokens short": ([*_EST, "--gpus", "8", "--tokens", "1000"],
                     "--tokens: 1,000 is less than one sequence of --seq-len 4096"),
    "step over tokens": ([*_EST, "--gpus", "8", "--tokens", "1M", "--global-batch", "1000"],
                         "--global-batch: one step (1000 x 4096 tokens) is more than --tokens "
                         "(1M)"),
    "unknown platform": ([*_EST, "--gpus", "8", "--platform", "nope"],
                         "--platform: unknown platform 'nope'; did you mean"),
    "why-not pairs": (["explain", "{s}", "--why-not", "foo"],
                      "--why-not: expected key=value pairs with keys job, platform, gpu, gpus, "
                      "billing, got 'foo'"),
    "why-not gpus": (["explain", "{s}", "--why-not", "gpus=0"],
                     "--why-not: gpus must be a whole number from 1 to 1,000,000, got '0'"),
    "why-not billing": (["explain", "{s}", "--why-not", "billing=x"],
                        "--why-not: billing: 'x' is not a billing mode; use one of hourly,"),
    "why-not empty": (["explain", "{s}", "--why-not", ","],
                      "--why-not: give at least one of job, platform, gpu, gpus, billing"),
    "address": (["batch", "{s}", "--address", "x"], "--address is for --backend ray"),
    "overlay": (["batch", "{s}", "--catalog", "{dir}/none.yaml"],
                "none.yaml: --catalog overlay file not found"),
    "results folder": (["batch", "{s}", "-o", "{dir}/none/x.csv"], "/none not found"),
    "sweep size": (["batch", "{s}", "--sweep", "budget=1,2,3", "--max-variants", "2"],
                   "--sweep: 1 scenario file(s) x 3 variant(s) = 3 rows; at most 2 per run "
                   "(--max-variants N raises it)"),
    "sweep form": (["batch", "{s}", "--sweep", "budget"],
                   "--sweep 'budget': expected FIELD=A,B,C or FIELD=START..STOP:STEP, e.g. "
                   "budget=100k..500k:50k or deadline=14d,21d,30d"),
    "sweep range": (["batch", "{s}", "--sweep", "budget=1..2"],
                    "--sweep 'budget=1..2': a range is START..STOP:STEP, e.g. "
                    "budget=100k..500k:50k"),
    "sweep value": (["batch", "{s}", "--sweep", "budget=a..b:1"],
                    "got 'a' (a range of budget reads like 100k..500k:50k)"),
    "sweep step": (["batch", "{s}", "--sweep", "budget=1..5:0"],
                   "--sweep 'budget=1..5:0': STEP must be > 0"),
    "sweep stop": (["batch", "{s}", "--sweep", "budget=5..1:1"],
                   "--sweep 'budget=5..1:1': STOP is below START"),
    "sweep not a number": (["batch", "{s}", "--sweep", "name=1..2:1"],
                           "--sweep 'name=1..2:1': 'name' is not a number; give a list of "
                           "values, e.g. name=A,B"),
    "sweep empty item": (["batch", "{s}", "--sweep", "budget=1,,2"],
                         "--sweep 'budget=1,,2': empty item in the list; write FIELD=A,B,C"),
    "sweep twice": (["batch", "{s}", "--sweep", "budget=1,2", "--sweep", "budget=3"],
                    "--sweep 'budget': the field is already swept by --sweep 'budget'"),
    "sweep too long": (["batch", "{s}", "--sweep", "budget=1..100000:1"],
                       "--sweep 'budget=1..100000:1': 100000 values; at most 10000 (check STEP)"),
    "results format": (["batch", "{s}", "-o", "{dir}/r.txt"],
                       "r.txt: unknown results format '.txt'; use a .csv or .jsonl file"),
    "results foreign": (["batch", "{s}", "-o", "{dir}/foreign.csv"],
                        "foreign.csv: exists and is not a `plan batch` results file (columns are "
                        "x); refusing to overwrite it: choose another -o or remove it"),
    "report suffix": (["report", "{s}", "-o", "{dir}/x.txt"],
                      "x.txt: the report is an HTML page; name it .html"),
    "calibration suffix": (["calibrate", "{dir}/none.log", "-o", "{dir}/x.txt"],
                           "x.txt: the calibration overlay is YAML; name it .yaml"),
    "report is a folder": (["report", "{s}", "-o", "{dir}/d.html"],
                           "d.html: is a folder; name a file"),
    "output folder missing": (["report", "{s}", "-o", "{dir}/none/r.html"],
                              "/none does not exist"),
    "output is a folder": (["calibrate", "{dir}/none.log", "-o", "{dir}/d.yaml"],
                           "d.yaml: is a folder; name a file"),
    "loss on megatron": ([*_EST, "--gpus", "8", "--framework", "megatron", "--loss", "chunked"],
                         "--loss: chunked is a PyTorch stack's loss (fsdp, deepspeed); Megatron's "
                         "vocab-parallel cross-entropy holds the whole logits: use loss plain, or "
                         "framework fsdp or deepspeed"),
    "no valid layout": ([*_EST, "--gpus", "16", "--pp", "1", "--global-batch", "1"],
                        "--gpus: no valid layout for qwen2.5-7b on 16 x h800: global batch too "
                        "small for dp (3 layouts); tp incompatible with heads (1 layout); tp spans "
                        "nodes (1 layout)"),
    "tp heads": ([*_EST, "--gpus", "8", "--tp", "8"],
                 "--tp: 8 does not divide the 28 attention heads"),
    "tp gpus": ([*_EST, "--gpus", "8", "--tp", "3"], "--tp: 3 does not divide the 8 GPUs"),
    "cp split": ([*_EST, "--gpus", "8", "--tp", "2", "--pp", "2", "--cp", "4"],
                 "--cp: tp x pp x cp = 2 x 2 x 4 does not divide the 8 GPUs"),
    "ulysses heads": ([*_EST, "--gpus", "8", "--cp", "4", "--framework", "deepspeed", "--tp", "2"],
                      "--cp: DeepSpeed's cp is Ulysses, which hands each rank whole attention "
                      "heads: the 14 heads per tensor-parallel rank do not divide by cp = 4"),
    "ulysses fp8": ([*_EST, "--gpus", "8", "--cp", "2", "--framework", "deepspeed", "--precision",
                     "fp8"], "; use precision bf16, cp 1 or framework megatron or fsdp"),
    "eager ring": ([*_EST, "--gpus", "8", "--cp", "2", "--attention", "eager"],
                   "cannot run eager attention at cp=2; use flash attention, cp 1 or framework "
                   "deepspeed"),
    "ep dense": ([*_EST, "--gpus", "8", "--ep", "2"],
                 "--ep: 2 expert-parallel ranks need an MoE model; this one is dense"),
    "zero pipelined": ([*_EST, "--gpus", "8", "--zero", "2", "--framework", "deepspeed", "--pp",
                        "2"], "--zero: deepspeed runs ZeRO stage 0 or 1 under pipeline parallelism "
                       "(pp=2: its pipeline engine refuses ZeRO-2 and ZeRO-3), not 2"),
    "zero stages": ([*_EST, "--gpus", "8", "--zero", "1", "--framework", "fsdp"],
                    "--zero: fsdp runs ZeRO stage 0 or 2 or 3, not 1"),
    "pure bf16": ([*_EST, "--gpus", "8", "--optimizer", "adamw-bf16", "--precision", "fp16"],
                  "--optimizer: adamw-bf16 is pure BF16 training (weights and moments in bf16)"),
    "recompute layers": ([*_EST, "--gpus", "8", "--recompute-layers", "500"],
                         "--recompute-layers: 500 layers per chunk is Megatron's block "
                         "recomputation: 1 to the model's 28 layers, with recompute full and "
                         "framework megatron"),
    "capacity": ([*_EST, "--gpus", "8", "--capacity-factor", "0.5"],
                 "--capacity-factor: must be a number of at least 1 (an even split; below it "
                 "tokens are dropped even at an even load), got 0.5"),
    "micro shares": ([*_EST, "--gpus", "8", "--micro-batch", "3", "--global-batch", "16",
                      "--framework", "deepspeed"],
                     "--micro-batch: deepspeed needs micro-batch x accumulation steps = each "
                     "replica's share of the global batch (16 over dp = 1, 8 over dp = 2, 4 over "
                     "dp = 4, 2 over dp = 8), and 3 divides none of them"),
    "cp sequence": ([*_EST, "--gpus", "8", "--seq-len", "6", "--cp", "4", "--framework",
                     "megatron"], "--cp: 4 does not divide the sequence length 6"),
    "offload split": ([*_EST, "--gpus", "8", "--recompute", "full_offload", "--tp", "2"],
                      "--recompute: offloaded checkpoints run on LLaMA-Factory's Hugging Face path "
                      "(use_unsloth_gc), which has no tensor, pipeline, context or expert "
                      "parallelism; the job fixes full_offload with tp=2 pp=1 cp=1"),
    "offload on megatron": ([*_EST, "--gpus", "8", "--recompute", "full_offload", "--framework",
                             "megatron"], "--recompute: full_offload (checkpoints in host memory: "
                            "Unsloth's gradient checkpointing"),
    "hybrid one node": ([*_EST, "--gpus", "8", "--hybrid-shard", "on"],
                        "--hybrid-shard: the 8 GPUs fit one node of 8: there are no nodes to "
                        "replicate across"),
    "qlora fp8": (["estimate", "--model", "qwen2.5-7b", "--method", "qlora", "--gpu", "h800",
                   "--gpus", "8", "--precision", "fp8"],
                  "precision fp8 with qlora: bitsandbytes dequantizes the 4-bit base"),
    "eager qlora left out": (["estimate", "--model", "qwen2.5-7b", "--method", "qlora", "--gpu",
                              "h800", "--gpus", "8", "--cp", "2", "--attention", "eager"],
                             "the stacks searched for qlora cannot run eager attention at cp=2 "
                             "(Megatron has no 4-bit QLoRA path); use flash attention"),
    "export refused": (["export", "{s}", "--to", "megatron", "-o", "{dir}/e"],
                       "--to megatron: job qwen14b-lora: megatron: pretrain_gpt.py has no "
                       "LoRA/QLoRA (lora); PEFT lives in Megatron-Bridge/NeMo (try --to "
                       "llamafactory, which writes LoRA planned on Megatron for its "
                       "Megatron-Bridge backend)"),
    "export no lora": (["export", "{s}", "--to", "torchtitan", "-o", "{dir}/e"],
                       "--to torchtitan: job qwen14b-lora: torchtitan: v0.2.2 has no LoRA/QLoRA "
                       "(lora); try --to llamafactory"),
    "target stacks": (["export", "{s}", "--to", "megatron", "-o", "{dir}/e", "--target-version",
                       "1.0"], "--target-version applies to llamafactory and torchtitan only (the "
                      "stacks whose file formats change between releases here), not megatron"),
    "target release": (["export", "{s}", "--to", "llamafactory", "-o", "{dir}/e",
                        "--target-version", "x"],
                       "--target-version: 'x' is not a release number (e.g. 0.9.5) or main"),
    "target unchecked": (["export", "{s}", "--to", "llamafactory", "-o", "{dir}/e",
                          "--target-version", "0.9.1"],
                         "--to llamafactory: job qwen14b-lora: llamafactory: the export's keys are "
                         "checked against release 0.9.5 and main, not 0.9.1"),
    "target format": (["export", "{s}", "--to", "torchtitan", "-o", "{dir}/e",
                       "--target-version", "0.3.0"],
                      "--to torchtitan: job qwen14b-lora: torchtitan: job.toml is torchtitan "
                      "0.2.2's TOML job format; 0.3.0 is not that release"),
    "export job": (["export", "{s}", "--to", "megatron", "-o", "{dir}/e", "--job", "nope"],
                   "--job: unknown job 'nope'; jobs: qwen14b-lora"),
}
CHINESE_LOCALE = {"LC_ALL": None, "LC_MESSAGES": None, "LANG": "zh_CN.UTF-8"}


@pytest.mark.parametrize("case", CLI_ERRORS)
def test_command_line_errors_are_said_in_chinese_and_unchanged_in_english(
        case: str, tmp_path: Path) -> None:
    more, english_line = CLI_ERRORS[case]
    scenario = str(REPO / "scenarios" / _SWEEP)
    args = [a.replace("{s}", scenario).replace("{dir}", str(tmp_path)) for a in more]
    for folder in ("d.html", "d.yaml"):  # an output path that is a folder
        (tmp_path / folder).mkdir()
    (tmp_path / "foreign.csv").write_text("x\n", encoding="utf-8")  # not a results file
    english = CliRunner().invoke(app, args, env=ENGLISH_LOCALE)
    assert english.exit_code == 2, english.output
    assert english.output.startswith("error: ") and english_line in english.output
    assert len(english.output.splitlines()) == 1  # one line, as before
    with i18n.kept_language():
        i18n.choose(None, {"LANG": "zh_CN.UTF-8"})  # as `main` does before any command
        chinese = CliRunner().invoke(app, args, env=CHINESE_LOCALE)
    assert chinese.exit_code == 2
    assert chinese.output.startswith("错误：")
    assert english_runs(chinese.output, []) == [], chinese.output


def test_the_solvers_overflow_lines_are_said_in_chinese() -> None:
    line = say_as("cli.money_overflow", i18n.TABLES["en"]["cli.money_overflow"], label="s.yaml",
                  cost=3.2e18, currency="CNY")
    assert line == ("s.yaml: the money figures are too large for the solver's 64-bit integers "
                    "(the costs could reach 3.2e+18 CNY): lower the prices, exchange rates or "
                    "value_of_time_per_day (see docs/limits.md)")
    with i18n.kept_language():
        i18n.choose("zh")
        assert english_runs(local(line), []) == []
        assert "3.2e+18 CNY" in local(line)


MEMORY_NOTE_FIELDS: dict[str, dict[str, object]] = {  # a plausible note of each kind
    "memory.shortfall": {"host_gib": 300.0, "host_cap": 64.0, "said": phrase("assumed")},
    "memory.offload": {"host_gib": 40.25, "host_cap": 64.0, "said": phrase("declared")},
    "memory.paged": {"paged": 12.34, "usable": 73.6},
}


@pytest.mark.parametrize("key", MEMORY_NOTE_KEYS)
def test_every_host_memory_note_a_plan_repeats_is_said_in_chinese(key: str) -> None:
    """Each host-memory note a plan repeats from its estimate (the store gives it back as plain
    text) is said in Chinese, whether kept as said or read back through its English template."""
    assert set(MEMORY_NOTE_FIELDS) == set(MEMORY_NOTE_KEYS)  # a new note needs a case here
    note = say(key, **MEMORY_NOTE_FIELDS[key])
    assert note.startswith(("CPU offload", "paged optimizer"))  # what build.py repeats
    stored = say("note.of", who="sft", note=phrase(str(note), *MEMORY_NOTE_KEYS))
    with i18n.kept_language():
        i18n.choose("zh")
        direct, read_back = local(note), local(stored)
    assert read_back == f"sft：{direct}"
    assert english_runs(read_back, []) == [], read_back
    numbers = re.findall(r"\d+(?:\.\d+)?", note)
    assert numbers == re.findall(r"\d+(?:\.\d+)?", direct)  # the same figures, in order


def test_the_checkpoint_offload_reasons_name_their_stack_first() -> None:
    """Each CHECKPOINT_OFFLOAD_ reason (a whole sentence in the tables, so a reason the estimate
    store gives back as plain text reads back) still names the one stack that offloads
    checkpoints first."""
    from plan.planner.estimate import stack_rules

    reasons = [getattr(stack_rules, name) for name in dir(stack_rules)
               if name.startswith("CHECKPOINT_OFFLOAD_") and name != "CHECKPOINT_OFFLOAD_STACK"]
    assert len(reasons) == 4
    assert all(reason.startswith(stack_rules.CHECKPOINT_OFFLOAD_STACK + ", ") for reason in reasons)
    for reason in reasons:
        with i18n.kept_language():
            i18n.choose("zh")
            again = local(phrase(str(reason), *(key for key in i18n.TABLES["en"]
                                                 if key.startswith("stack."))).text())
        assert english_runs(again, []) == [], again


# (cases of `plan estimate`): full, LoRA, QLoRA and DPO; 1 to 256 GPUs; a platform and its limit, a
# run, MoE (within and across nodes), CPU offload (taken, refused by the host, advised, left out
# for a faster one), host activations, pure BF16 AdamW, a layout over the card and one within the
# card only, nothing fitting (and what would), fixed flags, uneven and interleaved stages, tp
# across nodes, HSDP, a leaner loss, FP8 pretraining, eager kernels (host-bound, asked on
# Megatron) and domestic accelerators
ESTIMATES = {
    "full run on a platform": ["--model", "qwen2.5-72b", "--method", "sft", "--gpu", "h800",
                               "--gpus", "64", "--tokens", "10B", "--platform", "aliyun-pai"],
    "qlora": ["--model", "qwen2.5-7b", "--method", "qlora", "--gpu", "rtx4090", "--gpus", "1",
              "--tokens", "100M"],
    "lora host activations": ["--model", "qwen2.5-7b", "--method", "lora", "--gpu", "rtx4090",
                              "--gpus", "1", "--recompute", "offload"],
    "lora adamw-bf16": ["--model", "qwen2.5-7b", "--method", "lora", "--gpu", "a100-80gb",
                        "--gpus", "2", "--optimizer", "adamw-bf16", "--seq-len", "32k"],
    "cpu offload": ["--model", "qwen2.5-72b", "--method", "sft", "--gpu", "h800", "--gpus", "16",
                    "--cpu-offload", "on", "--global-batch", "64"],
    "moe": ["--model", "qwen3-30b-a3b", "--method", "sft", "--gpu", "h800", "--gpus", "16",
            "--capacity-factor", "1.25"],
    "over the card": ["--model", "qwen2.5-7b", "--method", "sft", "--gpu", "h800", "--gpus", "8",
                      "--tp", "1", "--pp", "1", "--zero", "0", "--recompute", "none",
                      "--micro-batch", "8"],
    "within the card only": ["--model", "qwen2.5-7b", "--method", "sft", "--gpu", "h800",
                             "--gpus", "8", "--headroom", "0.3", "--tp", "1", "--pp", "1",
                             "--zero", "1", "--recompute-layers", "7", "--micro-batch", "1",
                             "--framework", "megatron", "--tokens", "1B"],
    "new stack": ["--model", "llama3.1-8b", "--method", "pretrain", "--gpu", "h100-sxm",
                  "--gpus", "64", "--tokens", "100B", "--stack-maturity", "new"],
    "mature stack": ["--model", "llama3.1-8b", "--method", "pretrain", "--gpu", "h100-sxm",
                     "--gpus", "64", "--tokens", "100B", "--stack-maturity", "mature"],
    "searched with a run": ["--model", "llama3-8b", "--method", "sft", "--gpu", "h100", "--gpus",
                            "8", "--tokens", "1e9"],
    "nothing fits one card": ["--model", "llama3-70b", "--method", "sft", "--gpu", "rtx4090",
                              "--gpus", "1"],
    "fixed flags fit nowhere": ["--model", "llama3-70b", "--method", "sft", "--gpu", "h100",
                                "--gpus", "8", "--tp", "1", "--pp", "1", "--zero", "0",
                                "--recompute", "none"],
    "qlora eager": ["--model", "qwen2.5-7b", "--method", "qlora", "--gpu", "rtx4090", "--gpus",
                    "1", "--kernels", "eager"],
    "moe across nodes": ["--model", "mixtral-8x7b", "--method", "sft", "--gpu", "h100", "--gpus",
                         "32", "--ep", "8", "--tokens", "5B"],
    "uneven stages": ["--model", "llama3-70b", "--method", "sft", "--gpu", "h100", "--gpus", "24",
                      "--pp", "3", "--tokens", "2e10"],
    "platform limit": ["--model", "llama3-8b", "--method", "sft", "--gpu", "h100", "--gpus", "64",
                       "--platform", "autodl"],
    "eager asked on megatron": ["--model", "llama3-8b", "--method", "sft", "--gpu", "h100",
                                "--gpus", "8", "--kernels", "eager", "--framework", "megatron"],
    "fp8 pretraining": ["--model", "llama3-8b", "--method", "pretrain", "--gpu", "h100", "--gpus",
                        "16", "--precision", "fp8", "--tokens", "1T"],
    "dpo": ["--model", "llama3-8b", "--method", "dpo", "--gpu", "a100-80gb", "--gpus", "8"],
    "ascend": ["--model", "qwen2.5-7b", "--method", "sft", "--gpu", "ascend-910b", "--gpus", "16"],
    "hygon": ["--model", "llama3-8b", "--method", "sft", "--gpu", "hygon-k100-ai", "--gpus", "8",
              "--tp", "4"],
    "host-bound": ["--model", "qwen2.5-1.5b", "--method", "sft", "--gpu", "h100", "--gpus", "1",
                   "--framework", "fsdp", "--micro-batch", "1", "--kernels", "eager"],
    "hsdp and a chunked loss": ["--model", "qwen2.5-14b", "--method", "sft", "--gpu",
                                "a100-80gb", "--gpus", "16", "--framework", "fsdp",
                                "--hybrid-shard", "on", "--loss", "chunked"],
    "short last micro-batch": ["--model", "llama3-70b", "--method", "sft", "--gpu", "h100",
                               "--gpus", "16", "--pp", "4", "--vpp", "2", "--global-batch", "100",
                               "--micro-batch", "3"],
    "tp across nodes": ["--model", "llama3-70b", "--method", "sft", "--gpu", "h100", "--gpus",
                        "64", "--tp", "16"],
    "host refuses offload": ["--model", "qwen2.5-72b", "--method", "sft", "--gpu", "h800",
                             "--gpus", "8", "--cpu-offload", "on"],
    "offload would fit": ["--model", "llama3-70b", "--method", "lora", "--gpu", "rtx4090",
                          "--gpus", "4", "--cpu-offload", "off"],
    "fits without offloading": ["--model", "llama3-8b", "--method", "sft", "--gpu", "l40s",
                                "--gpus", "2"],
}
# how notes begin that say what would fit, or what the search chose, in English and in Chinese
ADVICE_STARTS = (("with --", "改用 --"), ("without offloading", "不卸载时"),
                 ("searched ", "在 "), ("nothing fits", "都放不下"))


def _catalog_quotes() -> list[str]:
    """The catalog's own notes and sources, quoted as written (a model's attention note also cut
    at 80 characters), longest first."""
    found = {text for text in _strings(builtin_catalog()) if text.count(" ") >= 2}
    found |= {text[:80] for text in found}
    return sorted(found, key=len, reverse=True)


def _estimate(args: list[str], *more: str) -> str:
    result = CliRunner().invoke(app, ["estimate", *args, *more], env={**ENGLISH_LOCALE,
                                                                      "COLUMNS": "120"})
    assert result.exit_code == 0, result.output
    return result.output


def _table_and_notes(output: str) -> tuple[str, list[str]]:
    """The text before the notes, and each note, wrapped lines joined by a space (which can only
    make more English runs, never hide one)."""
    lines = output.splitlines()
    first = next((i for i, line in enumerate(lines) if line.startswith("- ")), len(lines))
    notes: list[str] = []
    for line in lines[first:]:
        if line.startswith("- "):
            notes.append(line)
        else:
            notes[-1] += " " + line
    return " ".join(lines[:first]), notes


def _figures(note: str) -> list[str]:
    """A note's figures, sorted (a sentence may order them otherwise in another language); a
    token count said in 万 ('420万') is left out, as its English ('4.2M')."""
    note = re.sub(r"\d+(?:\.\d+)?(?:万|亿|M\b)", "", note)
    return sorted(re.findall(r"\d+(?:\.\d+)?", note.replace(",", "")))


@pytest.mark.parametrize("case", ESTIMATES)
def test_the_whole_estimate_is_said_in_chinese(case: str) -> None:
    """`plan estimate --lang zh`: the headline, the tables, the throughput and run lines and every
    note hold no English run (layout fields, ids, units and the catalog's own notes, quoted as
    written, are no such run); the notes come in the same order as in English (each with the same
    figures, the advice first where there is any), and the JSON answer does not change with
    --lang."""
    english_table, english_notes = _table_and_notes(_estimate(ESTIMATES[case]))
    chinese_table, chinese_notes = _table_and_notes(_estimate(ESTIMATES[case], "--lang", "zh"))
    assert english_table.count("┏") == chinese_table.count("┏") == 3
    assert english_runs(chinese_table, []) == []
    # (a wrapped line keeps its last space: spaces squeezed so the quotes match)
    assert english_runs("\n".join(" ".join(note.split()) for note in chinese_notes),
                        _catalog_quotes()) == []
    assert len(chinese_notes) == len(english_notes) > 0
    for english, chinese in zip(english_notes, chinese_notes, strict=True):
        assert _figures(chinese) == _figures(english), (english, chinese)
        for english_start, chinese_start in ADVICE_STARTS:
            assert english.startswith(f"- {english_start}") == chinese.startswith(
                f"- {chinese_start}"), (english, chinese)
    json_args = [*ESTIMATES[case], "--format", "json"]
    assert _estimate(json_args, "--lang", "zh") == _estimate(json_args, "--lang", "en")
