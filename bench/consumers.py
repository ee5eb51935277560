"""Every export of every shipped scenario and docs example, read by its consumer's own code.

For the top plan of each scenario, each job is rendered for every stack (`render_stack`, as `plan
export --to` writes it) and each written file goes to the parser of the program that reads it, at
the version the export names (issue 50 item 2):

| file | parsed by | started (as far as a CPU goes) |
|---|---|---|
| every `torchrun` line | torch.distributed.run `get_args_parser` | `config_from_args` |
| `deepspeed` line | deepspeed.launcher.runner `parse_args` | - |
| ds_config.json | deepspeed.runtime.config `DeepSpeedConfig` | batch at the plan's ranks |
| accelerate_config.yaml | accelerate `load_config_from_file` | `ParallelismConfig` checked |
| `accelerate launch` line | accelerate `launch_command_parser` | `_validate_launch_command` |
| job.toml | torchtitan `ConfigManager.parse_args` | train spec, flavor, ParallelDims |
| train.yaml | LLaMA-Factory `_parse_train_args` | `get_train_args` to a GPU check |
| train.sh (Megatron-LM) | megatron-core 0.19.0 `parse_args` | `validate_args` |
| train.sh (MindSpeed-LLM) | the cited argument list (below) | validate_args' rules |

Megatron-LM's parser (`megatron/training/arguments.py`) ships in megatron-core's wheels and sdists
from 0.17.0 on (0.12.0 to 0.16.1 hold `megatron/core` only), which need Python >= 3.12: it lives in
its own environment, `--megatron-python PATH` (install there: `pip install -e
'.[consumers-megatron]'`, or megatron-core 0.19.0 built on 3.11 with --ignore-requires-python;
tests/consumers/megatron_check.py). 0.19.0 is tag core_v0.19.0, which the export's main d98e8a6
follows. MindSpeed-LLM (core_v0.12.1 with flags of its own) has no installable package (PyPI's
mindspeed-llm 0.0.1.dev1 is an empty placeholder): its train.sh is checked against the argument
list the export cites (docs/sources/mindspeed-llm.md) and the validate_args rules that
docs/sources/launch-configs.md section 2 states; such a cell says `cited list`, as does Megatron's
where no --megatron-python is given.

Consumers not installed are reported as skipped, with the install line. LLaMA-Factory 0.9.5 pins
accelerate<=1.11.0, below the 1.16.0 the accelerate export names, so it lives in its own
environment: `--llamafactory-python PATH` runs its checks with that interpreter (install there:
`pip install -e '.[consumers-llamafactory]'`). Megatron-Bridge exports need LLaMA-Factory's
unreleased main (the export says so and `--target-version 0.9.5` refuses them): they are checked
for the refusal 0.9.5 gives.

    python bench/consumers.py [--llamafactory-python PATH] [--megatron-python PATH] [--only NAME]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.consumers.checks import Cell, check_export, summary  # noqa: E402

SCENARIOS = sorted((ROOT / "scenarios").glob("*.yaml")) + sorted(
    (ROOT / "docs/examples").glob("*.yaml")
)


def exports(path: Path, time_limit_s: float):
    """(job id, layout, stack, files or the refusal) of the top plan's jobs of one scenario."""
    from plan.models.loading import load_scenario
    from plan.planner.export import STACKS, ExportError, build_layout, render_stack
    from plan.planner.session import SolveOptions
    from plan.planner.solve import solve

    loaded = load_scenario(path)
    result = solve(loaded, SolveOptions(time_limit_s=time_limit_s))
    if not result.plans:
        return
    jobs = {j.id: j for j in loaded.scenario.jobs}
    for jp in result.plans[0].jobs:
        layout = build_layout(jp, jobs[jp.job], loaded.models[jp.job], loaded.catalog.gpu(jp.gpu))
        for stack in STACKS:
            try:
                files, _ = render_stack(layout, stack)
            except ExportError as exc:
                yield jp.job, layout, stack, str(exc)
                continue
            yield jp.job, layout, stack, files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--llamafactory-python", help="interpreter with llamafactory 0.9.5")
    parser.add_argument("--megatron-python", help="interpreter with megatron-core 0.19.0")
    parser.add_argument("--only", help="one scenario or example (file stem)")
    parser.add_argument("--time-limit", type=float, default=300.0)
    args = parser.parse_args()
    from plan.planner.export import STACKS

    rows: list[tuple[str, dict[str, Cell]]] = []
    failures: list[str] = []
    for path in SCENARIOS:
        if args.only and path.stem != args.only:
            continue
        by_job: dict[str, dict[str, Cell]] = {}
        for job, layout, stack, files in exports(path, args.time_limit):
            cell = check_export(stack, layout, files, args.llamafactory_python,
                                args.megatron_python)
            by_job.setdefault(job, {})[stack] = cell
            failures += [f"{path.stem}/{job} --to {stack}: {line}" for line in cell.failures]
        rows += [(f"{path.stem}/{job}", cells) for job, cells in by_job.items()]
        done = [c for cells in by_job.values() for c in cells.values()]
        print(f"{path.stem}: {summary(done)}", file=sys.stderr, flush=True)  # progress
    print("| job | " + " | ".join(STACKS) + " |")
    print("|---|" + "---|" * len(STACKS))
    for name, cells in rows:
        print(f"| {name} | " + " | ".join(cells[s].short() for s in STACKS) + " |")
    print()
    print(summary([cell for _, cells in rows for cell in cells.values()]))
    for line in failures:
        print("FAIL " + line)
    for note in sorted({n for _, cells in rows for c in cells.values() for n in c.skipped}):
        print("skipped: " + note)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
