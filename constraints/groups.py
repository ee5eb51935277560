"""Constraint groups: one assumption literal per group, and the readable name explanations show."""

from __future__ import annotations

from dataclasses import dataclass, field

from plan.constraints.sat import cp_model


@dataclass
class Groups:
    """Assumption literals by group name. A group holds while its literal is true."""

    model: cp_model.CpModel
    descriptions: dict[str, str]
    literals: dict[str, cp_model.IntVar] = field(default_factory=dict)

    def literal(self, name: str) -> cp_model.IntVar:
        if name not in self.literals:
            self.literals[name] = self.model.new_bool_var(f"A[{name}]")
        return self.literals[name]

    def describe(self, name: str) -> str:
        return self.descriptions.get(name, name)

    def by_index(self) -> dict[int, str]:
        return {lit.index: name for name, lit in self.literals.items()}


def family(group: str) -> str:
    """'sensitivity/clinical-sft' -> 'sensitivity'."""
    return group.split("/", 1)[0]
