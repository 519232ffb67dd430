"""Shared test helpers: PyTorch is the oracle.

Import what you need in a test module:

    from conftest import assert_close, to_torch, from_torch, both, torch_dtype, fold_repr

- `require(name)`: import a test dependency, or fail saying how to install it (never a skip).
- `torch` fixture: the real PyTorch module.
- `fresh_program_caches` fixture: empty program caches around a test that counts compiles.
- `background_compile` fixture: compiles run off the caller's thread, as outside the tests.
- `no_program_rent` fixture: a whole program compiles the second time it comes, without renting NumPy
  first (for tests of the compiled tier itself; the rent is tested in test_program_rent.py).
- `to_torch(t)` / `from_torch(t)`: copy values between the libraries (dtype kept, graph dropped).
- `torch_dtype(d)` / `tg_dtype(d)`: the same dtype in the other library.
- `assert_close(ours, theirs)`: same shape, dtype and values (tolerance by dtype).
- `both(build)`: run `build(lib)` once with tapegrad and once with torch; micrograd-style tests.
- `raised(fn, fold=False)`: what fn raises, as (type, message), to compare across the libraries.
- `fold_repr(text)`: a repr with hex addresses folded and `tapegrad` spelled `torch`, for exact comparison.
"""
import importlib
import os
import re
import sys

import numpy as np
import pytest

# Compile counts are part of what the tests check: no test may find programs an earlier run left on
# disk (tests/test_warm_start.py turns the cache on in its own subprocesses). For the same reason a
# program compiles on the caller's thread (tapegrad's default), at a step the test can name, even where
# the environment asks otherwise (tests/test_background_compile.py tests compiling off the thread).
os.environ.setdefault("TAPEGRAD_COMPILATION_CACHE", "off")
os.environ["TAPEGRAD_BACKGROUND_COMPILE"] = "0"

import tapegrad  # noqa: E402


# Why each test dependency is needed; all of them come with the `test` extra (`make test` installs it).
_WHY = {"torch": "PyTorch is the test oracle",
        "nbformat": "nbformat reads the notebooks under test",
        "nbclient": "nbclient runs the notebooks under test",
        "ipykernel": "ipykernel is the kernel the notebooks run in",
        "hypothesis": "hypothesis draws the property-test inputs",
        "tqdm": "tqdm draws the training demo's progress bar",
        "matplotlib": "matplotlib draws the training demo's loss curve and the notebooks' plots"}


def _hypothesis_profiles():
    # The suite draws the same property-test inputs on every run, so a red run is reproducible and
    # a green one stays green: TAPEGRAD_HYPOTHESIS=explore draws fresh inputs each run (to hunt bugs).
    hypothesis = require("hypothesis")
    hypothesis.settings.register_profile("tapegrad", derandomize=True, database=None)
    hypothesis.settings.register_profile("explore", derandomize=False)
    hypothesis.settings.load_profile(
        "explore" if os.environ.get("TAPEGRAD_HYPOTHESIS") == "explore" else "tapegrad")


def require(name):
    """The module `name`; a missing test dependency fails the run with how to install it, never skips."""
    try:
        return importlib.import_module(name)
    except ImportError as e:
        why = _WHY.get(name, f"{name} is a test dependency")
        raise ImportError(f"{why}, but it is not installed ({e}). Install the test extra with "
                          "`pip install -e .[test]` (or run `make test`, which does it).") from e


def pytest_configure(config):
    # Every test dependency is checked up front, so a missing one stops the run with one clear message
    # (test modules that `import torch` directly would otherwise fail one by one with a bare ImportError).
    missing = []
    for name in _WHY:
        try:
            require(name)
        except ImportError as e:
            missing.append(str(e))
    if missing:
        raise pytest.UsageError("\n".join(missing))
    _hypothesis_profiles()


def _torch():
    return require("torch")


@pytest.fixture
def torch():
    return require("torch")


@pytest.fixture
def fresh_program_caches():
    """Empty program caches around a test that counts compiles (earlier tests would have filled them)."""
    tapegrad.autograd.clear_backward_cache()
    yield
    tapegrad.autograd.clear_backward_cache()


@pytest.fixture
def no_program_rent(monkeypatch):
    """A whole program's compile price set to nothing: it compiles when it comes back, as it did before
    programs rented NumPy. Tests of what the compiled tier does use it to reach that tier in two steps."""
    from tapegrad import _numpy_rent
    monkeypatch.setattr(_numpy_rent, "PLAN_COMPILE_SECONDS", 0.0)
    monkeypatch.setattr(_numpy_rent, "PLAN_COMPILE_SECONDS_PER_STEP", 0.0)


