"""The plain PyTorch scripts in tests/parity/ print the same under tapegrad (shared difftest.py).

The harness lives outside the repository, in ../shared/parity next to the repository root (the
Makefile's SHARED); `make test` passes its path as TAPEGRAD_DIFFTEST. Where it is missing these tests
fail, saying where it was looked for: a parity check that silently does not run checks nothing.
"""
import os
import subprocess
import sys

import pytest

from conftest import require

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = sorted(f for f in os.listdir(os.path.join(HERE, "parity")) if f.endswith(".py"))
DIFFTEST = os.environ.get("TAPEGRAD_DIFFTEST",
                          os.path.join(HERE, os.pardir, os.pardir, "shared", "parity", "difftest.py"))


def _require_difftest():
    if not os.path.exists(DIFFTEST):
        pytest.fail(f"the shared parity harness is missing: no {os.path.normpath(DIFFTEST)}. Check out the shared "
                    "directory next to the repository (../shared, as the Makefile's SHARED) or point "
                    "TAPEGRAD_DIFFTEST at difftest.py.", pytrace=False)


@pytest.mark.parametrize("script", SCRIPTS)
def test_parity_script(script):
    _require_difftest()
    require("torch")
    env = dict(os.environ, PYTHON_TORCH=sys.executable, PYTHON_TAPEGRAD=sys.executable)
    p = subprocess.run([sys.executable, DIFFTEST, "--show", os.path.join(HERE, "parity", script)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0 and "1 passed" in p.stdout, p.stdout[-4000:] + p.stderr[-2000:]
