"""`plan batch`: many scenarios (and sweep variants of each) solved on a process pool or on Ray.

Modules, one job each: `inputs` (PATH arguments to files), `sweep` (--sweep specs, grid, applying a
value), `tasks` (the unit of work and its content hash), `work` (the work function, Task -> Row),
`rows` (the result row, tally, exit code), `results_file` (CSV/JSONL, atomic writes), `local` and
`ray_backend` (where work runs), `runner` (resume, order, checkpoints).
"""

from plan.planner.batch.inputs import Input, expand_paths
from plan.planner.batch.results_file import ResultsFileError, read_rows, results_format, write_rows
from plan.planner.batch.rows import COLUMNS, Row, Tally
from plan.planner.batch.runner import BatchOutcome, run_batch
from plan.planner.batch.sweep import SweepError, Variant, expand_grid, parse_sweeps
from plan.planner.batch.tasks import Task, build_tasks, content_hash
from plan.planner.batch.work import run_task

__all__ = [
    "COLUMNS",
    "BatchOutcome",
    "Input",
    "ResultsFileError",
    "Row",
    "SweepError",
    "Tally",
    "Task",
    "Variant",
    "build_tasks",
    "content_hash",
    "expand_grid",
    "expand_paths",
    "parse_sweeps",
    "read_rows",
    "results_format",
    "run_batch",
    "run_task",
    "write_rows",
]
