"""The house's rules, read from the source (every import, deferred and TYPE_CHECKING ones included):
one import package `plan` (never a bare `models`), data flowing one way (no import circle), the
domain below the solver (nothing under models/ or constraints/ imports planner), OR-Tools behind
constraints/sat.py, and candidates built only by planner/candidates/."""

from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

from tests.conftest import REPO

FOLDERS = {"models": "plan.models", "constraints": "plan.constraints", "planner": "plan.planner"}


def _modules() -> dict[str, Path]:
    found = {}
    for folder, package in FOLDERS.items():
        for path in sorted((REPO / folder).rglob("*.py")):
            parts = path.relative_to(REPO / folder).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            found[".".join((package, *parts))] = path
    return found


MODULES = _modules()


def _imported(module: str, path: Path) -> list[tuple[int, str]]:
    """(line, dotted name) of every module the file imports, relative imports resolved: a name
    imported from a module is the module, a submodule imported from a package the submodule."""
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, *([node.module] if node.module else [])])
            names += [(node.lineno, f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES
                       else base) for alias in node.names]
    return names


def _graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    for module, path in MODULES.items():
        graph.add_node(module)
        for _, name in _imported(module, path):
            if name in MODULES and name != module:
                graph.add_edge(module, name)
    return graph


def test_no_code_imports_the_bare_folder_names():
    bare = [f"{path.relative_to(REPO)}:{line}: {name}"
            for folder in ("models", "constraints", "planner", "tests", "bench")
            for path in sorted((REPO / folder).rglob("*.py"))
            for line, name in _imported("plan.x", path)
            if name.split(".")[0] in FOLDERS]
    assert bare == [], "import plan.models... (one import package), not:\n" + "\n".join(bare)


def test_no_import_circle():
    circles = sorted(nx.simple_cycles(_graph()), key=len)
    assert circles == [], "\n".join(" -> ".join([*c, c[0]]) for c in circles[:10])


def test_the_domain_and_the_constraints_never_import_the_planner():
    upward = [(m, t) for m, t in _graph().edges
              if m.startswith(("plan.models", "plan.constraints")) and t.startswith("plan.planner")]
    assert upward == []


def test_only_constraints_sat_imports_ortools():
    importers = sorted({m for m, path in MODULES.items() for _, name in _imported(m, path)
                        if name.split(".")[0] == "ortools"})
    assert importers == ["plan.constraints.sat"]


def test_candidates_are_built_by_planner_candidates_alone():
    builders = sorted(m for m, path in MODULES.items()
                      if "CandidateBuilder(" in path.read_text()
                      and not m.startswith("plan.planner.candidates"))
    assert builders == []


STACK_NAMES = {"megatron", "deepspeed", "fsdp"}
STACK_RULE_HOMES = ("models/stacks.py", "planner/export/")
"""Where a framework's name may decide something: its description and the exporters, which write
each stack's own files."""


def _names_a_stack(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant) and node.value in STACK_NAMES:
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_names_a_stack(element) for element in node.elts)
    return isinstance(node, ast.Attribute) and node.attr in {"MEGATRON", "DEEPSPEED", "FSDP"}


def test_what_a_stack_runs_is_decided_in_its_description_alone():
    """No `framework == "megatron"`-style comparison outside models/stacks.py and the exporters:
    a comparison with a stack's name (or a tuple of them) is a stack rule, and belongs to its
    `Stack` description (a membership test against the whole vocabulary is not one)."""
    found = []
    for path in MODULES.values():
        where = str(path.relative_to(REPO))
        if where.startswith(STACK_RULE_HOMES):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Compare) and any(
                    _names_a_stack(side) for side in (node.left, *node.comparators)):
                found.append(f"{where}:{node.lineno}")
    assert not found, f"stack rules outside models/stacks.py: {found}"


MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80


def test_modules_and_functions_stay_small():
    """No module of the package over 600 lines, no function over 80 (bench and tests aside)."""
    long_files, long_functions = [], []
    for path in MODULES.values():
        text = path.read_text(encoding="utf-8")
        where = str(path.relative_to(REPO))
        if text.count("\n") > MAX_FILE_LINES:
            long_files.append(f"{where}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    long_functions.append(f"{where}:{node.lineno} {node.name}: {length} lines")
    assert not long_files and not long_functions, long_files + long_functions
