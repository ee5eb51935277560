"""Overlays change only what they name (issue 51 item 2) and derived prices stay derived (issue 47
item 9): a feature merges into the catalog's map, an hourly quote moves the prices derived from it,
a stated price stays, the changes are listed, and a bad entry is named beside the fine ones."""

from __future__ import annotations

import json

import pytest
import yaml
from typer.testing import CliRunner

from plan.models.catalog import builtin_catalog
from plan.models.derived_prices import derived_price
from plan.models.errors import InputError
from plan.models.platform import PERIOD_H
from plan.planner.cli.app import app

runner = CliRunner()
QUOTE = {"currency": "CNY", "source": "our quote", "as_of": "2026-12"}


def _offers(catalog, platform):
    return {(o.gpu, o.billing): o for o in catalog.platforms[platform].offers}


def test_a_feature_merges_into_the_catalogs_map():
    """The issue's trap: encryption on ModelArts keeps its other features, and QLoRA kernels stay
    off for Ascend."""
    before = builtin_catalog().platforms["huawei-modelarts"].features
    after = builtin_catalog().overlay(
        {"platforms": [{"id": "huawei-modelarts", "features": {"env_snapshot": True}}]}, "o.yaml"
    ).platforms["huawei-modelarts"].features
    assert after.env_snapshot and not before.env_snapshot
    assert after.model_dump() == before.model_dump() | {"env_snapshot": True}
    assert after.dedicated_hardware and not after.qlora_kernels


def test_replace_true_replaces_the_map_whole():
    after = builtin_catalog().overlay(
        {"platforms": [{"id": "huawei-modelarts",
                        "features": {"replace": True, "env_snapshot": True}}]}, "o.yaml"
    ).platforms["huawei-modelarts"].features
    assert after.env_snapshot and not after.dedicated_hardware and not after.managed_ops
    assert after.qlora_kernels  # back at its default: the overlay said the map is all it names


def test_a_purchase_entry_merges_by_gpu():
    catalog = builtin_catalog()
    base = catalog.platforms["private-cluster"].purchase
    entry = base[0].model_dump() | {"capex_per_gpu": 123_456.0, "source": "our quote"}
    after = catalog.overlay({"platforms": [{"id": "private-cluster", "purchase": [entry]}]},
                            "o.yaml").platforms["private-cluster"].purchase
    assert [p.gpu for p in after] == [p.gpu for p in base]
    assert after[0].capex_per_gpu == 123_456.0 and after[1:] == base[1:]


def test_every_derived_figure_is_what_its_rule_gives():
    """The built-in figures are kept as written: each derived price equals its rule applied to its
    base (the load refuses a mismatch; this test says which offer, if one ever differs)."""
    derived = 0
    for platform in builtin_catalog().platforms.values():
        offers = {(o.gpu, o.billing): o for o in platform.offers}
        for offer in platform.offers:
            if offer.derived is None:
                continue
            derived += 1
            base = offers[(offer.gpu, offer.derived.from_billing)]
            expected = derived_price(base.price_per_gpu_period, base.billing,
                                     offer.derived.hours, offer.derived.factor)
            assert offer.price_per_gpu_period == expected, (platform.id, offer.gpu, offer.billing)
            assert offer.currency == base.currency
    assert derived >= 45  # every daily, monthly and yearly price the catalog derives today


def test_the_rules_written_in_words_are_the_rules_as_data():
    """Each offer whose assumption states a 'daily/monthly/yearly = ... x hourly x ...' rule carries
    it as `derived:` (so an overlay moves it), and its hours are its period's."""
    for platform in builtin_catalog().platforms.values():
        sold = {(o.gpu, o.billing) for o in platform.offers}
        for offer in platform.offers:
            text = offer.assumption or ""
            # (a rule from another card's offer, as the 910C's priced per die from the 910B's,
            # has no base on this card to derive from)
            base = "monthly" if offer.billing == "yearly" and "monthly" in text else "hourly"
            if offer.billing in ("daily", "monthly", "yearly") and " h x " in text and (
                    (offer.gpu, base) in sold or (offer.gpu, "hourly") in sold):
                assert offer.derived is not None, (platform.id, offer.gpu, offer.billing)
                assert offer.derived.hours == PERIOD_H[offer.billing]


