"""Safe, bounded YAML reading: every failure becomes an InputError naming the file."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import yaml

from plan.models.errors import InputError
from plan.models.file_words import file_kind, os_reason, what_word
from plan.models.said import say_as
from plan.models.yaml_budget import check_budget
from plan.models.yaml_words import yaml_error, yaml_problem

# Scenario files, model cards and catalog overlays: 5 MB (the largest shipped file is ~40 kB).
MAX_FILE_BYTES = 5_000_000
# What the parser may build, aliases expanded (see yaml_budget); the largest shipped file builds
# about 6,000 values.
MAX_EXPANDED_NODES = 200_000
MAX_DEPTH = 200
# An integer's characters: Python refuses to convert more than 4,300 digits, and 1e100 is more than
# any quantity in a plan, so a longer one is refused with its line before int() sees it.
MAX_INT_DIGITS = 100

_LOADER_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml where installed: ~10x faster


class DuplicateKeyError(Exception):
    def __init__(self, key: object, line: int) -> None:
        super().__init__(f"duplicate key {key!r}")
        self.key, self.line = key, line


class IntegerTooLongError(Exception):
    def __init__(self, length: int, line: int) -> None:
        super().__init__(f"an integer of {length:,} digits")
        self.length, self.line = length, line


class UniqueKeyLoader(_LOADER_BASE):  # type: ignore[valid-type,misc]
    """Safe loader that refuses a mapping naming one key twice (YAML would silently keep the last)
    and an integer too long to convert."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
                seen.add(key)
            except TypeError:
                continue  # an unhashable key: the base loader reports it
            if duplicate:
                raise DuplicateKeyError(key, key_node.start_mark.line + 1)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping

    def construct_bounded_int(self, node: yaml.ScalarNode) -> int:
        text = str(node.value).replace("_", "").lstrip("+-")
        if len(text) > MAX_INT_DIGITS + 2:  # + 2: a 0x, 0o or 0b prefix
            raise IntegerTooLongError(len(text), node.start_mark.line + 1)
        return yaml.SafeLoader.construct_yaml_int(self, node)

    def construct_checked_timestamp(self, node: yaml.ScalarNode) -> Any:
        """A date or time as YAML reads it; one that is not on the calendar (`2027-02-30`) stays
        the text it was written as, so the field that takes it refuses it by name, as it does the
        quoted form (PyYAML's own constructor raises a bare ValueError)."""
        try:
            return yaml.SafeLoader.construct_yaml_timestamp(self, node)
        except ValueError:
            return str(node.value)


UniqueKeyLoader.add_constructor("tag:yaml.org,2002:int", UniqueKeyLoader.construct_bounded_int)
UniqueKeyLoader.add_constructor("tag:yaml.org,2002:timestamp",
                                UniqueKeyLoader.construct_checked_timestamp)


def read_yaml(path: Path, *, what: str = "file") -> Any:
    """Read one YAML document. Raises InputError (one line, naming the file) on any problem.

    Only regular files are read (a FIFO would block forever, /dev/zero never ends), and only up to
    MAX_FILE_BYTES, checked before reading and again while reading.
    """
    label = str(path)
    raw = read_bounded(path, what=what)
    if b"\x00" in raw:
        raise InputError([say_as("rule.file_binary", "{label}: binary file, expected YAML text",
                                 label=label)])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError([say_as("rule.file_not_utf8", "{label}: not UTF-8 text, expected a YAML "
                                 "{what}", label=label, what=what_word(what))]) from None
    return parse_yaml_text(text, label, what=what)


