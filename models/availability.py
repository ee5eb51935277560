"""Who may rent a platform's offers, by the renter's jurisdiction (issue 47, item 7).

A rental platform's `renter_rules` list says, each with its public source and date (or `assumed`
with the rule), either the jurisdictions its offers are rented to (`available_in`) or those whose
renters are flagged (`not_available_to`: "everyone but cn" cannot be written as a short list of
allowed places). The renter's jurisdiction is the scenario's (`Scenario.renter`); where it is not
known, no rule is checked. A plan that rents against a rule names it beside the plan;
`policy.only_available: true` makes it a hard rule.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, Field, model_validator

from plan.models.base import DateText, Strict
from plan.models.bounded import Id
from plan.models.jurisdiction import check_code, within

RegionCode = Annotated[str, BeforeValidator(check_code)]


class RenterRule(Strict):
    """One rule on who may rent: exactly one of `available_in` and `not_available_to`; `gpus`
    limits it to those GPUs' offers (empty: every offer of the platform)."""

    available_in: list[RegionCode] | None = Field(
        default=None, description="renters in these jurisdictions only")
    not_available_to: list[RegionCode] | None = Field(
        default=None, description="renters in these jurisdictions are flagged (or ruled out under "
                                  "policy.only_available)")
    gpus: list[Id] = Field(default_factory=list, description="the GPUs it covers; empty = all")
    rule: str = Field(min_length=1, description="the rule in words")
    source: str = Field(min_length=1, description="its public source (URL), or 'assumed'")
    as_of: DateText
    assumed: bool = False

    @model_validator(mode="after")
    def _one_form(self) -> RenterRule:
        if (self.available_in is None) == (self.not_available_to is None):
            raise ValueError("a renter rule states exactly one of available_in (renters allowed) "
                             "and not_available_to (renters flagged)")
        if not (self.available_in if self.available_in is not None else self.not_available_to):
            raise ValueError("a renter rule's jurisdiction list is empty; name at least one code")
        return self

    def covers(self, gpu: str) -> bool:
        return not self.gpus or gpu in self.gpus

    def excludes(self, renter: str) -> bool:
        """Whether a renter in `renter` falls under this rule."""
        if self.available_in is not None:
            return not any(within(code, renter) for code in self.available_in)
        return any(within(code, renter) for code in self.not_available_to or ())

    @property
    def text(self) -> str:
        """The rule with its source and date, as an answer names it."""
        marked = "assumed: " if self.assumed else ""
        return f"{marked}{self.rule} ({self.source}, {self.as_of})"
