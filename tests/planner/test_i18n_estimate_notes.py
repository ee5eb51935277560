"""An estimate's notes in the reader's language (issue 51 item 6): each note the estimator, the
search and the advice write is keyed (its English the wording it always had), and a note the
estimate store gives back is still keyed, so a cached estimate says it in Chinese too; a stored
note whose English was changed is a miss, never another answer."""

from __future__ import annotations

import json
import string

import pytest

from plan.models.catalog import builtin_catalog
from plan.models.methods import METHOD_NOTES
from plan.planner import i18n
from plan.planner.estimate import Cluster, LayoutSpec, search_layout, stored_search
from plan.planner.estimate.advice import LEANER_OPTIMIZERS, STACK_SETTINGS, offload_note
from plan.planner.estimate.types import FRAMEWORKS, LOSS_KINDS, LOSSES, eager_kernels_on_megatron
from plan.planner.i18n import estimate_notes_en, estimate_notes_zh, numbers, said_data
from plan.planner.i18n.said import Fmt, Joined, Said, local, phrase, say
from tests.planner.test_i18n_coverage import english_runs


def _chinese(text: str) -> str:
    with i18n.kept_language():
        i18n.choose("zh")
        return local(text)


def test_the_keys_said_by_name_are_in_both_tables() -> None:
    """The keys a note builds from a word (a method, a loss, a framework, a memory saver) exist in
    both languages, with the English the rest of the planner still quotes."""
    en, zh = i18n.TABLES["en"], i18n.TABLES["zh"]
    for method, note in METHOD_NOTES.items():
        assert en[f"enote.method.{method}"] == note
    for loss in LOSSES:
        if loss != "plain":
            assert en[f"enote.loss_kind.{loss}"] == LOSS_KINDS[loss]
    for framework in FRAMEWORKS:
        assert f"enote.{framework}" in en or framework == "megatron"
    for saver in (*LEANER_OPTIMIZERS, *STACK_SETTINGS):
        assert saver.why == en[saver.key] != zh[saver.key]
        assert english_runs(zh[saver.key], []) == [], saver.key


@pytest.mark.parametrize("key", estimate_notes_zh.NOTES)
def test_every_note_template_is_chinese(key: str) -> None:
    """Each note's Chinese, its fields filled with a number, holds no English run (the cases of
    `plan estimate` reach most of them; this, the ones no short case reaches)."""
    fields = {name for _, name, _, _ in string.Formatter().parse(estimate_notes_zh.NOTES[key])
              if name}
    text = estimate_notes_zh.NOTES[key].format(**dict.fromkeys(fields, 1.5))
    assert english_runs(text, []) == [], text
    assert text != estimate_notes_en.NOTES[key].format(**dict.fromkeys(fields, 1.5)) or (
        key == "enote.1f1b")


def test_shared_sentences_stay_plain_english_for_plans() -> None:
    """A plan's explanation quotes the eager-kernels and offload sentences in English (plain
    strings); `plan estimate` says the same words keyed."""
    plain = eager_kernels_on_megatron("--kernels eager", "--framework fsdp or deepspeed")
    keyed = eager_kernels_on_megatron("--kernels eager", say("enote.keep_eager"), keyed=True)
    assert type(plain) is str and isinstance(keyed, Said) and keyed == plain
    assert english_runs(_chinese(keyed), []) == []
    card = builtin_catalog().model("llama3-8b")
    cluster = Cluster.of(builtin_catalog().gpu("l40s"), 2)
    offloaded = search_layout(card, "sft", cluster, LayoutSpec(state_offload=True)).best
    assert offloaded is not None and offloaded.layout.state_offload
    assert type(offload_note("cpu_offload: true", 0.5, offloaded)) is str


def test_the_shortfall_body_is_the_note_without_its_label() -> None:
    fields = {"host_gib": 131.5, "host_cap": 128.0, "said": phrase("assumed")}
    note, body = say("memory.shortfall", **fields), say("memory.shortfall_body", **fields)
    assert note == f"CPU offload: {body}"
    assert _chinese(note) == f"CPU 卸载：{_chinese(body)}"


@pytest.mark.parametrize(("count", "english", "chinese"), [
    (1e9, "1e+09", "10亿"), (100e6, "1e+08", "1亿"), (12_345_678, "1.23e+07", "1,234.57万"),
    (5e9, "5e+09", "50亿"), (4096, "4.1e+03", "4,096"), (1e12, "1e+12", "1万亿"),
    (2.5e13, "2.5e+13", "25万亿")])
def test_token_counts_in_wan_and_yi(count: float, english: str, chinese: str) -> None:
    """A run's token count as English always printed it; in Chinese in 万/亿."""
    with i18n.kept_language():
        assert numbers.count(count) == english == f"{count:,.3g}"
        i18n.choose("zh")
        assert numbers.count(count) == chinese


def test_a_step_in_millions_of_tokens() -> None:
    with i18n.kept_language():
        assert numbers.millions(4_194_304) == "4.2M"
        i18n.choose("zh")
        assert numbers.millions(4_194_304) == "420万"


def test_a_note_as_data_and_back() -> None:
    """Nested sentences, lists, numbers and named formatters survive JSON; a note whose text,
    key or fields were changed does not read back; one that cannot be data stays plain text."""
    note = say("enote.global_batch", batch=1024,
               rule=say("enote.rule_tokens", tokens=Fmt(numbers.millions, (4_194_304,))))
    searched = say("enote.searched", fields=Joined(["tp", "pp"], "list_comma"), n=22,
                   layout="tp=2 pp=1")
    shortfall = say("memory.shortfall", host_gib=131.5, host_cap=128, said=phrase("assumed"))
    for text in (note, searched, shortfall, "a plain catalog note"):
        data = json.loads(json.dumps(said_data.to_data(text)))
        back = said_data.from_data(data)
        assert back == text and type(back) is type(text)
        assert _chinese(back) == _chinese(text)
    assert "420万" in _chinese(note) and "tp、pp" in _chinese(searched)
    data = said_data.to_data(note)
    for forged in ({**data, "text": data["text"].replace("1024", "2048")},
                   {**data, "key": "enote.fp8"}, {**data, "key": "no.such.key"},
                   {**data, "fields": {**data["fields"], "batch": 2048}},
                   {**data, "fields": {**data["fields"], "rule": {"fmt": "eval", "args": []}}},
                   {**data, "extra": 1}, 17, None):
        with pytest.raises(said_data.Unreadable):
            said_data.from_data(forged)
    odd = say("enote.moe_split", ep=object())
    assert said_data.to_data(odd) == str(odd)


def test_a_stored_estimate_says_its_notes_again() -> None:
    """The search's result through the store's JSON: the same English notes, each said in Chinese
    as the fresh estimate's; a note's English changed in the row makes it a miss."""
    card = builtin_catalog().model("llama3-8b")
    cluster = Cluster.of(builtin_catalog().gpu("h100"), 8)
    found = search_layout(card, "sft", cluster, LayoutSpec())
    best = found.best
    assert best is not None and all(isinstance(note, Said) for note in best.notes)
    row = json.loads(json.dumps(stored_search.encode(best, found.considered, found.rejected,
                                                     found.reasons, found.searched)))
    again = stored_search.decode(row, card, "sft", cluster)["best"]
    assert again.notes == best.notes
    chinese = [_chinese(note) for note in again.notes]
    assert chinese == [_chinese(note) for note in best.notes]
    assert english_runs("\n".join(chinese), []) == []
    row["best"]["notes"][0]["text"] += " (edited)"
    with pytest.raises(stored_search.Forged):
        stored_search.decode(row, card, "sft", cluster)
