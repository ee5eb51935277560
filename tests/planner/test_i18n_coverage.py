"""Chinese output says everything in Chinese (issue 51 item 6, "every message exists in both
languages"): the shipped scenarios that reach the most sentences (capacity and instance notes,
assumed efficiencies and widened bands, residual values, reservations and purchases, budgets per
period, alternatives) solved with --lang zh print no run of three English words, apart from what
is quoted on purpose: the catalog's and the scenario's own notes (evidence, quoted as written),
ids, units and layout fields (none of which makes such a run)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from plan.models.loading import load_scenario
from plan.planner import i18n
from plan.planner.candidates.build import MEMORY_NOTE_KEYS
from plan.planner.cli.app import app
from plan.planner.estimate.band import uncalibrated_band_note
from plan.planner.estimate.memory_notes import HOST_SHORTFALL_NOTE
from plan.planner.i18n.plan_words import billing_line
from plan.planner.i18n.said import local, phrase, say, word

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
