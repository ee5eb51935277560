"""Estimators, candidate generation, CP-SAT assembly, solving, explanations and the CLI."""

__version__ = "0.1.0"