def test_an_hourly_quote_moves_the_prices_derived_from_it():
    catalog = builtin_catalog()
    hourly = {"gpu": "a800-80gb", "billing": "hourly", "price_per_gpu_period": 4.0, **QUOTE}
    after = _offers(catalog.overlay({"platforms": [{"id": "zhixingyun-pro", "offers": [hourly]}]},
                                    "o.yaml"), "zhixingyun-pro")
    assert after[("a800-80gb", "daily")].price_per_gpu_period == 86.4  # 24 h x 4.0 x 0.9
    assert after[("a800-80gb", "monthly")].price_per_gpu_period == 1872.0  # 720 x 4.0 x 0.65
    assert after[("a800-80gb", "yearly")].price_per_gpu_period == 19359.6  # 1872/720 x 8760 x .85
    assert "4 CNY" in (after[("a800-80gb", "monthly")].assumption or "")
    before = _offers(catalog, "zhixingyun-pro")
    for key in [k for k in before if k[0] != "a800-80gb"]:  # other cards untouched
        assert after[key] == before[key]


def test_a_stated_price_stays_and_what_derives_from_it_follows():
    catalog = builtin_catalog()
    stated = [
        {"gpu": "a800-80gb", "billing": "hourly", "price_per_gpu_period": 4.0, **QUOTE},
        {"gpu": "a800-80gb", "billing": "monthly", "price_per_gpu_period": 2000.0, **QUOTE},
    ]
    after = _offers(catalog.overlay({"platforms": [{"id": "zhixingyun-pro", "offers": stated}]},
                                    "o.yaml"), "zhixingyun-pro")
    assert after[("a800-80gb", "monthly")].price_per_gpu_period == 2000.0
    assert after[("a800-80gb", "monthly")].derived is None
    assert after[("a800-80gb", "yearly")].price_per_gpu_period == derived_price(
        2000.0, "monthly", 8760, 0.85)


def test_an_overlay_offer_may_state_the_rule_instead_of_the_price():
    offer = {"gpu": "a800-80gb", "billing": "daily",
             "derived": {"from": "hourly", "hours": 24, "factor": 0.8}}
    after = _offers(builtin_catalog().overlay(
        {"platforms": [{"id": "zhixingyun-pro", "offers": [offer]}]}, "o.yaml"), "zhixingyun-pro")
    assert after[("a800-80gb", "daily")].price_per_gpu_period == derived_price(5.57, "hourly", 24,
                                                                               0.8)


@pytest.mark.parametrize(("offer", "words"), [
    ({"price_per_gpu_period": 1.0, "derived": {"from": "hourly", "hours": 24, "factor": 0.9}},
     "is not what its rule gives"),
    ({"derived": {"from": "monthly", "hours": 24, "factor": 0.9}, "gpu": "h20"},
     "no h20 monthly offer"),
])
def test_a_rule_that_cannot_hold_is_named(offer, words):
    entry = {"gpu": "a800-80gb", "billing": "daily", **QUOTE, **offer}
    with pytest.raises(InputError, match=words):
        builtin_catalog().overlay({"platforms": [{"id": "zhixingyun-pro", "offers": [entry]}]},
                                  "o.yaml")


def test_the_changes_are_listed_once_each():
    overlay = {"platforms": [{"id": "huawei-modelarts", "features": {"env_snapshot": True},
                              "offers": [{"gpu": "ascend-910b", "billing": "hourly",
                                          "price_per_gpu_period": 10.0, **QUOTE}]}]}
    changes = builtin_catalog().overlay(overlay, "o.yaml").changes
    assert "o.yaml: platform huawei-modelarts: features.env_snapshot false -> true" in changes
    assert any("offer ascend-910b/hourly: price_per_gpu_period 13.93 -> 10.0" in c
               for c in changes)
    assert any("offer ascend-910b/monthly: price_per_gpu_period 6519.24 -> 4680.0 (derived from "
               "hourly)" in c for c in changes)
    assert not any("qlora" in c or "dedicated" in c for c in changes)
    assert builtin_catalog().changes == ()


