"""The op-table entries of torch.special's own functions (PyTorch's special_* and igamma kernels): scaled Bessel
functions, the normal distribution's inverse and log, erfcx, entr, xlog1py, zeta, the incomplete gamma functions,
and the Bessel, Airy and orthogonal-polynomial kernels PyTorch records no derivative for. The JAX functions:
_special_math, _bessel, _orthogonal_polynomials. (erf, digamma, i0 ... are elementwise's entries.)"""
import jax.scipy.special as jss

from . import _bessel as B
from . import _orthogonal_polynomials as P
from ._registry import Op, defop, missing_kernel, overload, FLOAT, SAME
from ._special_math import (
    _entr, _erfcx, _i0e, _i1, _i1e, _igamma, _igammac, _log_ndtr, _ndtri, _spherical_bessel_j0, _xlog1py, _zeta)

# PyTorch's backward reads the input and the result (derivatives.yaml), or the result alone (ndtri)
_SELF_AND_RESULT = dict(saves_inputs=(0,), saves_output=True)

# ---- differentiable -------------------------------------------------------------------------------
special_i0e = defop("special_i0e", lambda a: _i0e(a), dtype_rule=FLOAT, **_SELF_AND_RESULT)
special_i1 = defop("special_i1", lambda a: _i1(a), dtype_rule=FLOAT, **_SELF_AND_RESULT)
special_i1e = defop("special_i1e", lambda a: _i1e(a), dtype_rule=FLOAT, **_SELF_AND_RESULT)
special_ndtri = defop("special_ndtri", lambda a: _ndtri(a), dtype_rule=FLOAT, saves_inputs=(), saves_output=True)
special_log_ndtr = defop("special_log_ndtr", lambda a: _log_ndtr(a), dtype_rule=FLOAT, **_SELF_AND_RESULT)
special_erfcx = defop("special_erfcx", lambda a: _erfcx(a), dtype_rule=FLOAT, **_SELF_AND_RESULT)
special_entr = defop("special_entr", lambda a: _entr(a), dtype_rule=FLOAT)
special_xlog1py = defop("special_xlog1py", lambda a, b: _xlog1py(a, b), dtype_rule=FLOAT,
                        overloads=[overload("SpecialXlog1PyBackward1", "st"),
                                   overload("SpecialXlog1PyBackward2", "ts")])
special_xlog1py.recorded_saves = (1,)   # (as xlogy's)
# PyTorch differentiates zeta(x, q) in q only; in x its backward raises
special_zeta = defop("special_zeta", lambda x, q: _zeta(x, q), dtype_rule=FLOAT,
                     overloads=[overload("SpecialZetaBackward1", "st"), overload("SpecialZetaBackward2", "ts")],
                     no_derivative_at={0: (NotImplementedError, "the derivative for 'zeta' is not implemented.")})
# igamma(a, x) (special.gammainc) and igammac: floating inputs only (no promotion of integers), differentiated in x
igamma = defop("igamma", lambda a, x: _igamma(a, x), dtype_rule=SAME, no_derivative_at={
    0: (NotImplementedError, "the derivative for 'igamma: input' is not implemented.")})
igammac = defop("igammac", lambda a, x: _igammac(a, x), dtype_rule=SAME, no_derivative_at={
    0: (NotImplementedError, "the derivative for 'igammac: input' is not implemented.")})


# ---- no derivative: the result of a tensor that requires grad does not require grad, as in PyTorch ----------
def _value_only(name, fn):
    return defop(name, fn, dtype_rule=FLOAT, diff=())


special_bessel_j0 = _value_only("special_bessel_j0", lambda a: B.bessel_j0(a))
special_bessel_j1 = _value_only("special_bessel_j1", lambda a: B.bessel_j1(a))
special_bessel_y0 = _value_only("special_bessel_y0", lambda a: B.bessel_y0(a))
special_bessel_y1 = _value_only("special_bessel_y1", lambda a: B.bessel_y1(a))
# PyTorch's modified_bessel_i0/i1 evaluate Cephes' Chebyshev series for I0 and I1, as jax.scipy's
special_modified_bessel_i0 = _value_only("special_modified_bessel_i0", lambda a: jss.i0(a))
special_modified_bessel_i1 = _value_only("special_modified_bessel_i1", lambda a: jss.i1(a))
special_modified_bessel_k0 = _value_only("special_modified_bessel_k0", lambda a: B.modified_bessel_k0(a))
special_modified_bessel_k1 = _value_only("special_modified_bessel_k1", lambda a: B.modified_bessel_k1(a))
special_scaled_modified_bessel_k0 = _value_only("special_scaled_modified_bessel_k0",
                                                lambda a: B.scaled_modified_bessel_k0(a))
special_scaled_modified_bessel_k1 = _value_only("special_scaled_modified_bessel_k1",
                                                lambda a: B.scaled_modified_bessel_k1(a))
special_spherical_bessel_j0 = _value_only("special_spherical_bessel_j0", lambda a: _spherical_bessel_j0(a))
special_airy_ai = _value_only("special_airy_ai", lambda a: B.airy_ai(a))

# the polynomials of degree n (a tensor or a number; elementwise, truncated to an integer) at x
def _chebyshev(kind, shifted):
    name = f"special_{'shifted_' if shifted else ''}chebyshev_polynomial_{kind}"
    return _value_only(name, lambda x, n: P.chebyshev(x, n, kind, shifted))


special_chebyshev_polynomial_t = _chebyshev("t", shifted=False)
special_chebyshev_polynomial_u = _chebyshev("u", shifted=False)
special_chebyshev_polynomial_v = _chebyshev("v", shifted=False)
special_chebyshev_polynomial_w = _chebyshev("w", shifted=False)
special_shifted_chebyshev_polynomial_t = _chebyshev("t", shifted=True)
special_shifted_chebyshev_polynomial_u = _chebyshev("u", shifted=True)
special_shifted_chebyshev_polynomial_v = _chebyshev("v", shifted=True)
special_shifted_chebyshev_polynomial_w = _chebyshev("w", shifted=True)
special_hermite_polynomial_h = _value_only("special_hermite_polynomial_h", lambda x, n: P.hermite_h(x, n))
special_hermite_polynomial_he = _value_only("special_hermite_polynomial_he", lambda x, n: P.hermite_he(x, n))
special_laguerre_polynomial_l = _value_only("special_laguerre_polynomial_l", lambda x, n: P.laguerre_l(x, n))
special_legendre_polynomial_p = _value_only("special_legendre_polynomial_p", lambda x, n: P.legendre_p(x, n))

# PyTorch computes them all with TensorIterator, in kernels without a complex version (named without "special_"),
# most without half-precision ones either
_WITH_HALF = ("special_i0e", "special_i1", "special_i1e", "special_entr", "special_xlog1py", "igamma", "igammac")
for _op in [v for v in list(globals().values()) if isinstance(v, Op)]:
    _op.pointwise = True
    _text = missing_kernel(_op.name.removeprefix("special_") + "_cpu")
    _op.no_kernel_for = {"complex": _text} if _op.name in _WITH_HALF else {"complex": _text, "half": _text}
