"""Run a `plan` command in this process through the CLI's own entry point (so its error handling is
what runs), for the benches that draw thousands of commands: a subprocess each would cost ~1 s."""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import sys

from plan.planner.cli.app import main as plan_main


def run_plan(args: list[str]) -> tuple[object, str]:
    """(exit code, or "raised <error>" for an exception that escaped `main`; everything printed)."""
    out = io.StringIO()
    sys.argv = ["plan", *args]
    code: object = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        try:
            plan_main()
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
        except Exception as error:  # any escape is what these benches count
            code = f"raised {type(error).__name__}"
    return code, out.getvalue()


def is_bug(code: object, text: str, answers: tuple[int, ...]) -> bool:
    """An exit outside `answers`, an escaped exception, or an internal error or traceback
    printed."""
    return code not in answers or "internal error" in text or "Traceback" in text


def last_line(text: str) -> str:
    return text.strip().splitlines()[-1][:200] if text.strip() else ""


def seed_and_count(doc: str, default_count: int) -> tuple[random.Random, int, int]:
    """The draw benches' command line: --seed (default 1) and --count; (generator, seed, count)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=default_count)
    opts = parser.parse_args()
    return random.Random(opts.seed), opts.seed, opts.count
