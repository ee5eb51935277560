"""click's own usage errors and `plan batch`'s lines around its rows in Chinese (issue 51 item 6,
"every message exists in both languages"): under --lang zh or a zh locale the one line `main`
prints for a bad option, a missing argument, an invalid choice or value, or an unknown command
holds no run of English words, with exit code 2; in English it is the line click always gave."""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plan.planner import i18n
from plan.planner.cli.app import app, main
from plan.planner.cli.usage_words import FORMS, usage_line
from plan.planner.i18n.said import local
from tests.planner.test_i18n_coverage import ENGLISH_LOCALE, english_runs

REPO = Path(__file__).resolve().parents[2]
SCENARIO = str(REPO / "scenarios" / "student_no_ops.yaml")
_EST = ["estimate", "--model", "qwen2.5-7b", "--method", "sft", "--gpu", "h800"]
# (arguments, the English line as click gives it)
USAGE_ERRORS: dict[str, tuple[list[str], str]] = {
    "no such option": (["solve", SCENARIO, "--bogus"], "plan solve: No such option: --bogus"),
    "possible options": (["solve", SCENARIO, "--top-k", "2"],
                         "plan solve: No such option: --top-k (Possible options: --top)"),
    "missing argument": (["solve"], "plan solve: Missing argument 'file'."),
    "missing option": (["export", SCENARIO, "-o", "x"],
                       "plan export: Missing option '--to'. Choose from: torchrun-fsdp, "
                       "deepspeed, megatron, torchtitan, llamafactory, accelerate"),
    "extra argument": (["solve", SCENARIO, "extra"],
                       "plan solve: Got unexpected extra argument(s) (extra)"),
    "invalid choice": (["solve", SCENARIO, "--objective", "fast"],
                       "plan solve: Invalid value for '--objective': Value error, 'fast' is not "
                       "one of 'cost', 'time', 'balanced', 'lexicographic'."),
    "not an integer": ([*_EST, "--gpus", "abc"],
                       "plan estimate: Invalid value for '--gpus': Input should be a valid "
                       "integer, unable to parse string as an integer"),
    "below the range": (["batch", SCENARIO, "-j", "0"],
                        "plan batch: Invalid value for '--jobs' / '-j': Input should be greater "
                        "than or equal to 1"),
    "above the range": (["solve", SCENARIO, "--time-limit", "inf"],
                        "plan solve: Invalid value for '--time-limit': Input should be less than "
                        "or equal to 1000000"),
    "needs a value": (["solve", SCENARIO, "--time-limit"],
                      "Option '--time-limit' requires an argument."),
    "no such command": (["nocmd"], "plan: No such command 'nocmd'."),
    "did you mean": (["solv", SCENARIO], "plan: No such command 'solv'. Did you mean 'solve'?"),
}


def _main(args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
          lang: str) -> tuple[int, str]:
    """`plan ARGS` through `main`, as a user runs it, with LANG=`lang`: exit code and stderr."""
    monkeypatch.setattr(sys, "argv", ["plan", *args])
    for name in ("LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", lang)
    with i18n.kept_language(), pytest.raises(SystemExit) as ended:
        main()
    return int(ended.value.code or 0), capsys.readouterr().err


