"""tapegrad.special against torch.special: the same names, keyword names and out= arguments; the aliases record
PyTorch's nodes; values at the points PyTorch's kernels branch on, in float32 and float64; integer and bool
inputs promoted as PyTorch promotes them; the call forms with a Python number; which functions PyTorch does not
differentiate (the op table's specs, tests/op_specs_special_functions.py, check values and gradients)."""
import inspect

import numpy as np
import pytest

import tapegrad
from conftest import raised, require

torch = require("torch")

INF, NAN = np.inf, np.nan
UNARY = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "digamma", "entr", "erf", "erfc", "erfcx",
         "erfinv", "exp2", "expit", "expm1", "gammaln", "i0", "i0e", "i1", "i1e", "log1p", "log_ndtr",
         "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "ndtr", "ndtri", "psi",
         "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "sinc", "spherical_bessel_j0"]
POLYNOMIALS = [n for n in torch.special.__all__ if n.endswith(("_polynomial_t", "_polynomial_u", "_polynomial_v",
                                                               "_polynomial_w", "_h", "_he", "_l", "_p"))]
NEW_KERNELS = {"airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "entr", "erfcx", "i0e", "i1", "i1e",
               "log_ndtr", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
               "ndtr", "ndtri", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0"}
BINARY = ["gammainc", "gammaincc", "xlog1py", "xlogy", "zeta"]
# Keyword arguments of one call per function (T: a float64 tensor); out= is added where PyTorch takes one.
T = "T"
X_NAMED = {"airy_ai", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0"}
CALLS = {**{n: {"x" if n in X_NAMED else "input": T} for n in UNARY}, **{n: {"input": T, "other": T} for n in BINARY},
         **{n: {"x": T, "n": T} for n in POLYNOMIALS},
         "polygamma": {"n": 1, "input": T}, "multigammaln": {"input": T, "p": 2}, "logit": {"input": T, "eps": 0.1},
         "logsumexp": {"input": T, "dim": 0, "keepdim": True}, "round": {"input": T, "decimals": 1},
         "softmax": {"input": T, "dim": 0, "dtype": "float32"},
         "log_softmax": {"input": T, "dim": 0, "dtype": "float32"}}
# Points PyTorch's kernels branch on (Bessel, Airy: 2.09, 5, 8, 8.32, 103.9), signed zeros and infinities, NaN.
EDGES = np.array([0.0, -0.0, 1e-6, 0.49, 0.5, 1.0, 2.0, 2.09, 5.0, 5.01, 8.0, 8.4, 30.0, 104.0, 750.0, -0.5, -1.0,
                  -1.5, -2.1, -5.0, -30.0, INF, -INF, NAN])


def _lib_call(lib, name, kwargs, x, dtype):
    args = {k: (lib.empty(0, dtype=getattr(lib, dtype)) if k == "out" else lib.tensor(x, dtype=getattr(lib, dtype))
                if v == T else getattr(lib, v) if k == "dtype" else v) for k, v in kwargs.items()}
    return getattr(lib.special, name)(**args)


def test_namespace_is_torch_specials():
    assert sorted(tapegrad.special.__all__) == sorted(torch.special.__all__)
    functions = [n for n in dir(torch.special) if not n.startswith("_") and callable(getattr(torch.special, n))
                 and not isinstance(getattr(torch.special, n), type)]
    assert sorted(set(functions) - set(dir(tapegrad.special))) == []
    assert sorted(CALLS) == sorted(torch.special.__all__)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_keywords_and_out_are_torch_s(name):
    # PyTorch takes these keywords (and out= where tapegrad's function has it); values: the tests below
    kwargs = CALLS[name]
    ours = inspect.signature(getattr(tapegrad.special, name)).parameters
    x = np.linspace(0.2, 0.9, 4)
    _lib_call(torch, name, kwargs, x, "float64")
    their_out = raised(lambda: _lib_call(torch, name, dict(kwargs, out=T), x, "float64")) is None
    assert [p for p in ours if p != "out"] == list(kwargs)
    assert ("out" in ours) == their_out
    assert ours.get("out") is None or ours["out"].kind is inspect.Parameter.KEYWORD_ONLY


def test_aliases_record_pytorchs_nodes():
    x = np.array([0.3, 0.6, 0.8])
    for name in UNARY + ["round", "logit", "polygamma", "multigammaln", "logsumexp", "softmax", "log_softmax"]:
        kwargs = CALLS[name]
        found = []
        for lib in (tapegrad, torch):
            args = {k: (lib.tensor(x + 2 * (name == "multigammaln"), requires_grad=True) if v == T else
                        getattr(lib, v) if k == "dtype" else v) for k, v in kwargs.items()}
            out = getattr(lib.special, name)(**args)
            node = out.grad_fn
            found.append(None if node is None else (node.name(), [f and f[0] and f[0].name() for f in
                                                                  node.next_functions]))
        assert found[0] == found[1], name


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_at_branch_points(dtype):
    rtol = 2e-5 if dtype == "float32" else 1e-12
    # torch.special's own kernels (and digamma's signed zeros); the other aliases' values: tests/op_specs.py
    for name in [n for n in UNARY if n in NEW_KERNELS or n in ("digamma", "psi")]:
        theirs = getattr(torch.special, name)(torch.tensor(EDGES, dtype=getattr(torch, dtype)))
        ours = getattr(tapegrad.special, name)(tapegrad.tensor(EDGES, dtype=getattr(tapegrad, dtype)))
        assert str(ours.dtype) == str(theirs.dtype).replace("torch", "tapegrad")
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=rtol, atol=0, equal_nan=True, err_msg=name)


def test_two_argument_functions_at_their_boundary_points():
    a = np.array([[0.0], [1e-3], [0.5], [1.0], [2.5], [30.0], [INF], [NAN], [-1.0]])
    b = np.array([0.0, 1e-3, 0.5, 1.0, 2.0, 30.0, 1000.0, -1.0, -1.5, INF, -INF, NAN])
    for name in BINARY:
        theirs = getattr(torch.special, name)(torch.tensor(a), torch.tensor(b))
        ours = getattr(tapegrad.special, name)(tapegrad.tensor(a), tapegrad.tensor(b))
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-9, atol=0, equal_nan=True, err_msg=name)


