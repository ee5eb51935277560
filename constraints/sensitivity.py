"""Data sensitivity and residency: where a job's data may go, and how long moving it takes.

The default rules, as a table a PI can read (`RULES`). Sites, platforms and links form a networkx
graph; data may only travel on links its sensitivity allows, and the transfer time (size /
bottleneck bandwidth of the best allowed path) counts toward the job's duration.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import networkx as nx

from plan.constraints.common import forbid_violations
from plan.constraints.groups import Groups
from plan.constraints.sat import cp_model
from plan.constraints.variables import Variables
from plan.models.jurisdiction import within
from plan.models.problem import Placement
from plan.models.said import say_as
from plan.models.scenario import Job, Scenario, Site


@dataclass(frozen=True)
class SensitivityRule:
    community_marketplace: bool  # may run on hosts of unknown identity
    shared_nodes: bool  # may share a physical node with other tenants
    spot: bool  # may run on preemptible capacity (its disks and hosts are recycled)
    needs: tuple[str, ...]  # platform features required on clouds
    # clouds only if dedicated + domestic compliance in the data's jurisdiction
    owned_or_certified: bool
    links: tuple[str, ...]  # link kinds the data may travel on
    why: str


RULES: dict[str, SensitivityRule] = {
    "public": SensitivityRule(
        True,
        True,
        True,
        (),
        False,
        ("private_line", "vpn", "internet"),
        "public data may run anywhere",
    ),
    "internal": SensitivityRule(
        False,
        True,
        True,
        (),
        False,
        ("private_line", "vpn", "internet"),
        "internal data stays off community marketplaces",
    ),
    "confidential": SensitivityRule(
        False,
        False,
        True,
        ("dedicated_hardware", "encryption"),
        False,
        ("private_line", "vpn"),
        "confidential data needs dedicated hardware and encryption",
    ),
    "regulated": SensitivityRule(
        False,
        False,
        False,
        ("dedicated_hardware", "domestic_compliance"),
        True,
        ("private_line",),
        "regulated data stays on owned hardware, or on dedicated certified hardware in its "
        "jurisdiction reached by a private line; never spot or shared",
    ),
}

# When a site declares no link to a platform, non-sensitive data is assumed to go over the internet.
ASSUMED_INTERNET_GBPS = 1.0


def declared_internet_gbps(site: Site) -> list[float]:
    """The speeds of the internet links a site declares."""
    return [link.gbps for link in site.links if link.kind == "internet"]


def site_internet_gbps(site: Site) -> float:
    """The speed assumed for a site's undeclared internet links: the fastest internet link it
    declares (its uplink carries every internet transfer, so no platform is reached faster than the
    site says its internet runs), else ASSUMED_INTERNET_GBPS."""
    return max(declared_internet_gbps(site), default=ASSUMED_INTERNET_GBPS)


def link_graph(scenario: Scenario, platform_ids: list[str]) -> nx.Graph:
    """Sites and platforms as nodes; declared links (kind, gbps) and assumed internet links as
    edges."""
    graph = nx.Graph()
    for pid in platform_ids:
        graph.add_node(pid, kind="platform")
    for site in scenario.sites:
        graph.add_node(site.id, kind="site", jurisdiction=site.jurisdiction)
    for site in scenario.sites:
        internet = site_internet_gbps(site)
        for pid in platform_ids:
            graph.add_edge(site.id, pid, kind="internet", gbps=internet, assumed=True)
        for link in site.links:
            graph.add_edge(site.id, link.to, kind=link.kind, gbps=link.gbps, assumed=False)
    return graph


def transfer(
    graph: nx.Graph, source: str, target: str, allowed: tuple[str, ...]
) -> tuple[float, bool] | None:
    """Best bottleneck bandwidth (Gb/s) from source to target using only `allowed` link kinds.

    Returns (gbps, assumed) or None when no allowed path exists. Same node: infinite bandwidth.
    Memoized on the graph object: candidate generation asks the same question thousands of times.
    """
    memo = graph.graph.setdefault("transfer_memo", {})
    key = (source, target, allowed)
    if key not in memo:
        memo[key] = _transfer(graph, source, target, allowed)
    return memo[key]


def _transfer(
    graph: nx.Graph, source: str, target: str, allowed: tuple[str, ...]
) -> tuple[float, bool] | None:
    if source == target:
        return float("inf"), False
    usable = nx.subgraph_view(graph, filter_edge=lambda a, b: graph.edges[a, b]["kind"] in allowed)
    if source not in usable or target not in usable or not nx.has_path(usable, source, target):
        return None
    best: tuple[float, bool] | None = None
    for path in nx.all_simple_paths(usable, source, target, cutoff=3):
        edges = [graph.edges[a, b] for a, b in itertools.pairwise(path)]
        gbps = min(e["gbps"] for e in edges)
        if best is None or gbps > best[0]:
            best = (gbps, any(e["assumed"] for e in edges))
    return best


def check(scenario: Scenario, job: Job, place: Placement, graph: nx.Graph) -> dict[str, str]:
    """Which sensitivity/residency rules this placement breaks for this job (group -> reason)."""
    data = job.data
    rule = RULES[data.sensitivity]
    broken: dict[str, str] = {}
    group = f"sensitivity/{job.id}"
    owned = place.kind in ("owned", "purchase")
    if not owned:
        if "community_marketplace" in place.features and not rule.community_marketplace:
            broken[group] = say_as(
                "rule.sensitivity_marketplace",
                "{sensitivity} data may not run on a community marketplace ({platform})",
                sensitivity=data.sensitivity, platform=place.platform)
        elif "shared_nodes" in place.features and not rule.shared_nodes:
            broken[group] = say_as(
                "rule.sensitivity_shared",
                "{sensitivity} data may not share nodes with other tenants ({platform})",
                sensitivity=data.sensitivity, platform=place.platform)
        elif place.billing == "spot" and not rule.spot:
            broken[group] = say_as("rule.sensitivity_spot",
                                   "{sensitivity} data may not run on spot capacity",
                                   sensitivity=data.sensitivity)
        else:
            missing = [f for f in rule.needs if f not in place.features]
            if missing:
                broken[group] = say_as(
                    "rule.sensitivity_needs", "{sensitivity} data needs {features}; {platform} "
                    "lacks it", sensitivity=data.sensitivity, features=", ".join(missing),
                    platform=place.platform)
            elif rule.owned_or_certified and data.at is not None:
                site_jurisdiction = next(s.jurisdiction for s in scenario.sites if s.id == data.at)
                if not within(site_jurisdiction, place.jurisdiction, place.regions):
                    broken[group] = say_as(
                        "rule.sensitivity_jurisdiction", "{sensitivity} data must stay in "
                        "jurisdiction {site}; {platform} is {where}", sensitivity=data.sensitivity,
                        site=site_jurisdiction, platform=place.platform, where=place.jurisdiction)
    if group not in broken and data.at is not None:
        target = place.site if owned and place.site else place.platform
        if target not in graph or transfer(graph, data.at, target, rule.links) is None:
            broken[group] = say_as(
                "rule.sensitivity_link", "no {links} link from {at} to {target} for "
                "{sensitivity} data", links="/".join(rule.links), at=data.at, target=target,
                sensitivity=data.sensitivity)
    residency = f"residency/{job.id}"
    if data.residency not in ("any", "on_premises"):
        if not within(data.residency, place.jurisdiction, place.regions):
            where: str = (say_as("rule.residency_china", "China") if data.residency == "cn" else
                          say_as("rule.residency_jurisdiction", "jurisdiction {name}",
                                 name=data.residency))
            regions = (say_as("rule.residency_regions", " (regions: {regions})",
                              regions=", ".join(place.regions)) if place.regions else "")
            broken[residency] = say_as(
                "rule.residency", "data must stay in {where}; {platform} is in {at}{regions}",
                where=where, platform=place.platform, at=place.jurisdiction, regions=regions)
    elif data.residency == "on_premises" and (
        not owned or (data.at is not None and place.site != data.at)
    ):
        where = data.at or say_as("rule.premises", "the premises")
        broken[residency] = say_as(
            "rule.residency_premises", "data must stay on premises ({where}); {platform} is not "
            "there", where=where, platform=place.platform)
    return broken


def transfer_hours(
    scenario: Scenario, job: Job, place: Placement, graph: nx.Graph
) -> tuple[float, str | None]:
    """Hours to move the job's data to the placement, and an assumption line if a link was
    assumed."""
    data = job.data
    if data.at is None or data.size_gb <= 0:
        return 0.0, None
    target = place.site if place.kind in ("owned", "purchase") and place.site else place.platform
    found = transfer(graph, data.at, target, RULES[data.sensitivity].links)
    if found is None or found[0] == float("inf"):
        return 0.0, None
    gbps, assumed = found
    hours = data.size_gb * 8 / gbps / 3600
    declared = any(declared_internet_gbps(site) for site in scenario.sites if site.id == data.at)
    if not assumed:
        return hours, None
    stated = (say_as("rule.transfer_declared", " (the speed {site} declares for its internet)",
                     site=data.at) if declared else "")
    return hours, say_as("rule.transfer_assumed", "{job}: data moves {at} -> {target} over an "
                         "assumed {gbps:g} Gb/s internet link{stated}", job=job.id, at=data.at,
                         target=target, gbps=gbps, stated=stated)


def post(model: cp_model.CpModel, variables: Variables, groups: Groups) -> None:
    forbid_violations(model, variables, groups, "sensitivity")
    forbid_violations(model, variables, groups, "residency")
