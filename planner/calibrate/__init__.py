"""Calibration from the user's own runs: parsers per input form, the fit, the overlay that plans
use."""

from plan.planner.calibrate.fit import MIN_RUNS, Factor, Fit, Observation, fit, lookup
from plan.planner.calibrate.overlay import Calibration, CalibrationError
from plan.planner.calibrate.runs import Run, RunError

__all__ = [
    "MIN_RUNS",
    "Calibration",
    "CalibrationError",
    "Factor",
    "Fit",
    "Observation",
    "Run",
    "RunError",
    "fit",
    "lookup",
]
