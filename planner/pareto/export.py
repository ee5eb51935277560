"""Writing a Pareto front to CSV or JSON, atomically (a crash never leaves half a file)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from plan.planner.atomic_file import write_atomically
from plan.planner.pareto.front import ParetoFront
from plan.planner.plain_text import json_text, plain

FRONT_SUFFIXES = (".csv", ".json")
CSV_COLUMNS = ("point", "cost", "currency", "makespan_h", "makespan_days", "risk", "within_budget",
               "meets_deadlines", "plan")


def front_csv(front: ParetoFront) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for rank, p in enumerate(front.points, start=1):
        writer.writerow(
            [
                rank,
                f"{p.cost:.2f}",
                front.currency,
                f"{p.makespan_h:.2f}",
                f"{p.makespan_h / 24:.3f}",
                "" if p.risk is None else f"{p.risk:.4f}",
                p.within_budget,
                p.meets_deadlines,
                plain(p.label()),
            ]
        )
    return out.getvalue()


def front_json(front: ParetoFront) -> str:
    return json_text(json.dumps(front.to_dict(), indent=2, ensure_ascii=False)) + "\n"


def write_front(front: ParetoFront, path: Path) -> None:
    """By suffix: .csv or .json (ValueError otherwise)."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        write_atomically(path, front_csv(front))
    elif suffix == ".json":
        write_atomically(path, front_json(front))
    else:
        raise ValueError(f"-o: {path.name}: use a {' or '.join(FRONT_SUFFIXES)} file")
