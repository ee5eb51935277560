"""Where a command may write: checked before any work, so a refusal costs nothing.

Every file a command writes goes through here and then through `plan.planner.atomic_file`:
- the folder must exist and the target must not be a folder;
- an existing symlink is never written through (nor replaced: it may be someone's link on purpose);
- a target that is one of the command's inputs is refused (`pareto s.yaml -o s.yaml` would lose it);
- names made from input (job ids may hold `/` and `..`) become one safe path component
  (`safe_component`), and a written path must resolve inside the chosen folder.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from plan.models.said import say_as
from plan.planner.plain_text import plain

if TYPE_CHECKING:
    from plan.models.loading import LoadedScenario

# One path component that every file system here takes as a plain name: no separator, no leading dot
# (`..`, hidden files), none of the characters Windows or a shell treats specially.
_SAFE_COMPONENT = re.compile(r"^[A-Za-z0-9_+@-][A-Za-z0-9._+@-]{0,127}$")
_UNSAFE_CHAR = re.compile(r"[^A-Za-z0-9._+@-]")


class OutputRefused(ValueError):
    """An output path the command will not write; the message is one line naming it."""


def safe_component(name: str, hashed: bool = False) -> str:
    """`name` itself when it is already one safe path component (and not `hashed`), else a
    deterministic safe name: unsafe characters (`/`, `:`) become `_`, a leading dot `_`, and a short
    hash of the original name keeps two ids apart (`a/../../x` -> `a_.._.._x-<8 hex>`)."""
    if _SAFE_COMPONENT.match(name) and not hashed:
        return name
    cleaned = _UNSAFE_CHAR.sub("_", name)[:100]
    if not cleaned or cleaned[0] == ".":
        cleaned = "_" + cleaned
    digest = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:8]
    return f"{cleaned}-{digest}"


def component_map(names: Sequence[str]) -> dict[str, str]:
    """Each name's safe component (`safe_component`), distinct even on a file system that ignores
    case: a name whose component is taken gets the hashed form. Refuses what still collides."""
    mapped: dict[str, str] = {}
    taken: dict[str, str] = {}
    for name in names:
        component = safe_component(name)
        if component.lower() in taken:
            component = safe_component(name, hashed=True)
        other = taken.setdefault(component.lower(), name)
        if other != name:
            raise OutputRefused(say_as(
                "out.same_folder", "{one} and {other} would be written to the same folder "
                "{folder}; rename one", one=repr(plain(other)), other=repr(plain(name)),
                folder=repr(component)))
        mapped[name] = component
    return mapped


def same_file(a: Path, b: Path) -> bool:
    """Whether two paths name one file (by inode where both exist, else by resolved path)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return Path(os.path.abspath(a)).resolve() == Path(os.path.abspath(b)).resolve()


def check_output_file(path: Path, inputs: Iterable[Path | None] = (), what: str = "-o") -> Path:
    """`path` if a command may write it (see the module doc), else OutputRefused naming it."""
    shown = f"{what} {plain(path)}"
    parent = path.parent
    if not parent.is_dir():
        raise OutputRefused(say_as("out.no_folder", "{shown}: folder {folder} does not exist",
                                   shown=shown, folder=plain(parent)))
    if path.is_symlink():
        raise OutputRefused(say_as("out.symlink", "{shown}: is a symbolic link; refusing to "
                                   "write through it (remove it, or name the file it points to)",
                                   shown=shown))
    if path.is_dir():
        raise OutputRefused(say_as("out.folder", "{shown}: is a folder; name a file",
                                   shown=shown))
    if path.exists() and not path.is_file():
        raise OutputRefused(say_as("out.not_regular", "{shown}: is not a regular file",
                                   shown=shown))
    for source in inputs:
        if source is not None and same_file(path, source):
            raise OutputRefused(say_as(
                "out.is_input", "{shown}: is one of this command's inputs ({source}); writing "
                "it would lose the input: name another file", shown=shown, source=plain(source)))
    return path


def check_inside(folder: Path, target: Path) -> None:
    """Refuse `target` unless it resolves inside `folder` and nothing on the way is a symlink."""
    root = folder.resolve()
    try:
        relative = Path(os.path.abspath(target)).relative_to(Path(os.path.abspath(folder)))
    except ValueError:
        raise OutputRefused(say_as("out.outside", "-o {folder}: {target} lies outside it",
                                   folder=plain(folder), target=plain(target))) from None
    walked = root
    for part in relative.parts:
        walked = walked / part
        if walked.is_symlink():
            raise OutputRefused(say_as(
                "out.inner_symlink", "-o {folder}: {path} is a symbolic link; refusing to write "
                "through it (remove it first)", folder=plain(folder), path=plain(walked)))
    if not walked.resolve().is_relative_to(root):
        raise OutputRefused(say_as("out.outside", "-o {folder}: {target} lies outside it",
                                   folder=plain(folder), target=plain(target)))


def scenario_inputs(loaded: LoadedScenario, *files: Path | None) -> list[Path]:
    """Every file a scenario command read: the scenario, its overlay, calibration and model-card
    files, and the command line's own (`files`)."""
    from plan.models.loading import is_model_file

    base = loaded.path.parent
    refs = [loaded.scenario.catalog, loaded.scenario.calibration,
            *(job.model for job in loaded.scenario.jobs if is_model_file(job.model))]
    found = [loaded.path, *(f for f in files if f is not None)]
    paths = [Path(ref).expanduser() for ref in refs if ref]
    found += [path if path.is_absolute() else base / path for path in paths]
    return found