def read_bounded(path: Path, *, what: str = "file", limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; InputError otherwise (one line)."""
    label, said = str(path), what_word(what)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise InputError([say_as("rule.file_missing", "{label}: {what} not found", label=label,
                                 what=said)]) from None
    except OSError as exc:
        raise InputError([_unreadable(label, said, exc)]) from None
    if stat.S_ISDIR(info.st_mode):
        raise InputError([say_as("rule.file_folder", "{label}: is a folder, expected a {what}",
                                 label=label, what=said)])
    if not stat.S_ISREG(info.st_mode):
        raise InputError([say_as("rule.file_special", "{label}: not a regular file ({kind}); the "
                                 "{what} must be a regular file", label=label,
                                 kind=file_kind(info.st_mode), what=said)])
    if info.st_size > limit:
        raise InputError([say_as(
            "rule.file_too_large", "{label}: {mb:,.1f} MB, larger than the {limit:g} MB allowed "
            "for a {what}", label=label, mb=info.st_size / 1e6, limit=limit / 1e6, what=said)])
    try:
        # O_NONBLOCK: if the path became a FIFO since the stat, the open does not wait for a writer.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise InputError([_unreadable(label, said, exc)]) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise InputError([say_as("rule.file_not_regular", "{label}: not a regular file; the "
                                     "{what} must be a regular file", label=label, what=said)])
        chunks: list[bytes] = []
        size = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                raise InputError([say_as("rule.file_grew", "{label}: larger than the {limit:g} "
                                         "MB allowed for a {what}", label=label,
                                         limit=limit / 1e6, what=said)])
            chunks.append(chunk)
    except OSError as exc:
        raise InputError([_unreadable(label, said, exc)]) from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def _unreadable(label: str, what: str, exc: OSError) -> str:
    return say_as("rule.file_unreadable", "{label}: cannot read the {what}: {reason}", label=label,
                  what=what, reason=os_reason(exc))


def load_yaml_value(text: str, label: str) -> Any:
    """One YAML document under the file limits (a command-line value, say): None where it holds no
    document, InputError for a limit passed, yaml.YAMLError where malformed."""
    node, loader = _compose(text, label)
    try:
        return None if node is None else _construct(loader, node, label)
    finally:
        loader.dispose()


def parse_yaml_text(text: str, label: str, *, what: str = "file") -> Any:
    if not text.strip():
        raise InputError([_empty(label, what)])
    try:
        node, loader = _compose(text, label)
        try:
            if node is None:
                raise InputError([_empty(label, what)])
            return _construct(loader, node, label)
        finally:
            loader.dispose()
    except DuplicateKeyError as exc:
        raise InputError([say_as(
            "rule.yaml_duplicate", "{label}: line {line}: duplicate key {name}; each key may "
            "appear once", label=label, line=exc.line, name=repr(exc.key))]) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = say_as("rule.yaml_where", " line {line}, column {column}", line=mark.line + 1,
                       column=mark.column + 1) if mark else ""
        raise InputError([say_as(
            "rule.yaml_malformed", "{label}:{where}: malformed YAML: {problem}", label=label,
            where=where, problem=yaml_problem(exc.problem))]) from None
    except yaml.YAMLError as exc:
        raise InputError([say_as(
            "rule.yaml_malformed", "{label}:{where}: malformed YAML: {problem}", label=label,
            where="", problem=yaml_error(exc))]) from None
    except RecursionError:
        raise InputError([say_as("rule.yaml_too_deep", "{label}: YAML nested too deeply",
                                 label=label)]) from None


def _empty(label: str, what: str) -> str:
    return say_as("rule.file_empty", "{label}: empty {what}", label=label, what=what_word(what))


def _compose(text: str, label: str) -> tuple[yaml.Node | None, UniqueKeyLoader]:
    """The node tree, once the parse events show it within the limits (InputError otherwise)."""
    check_budget(text, label, max_nodes=MAX_EXPANDED_NODES, max_depth=MAX_DEPTH)
    loader = UniqueKeyLoader(text)
    try:
        return loader.get_single_node(), loader
    except BaseException:
        loader.dispose()
        raise


def _construct(loader: UniqueKeyLoader, node: yaml.Node, label: str) -> Any:
    try:
        return loader.construct_document(node)
    except IntegerTooLongError as exc:
        raise InputError([say_as(
            "rule.yaml_long_int", "{label}: line {line}: an integer of {digits:,} digits; at most "
            "{most} digits are read (no quantity in a plan needs more)", label=label,
            line=exc.line, digits=exc.length, most=MAX_INT_DIGITS)]) from None
