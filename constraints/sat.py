"""CP-SAT's Python API (`cp_model`), imported without pandas.

OR-Tools' cp_model imports pandas at module level for its optional pandas helpers (variables and
constraints over a `pd.Index` / `pd.Series`), which the planner never calls; pandas is ~40% of the
import and ~0.15 s of a one-job `plan solve`. While cp_model is imported, a placeholder that defines
the two names its annotations use stands in for pandas; it is removed right after, so any later
`import pandas` gets the real package. If cp_model needs more of pandas than that (another OR-Tools
version), the placeholder is dropped and cp_model is imported the ordinary way.
"""

from __future__ import annotations

import importlib
import math
import sys
import types
from typing import TYPE_CHECKING


def _import_cp_model() -> types.ModuleType:
    name = "ortools.sat.python.cp_model"
    if name in sys.modules or "pandas" in sys.modules:
        return importlib.import_module(name)
    placeholder = types.ModuleType("pandas", "stand-in while OR-Tools' cp_model is imported "
                                             "(plan.constraints.sat)")
    placeholder.Index = type("Index", (), {})  # type: ignore[attr-defined]
    placeholder.Series = type("Series", (), {})  # type: ignore[attr-defined]
    sys.modules["pandas"] = placeholder
    try:
        return importlib.import_module(name)
    except Exception:
        sys.modules.pop(name, None)
    finally:
        if sys.modules.get("pandas") is placeholder:
            del sys.modules["pandas"]
    return importlib.import_module(name)


if TYPE_CHECKING:
    from ortools.sat.python import cp_model
else:
    cp_model = _import_cp_model()


def coefficient_gcd(expr: cp_model.LinearExprT) -> int:
    """The gcd of an integer linear expression's coefficients (1 when it has none): any two of its
    values differ by a multiple of it."""
    from ortools.sat.python import cp_model_helper

    if not isinstance(expr, cp_model_helper.LinearExpr):  # a constant
        return 1

    step = 0
    for coeff in cp_model_helper.FlatIntExpr(expr).coeffs:
        step = math.gcd(step, coeff)
    return step or 1
