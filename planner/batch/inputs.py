"""Expand the PATH arguments of `plan batch` into scenario files, in a stable order."""

from __future__ import annotations

import glob
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from plan.models.file_words import os_reason
from plan.planner.i18n.said import say

SCENARIO_SUFFIXES = (".yaml", ".yml")


@dataclass(frozen=True)
class Input:
    """One scenario file to plan, or an argument that named none (`problem` says why, one line)."""

    path: Path
    problem: str | None = None


def _folder(folder: Path) -> list[Input]:
    try:
        files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in SCENARIO_SUFFIXES)
    except OSError as exc:  # unreadable folder: its row says so, the rest of the batch goes on
        return [Input(folder, say("batch.folder_unlisted", folder=folder, reason=os_reason(exc)))]
    if not files:
        return [Input(folder, say("batch.folder_empty", folder=folder))]
    return [Input(p) for p in files]


def expand_paths(args: Sequence[str]) -> list[Input]:
    """Files as given; folders as their *.yaml/*.yml files (not recursive) sorted by name; glob
    patterns as their matches, sorted. Arguments keep their order and a file named twice is planned
    once.

    A pattern or folder with no scenario files becomes an Input with a problem, so it shows as a
    row; a file that does not exist is kept, and the loader reports it like any unreadable scenario.
    """
    found: list[Input] = []
    for arg in args:
        if glob.has_magic(arg):
            matches = sorted(glob.glob(arg, recursive=True))
            if not matches:
                found.append(Input(Path(arg), say("batch.no_match", pattern=arg)))
            for match in matches:
                path = Path(match)
                found += _folder(path) if path.is_dir() else [Input(path)]
        else:
            path = Path(arg)
            found += _folder(path) if path.is_dir() else [Input(path)]
    unique: list[Input] = []
    seen: set[Path] = set()
    for item in found:
        try:
            key = item.path.resolve()
        # a symlink loop: kept, and the loader reports it as that file's error
        except (OSError, RuntimeError):
            key = item.path.absolute()
        if key not in seen:
            seen.add(key)
            unique.append(item)
    return unique
