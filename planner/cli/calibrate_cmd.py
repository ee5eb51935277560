"""`plan calibrate RUNS... -o calibration.yaml`: efficiency factors from your own measured runs."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from plan.models.said import say_as
from plan.models.validation_words import listed
from plan.planner.cli.common import ExitCode, console, fail, printable
from plan.planner.cli.lang_option import Language, lang_option
from plan.planner.i18n.said import Joined, local, say
from plan.planner.plain_text import plain

# the pooling levels, broadest first (calibrate.fit)
LEVELS = ("*/*/*", "framework", "gpu", "method")

if TYPE_CHECKING:
    from plan.models.catalog import Catalog
    from plan.planner.calibrate import Observation, Run
    from plan.planner.calibrate.fit import Fit


def calibrate_command(
    runs: Annotated[
        list[Path],
        typer.Argument(
            help="measured runs: .csv, .jsonl, trainer_state.json, or Megatron-LM / torchtitan "
            "logs (each with run.yaml beside it)"
        ),
    ],
    output: Annotated[
        Path, typer.Option("-o", "--output", help="the calibration overlay to write (.yaml)")
    ],
    overlay: Annotated[
        Path | None, typer.Option("--catalog", help="catalog overlay (models, GPUs)")
    ] = None,
    lang: Annotated[Language | None, lang_option()] = None,
) -> None:
    """Fit throughput and memory factors (measured / predicted) per GPU, framework and method from
    your runs, with their spread, and write an overlay that `--calibration` (or `calibration:` in a
    scenario) applies.

    A factor has two parameters (level and spread): a group with fewer than two runs is refused.
    Each factor is pooled toward its broader scope's (the broadest toward no correction) by how far
    its runs' mean could be off by chance against how far scopes differ; the weight is shown and
    written. Exit codes: 0 written, 2 bad input or nothing could be fitted.
    """
    from plan.models.catalog import load_catalog
    from plan.models.errors import InputError
    from plan.planner.atomic_file import WriteFailed, write_atomically
    from plan.planner.calibrate import Calibration, fit
    from plan.planner.calibrate.parsers import read_runs
    from plan.planner.output_target import OutputRefused, check_output_file

    if output.suffix.lower() not in (".yaml", ".yml"):
        fail(say_as("cli.calibration_yaml", "{path}: the calibration overlay is YAML; name it "
                    ".yaml", path=plain(output)))
    try:  # a run's description (run.yaml beside it) is an input too
        described = [p.with_name(n) for p in runs for n in (p.name + ".run.yaml", "run.yaml")]
        check_output_file(output, [*runs, *described, overlay])
    except OutputRefused as exc:
        fail(exc.args[0])
    try:
        catalog = load_catalog((overlay,) if overlay else ())
        measured = read_runs(runs)
        obs, records = _compare(measured, catalog)
    except InputError as exc:
        fail(exc)
    result = fit(obs)
    for line in result.refused:
        console.print(printable(local(say("calib.refused_line", line=line))))
    if not result.factors:
        fail(say_as("cli.too_few_runs", "{runs}: {n} run(s): too few to fit any factor (each "
                    "needs at least 2 runs: a factor and its spread)",
                    runs=listed(map(str, runs)), n=len(measured)))
    _print_fit(result)
    calibration = Calibration(result.factors, records, result.refused)
    try:
        # read back as --calibration reads it: a file it would refuse is never written
        text = calibration.checked_yaml(str(output))
    except InputError as exc:
        fail(exc)
    try:
        write_atomically(output, text)
    except OSError as exc:  # the writer's WriteFailed: one line naming the path and the cause
        fail(str(WriteFailed.from_os_error(output, exc)))
    console.print(printable(local(say("calib.wrote", path=str(output), n=len(measured)))))
    raise typer.Exit(ExitCode.OK)


def _print_fit(result: Fit) -> None:
    """The fitted factors (a broader scope over the same runs is the same factor: shown once) and
    the pooling's spread by level."""
    from plan.planner.calibrate.fit import metric_word

    shown: dict[tuple[str, tuple[str, ...]], list[str]] = {}
    for factor in result.factors:
        key = (factor.metric, factor.runs)
        if key not in shown:
            shown[key] = []
            console.print(printable(local(say("calib.fitted_line", factor=factor.describe()))))
        else:
            shown[key].append("/".join(factor.scope))
    for (metric, _), scopes in shown.items():
        if scopes:
            console.print(printable(local(say("calib.same_factor", metric=metric_word(metric),
                                              scopes=listed(scopes)))))
    for metric, taus in result.level_sd.items():
        levels = Joined([say("calib.level_sd", level=_level_word(name),
                             sd="-" if tau is None else f"{tau:.3f}")
                         for name, tau in zip(LEVELS, taus, strict=True)], "list_comma")
        console.print(local(say("calib.pooling_line", metric=metric_word(metric), levels=levels)))


def _level_word(level: str) -> str:
    """A pooling level's name in the reader's language ('*/*/*' is written as it is)."""
    words = {"framework": lambda: say("calib.level_framework"),
             "gpu": lambda: say("calib.level_gpu"), "method": lambda: say("calib.level_method")}
    return words[level]() if level in words else level


def _compare(measured: list[Run],
             catalog: Catalog) -> tuple[list[Observation], list[dict[str, Any]]]:
    """Each run's measurements against the estimate for its layout, and the record the file keeps of
    it. InputError naming every run that cannot be compared (the first few, and how many more)."""
    from plan.models.errors import InputError
    from plan.planner.calibrate.predict import observations, predict

    obs, records, problems = [], [], []
    for run in measured:
        try:
            est = predict(run, catalog)
            gpu_id = catalog.gpu(run.gpu).id
            mine = observations(run, est, gpu_id)
        except InputError as exc:
            problems += exc.problems
            continue
        obs += mine
        records.append({"source": run.source, "model": run.model, "method": run.method,
                        "gpu": gpu_id, "gpus": run.gpus, "framework": est.layout.framework,
                        "layout": est.layout.short(),
                        **{f"{o.metric}_measured": round(o.measured, 3) for o in mine},
                        **{f"{o.metric}_predicted": round(o.predicted, 3) for o in mine}})
    if problems:
        raise InputError(problems)
    return obs, records
