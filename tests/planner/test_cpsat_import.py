"""CP-SAT is imported without pandas (plan.constraints.sat), and the stand-in never leaks."""

from __future__ import annotations

import subprocess
import sys

CHECK = """
import sys
from plan.constraints.sat import cp_model
assert "pandas" not in sys.modules, "pandas was loaded or the stand-in leaked"
m = cp_model.CpModel()
x = m.new_int_var(0, 10, "x")
b = m.new_bool_var("b")
m.add(x >= 3).only_enforce_if(b)
m.add(b == 1)
m.minimize(x)
solver = cp_model.CpSolver()
assert solver.solve(m) == cp_model.OPTIMAL and solver.value(x) == 3
import pandas
assert hasattr(pandas, "DataFrame"), "a later import must get the real pandas"
print("ok")
"""


def test_cp_sat_imports_without_pandas_and_solves() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"


def test_with_pandas_already_loaded_the_ordinary_import_is_used() -> None:
    code = ("import pandas, sys\nfrom plan.constraints.sat import cp_model\n"
            "assert cp_model.pd is pandas\nprint('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "ok"
