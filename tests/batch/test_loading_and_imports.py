"""Ray is imported only to run a batch on it."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from plan.planner.batch.ray_backend import CONNECT_TIMEOUT_S, RayStartError, _check_reachable
from tests.conftest import REPO


def test_cli_does_not_import_ray():
    code = "import sys, plan.planner.cli.app, plan.planner.batch; print('ray' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True
    )
    assert done.stdout.strip() == "False"


def test_unreachable_ray_address_fails_fast_in_one_line():
    # nothing listens on port 1; Ray itself would retry the connection for minutes
    started = time.perf_counter()
    with pytest.raises(RayStartError, match=r"nothing answers at '127\.0\.0\.1:1'"):
        _check_reachable("127.0.0.1:1")
    assert time.perf_counter() - started < CONNECT_TIMEOUT_S + 1
    _check_reachable("auto")  # forms Ray resolves itself are left to Ray
