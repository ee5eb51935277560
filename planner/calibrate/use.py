"""Which calibration a scenario uses: `--calibration FILE` on the command line, else `calibration:`
in the scenario (a path relative to the scenario file). Checked once up front, so a bad file is bad
input."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from plan.models.loading import LoadedScenario
from plan.models.said import say_as
from plan.planner.calibrate.overlay import Calibration, CalibrationError


def calibration_path(loaded: LoadedScenario) -> Path | None:
    ref = loaded.scenario.calibration
    if not ref:
        return None
    path = Path(ref).expanduser()
    return path if path.is_absolute() else loaded.path.parent / path


def load_for(loaded: LoadedScenario) -> Calibration | None:
    """The scenario's calibration (raises CalibrationError naming the file and field when it is
    bad)."""
    path = calibration_path(loaded)
    return Calibration.load(path) if path is not None else None


def with_calibration(loaded: LoadedScenario, option: Path | None) -> LoadedScenario:
    """The scenario with the command line's calibration (if given) in place of its own, checked.
    Raises CalibrationError for a file that cannot be used."""
    if option is not None:
        scenario = loaded.scenario.model_copy(update={"calibration": str(option.resolve())})
        loaded = dataclasses.replace(loaded, scenario=scenario)
    path = calibration_path(loaded)
    if path is not None:
        if not path.is_file():
            where = "--calibration" if option is not None else say_as(
                "calib.scenario_field", "{path}: calibration", path=str(loaded.path))
            raise CalibrationError(say_as("calib.file_missing", "{where}: {path} not found (write "
                                          "it with `plan calibrate RUNS -o FILE`)", where=where,
                                          path=str(path)))
        Calibration.load(path)
    return loaded
