"""`--help` in the reader's language (issue 51 item 6: every message in both languages): every help
string of every command has its Chinese (plan.planner.i18n.help_zh) and no entry outlives its
English; Chinese help, chosen by --lang or by the locale, holds no run of English words; English
help is what typer renders without the table, before and after a Chinese one in the same process."""

from __future__ import annotations

import re
import sys

import pytest
import typer
from typer.testing import CliRunner

from plan.planner import i18n
from plan.planner.cli.app import COMMANDS, build_app, main
from plan.planner.cli.help_words import TYPER_WORDS, commands_of, help_key, params_of
from plan.planner.i18n.help_zh import FRAME, HELP
from tests.conftest import REPO
from tests.planner.test_i18n_coverage import ENGLISH_LOCALE, english_runs

CHINESE_LOCALE = {"LC_ALL": None, "LC_MESSAGES": None, "LANG": "zh_CN.UTF-8"}
EVERY_HELP = ["", *COMMANDS]  # "" is `plan --help`
# what a translation keeps as written: option names, `code`, file names and formats
KEPT = re.compile(r"--[a-z][a-z-]*|`[^`]+`|[\w*/.-]+\.(?:csv|jsonl?|ya?ml|png|svg|html|md)\b")
CJK = re.compile("[\u4e00-\u9fff]")


def _help_strings() -> set[str]:
    """Every help string of the full command tree: commands, options, arguments, `--help`."""
    root = typer.main.get_command(build_app())
    return {help_key(text) for command in commands_of(root)
            for text in (command.help, *(getattr(p, "help", None) for p in params_of(command)))
            if text}


def _main(args: list[str], locale: dict[str, str | None], monkeypatch: pytest.MonkeyPatch,
          capsys: pytest.CaptureFixture[str]) -> tuple[object, str]:
    """`plan ARGS` through the entry point (which chooses the language), its exit code and
    stdout."""
    for name, value in {**locale, "COLUMNS": "100"}.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    monkeypatch.setattr(sys, "argv", ["plan", *args])
    with i18n.kept_language(), pytest.raises(SystemExit) as ended:
        main()
    return ended.value.code, capsys.readouterr().out


def _help_args(command: str, *more: str) -> list[str]:
    return [*([command] if command else []), "--help", *more]


def _chinese_help(command: str) -> tuple[list[str], dict[str, str | None]]:
    """The arguments and locale of `plan COMMAND --help` in Chinese: --lang zh (`plan` itself and
    every command take it)."""
    return _help_args(command, "--lang", "zh"), ENGLISH_LOCALE


def test_plan_and_every_command_take_lang() -> None:
    tree = typer.main.get_command(build_app())
    assert any(p.name == "lang" for p in tree.params)
    assert [name for name, command in tree.commands.items()
            if not any(p.name == "lang" for p in command.params)] == []


def test_lang_before_the_command_names_its_language(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """`plan --lang zh COMMAND`: the command speaks Chinese unless its own --lang says otherwise."""
    scenario = str(REPO / "scenarios" / "student_no_ops.yaml")
    chinese = _main(["--lang", "zh", "validate", scenario], ENGLISH_LOCALE, monkeypatch, capsys)
    english = _main(["--lang", "zh", "validate", scenario, "--lang", "en"], CHINESE_LOCALE,
                    monkeypatch, capsys)
    assert chinese[0] in (0, None) and english[0] in (0, None)
    assert CJK.search(chinese[1]) and "student_no_ops.yaml" in chinese[1], chinese[1]
    assert english[1].startswith("ok: ") and not CJK.search(english[1]), english[1]


def test_every_help_string_has_its_chinese_and_no_entry_is_stale() -> None:
    strings = _help_strings()
    assert "Show this message and exit." in strings  # click's own --help is walked too
    assert sorted(strings - HELP.keys()) == []  # English with no Chinese
    assert sorted(HELP.keys() - strings) == []  # Chinese whose English is gone


def test_each_chinese_help_keeps_option_names_code_and_file_names() -> None:
    wrong = [f"{english!r}: {kept!r}" for english, chinese in HELP.items()
             for kept in KEPT.findall(english) if kept not in chinese]
    wrong += [f"{english!r}: not Chinese" for english, chinese in HELP.items()
              if not CJK.search(chinese)]
    assert wrong == []


def test_typer_still_has_the_words_the_frame_says_again() -> None:
    from typer import rich_utils

    assert {name: getattr(rich_utils, name) for name in TYPER_WORDS} == TYPER_WORDS
    assert set(TYPER_WORDS.values()) <= FRAME.keys()


@pytest.mark.parametrize("command", EVERY_HELP)
def test_chinese_help_holds_no_english_run(
        command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _main(*_chinese_help(command), monkeypatch, capsys)
    assert code == 0, out
    assert f"用法：plan {command}".strip() in out and "Usage" not in out
    assert "…" not in out  # nothing cut short in a table cell
    assert english_runs(out, []) == [], out


def test_the_locale_and_lang_choose_the_help_language(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    named = _main(["solve", "--help", "--lang", "zh"], ENGLISH_LOCALE, monkeypatch, capsys)
    local = _main(["solve", "--help"], CHINESE_LOCALE, monkeypatch, capsys)
    first = _main(["solve", "--lang=zh", "--help"], ENGLISH_LOCALE, monkeypatch, capsys)
    english = _main(["solve", "--help", "--lang", "en"], CHINESE_LOCALE, monkeypatch, capsys)
    assert named == local == first
    assert "求出最优方案" in named[1]
    assert "Find the optimal plan" in english[1] and not CJK.search(english[1])


@pytest.mark.parametrize("command", EVERY_HELP)
def test_english_help_is_typers_own_even_after_a_chinese_one(
        command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    chinese = _main(*_chinese_help(command), monkeypatch, capsys)
    english = _main(_help_args(command), ENGLISH_LOCALE, monkeypatch, capsys)
    plain = CliRunner().invoke(build_app(), _help_args(command), prog_name="plan",
                               env={**ENGLISH_LOCALE, "COLUMNS": "100"})
    assert CJK.search(chinese[1])
    assert english == (0, plain.stdout)