@pytest.mark.parametrize("case", USAGE_ERRORS)
def test_usage_errors_are_said_in_chinese_and_unchanged_in_english(
        case: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    args, english_line = USAGE_ERRORS[case]
    code, english = _main(args, monkeypatch, capsys, "C.UTF-8")
    assert (code, english) == (2, f"error: {english_line}\n")
    for lang, more in (("zh_CN.UTF-8", []), ("C.UTF-8", ["--lang", "zh"])):
        code, chinese = _main([*args, *more], monkeypatch, capsys, lang)
        assert code == 2
        assert chinese.startswith("错误：") and len(chinese.splitlines()) == 1, chinese
        assert english_runs(chinese, []) == [], chinese


def test_every_usage_form_has_fields_that_read_back() -> None:
    """Each form filled with stand-in fields reads back as itself: said again in Chinese with no
    English run left, and unchanged in English."""
    for key in FORMS:
        template = i18n.TABLES["en"][key]
        names = [name for name in _field_names(template)]
        filled = template.format(**{name: f"'x{i}'" for i, name in enumerate(names)})
        assert usage_line(filled) == filled
        with i18n.kept_language():
            i18n.choose("zh")
            said = usage_line(filled)
        assert said != filled, key
        assert english_runs(said, []) == [], (key, said)


def _field_names(template: str) -> list[str]:
    import string
    return [name for _, name, _, _ in string.Formatter().parse(template) if name]


def test_an_unknown_form_is_kept_as_click_wrote_it() -> None:
    with i18n.kept_language():
        i18n.choose("zh")
        assert usage_line("Something click says one day.") == "Something click says one day."


def _results(tmp_path: Path) -> Path:
    """A results file of five rows, four of them spoilt and the last line torn."""
    path = tmp_path / "r.csv"
    runner = CliRunner()
    sweep = ["batch", SCENARIO, "--sweep", "budget=1000,2000,3000,4000,5000", "-o", str(path),
             "-j", "1"]
    assert runner.invoke(app, sweep, env=ENGLISH_LOCALE).exit_code == 0
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    rows[0]["gap"], rows[1]["hash"], rows[2]["status"], rows[3]["file"] = "2", "xyz", "weird", ""
    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_the_batch_warning_on_spoilt_rows_is_said_in_chinese(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    path = _results(tmp_path)
    spoilt = path.read_bytes()
    args = ["batch", SCENARIO, "--sweep", "budget=1000,2000,3000,4000,5000", "-o", str(path),
            "-j", "1"]
    code, english = _main(args, monkeypatch, capsys, "C.UTF-8")
    assert code == 0
    assert english == (f"warning: {path}: 4 stored row(s) failed their check and are left out, "
                       "their variants solved again (row 1: gap 2.0 with status optimal; row 2: "
                       "hash 'xyz' is not a content hash; row 3: unknown status 'weird'; and 1 "
                       "more)\n")
    path.write_bytes(spoilt)
    code, chinese = _main(args, monkeypatch, capsys, "zh_CN.UTF-8")
    assert code == 0
    assert chinese.startswith("警告：") and "另有 1 行" in chinese
    assert english_runs(chinese, []) == [], chinese


def test_a_batch_that_reads_nothing_says_so_in_chinese(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\n", encoding="utf-8")
    code, english = _main(["batch", str(bad)], monkeypatch, capsys, "C.UTF-8")
    assert (code, english) == (2, "error: no scenario could be read\n")
    code, chinese = _main(["batch", str(bad)], monkeypatch, capsys, "zh_CN.UTF-8")
    assert (code, chinese) == (2, "错误：没有一个场景能读入\n")


def test_the_search_reasons_are_the_tables_own_and_read_back_as_plain_text() -> None:
    """The layout search counts its reasons by their English text, which the estimate store gives
    back as plain strings: each kind is the table's sentence, and said again in Chinese."""
    from plan.planner.cli.estimate_table import no_layout_line
    from plan.planner.estimate.combination_trial import INTERLEAVING_REFUSED
    from plan.planner.estimate.pruning import (
        CANNOT_BEAT,
        OUT_OF_MEMORY,
        RECOMPUTATION_DOMINATED,
        ZERO3_DOMINATED,
    )
    from plan.planner.estimate.stack_rules import HYBRID_SPLIT_GAP

    table = i18n.TABLES["en"]
    kinds = (CANNOT_BEAT, RECOMPUTATION_DOMINATED, ZERO3_DOMINATED, OUT_OF_MEMORY,
             INTERLEAVING_REFUSED, HYBRID_SPLIT_GAP)
    assert all(kind in table.values() for kind in kinds)
    reasons = {str(kind): n for n, kind in enumerate(kinds, 1)}
    line = no_layout_line("m", 8, "h800", reasons)
    assert line.startswith("--gpus: no valid layout for m on 8 x h800: cannot beat the fastest "
                           "layout found (1 layout); dominated")
    empty = no_layout_line("m", 8, "h800", {})
    assert empty == "--gpus: no valid layout for m on 8 x h800: no candidates"
    with i18n.kept_language():
        i18n.choose("zh")
        said = local(line)
    assert said.startswith("--gpus：m 在 8 张 h800 上没有有效的布局：不可能快过已找到的最快布局")
    assert english_runs(said, []) == [], said


def _layouts() -> list[object]:
    """A 7B layout with one or two of its settings changed: between them they reach most of the
    stacks' refusals (DPO, adapters, pipelines, ZeRO stages, precisions, recomputation, optimizers,
    context and expert parallelism, offload, hybrid shards, QLoRA, NPUs, odd sequence lengths)."""
    import dataclasses

    from plan.planner.export.layout import ExportLayout

    base = ExportLayout(
        job="j", model_id="qwen2.5-7b", hf_name="Qwen/Qwen2.5-7B", method="sft", platform="p",
        gpu="h800", nodes=1, gpus_per_node=8, tp=1, pp=1, cp=1, dp=8, vpp=1, zero=1,
        micro_batch=1, grad_accum=4, global_batch=32, seq_len=4096, precision="bf16",
        recompute="none", framework="fsdp", optimizer="adam", tokens=1e9, layers=28,
        hidden_size=3584, ffn_hidden_size=18944, num_heads=28, num_kv_heads=4, vocab_size=152064,
        tied_embeddings=False, ffn_type="swiglu", lora_rank=None, lora_targets="all",
        quant_bits=None, recompute_layers=None, kernels="eager", state_offload=False,
        shard_group=None, ep=1, moe=None, vendor="nvidia", checkpoint_interval_h=1.0,
        step_time_s=1.0, notes=())
    changes: list[dict[str, object]] = [
        {"method": "dpo"}, {"method": "lora", "lora_rank": 16}, {"method": "qlora", "quant_bits": 4,
                                                                 "lora_rank": 16, "tp": 2},
        {"pp": 2}, {"pp": 3, "framework": "megatron"}, {"pp": 2, "vpp": 2, "grad_accum": 1},
        {"zero": 0, "optimizer": "adam_bf16"}, {"zero": 3, "optimizer": "adam_bf16"},
        {"precision": "fp8"}, {"precision": "fp16"},
        {"precision": "fp16", "optimizer": "adam_bf16"},
        {"recompute": "selective"}, {"recompute": "offload"}, {"recompute": "full_offload"},
        {"optimizer": "adam_8bit"}, {"optimizer": "adafactor"},
        {"optimizer": "adam_precision_aware"}, {"cp": 2}, {"cp": 2, "seq_len": 4097},
        {"ep": 2}, {"state_offload": True, "zero": 3}, {"state_offload": True, "zero": 1},
        {"shard_group": 4, "zero": 3}, {"recompute_layers": 2}, {"gpu": "ascend-910b"},
        {"gpu": "ascend-910b", "vendor": "huawei", "precision": "fp8"},
        {"tp": 2, "zero": 0}, {"framework": "megatron", "pp": 2}]
    return [dataclasses.replace(base, **change) for change in changes]  # type: ignore[arg-type]


def test_the_stacks_refusals_are_said_in_chinese() -> None:
    """Every refusal the layouts above meet, for every stack and release checked, is said in
    Chinese with no run of English words (the pip command a refusal quotes aside)."""
    from plan.planner.export import STACKS
    from plan.planner.export.layout import ExportError
    from plan.planner.export.llamafactory import BRIDGE_INSTALL_COMMAND
    from plan.planner.export.versions import check_target
    from plan.planner.export.writer import render_stack

    refusals: dict[str, str] = {}
    for layout in _layouts():
        for stack in STACKS:
            for attempt in (lambda: render_stack(layout, stack),  # noqa: B023
                            lambda: check_target(layout, stack, "0.9.4")):  # noqa: B023
                try:
                    attempt()
                except ExportError as exc:
                    refusals.setdefault(str(exc), exc.args[0])
    keys = {getattr(said, "key", None) for said in refusals.values()}
    assert None not in keys and len(keys) >= 30
    with i18n.kept_language():
        i18n.choose("zh")
        left = {text: english_runs(local(said), [BRIDGE_INSTALL_COMMAND])
                for text, said in refusals.items()}
    assert {text: runs for text, runs in left.items() if runs} == {}
