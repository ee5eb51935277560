"""The command line's own usage errors, as click (vendored by typer) and pydantic write them, and
the lines `plan batch` and `plan export` print around their results (plan.planner.cli): English,
byte-identical to what they always printed. Every key has a Chinese twin in `usage_zh`."""

from __future__ import annotations

# click's message forms (typer._click.exceptions, parser.py, typer/core.py, _param_types.py) and
# the pydantic messages typer's coercion passes on; plan.planner.cli.usage_words reads an English
# line back through them, the most specific form first
USAGE: dict[str, str] = {
    "usage.no_such_option_possible": "No such option: {option} (Possible options: {options})",
    "usage.no_such_option": "No such option: {option}",
    "usage.missing_choose": "Missing {kind} {name}. Choose from: {choices}",
    "usage.missing": "Missing {kind} {name}.",
    "usage.missing_command": "Missing command.",
    "usage.extra_arguments": "Got unexpected extra argument(s) ({arguments})",
    "usage.invalid_value_for": "Invalid value for {param}: {problem}",
    "usage.invalid_value": "Invalid value: {problem}",
    "usage.not_one_of": "Value error, {value} is not one of {choices}.",
    "usage.no_such_command_guess": "No such command {name}. Did you mean {guess}?",
    "usage.no_such_command": "No such command {name}.",
    "usage.requires_argument": "Option {option} requires an argument.",
    "usage.requires_arguments": "Option {option} requires {n} arguments.",
    "usage.takes_no_value": "Option {option} does not take a value.",
    "usage.argument_values": "Argument {name} takes {n} values.",
    "usage.at_least": "Input should be greater than or equal to {n}",
    "usage.at_most": "Input should be less than or equal to {n}",
    "usage.above": "Input should be greater than {n}",
    "usage.below": "Input should be less than {n}",
    "usage.finite": "Input should be a finite number",
    "usage.not_finite": "{value} is not a finite number",
    "usage.path_missing": "{label} {path} does not exist.",
    "usage.path_is_file": "{label} {path} is a file.",
    "usage.path_is_folder": "{label} {path} is a directory.",
    "usage.path_unreadable": "{label} {path} is not readable.",
    "usage.path_unwritable": "{label} {path} is not writable.",
    "usage.word.argument": "argument",
    "usage.word.option": "option",
    "usage.word.parameter": "parameter",
    "usage.word.File": "File",
    "usage.word.Directory": "Directory",
    "usage.word.Path": "Path",
}

BATCH: dict[str, str] = {
    "warning.frame": "warning: {line}",
    "batch.stored_failed": "{path}: {n} stored row(s) failed their check and are left out, their "
                           "variants solved again ({shown})",
    "batch.and_more": "and {n} more",
    "batch.stored_row": "row {number}: {problem}",
    "batch.row_torn": "the last line is incomplete (a run ended while writing it)",
    "batch.row_not_json": "row {number}: not JSON ({problem})",
    "batch.row_columns": "expected columns {columns}",
    "batch.row_status": "unknown status {status}",
    "batch.row_number": "{name} is {value}",
    "batch.row_gap": "gap {gap} with status {status}",
    "batch.row_no_file": "no file",
    "batch.row_candidates": "candidates {value} is not one of {allowed}",
    "batch.row_hash": "hash {value} is not a content hash",
    "batch.row_solved_empty": "a {status} row without its cost, time, currency or plan",
    "batch.row_error_row": "an error row without its error, or with a plan",
    "batch.row_cut_row": "a cut row with an error, or a plan without its cost",
    "batch.row_unsolved": "an {status} row with a plan or an error",
    "batch.nothing_read": "no scenario could be read",
    # the table, its tally line and the progress bar (plan.planner.cli.batch_cmd)
    "batch.title": "plan batch: {n} rows",
    "batch.title_first": " (the first {shown}; all in {path})",
    "batch.col.file": "file",
    "batch.col.variant": "variant",
    "batch.col.status": "status",
    "batch.col.gap": "gap",
    "batch.col.cost": "cost",
    "batch.col.days": "days",
    "batch.col.plan": "plan / error",
    "batch.col.seconds": "s",
    "batch.tally.solved": "{n} solved",
    "batch.tally.infeasible": "{n} infeasible",
    "batch.tally.unknown": "{n} no solution in time",
    "batch.tally.bad_input": "{n} bad input",
    "batch.tally.internal_error": "{n} internal error",
    "batch.tally_sep": ", ",
    "batch.reused": " ({n} re-used from {path})",
    "batch.wrote": "; wrote {path}",
    "batch.progress.solving": "solving",
    "batch.progress.reused": "{n} re-used",
    "batch.progress.status": "{n} {status}",
    "batch.progress.eta": "eta",
    # a row's messages: its problems, joined; an internal error (planner/batch)
    "batch.row_problems": "{problems}",
    "batch.problem_sep": " | ",
    "batch.internal_row": "internal error: {kind}: {detail}",
    "batch.worker_failed": "internal error: {where} failed: {kind}: {detail}",
    "batch.where.worker": "worker process",
    "batch.where.ray": "Ray task",
    # PATH arguments that name no scenario file (planner/batch/inputs.py)
    "batch.folder_unlisted": "{folder}: cannot list this folder ({reason})",
    "batch.folder_empty": "{folder}: no *.yaml or *.yml files in this folder",
    "batch.no_match": "{pattern}: no files match this pattern",
    "batch.sweep_no_mapping": "{section}: expected a mapping to set --sweep {name} in",
    "batch.serial_instead": "{reason}; solving one at a time in this process",
    "batch.pool_failed": "could not start {jobs} worker processes ({kind}: {detail})",
    "batch.few_files": "the open-file limit ({soft}, ulimit -n) is below the {need} that {workers} "
                       "worker processes need",
    "batch.row_not_number": "{name} is not a number: {value}",
    "solve.build_cut": "the wall-clock safety net ({limit_s:g} s) cut candidate building: {done} "
                       "of {total} jobs built, nothing solved; raise solver.time_limit_s (or "
                       "--time-limit), or plan fewer jobs at once",
    # --backend ray (planner/batch/ray_backend.py): the commands stay as they are typed
    "batch.ray_missing": "--backend ray needs Ray, which is not installed; install it with: "
                         "{command} (in a checkout: {checkout})",
    "batch.ray_unreachable": "--backend ray: nothing answers at {address} ({reason}); is the Ray "
                             "head running ({command})?",
    "batch.ray_failed": "--backend ray: could not {what}: {kind}: {detail}",
    "batch.ray_reach": "reach Ray at {address}",
    "batch.ray_start_local": "start a local Ray instance",
}