def test_one_bad_entry_is_named_and_the_fine_ones_said():
    overlay = {"platforms": [
        {"id": "huawei-modelarts", "features": {"env_snapshot": True}},
        {"id": "zhixingyun", "features": {"encryptoin": True}},
    ]}
    with pytest.raises(InputError) as caught:
        builtin_catalog().overlay(overlay, "o.yaml")
    problems = caught.value.problems
    assert any("platforms[zhixingyun].features.encryptoin" in p for p in problems), problems
    assert problems[-1] == "o.yaml: the other entries are fine: platforms[huawei-modelarts]"


def test_catalog_diff_prints_what_an_overlay_changes(tmp_path):
    path = tmp_path / "enc.yaml"
    path.write_text(yaml.safe_dump(
        {"platforms": [{"id": "huawei-modelarts", "features": {"env_snapshot": True}}]}),
        encoding="utf-8")
    table = runner.invoke(app, ["catalog", "diff", "--catalog", str(path)])
    assert table.exit_code == 0, table.output
    assert "platform huawei-modelarts: features.env_snapshot false -> true" in table.stdout
    rows = json.loads(runner.invoke(app, ["catalog", "diff", "--catalog", str(path), "--format",
                                          "json"]).stdout)
    assert rows == [{"overlay": str(path),
                     "change": "platform huawei-modelarts: features.env_snapshot false -> true"}]
    bare = runner.invoke(app, ["catalog", "diff"])
    assert bare.exit_code == 2 and "--catalog" in bare.stderr


def test_catalog_offers_marks_the_derived_prices():
    rows = json.loads(runner.invoke(app, ["catalog", "offers", "--format", "json"]).stdout)
    derived = [r for r in rows if r.get("derived")]
    assert derived and all(r["derived"]["from"] in PERIOD_H and "derived_rule" in r
                           for r in derived)
    assert not any("derived_rule" in r for r in rows if not r.get("derived"))
    table = runner.invoke(app, ["catalog", "offers", "--sources"], env={"COLUMNS": "150"})
    assert "derived: monthly = 720 h x hourly x 0.65" in table.stdout


def test_a_price_quote_keeps_how_the_offer_is_sold():
    """Quoting ModelArts' hourly 910B price does not make its shared pool dedicated: the offer's
    `lacks` (and whole-instance facts) stay unless the overlay names them."""
    before = _offers(builtin_catalog(), "huawei-modelarts")[("ascend-910b", "hourly")]
    hourly = {"gpu": "ascend-910b", "billing": "hourly", "price_per_gpu_period": 10.0, **QUOTE}
    after = _offers(builtin_catalog().overlay(
        {"platforms": [{"id": "huawei-modelarts", "offers": [hourly]}]}, "o.yaml"),
        "huawei-modelarts")[("ascend-910b", "hourly")]
    assert before.lacks == ["dedicated_hardware"]
    assert after.lacks == before.lacks and after.price_per_gpu_period == 10.0
    named = {**hourly, "lacks": []}
    assert _offers(builtin_catalog().overlay(
        {"platforms": [{"id": "huawei-modelarts", "offers": [named]}]}, "o.yaml"),
        "huawei-modelarts")[("ascend-910b", "hourly")].lacks == []


@pytest.mark.parametrize("offers", [[5, {"gpu": [1]}], [{"gpu": "h800", "billing": {"a": 1}}]])
def test_an_offer_whose_gpu_or_billing_is_not_a_word_is_named_not_a_crash(offers):
    # (a list as a GPU id was an unhashable key in the derived-price pass: an internal error)
    with pytest.raises(InputError, match=r"offers\[\d+\]"):
        builtin_catalog().overlay({"platforms": [{"id": "zhixingyun-pro", "offers": offers}]},
                                  "o.yaml")
