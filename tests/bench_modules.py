"""Load a bench script (bench/NAME.py) as a module, for tests that check a bench's own functions.

The bench folder is not a package, so its scripts are loaded from their files. A script's
dataclasses look their module up in sys.modules while they are built, so the module is registered
there under its name: for the rest of the test where a `monkeypatch` is given (undone after it),
otherwise only while its body runs.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"


def load_bench(name: str, monkeypatch: pytest.MonkeyPatch | None = None) -> ModuleType:
    """bench/`name`.py, freshly executed. Its sibling scripts are importable from it (the bench
    scripts add their folder to sys.path themselves when run)."""
    if str(BENCH) not in sys.path:
        sys.path.insert(0, str(BENCH))
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    if monkeypatch is not None:
        monkeypatch.setitem(sys.modules, name, module)
        spec.loader.exec_module(module)
        return module
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[name]
    return module
