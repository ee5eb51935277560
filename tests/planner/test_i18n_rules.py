"""Rule reasons and rule-group names in the reader's language (issue 51 item 6): a rule in
constraints/ writes its reason in English with its own template (it may not import the planner);
the planner's English table holds that very template, so English output is unchanged, and the
Chinese table says it again when shown in Chinese."""

from __future__ import annotations

import ast
import pickle
import string
from pathlib import Path

from plan import constraints, models
from plan.constraints import capacity, memory, ops_skill, policy, sensitivity
from plan.models.problem import Placement
from plan.models.said import Said
from plan.models.scenario import Scenario
from plan.planner import i18n
from plan.planner.candidates import budget_group
from plan.planner.candidates.build import deadline_group
from plan.planner.i18n import rules_en, rules_zh
from plan.planner.i18n.said import local

RULE_FOLDERS = (Path(constraints.__file__).resolve().parent, Path(models.__file__).resolve().parent)


def _rule_templates() -> dict[str, set[str]]:
    """Every `say_as(key, template, ...)` in constraints/ and models/: key -> the templates."""
    found: dict[str, set[str]] = {}
    for folder in RULE_FOLDERS:
        for path in folder.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                        and node.func.id == "say_as" and len(node.args) >= 2):
                    key, template = (ast.literal_eval(arg) for arg in node.args[:2])
                    found.setdefault(key, set()).add(template)
    return found


def _english_again(said: Said) -> str:
    """The sentence rendered from the planner's English table (as a nesting sentence does)."""
    with i18n.kept_language():
        i18n.choose("en")
        return i18n.t(said.key, **{k: _english_again(v) if isinstance(v, Said) else v
                                   for k, v in said.fields.items()})


def _chinese(text: str) -> str:
    with i18n.kept_language():
        i18n.choose("zh")
        return local(text)


def test_every_rule_template_is_the_english_tables_own() -> None:
    used = _rule_templates()
    assert len(used) >= 35  # sensitivity, residency, ops skill, quotas, memory, policy, ...
    differing = {key: templates for key, templates in used.items()
                 if templates != {rules_en.MESSAGES.get(key)}}
    assert differing == {}
    rule_keys = {key for key in rules_en.MESSAGES if key.startswith("rule.")}
    assert sorted(rule_keys - set(used)) == []  # no table entry that no rule says


def test_rule_tables_have_the_same_keys_and_fields() -> None:
    assert set(rules_en.MESSAGES) == set(rules_zh.MESSAGES)
    for key, text in rules_en.MESSAGES.items():
        fields = {name for _, name, _, _ in string.Formatter().parse(text) if name}
        assert fields == {name for _, name, _, _ in string.Formatter().parse(rules_zh.MESSAGES[key])
                          if name}, key


def _place(**changes: object) -> Placement:
    base: dict[str, object] = dict(
        kind="cloud", platform="hospital-a800", platform_kind="rental_cloud", gpu="a800-80gb",
        gpu_architecture="ampere", gpu_has_bf16=True, gpu_has_fp8=False, gpus=16,
        gpus_per_node=8, billing="hourly", jurisdiction="cn", features=frozenset())
    base.update(changes)
    return Placement(**base)  # type: ignore[arg-type]


def test_a_rule_reason_is_english_as_before_and_chinese_when_shown() -> None:
    reason = memory.reason("qwen2.5-72b", 8, "a800-80gb", 138.0, 80.0, 0.08, 1.1)
    assert reason == ("no layout of qwen2.5-72b fits on 8x a800-80gb: the leanest needs 138.0 GiB "
                      "per GPU, the card has 80 GiB less 8% headroom, with the estimate's band at "
                      "x1.10 = 66.9 GiB usable")
    assert isinstance(reason, Said) and _english_again(reason) == reason
    assert _chinese(reason) == ("qwen2.5-72b 在 8 张 a800-80gb 上放不下：最省显存的布局每卡需 "
                                "138.0 GiB，显卡为 80 GiB，扣除 8% 余量，按估算误差带 ×1.10，"
                                "可用 66.9 GiB")
    plain = memory.reason("qwen2.5-72b", 8, "a800-80gb", 138.0, 80.0)
    assert isinstance(plain, Said) and plain.endswith("the card has 80 GiB")
    assert _english_again(plain) == plain


def test_rule_checks_say_their_reasons_in_both_languages(base_scenario) -> None:
    scenario = Scenario.model_validate({**base_scenario, "ops_skill": "basic"})
    job = scenario.jobs[0]
    (reason,) = ops_skill.check(scenario, job, _place()).values()
    assert reason == ("ops skill basic: 2-node jobs only on managed platforms, hospital-a800 is "
                      "not managed")
    assert _chinese(reason) == ("运维能力为 basic 时，2 节点的任务只能在托管平台上运行，"
                                "hospital-a800 不是托管平台")
    (pool,) = capacity.check(scenario, job, _place(), pool_count=8).values()
    assert (pool, _chinese(pool)) == ("hospital-a800 has only 8 GPUs", "hospital-a800 只有 8 张卡")
    broken = policy.check(scenario, job, _place(kind="cloud"), {"autodl"}, set(), None, set())
    assert _chinese(broken["policy.platforms"]) == "hospital-a800 不在 allow_platforms 中"
    for said in (reason, pool, broken["policy.platforms"]):
        assert isinstance(said, Said) and _english_again(said) == said
        copied = pickle.loads(pickle.dumps(said))  # batch workers pickle candidates
        assert copied == said and _chinese(copied) == _chinese(said)


def test_group_names_follow_the_language(base_scenario) -> None:
    scenario = Scenario.model_validate({**base_scenario, "budget": 5000, "currency": "CNY"})
    budget = budget_group(scenario)
    assert budget == "total cost within the budget of 5,000 CNY"
    assert _chinese(budget) == "总费用不超过预算 5,000元"
    assert deadline_group("domain-cpt", 12) == "domain-cpt ends within 12 hours"
    assert _chinese(deadline_group("domain-cpt", 12)) == "domain-cpt 在 12 小时内完成"
    assert deadline_group("sft", 720) == "sft ends within 30 days"
    assert _chinese(deadline_group("sft", 720)) == "sft 在 30 天内完成"


def test_an_assumed_internet_link_is_said_in_both_languages(base_scenario) -> None:
    scenario = Scenario.model_validate({**base_scenario, "jobs": [
        {**base_scenario["jobs"][0],
         "data": {"sensitivity": "public", "at": "lab", "size": "50GB"}}]})
    graph = sensitivity.link_graph(scenario, ["lambda"])
    hours, note = sensitivity.transfer_hours(scenario, scenario.jobs[0], _place(platform="lambda"),
                                             graph)
    assert note == "a: data moves lab -> lambda over an assumed 1 Gb/s internet link"
    assert hours > 0 and isinstance(note, Said) and _english_again(note) == note
    assert _chinese(note) == "a：数据从 lab 经假设的 1 Gb/s 互联网链路传到 lambda"
