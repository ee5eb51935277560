"""Explanations: the plan narrated (narrate), why not X (why_not), the smallest conflicting rules
(conflicts), the changes that help (relaxations) and an infeasible answer put together
(infeasible)."""
