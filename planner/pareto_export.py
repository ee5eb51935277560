"""Writing a Pareto front to CSV or JSON, atomically (a crash never leaves half a file)."""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from pathlib import Path

from planner.pareto import ParetoFront

CSV_COLUMNS = ("point", "cost", "currency", "makespan_h", "makespan_days", "risk", "within_budget",
               "meets_deadlines", "plan")


def front_csv(front: ParetoFront) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for rank, p in enumerate(front.points, start=1):
        writer.writerow([rank, f"{p.cost:.2f}", front.currency, f"{p.makespan_h:.2f}", f"{p.makespan_h / 24:.3f}",
                         "" if p.risk is None else f"{p.risk:.4f}", p.within_budget, p.meets_deadlines, p.label()])
    return out.getvalue()


def front_json(front: ParetoFront) -> str:
    return json.dumps(front.to_dict(), indent=2, ensure_ascii=False) + "\n"


def write_atomically(path: Path, text: str | bytes) -> None:
    """Write to a temporary file beside `path`, flush it to disk, then rename it over `path`."""
    path = Path(path)
    data = text.encode() if isinstance(text, str) else text
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or Path("."))
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_front(front: ParetoFront, path: Path) -> None:
    """By suffix: .csv or .json (ValueError otherwise)."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        write_atomically(path, front_csv(front))
    elif suffix == ".json":
        write_atomically(path, front_json(front))
    else:
        raise ValueError(f"-o: {path.name}: use a .csv or .json file")
