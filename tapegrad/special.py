"""tapegrad.special: PyTorch's torch.special.

The functions PyTorch aliases (expit is sigmoid, gammaln lgamma, psi digamma, multigammaln mvlgamma ...) are
tapegrad's own top-level functions, so they record the same nodes; the others are the op table's special_* and
igamma entries (_ops.special_functions). Each takes out= where PyTorch's does; its errors name the aten op.
"""
import math as _math

from . import _functional as _F
from ._functional._arith import _apply
from ._functional._common import scalar_or_tensor as _scalar_or_tensor
from ._functional._out import with_out as _with_out
from ._functional._special import _incomplete_gamma
from ._ops import elementwise as _E
from ._ops import special_functions as _S
from ._tensor import Tensor as _Tensor

# ---- PyTorch's aliases of top-level functions --------------------------------------------------------
erf, erfc, erfinv = _F.erf, _F.erfc, _F.erfinv
exp2, expm1, log1p = _F.exp2, _F.expm1, _F.log1p
expit = _F.sigmoid
logit = _F.logit
digamma = psi = _F.digamma
gammaln = _F.lgamma
multigammaln = _F.mvlgamma
i0 = _F.i0
sinc = _F.sinc
xlogy = _F.xlogy
logsumexp = _F.logsumexp


def polygamma(n, input, *, out=None):
    return _F.polygamma(n, input, out=out)


def round(input, *, decimals=0, out=None):
    # PyTorch's special_round passes decimals on, so even decimals=0 records round.decimals (RoundBackward1)
    return _F.round(input, decimals=decimals, out=out)


def softmax(input, dim, *, dtype=None):
    from . import softmax as _softmax
    return _softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    from . import log_softmax as _log_softmax
    return _log_softmax(input, dim, dtype=dtype)


def ndtr(input, *, out=None):
    # PyTorch's composite: (1 + erf(input * sqrt(1/2))) * 0.5, its Tensor-Scalar ops (MulBackward1, AddBackward1)
    scaled = _apply(_E.mul_scalar, input, _math.sqrt(0.5))
    return _apply(_E.mul_scalar, _apply(_E.add_scalar, _F.erf(scaled), 1), 0.5)


ndtr = _with_out(ndtr, "special_ndtr()", composite=True)   # (out=: the result copied in, CopyBackwards)


# ---- the op table's special_* entries ---------------------------------------------------------------
def _unary(op, x_named=False):
    # x_named: PyTorch names the argument x (airy_ai, the scaled K's, spherical_bessel_j0), else input
    def function(input, *, out=None):
        return _apply(op, input)

    def function_of_x(x, *, out=None):
        return _apply(op, x)
    chosen = function_of_x if x_named else function
    chosen.__name__ = op.name
    return _with_out(chosen)


def _apply_two(op, first, second):
    # a Python number in either place, not both (PyTorch has no such overload)
    if not isinstance(first, _Tensor) and not isinstance(second, _Tensor):
        raise TypeError(f"{op.name}() received an invalid combination of arguments - got "
                        f"({type(first).__name__}, {type(second).__name__}), but expected at least one Tensor")
    return _apply(op, _scalar_or_tensor(first), _scalar_or_tensor(second))


def _binary(op):
    def function(input, other, *, out=None):
        return _apply_two(op, input, other)
    function.__name__ = op.name
    return _with_out(function)


def _polynomial(op):
    # PyTorch names the arguments x and n
    def function(x, n, *, out=None):
        return _apply_two(op, x, n)
    function.__name__ = op.name
    return _with_out(function)


def _gammainc(name, op):
    def function(input, other, *, out=None):
        return _incomplete_gamma(op, input, other, name)
    function.__name__ = name
    return _with_out(function, f"{op.name}()")


i0e, i1, i1e = _unary(_S.special_i0e), _unary(_S.special_i1), _unary(_S.special_i1e)
ndtri, log_ndtr = _unary(_S.special_ndtri), _unary(_S.special_log_ndtr)
erfcx, entr = _unary(_S.special_erfcx), _unary(_S.special_entr)
xlog1py, zeta = _binary(_S.special_xlog1py), _binary(_S.special_zeta)
gammainc = _gammainc("special_gammainc", _S.igamma)
gammaincc = _gammainc("special_gammaincc", _S.igammac)

bessel_j0, bessel_j1 = _unary(_S.special_bessel_j0), _unary(_S.special_bessel_j1)
bessel_y0, bessel_y1 = _unary(_S.special_bessel_y0), _unary(_S.special_bessel_y1)
modified_bessel_i0 = _unary(_S.special_modified_bessel_i0)
modified_bessel_i1 = _unary(_S.special_modified_bessel_i1)
modified_bessel_k0 = _unary(_S.special_modified_bessel_k0)
modified_bessel_k1 = _unary(_S.special_modified_bessel_k1)
scaled_modified_bessel_k0 = _unary(_S.special_scaled_modified_bessel_k0, x_named=True)
scaled_modified_bessel_k1 = _unary(_S.special_scaled_modified_bessel_k1, x_named=True)
spherical_bessel_j0 = _unary(_S.special_spherical_bessel_j0, x_named=True)
airy_ai = _unary(_S.special_airy_ai, x_named=True)

chebyshev_polynomial_t = _polynomial(_S.special_chebyshev_polynomial_t)
chebyshev_polynomial_u = _polynomial(_S.special_chebyshev_polynomial_u)
chebyshev_polynomial_v = _polynomial(_S.special_chebyshev_polynomial_v)
chebyshev_polynomial_w = _polynomial(_S.special_chebyshev_polynomial_w)
shifted_chebyshev_polynomial_t = _polynomial(_S.special_shifted_chebyshev_polynomial_t)
shifted_chebyshev_polynomial_u = _polynomial(_S.special_shifted_chebyshev_polynomial_u)
shifted_chebyshev_polynomial_v = _polynomial(_S.special_shifted_chebyshev_polynomial_v)
shifted_chebyshev_polynomial_w = _polynomial(_S.special_shifted_chebyshev_polynomial_w)
hermite_polynomial_h = _polynomial(_S.special_hermite_polynomial_h)
hermite_polynomial_he = _polynomial(_S.special_hermite_polynomial_he)
laguerre_polynomial_l = _polynomial(_S.special_laguerre_polynomial_l)
legendre_polynomial_p = _polynomial(_S.special_legendre_polynomial_p)

__all__ = sorted(name for name, value in list(globals().items()) if callable(value) and not name.startswith("_"))
