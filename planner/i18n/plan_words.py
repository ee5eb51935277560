"""A solve's fixed phrases in the current language: its proof, a plan's one-line summary, an
alternative's trade and a billing line. English is the records' own wording (`SolveResult.proof`,
`Plan.summary`, `Trade.summary`), so English output is unchanged by this module."""

from __future__ import annotations

import re

from plan.planner.i18n import TABLES, speaks_chinese, t, word
from plan.planner.i18n.numbers import hours, money, signed_money
from plan.planner.i18n.said import Fmt, Said, local, template_pattern
from plan.planner.plan import Plan, SolveResult, Trade


def proof(result: SolveResult) -> str:
    """'optimal, gap 0.0%, bound 600 CNY'; '已证明最优，差距 0.0%，下界 600元'."""
    if not speaks_chinese():
        return result.proof()
    status = word("status", result.status)
    if result.gap is None or result.bound is None:
        return status
    bound = hours(result.bound) if result.bound_unit == "h" else money(result.bound,
                                                                        result.bound_unit)
    return t("solve.proof", status=status, gap=f"{result.gap:.1%}", bound=bound)


def headline(result: SolveResult) -> str:
    """The proof, the objective and the seconds the solve took, after the scenario's name."""
    return t("solve.headline", proof=proof(result),
             objective=word("objective", result.objective), s=f"{result.solve_time_s:.2f}")


def plan_summary(plan: Plan) -> str:
    """Each job's place: 'sft: 8x h800 on autodl (hourly)';
    'sft：autodl 上 8 张 h800（按量计费）'."""
    if not speaks_chinese():
        return plan.summary()
    return "；".join(t("plan.job_place", job=name, gpus=j.gpus, gpu=j.gpu, platform=j.platform,
                       billing=word("billing", j.billing)) for name, j in plan.places())


def stored_plan_summary(text: str) -> str:
    """A plan's summary that came back as text (a batch row solved in another process or read
    from a results file) in the reader's words, read back through the English template of each
    job's place; a text that does not read back so is shown as it is."""
    if not speaks_chinese() or not text:
        return text
    place = template_pattern(TABLES["en"]["plan.job_place"])
    found = [place.fullmatch(part) for part in text.split(TABLES["en"]["list_sep"])]
    if not all(found):
        return text
    return t("list_sep").join(
        t("plan.job_place", **{**match.groupdict(), "billing": word("billing", match["billing"])})
        for match in found if match)


def trade_summary(trade: Trade, currency: str) -> str:
    """'+116 CNY, -14.4 h'; '多花116元，提前14.4小时完成'."""
    if not speaks_chinese():
        return trade.summary(currency)
    cost = abs(trade.delta_cost)
    if round(cost) == 0:
        spent = t("trade.same_cost")
    else:
        key = "trade.dearer" if trade.delta_cost > 0 else "trade.cheaper"
        spent = t(key, amount=money(cost, currency))
    late = abs(trade.delta_makespan_h)
    if round(late, 1) == 0:
        when = t("trade.same_time")
    else:
        key = "trade.later" if trade.delta_makespan_h > 0 else "trade.sooner"
        when = t(key, h=f"{late:,.1f}")
    return t("trade.summary", cost=spent, time=when)


def delta(cost: float, currency: str, makespan_h: float) -> tuple[str, str]:
    """A difference against the best plan: (cost, time), each signed."""
    return signed_money(cost, currency), t("unit.signed_hours", h=f"{makespan_h:+,.1f}")


_JOB_LINE = re.compile(r"^(hourly|daily|monthly|yearly|spot|owned|reserved) on (.+)$")
_SHARED_LINE = re.compile(r"^(reservation|purchase): (.+)$")


def billing_line(text: str) -> str:
    """A billing line ('hourly on autodl', 'reservation: 64x h800 ...') in the reader's words."""
    if not speaks_chinese():
        return text
    if isinstance(text, Said):  # a reservation's or purchase's own label
        return local(text)
    if match := _JOB_LINE.match(text):
        return t("cash.job_line", platform=match[2], billing=word("billing", match[1]))
    if match := _SHARED_LINE.match(text):
        return t("cash.shared_line", kind=word("kind", match[1]), label=match[2])
    return text


def trade_words(trade: Trade, currency: str) -> Fmt:
    """`trade_summary` as a sentence's field, said in the sentence's language."""
    return Fmt(trade_summary, (trade, currency))
