"""Safe, bounded YAML reading: every failure becomes an InputError naming the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from models.errors import InputError

MAX_FILE_BYTES = 2 * 1024 * 1024
# An alias bomb ("billion laughs") is small on disk and huge once expanded; refuse it before
# anything walks the expanded tree.
MAX_EXPANDED_NODES = 200_000


def _expanded_size(node: yaml.Node, memo: dict[int, int], depth: int = 0) -> int:
    key = id(node)
    if key in memo:
        return memo[key]
    if depth > 200:
        raise InputError(["nesting deeper than 200 levels"])
    size = 1
    if isinstance(node, yaml.SequenceNode):
        size += sum(_expanded_size(child, memo, depth + 1) for child in node.value)
    elif isinstance(node, yaml.MappingNode):
        size += sum(
            _expanded_size(k, memo, depth + 1) + _expanded_size(v, memo, depth + 1) for k, v in node.value
        )
    memo[key] = size
    return size


def read_yaml(path: Path, *, what: str = "file") -> Any:
    """Read one YAML document. Raises InputError (one line, naming the file) on any problem."""
    label = str(path)
    if not path.exists():
        raise InputError([f"{label}: {what} not found"])
    if path.is_dir():
        raise InputError([f"{label}: is a folder, expected a YAML {what}"])
    if path.stat().st_size > MAX_FILE_BYTES:
        raise InputError([f"{label}: larger than {MAX_FILE_BYTES // 1024} KiB; not a scenario file"])
    raw = path.read_bytes()
    if b"\x00" in raw:
        raise InputError([f"{label}: binary file, expected YAML text"])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError([f"{label}: not UTF-8 text, expected a YAML {what}"]) from None
    return parse_yaml_text(text, label, what=what)


def parse_yaml_text(text: str, label: str, *, what: str = "file") -> Any:
    if not text.strip():
        raise InputError([f"{label}: empty {what}"])
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        if node is None:
            raise InputError([f"{label}: empty {what}"])
        if _expanded_size(node, {}) > MAX_EXPANDED_NODES:
            raise InputError([f"{label}: YAML aliases expand to more than {MAX_EXPANDED_NODES} nodes; refused"])
        loader = yaml.SafeLoader(text)
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f" line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise InputError([f"{label}:{where}: malformed YAML: {exc.problem}"]) from None
    except yaml.YAMLError as exc:
        raise InputError([f"{label}: malformed YAML: {exc}"]) from None
    except RecursionError:
        raise InputError([f"{label}: YAML nested too deeply"]) from None
