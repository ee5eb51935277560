"""The units people write (issue 13 item 3), table-tested both ways: accepted forms and clear
refusals."""

from __future__ import annotations

import pytest

from plan.models.errors import InputError
from plan.models.loading import load_scenario
from plan.models.money import builtin_rates
from plan.models.units import parse_duration_h, parse_money_amount, parse_seq_len


@pytest.mark.parametrize(
    ("text", "amount", "currency"),
    [
        ("2万元", 20_000, "CNY"),
        ("¥20,000", 20_000, "CNY"),
        ("￥3万", 30_000, "CNY"),
        ("20k USD", 20_000, "USD"),
        ("$1.2M", 1_200_000, "USD"),
        ("US$500", 500, "USD"),
        ("400k", 400_000, None),
        ("40万", 400_000, None),
        ("5000 CNY", 5000, "CNY"),
        ("1.5万 RMB", 15_000, "CNY"),
        ("300美元", 300, "USD"),
        (12_000, 12_000, None),
    ],
)
def test_money_with_currency(text, amount, currency):
    assert parse_money_amount(text) == (pytest.approx(amount), currency)


@pytest.mark.parametrize("bad", ["lots", "20k usd", "5x", "¥20k USD", "$", "2万万", "k20"])
def test_money_refusals_say_what_is_allowed(bad):
    with pytest.raises(
        ValueError, match=r"e\.g\.|two currencies|unknown suffix|expected an amount"
    ):
        parse_money_amount(bad)


@pytest.mark.parametrize(
    ("text", "hours"),
    [
        ("2 weeks", 336.0),
        ("2w", 336.0),
        ("1 week", 168.0),
        ("3 days", 72.0),
        ("36 hours", 36.0),
        ("90 min", 1.5),
        ("10天", 240.0),
        ("2周", 336.0),
        ("30d", 720.0),
    ],
)
def test_durations_in_words(text, hours):
    assert parse_duration_h(text) == pytest.approx(hours)


@pytest.mark.parametrize("bad", ["2 fortnights", "soon", 14, "2 weeks ago"])
def test_duration_refusals(bad):
    with pytest.raises(ValueError, match=r"e\.g\."):
        parse_duration_h(bad)


@pytest.mark.parametrize(
    ("text", "tokens"), [("4k", 4096), ("32K", 32768), (2048, 2048), ("8192", 8192)]
)
def test_seq_len(text, tokens):
    assert parse_seq_len(text) == tokens


@pytest.mark.parametrize("bad", ["4M", "1.5", "lots", "4.1k"])
def test_seq_len_refusals(bad):
    with pytest.raises(ValueError, match=r"e\.g\."):
        parse_seq_len(bad)


def _scenario(tmp_path, body: str):
    path = tmp_path / "s.yaml"
    path.write_text("name: t\n" + body + "jobs: [{id: a, model: llama3-8b, method: lora, tokens: "
                                         "10M}]\n",
                    encoding="utf-8")
    return path


def test_budget_in_another_currency_converts_with_the_dated_rate(tmp_path):
    loaded = load_scenario(_scenario(tmp_path, "currency: CNY\nbudget: 20k USD\n"))
    rate = builtin_rates().rates["USD"]
    assert loaded.scenario.budget == pytest.approx(20_000 * rate)
    assert any("20k USD" in n and builtin_rates().as_of in n for n in loaded.money_notes)


def test_budget_in_the_scenario_currency_is_not_noted(tmp_path):
    loaded = load_scenario(_scenario(tmp_path, "budget: 2万元\n"))
    assert loaded.scenario.budget == 20_000 and loaded.money_notes == ()


def test_usd_scenario_converts_yuan(tmp_path):
    loaded = load_scenario(_scenario(tmp_path, "currency: USD\nbudget: ¥71,000\n"))
    assert loaded.scenario.budget == pytest.approx(71_000 / builtin_rates().rates["USD"])


def test_overlay_rate_is_used(tmp_path):
    (tmp_path / "rates.yaml").write_text("exchange_rates: {rates: {USD: 7.0}, source: our bank, "
                                         "as_of: 2026-12}\n")
    loaded = load_scenario(_scenario(tmp_path, "catalog: rates.yaml\nbudget: 10k USD\n"))
    assert loaded.scenario.budget == pytest.approx(70_000)
    assert any("2026-12" in n for n in loaded.money_notes)


def test_unknown_currency_is_one_clear_line(tmp_path):
    with pytest.raises(InputError) as info:
        load_scenario(_scenario(tmp_path, "budget: 20k EUR\n"))
    assert (
        len(info.value.problems) == 1
        and "budget: no exchange rate for EUR" in info.value.problems[0]
    )


@pytest.mark.parametrize(
    ("typo", "wanted"), [("budjet", "budget"), ("deadlin", "deadline"), ("curency", "currency")]
)
def test_top_level_typo_gets_did_you_mean(tmp_path, typo, wanted):
    with pytest.raises(InputError) as info:
        load_scenario(_scenario(tmp_path, f"{typo}: 1\n"))
    assert f"{typo}: unknown field; did you mean {wanted!r}" in info.value.problems[0]
