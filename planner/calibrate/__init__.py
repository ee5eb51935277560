"""Calibration from the user's own runs: parsers per input form, the fit, the overlay that plans use."""

from planner.calibrate.fit import MIN_RUNS, Factor, Fit, Observation, fit, lookup
from planner.calibrate.overlay import Calibration, CalibrationError
from planner.calibrate.runs import Run, RunError

__all__ = ["MIN_RUNS", "Calibration", "CalibrationError", "Factor", "Fit", "Observation", "Run", "RunError", "fit",
           "lookup"]
