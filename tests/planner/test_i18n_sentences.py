"""Explanation sentences in the reader's language (issue 51 item 6): a sentence a solve records is
English in the record (and so in JSON), and said again from the Chinese table when shown in
Chinese, amounts in 万 with 元; it survives the copies and pickles that batch workers make."""

from __future__ import annotations

import copy
import pickle
import re
from dataclasses import asdict
from pathlib import Path

from plan.planner import i18n
from plan.planner.i18n import messages_en
from plan.planner.i18n.said import Joined, local, money, say, word
from plan.planner.plan import Trade

PLANNER = Path(i18n.__file__).resolve().parent.parent
SAID_KEY = re.compile(r"""\bsay\(\s*"([a-z0-9_.]+)\"""")


def _budget_line() -> str:
    return say("narrate.budget", budget=money(400_000, "CNY"), used=money(15_074, "CNY"),
               share=0.04, slack=money(384_926, "CNY"), binding="")


def test_a_sentence_is_english_in_the_record_and_chinese_when_shown() -> None:
    line = _budget_line()
    assert line == "budget 400,000 CNY: uses 15,074 CNY (4%), slack 384,926 CNY"
    with i18n.kept_language():
        i18n.choose("zh")
        assert local(line) == "预算 40万元：已用 1.51万元（4%），余 38.49万元"
        assert line == "budget 400,000 CNY: uses 15,074 CNY (4%), slack 384,926 CNY"  # unchanged
        i18n.choose("en")
        assert local(line) == line
    assert local("a catalog's own note") == "a catalog's own note"  # plain text as it is


def test_nested_sentences_lists_and_words_follow_the_language() -> None:
    option = say("narrate.option", gpus=8, gpu="h800", platform="autodl",
                 billing=word("billing", "hourly"))
    line = say("narrate.removed", counts=Joined([option, "memory 3"], "list_comma"))
    assert line == "options removed: 8x h800 on autodl (hourly), memory 3"
    with i18n.kept_language():
        i18n.choose("zh")
        assert local(line) == "被规则排除的选项数：autodl 上 8 张 h800（按量计费）、memory 3"


def test_sentences_survive_copies_and_pickles() -> None:
    line = _budget_line()
    trade = Trade(116.0, -14.4, (line,))
    for copied in (copy.deepcopy(line), pickle.loads(pickle.dumps(line)),
                   asdict(trade)["changes"][0], pickle.loads(pickle.dumps(trade)).changes[0]):
        assert copied == line
        with i18n.kept_language():
            i18n.choose("zh")
            assert local(copied) == "预算 40万元：已用 1.51万元（4%），余 38.49万元"


def test_every_key_the_planner_says_is_in_the_tables() -> None:
    used = {key for path in PLANNER.rglob("*.py")
            for key in SAID_KEY.findall(path.read_text(encoding="utf-8"))}
    assert len(used) > 50  # the explanation, relaxation, why-not and compare sentences
    assert sorted(used - set(messages_en.MESSAGES)) == []
