#!/usr/bin/env python3
"""Rewrite references to the top-level folders `models`, `constraints` and `planner` as the one import
package `plan` (`plan.models`, `plan.constraints`, `plan.planner`), in every .py, .md and .toml file of a tree.

The folders stay where they are; pyproject.toml maps them into `plan` (see its [tool.setuptools]). This
script only rewrites the names code uses to reach them, so it can be run again on a newer tree before a
merge: it is idempotent (a name already under `plan.` is never touched) and prints each file it changed.

    python scripts/rename_imports.py [ROOT] [--check]

ROOT defaults to the repository this script lives in. `--check` changes nothing and exits 1 if any file
would change (for CI or a pre-merge check). Either way it lists, and exits 1 on, Python imports of a bare
old name that no rule covers (`import a, models`), found by parsing each .py file.

What is rewritten (OLD is one of the three folder names):
- `from OLD... import` and `import OLD...` statements, also inside code held in strings ("...\\nfrom OLD.x
  import y");
- a dotted module name `OLD.child...` anywhere (strings for `importlib`, `python -m`, entry points, sys.modules
  checks, docstrings and docs), but only where `child` is a real module or package in the folder OLD, so
  `models.yaml`, `catalog.models` or a variable `models.get` stay as they are;
- the bare package name given to `importlib.resources.files(...)` or `importlib.import_module(...)`.
Paths (`planner/estimate/band.py`) stay: the folders have not moved. A line that carries the comment
`rename-imports: keep` is left as it is (an old name kept on purpose, such as a module of an older commit).
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

NEW = "plan"
OLD = ("models", "constraints", "planner")
SUFFIXES = (".py", ".md", ".toml")
KEEP = "rename-imports: keep"
SKIP_DIRS = frozenset({"build", "dist", "node_modules", "__pycache__", "site-packages"})

_NAMES = "|".join(OLD)
# Where a statement starts: a line's start, after `;`, after a quote, or after a `\n` written in a string.
_START = r"(^[ \t]*|(?<=\\n)[ \t]*|(?<=;)[ \t]*|(?<=[\"'])[ \t]*)"


def _children(root: Path, package: str) -> set[str]:
    """Module and subpackage names directly inside the folder `package` (what `package.X` can name)."""
    folder = root / package
    names = {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}
    names |= {d.name for d in folder.iterdir() if d.is_dir() and (d / "__init__.py").exists()}
    return names


def _patterns(root: Path) -> list[tuple[re.Pattern[str], str]]:
    found = [name for name in OLD if (root / name).is_dir()]
    if not found:
        raise SystemExit(f"{root}: none of the folders {', '.join(OLD)} is here; is this the repository root?")
    rules: list[tuple[re.Pattern[str], str]] = [
        # from OLD import x / from OLD.a.b import x (indented, after `;`, or in a string after "\n")
        (re.compile(rf"(?m){_START}from ({_NAMES})(?=[.\s])(?=[\w.]* import\b)"), rf"\1from {NEW}.\2"),
        # import OLD.a.b [as x] at the start of a statement (the `, OLD.c` that may follow is dotted: below)
        (re.compile(rf"(?m){_START}import ({_NAMES})(?=[.\s,;]|$)"), rf"\1import {NEW}.\2"),
        # resources.files("OLD"), import_module("OLD")
        (re.compile(rf"\b(files|import_module|find_spec)\((\s*)([\"'])({_NAMES})\3"), rf"\1(\2\3{NEW}.\4\3"),
    ]
    for name in found:
        children = "|".join(sorted(_children(root, name), key=len, reverse=True))
        if children:
            # OLD.child, not after a word character, '.', '/' or '-' (so plan.OLD, a.OLD, x/OLD stay)
            rules.append((re.compile(rf"(?<![\w./-]){name}\.(?=(?:{children})\b)"), f"{NEW}.{name}."))
    return rules


def _files(root: Path, skip: Path) -> Iterator[Path]:
    """The tree's .py/.md/.toml files, not under hidden folders (.git, .venv), build output or caches."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not (d.startswith(".") or d in SKIP_DIRS or d.endswith(".egg-info")))
        for name in sorted(files):
            path = Path(folder, name)
            if path.suffix in SUFFIXES and path.resolve() != skip:
                yield path


def rewrite(text: str, rules: list[tuple[re.Pattern[str], str]]) -> str:
    """`text` with every rule applied in order, line by line, except lines that carry KEEP (an old name
    kept on purpose, e.g. to run an older commit); applying it again changes nothing."""
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if KEEP not in line:
            for pattern, replacement in rules:
                line = pattern.sub(replacement, line)
            lines[i] = line
    return "".join(lines)


def leftover_imports(text: str) -> list[int]:
    """Lines of Python source that still import a bare OLD name (forms the rules above do not cover)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        if any(name.split(".")[0] in OLD for name in names):
            lines.append(node.lineno)
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("root", nargs="?", type=Path, default=Path(__file__).resolve().parents[1],
                        help="repository root (default: the one this script is in)")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a file would change")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    rules = _patterns(root)
    changed, leftovers = [], []
    for path in _files(root, Path(__file__).resolve()):
        text = path.read_text(encoding="utf-8")
        new = rewrite(text, rules)
        if new != text:
            changed.append(path)
            if not args.check:
                path.write_text(new, encoding="utf-8")
        if path.suffix == ".py":
            leftovers += [f"{path.relative_to(root)}:{line}" for line in leftover_imports(new)]
    verb = "would change" if args.check else "changed"
    for path in changed:
        print(f"{verb}: {path.relative_to(root)}")
    for where in leftovers:
        print(f"{where}: still imports a bare {'/'.join(OLD)} name; rewrite it by hand")
    print(f"{len(changed)} file(s) {verb}, {len(leftovers)} import(s) left for a hand edit", file=sys.stderr)
    return 1 if leftovers or (args.check and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
