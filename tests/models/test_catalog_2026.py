"""Issue 13 item 6 catalog additions: specialist Chinese rental clouds, Volcano Engine, egress,
purchases."""

from __future__ import annotations

import re

import pytest

from plan.models.catalog import builtin_catalog

DATE = re.compile(r"^\d{4}(-\d{2}){0,2}$")
NEW_PLATFORMS = {"autodl", "gpushare", "matpool", "volcengine-ml"}


@pytest.fixture(scope="module")
def catalog():
    return builtin_catalog()


def test_new_platforms_have_sourced_assumed_offers(catalog):
    """Their prices come from third parties (vendor pages are console-only): every one is `assumed`,
    names its source and date, and cites nothing outside the repository."""
    for pid in NEW_PLATFORMS:
        platform = catalog.platform(pid)
        assert platform.jurisdiction == "cn" and platform.offers, pid
        for offer in platform.offers:
            assert offer.assumed and offer.assumption, (pid, offer.gpu)
            assert offer.source.strip() and DATE.match(offer.as_of), (pid, offer.gpu)
            assert "shared/" not in offer.source, (pid, offer.gpu)
            assert offer.gpu in catalog.gpus and offer.currency == "CNY"


def test_chinese_names_resolve(catalog):
    assert catalog.platform("恒源云").id == "gpushare"
    assert catalog.platform("矩池云").id == "matpool"
    assert catalog.platform("火山引擎").id == "volcengine-ml"
    assert catalog.platform("AutoDL").id == "autodl"


def test_rental_clouds_claim_no_security_features(catalog):
    """No source gives AutoDL-class clouds or Volcano Engine dedicated hardware, encryption or
    compliance, so sensitive data can never be placed there by default."""
    for pid in NEW_PLATFORMS:
        f = catalog.platform(pid).features
        assert not (
            f.dedicated_hardware or f.encryption or f.domestic_compliance or f.private_line
        ), pid


def test_autodl_bills_per_second_and_is_single_host(catalog):
    autodl = catalog.platform("autodl")
    assert all(o.granularity_s == 1 and o.billing == "hourly" for o in autodl.offers)
    assert not autodl.limits.multi_node and autodl.limits.max_gpus_per_job == 8


def test_egress_entries_are_sourced_and_convertible(catalog):
    priced = [p for p in catalog.platforms.values() if p.egress is not None]
    assert {p.id for p in priced} >= {"aliyun-pai", "tencent-ti-one", "aws", "lambda", "runpod"}
    for p in priced:
        e = p.egress
        assert e.source.strip() and DATE.match(e.as_of) and (not e.assumed or e.assumption), p.id
        assert e.currency == "CNY" or e.currency in catalog.exchange_rates.rates
    # where the sources say none is charged, none is
    assert catalog.platform("lambda").egress.price_per_gb == 0
    assert catalog.platform("aws").egress.price_per_gb > 0


def test_purchase_prices_per_gpu(catalog):
    private = catalog.platform("private-cluster")
    by_gpu = {p.gpu: p for p in private.purchase}
    assert {"a800-80gb", "h800", "a100-80gb", "h200", "h100-sxm", "h20"} <= set(by_gpu)
    for option in private.purchase:
        assert (
            option.source and DATE.match(option.as_of) and (not option.assumed or option.assumption)
        )
        # a per-GPU price with its share of the server: between 50k and 500k CNY for these cards
        if option.gpu != "rubin-nvl72":
            assert (
                50_000 < catalog.to_currency(option.capex_per_gpu, option.currency, "CNY") < 500_000
            )
    # the H20 is the cut-down export part: cheaper than the H200 it is priced against
    assert by_gpu["h20"].capex_per_gpu < by_gpu["h200"].capex_per_gpu