@pytest.fixture
def background_compile(monkeypatch):
    from tapegrad import _background
    monkeypatch.setattr(_background, "ENABLED", [True])
    yield
    _background.drain()   # a compile still running must not land in the next test's counters


@pytest.fixture(autouse=True)
def _restore_global_state():
    """Tests may change the default dtype or grad mode; never let it leak into the next test."""
    yield
    tapegrad.set_default_dtype(tapegrad.float32)
    tapegrad.set_grad_enabled(True)
    if "torch" in sys.modules:
        sys.modules["torch"].set_default_dtype(sys.modules["torch"].float32)
        sys.modules["torch"].set_grad_enabled(True)


# ---- conversions between the libraries --------------------------------------------------

def torch_dtype(d):
    """The torch dtype with the same name as the tapegrad dtype `d`."""
    return getattr(_torch(), d.name)


def tg_dtype(d):
    """The tapegrad dtype with the same name as the torch dtype `d`."""
    return getattr(tapegrad, str(d).removeprefix("torch."))


def to_torch(t):
    """A torch tensor with t's values and dtype (no graph, requires_grad False)."""
    torch = _torch()
    value = np.asarray(t.detach()._value)
    if t.dtype is tapegrad.bfloat16:
        return torch.from_numpy(value.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(value.copy())


def from_torch(t):
    """A tapegrad tensor with t's values and dtype (no graph, requires_grad False)."""
    torch = _torch()
    t = t.detach()
    if t.dtype == torch.bfloat16:
        return tapegrad.tensor(t.float().numpy()).to(tapegrad.bfloat16)
    return tapegrad.tensor(t.numpy())


_TOLERANCES = {"float16": (1e-3, 1e-3), "bfloat16": (1e-2, 1e-2), "float32": (1.3e-6, 1e-5),
               "complex64": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7), "complex128": (1e-7, 1e-7)}


def assert_close(ours, theirs, rtol=None, atol=None, check_dtype=True):
    """ours (tapegrad tensor) equals theirs (torch tensor): shape, dtype, then values (NaNs equal)."""
    assert isinstance(ours, tapegrad.Tensor), f"expected a tapegrad.Tensor, got {type(ours).__name__}"
    assert tuple(ours.shape) == tuple(theirs.shape), f"shape {tuple(ours.shape)} != {tuple(theirs.shape)}"
    if check_dtype:
        assert ours.dtype.name == str(theirs.dtype).removeprefix("torch."), f"dtype {ours.dtype} != {theirs.dtype}"
    a = to_torch(ours).detach()
    b = theirs.detach()
    if a.dtype != b.dtype:
        a, b = a.double(), b.double()
    default_rtol, default_atol = _TOLERANCES.get(str(b.dtype).removeprefix("torch."), (0, 0))
    _torch().testing.assert_close(a, b, rtol=default_rtol if rtol is None else rtol,
                                  atol=default_atol if atol is None else atol, equal_nan=True,
                                  check_dtype=False)


def raised(fn, fold=False):
    """What fn raises, comparable across the libraries: (type, message), or with fold=True (type name,
    folded message: see fold_repr); None when it returns."""
    try:
        fn()
    except Exception as e:   # the type and the message are what is compared
        return (type(e).__name__, fold_repr(e)) if fold else (type(e), str(e))
    return None


def both(build):
    """(build(tapegrad), build(torch)): the same code run by both libraries."""
    return build(tapegrad), build(_torch())


def fold_repr(text):
    """A repr with hex addresses folded and the module name spelled as torch's."""
    return re.sub(r"0x[0-9a-fA-F]+", "0xADDR", str(text).replace("tapegrad", "torch"))


def assert_same_outcome(ours, theirs):
    """Outcomes ("value", ...) or ("error", type name, message): the same value, or PyTorch's error type and
    words (tapegrad's message may go on with how to fix it)."""
    if theirs[0] == "error":
        assert ours[:2] == theirs[:2] and ours[2].startswith(theirs[2]), (ours, theirs)
    else:
        assert ours == theirs


def run_code(lib, code, error_text=str):
    """What `code` does with `lib` as `lib`: (what it printed, folded as fold_repr does; (the type name of the
    error it raised, error_text(error)) or None). Warnings are ignored."""
    import contextlib
    import io
    import warnings
    printed, error = io.StringIO(), None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with contextlib.redirect_stdout(printed):
                exec(code, {"lib": lib})
        except Exception as e:
            error = (type(e).__name__, error_text(e))
    return fold_repr(printed.getvalue()), error
