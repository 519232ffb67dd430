"""The plain PyTorch scripts in tests/parity/ print the same under tapegrad (shared difftest.py)."""
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = sorted(f for f in os.listdir(os.path.join(HERE, "parity")) if f.endswith(".py"))
DIFFTEST = os.environ.get("TAPEGRAD_DIFFTEST",
                          os.path.join(HERE, os.pardir, os.pardir, "shared", "parity", "difftest.py"))

KNOWN_FAILURES = {}


@pytest.mark.skipif(not os.path.exists(DIFFTEST), reason="shared parity harness (difftest.py) not present")
@pytest.mark.parametrize("script", [pytest.param(s, marks=pytest.mark.xfail(reason=KNOWN_FAILURES[s], strict=True))
                                    if s in KNOWN_FAILURES else s for s in SCRIPTS])
def test_parity_script(script):
    pytest.importorskip("torch")
    env = dict(os.environ, PYTHON_TORCH=sys.executable, PYTHON_TAPEGRAD=sys.executable)
    p = subprocess.run([sys.executable, DIFFTEST, "--show", os.path.join(HERE, "parity", script)],
                       capture_output=True, text=True, env=env, timeout=300)
    assert p.returncode == 0 and "1 passed" in p.stdout, p.stdout[-4000:] + p.stderr[-2000:]