def test_integers_and_bools_promote_as_pytorch():
    ints, flags = np.array([0, 1, 3, -2]), np.array([True, False, True, True])
    for name in ["i0e", "ndtr", "entr", "bessel_y1", "airy_ai"]:
        for values in (ints, flags):
            theirs = getattr(torch.special, name)(torch.tensor(values))
            ours = getattr(tapegrad.special, name)(tapegrad.tensor(values))
            assert str(ours.dtype) == str(theirs.dtype).replace("torch", "tapegrad"), name
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6, equal_nan=True, err_msg=name)
    for name in ("zeta", "xlog1py"):
        theirs = getattr(torch.special, name)(torch.tensor([2, 3]), torch.tensor([1, 4]))
        ours = getattr(tapegrad.special, name)(tapegrad.tensor([2, 3]), tapegrad.tensor([1, 4]))
        assert ours.dtype is tapegrad.float32
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    # igamma has no integer kernel; a float and an integer tensor compute in the float's dtype
    for lib in (tapegrad, torch):
        error = raised(lambda: lib.special.gammainc(lib.tensor([1, 2]), lib.tensor([2, 3])))
        assert error[0] is NotImplementedError and '"igamma_cpu" not implemented for \'Long\'' in error[1]
    assert tapegrad.igamma(tapegrad.tensor([1.5]), tapegrad.tensor([2])).dtype is tapegrad.float32


