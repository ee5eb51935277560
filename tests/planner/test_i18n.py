"""Chinese output (issue 51 item 6): every message in both languages, amounts in 万/亿 with 元,
dates as 2027年1月, the language from --lang, a scenario's lang: or the locale, and JSON output
byte-identical whatever the language."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest
from typer.testing import CliRunner

from plan.planner import i18n
from plan.planner.cli.app import app, named_language
from plan.planner.i18n import messages_en, messages_zh
from plan.planner.i18n.numbers import chinese_amount, money, period

runner = CliRunner()
ENGLISH_LOCALE = {"LC_ALL": None, "LC_MESSAGES": None, "LANG": "C.UTF-8"}
SOLVE_TIME = re.compile(r'"solve_time_s": [0-9.]+')


def _fields(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_message_exists_in_both_languages_with_the_same_fields() -> None:
    assert set(messages_en.MESSAGES) == set(messages_zh.MESSAGES)
    differing = [key for key, text in messages_en.MESSAGES.items()
                 if _fields(text) != _fields(messages_zh.MESSAGES[key])]
    assert set(i18n.TABLES) == set(i18n.LANGUAGES)
    assert differing == []
    untranslated = [key for key, text in messages_zh.MESSAGES.items()
                    if key != "html.col.part" and text == messages_en.MESSAGES[key]
                    and re.search(r"[a-z]{4,}", re.sub(r"\{[^}]*\}", "", text))]
    assert untranslated == []


@pytest.mark.parametrize(("amount", "written"), [
    (3_000_000, "300万"), (15_074, "1.51万"), (8_500, "8,500"), (120_000_000, "1.2亿"),
    (12_345_678, "1,234.57万"), (-250_000, "-25万"), (0, "0"),
])
def test_chinese_amounts_in_wan_and_yi(amount: float, written: str) -> None:
    assert chinese_amount(amount) == written


def test_money_and_dates_follow_the_language() -> None:
    with i18n.kept_language():
        i18n.choose("zh")
        assert money(3_000_000, "CNY") == "300万元"
        assert money(125_000, "USD") == "12.5万 USD"  # other currencies keep their code
        assert period("2027-01") == "2027年1月"
        assert period("2027-Q2") == "2027年第2季度"
        assert period("month 3") == "第3个月"
        i18n.choose("en")
        assert money(3_000_000, "CNY") == "3,000,000 CNY"
        assert period("2027-01") == "2027-01"


@pytest.mark.parametrize(("environ", "lang"), [
    ({"LANG": "zh_CN.UTF-8"}, "zh"), ({"LC_ALL": "zh_TW.UTF-8", "LANG": "en_US.UTF-8"}, "zh"),
    ({"LC_ALL": "C", "LANG": "zh_CN.UTF-8"}, "en"), ({}, "en"), ({"LANG": "en_GB.UTF-8"}, "en"),
])
def test_the_locale_decides_when_nothing_else_does(environ: dict[str, str], lang: str) -> None:
    assert i18n.locale_language(environ) == lang


def test_the_command_line_names_its_language() -> None:
    assert named_language(["solve", "x.yaml", "--lang", "zh"]) == "zh"
    assert named_language(["solve", "x.yaml", "--lang=ZH"]) == "zh"
    assert named_language(["solve", "x.yaml"]) is None


def _solve(path: Path, *args: str, env: dict[str, str | None] | None = None) -> str:
    result = runner.invoke(app, ["solve", str(path), *args], env=env or ENGLISH_LOCALE)
    assert result.exit_code == 0, result.output
    return result.output


def test_json_is_byte_identical_whatever_the_language(write_scenario, base_scenario) -> None:
    path = write_scenario(base_scenario)
    english = _solve(path, "--format", "json", "--lang", "en")
    chinese = _solve(path, "--format", "json", "--lang", "zh")
    from_locale = _solve(path, "--format", "json", env={"LANG": "zh_CN.UTF-8", "LC_ALL": None})
    assert SOLVE_TIME.sub("", english) == SOLVE_TIME.sub("", chinese)
    assert SOLVE_TIME.sub("", english) == SOLVE_TIME.sub("", from_locale)
    catalogs = [runner.invoke(app, ["catalog", "gpus", "--format", "json", "--lang", lang]).output
                for lang in ("en", "zh")]
    assert catalogs[0] == catalogs[1]


def test_chinese_tables_and_markdown(write_scenario, base_scenario) -> None:
    path = write_scenario(base_scenario)
    table = _solve(path, "--lang", "zh")
    assert "总费用（元）" in table and "方案 1" in table and "资金支出安排" in table
    assert "第1个月" in table and "元" in table
    # the explanation sentences are Chinese too, and no note says otherwise any more
    assert "的时长：训练预计" in table and "time of " not in table and "暂为英文" not in table
    markdown = _solve(path, "--format", "markdown", "--lang", "zh")
    assert "| 排名 | 总费用（元） |" in markdown and "## 方案 1" in markdown
    english = _solve(path)
    assert "cost (CNY)" in english and "总费用" not in english


def test_a_scenario_lang_wins_over_the_locale_and_lang_wins_over_it(
        write_scenario, base_scenario) -> None:
    path = write_scenario({**base_scenario, "lang": "zh", "start": "2027-01-01"})
    chinese = _solve(path)
    assert "总费用" in chinese and "2027年1月" in chinese  # months as a Chinese reader writes them
    assert "总费用" not in _solve(path, "--lang", "en")
    assert i18n.language() == "en"  # a command's choice lasts for its run alone


def test_error_frames_and_catalog_in_chinese(tmp_path: Path) -> None:
    missing = runner.invoke(app, ["solve", str(tmp_path / "none.yaml"), "--lang", "zh"],
                            env=ENGLISH_LOCALE)
    assert missing.exit_code == 2
    assert missing.stderr.startswith("错误：")
    table = runner.invoke(app, ["catalog", "gpus", "--lang", "zh"],
                          env={**ENGLISH_LOCALE, "COLUMNS": "200"})
    assert table.exit_code == 0 and "显卡" in table.output and "假设值" in table.output


def test_chinese_report_page(write_scenario, base_scenario, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    result = runner.invoke(app, ["report", str(write_scenario(base_scenario)), "-o", str(page),
                                 "--lang", "zh"], env=ENGLISH_LOCALE)
    assert result.exit_code == 0, result.output
    html = page.read_text(encoding="utf-8")
    assert '<html lang="zh-CN">' in html
    for words in ("推荐方案", "排期", "单卡显存", "备选方案", "所依据的假设", "元",
                  "资金支出", "每月支出"):  # the cash-flow chart's heading and name
        assert words in html
    assert "training compute plan" not in html and "Best plan" not in html