def test_polynomial_call_forms():
    # (a tensor x and a tensor n: each polynomial's spec)
    x, n = np.array([-1.0, -0.3, 0.0, 0.6, 1.0, 1.7]), np.array([0, 3, 10, 14, 2, 9])
    for name in ("chebyshev_polynomial_u",):
        for args in ((x, 10), (0.3, n), (x.astype(np.int64) + 2, n), (x, n.astype(np.float32) + 0.7)):
            found = []
            for lib in (tapegrad, torch):
                given = [lib.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
                found.append(getattr(lib.special, name)(*given))
            ours, theirs = found
            assert str(ours.dtype) == str(theirs.dtype).replace("torch", "tapegrad"), name
            rtol = 1e-6 if ours.dtype is tapegrad.float32 else 1e-12
            np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=rtol, err_msg=name)
    for name in POLYNOMIALS:
        for lib in (tapegrad, torch):
            assert raised(lambda: getattr(lib.special, name)(0.5, 2))[0] is TypeError


def test_results_of_functions_pytorch_does_not_differentiate_require_no_grad():
    for lib in (tapegrad, torch):
        x = lib.tensor([0.3, 0.6], requires_grad=True)
        for name in [n for n in UNARY if "bessel" in n or n == "airy_ai"]:
            assert not getattr(lib.special, name)(x).requires_grad, name
        for name in POLYNOMIALS:
            assert not getattr(lib.special, name)(x, x).requires_grad, name


@pytest.mark.parametrize("name,call", [
    ("gammainc", lambda lib, a, x: lib.special.gammainc(a, x)),
    ("zeta", lambda lib, a, x: lib.special.zeta(a + 1, x)),
    ("zeta of a number", lambda lib, a, x: lib.special.zeta(a + 1, 2.0)),
])
def test_differentiated_in_the_second_argument_only(name, call):
    values = (np.array([1.5, 2.5]), np.array([0.7, 3.0]))
    found = []
    for lib in (tapegrad, torch):
        a, x = (lib.tensor(v, requires_grad=True) for v in values)
        out = call(lib, a, x)
        node = out.grad_fn
        error = raised(lambda: out.sum().backward(retain_graph=True))
        a2, x2 = lib.tensor(values[0]), lib.tensor(values[1], requires_grad=True)
        grads = lib.autograd.grad(call(lib, a2, x2).sum(), x2) if "number" not in name else None
        found.append((node.name(), error, grads))
    (our_node, our_error, our_grads), (their_node, their_error, their_grads) = found
    assert our_node == their_node and our_error == their_error
    if their_grads is not None:
        np.testing.assert_allclose(our_grads[0].numpy(), their_grads[0].numpy(), rtol=1e-10)


def test_out():
    x = [0.2, 0.7]
    for lib in (tapegrad, torch):
        leaf = lib.tensor(x, requires_grad=True)
        out = lib.empty(2)
        lib.special.ndtr(leaf, out=out)   # PyTorch's composite: the result copied in
        assert out.grad_fn.name().endswith("CopyBackwards")
        for name, op in (("i0e", "special_i0e()"), ("gammainc", "igamma()")):
            args = (leaf,) if name == "i0e" else (lib.tensor(x), leaf)
            error = raised(lambda: getattr(lib.special, name)(*args, out=lib.empty(2)))
            assert error[0] is RuntimeError and error[1].startswith(f"{op}: functions with out=...")
        written = lib.empty(2)
        lib.special.bessel_j0(leaf, out=written)
        np.testing.assert_allclose(written.numpy(), torch.special.bessel_j0(torch.tensor(x)).numpy(), rtol=1e-6)


def test_igamma_at_top_level_and_as_methods():
    for name in ("igamma", "igammac", "igamma_", "igammac_"):
        assert hasattr(tapegrad.Tensor, name) == hasattr(torch.Tensor, name)
    for name in ("igamma", "igammac"):
        assert callable(getattr(tapegrad, name)) and callable(getattr(torch, name))
    a, x = np.array([0.5, 2.0]), np.array([1.0, 3.0])
    ours = tapegrad.tensor(a).igamma_(tapegrad.tensor(x))
    np.testing.assert_allclose(ours.numpy(), torch.tensor(a).igamma_(torch.tensor(x)).numpy(), rtol=1e-12)
