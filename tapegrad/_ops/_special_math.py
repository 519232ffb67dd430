"""The JAX functions behind torch.special's entries that jax.scipy.special has (i0e, i1, i1e, ndtri, log_ndtr, erfcx,
entr, xlog1py, zeta, igamma, igammac), with PyTorch's values where its kernels differ (boundary points, log_ndtr's
formula) and its derivatives (derivatives.yaml)."""
import math

import jax.numpy as jnp
import jax.scipy.special as jss

from ._elementwise_math import _unary_with_derivative, _with_derivatives


def _const(value, like):
    return jnp.asarray(value, like.dtype)


# ---- modified Bessel functions of the first kind, exponentially scaled -------------------------------

def _i0e_derivative(a):
    # PyTorch's: i1e(a) - sgn(a) * i0e(a)
    return _i1e(a) - jnp.sign(a) * _i0e(a)


def _tiny_safe(a):
    # PyTorch's i1_backward and i1e_backward: |a| <= eps takes the limit 0.5, the formula a clamped away from 0
    eps = jnp.finfo(a.dtype).eps
    not_tiny = jnp.abs(a) > eps
    return not_tiny, jnp.where(not_tiny, a, _const(eps, a))


def _i1_derivative(a):
    not_tiny, safe = _tiny_safe(a)
    return jnp.where(not_tiny, jss.i0(safe) - _i1(a) / safe, _const(0.5, a))


def _i1e_derivative(a):
    not_tiny, safe = _tiny_safe(a)
    return jnp.where(not_tiny, _i0e(safe) - _i1e(a) * (jnp.sign(safe) + 1 / safe), _const(0.5, a))


_i0e = _unary_with_derivative(lambda a: jss.i0e(a), _i0e_derivative)
_i1 = _unary_with_derivative(lambda a: jss.i1(a), _i1_derivative)
_i1e = _unary_with_derivative(lambda a: jss.i1e(a), _i1e_derivative)

# ---- the normal distribution and the scaled complementary error function --------------------------------

_SQRT_2PI = math.sqrt(2 * math.pi)
# PyTorch's derivative of ndtri: sqrt(2 pi) exp(ndtri(a)^2 / 2)
_ndtri = _unary_with_derivative(lambda a: jss.ndtri(a), lambda a: _SQRT_2PI * jnp.exp(jnp.square(_ndtri(a)) / 2))


def _log_ndtr_value(a):
    # PyTorch's calc_log_ndtr: log(erfcx(-t) / 2) - t^2 below -1, log1p(-erfc(t) / 2) above (t = a / sqrt 2)
    t = a * _const(math.sqrt(0.5), a)
    low = a < -1
    below = jnp.log(jss.erfcx(-jnp.where(low, t, 0)) / 2) - t * t
    above = jnp.log1p(-jss.erfc(jnp.where(low, 0, t)) / 2)
    return jnp.where(low, below, above)


# PyTorch's derivative: exp(-(log_ndtr(a) + a^2 / 2)) / sqrt(2 pi)
_log_ndtr = _unary_with_derivative(
    _log_ndtr_value, lambda a: jnp.exp(-(_log_ndtr(a) + jnp.square(a) / 2)) / _const(_SQRT_2PI, a))
# PyTorch's derivative: 2 a erfcx(a) - 2 / sqrt(pi)
_erfcx = _unary_with_derivative(
    lambda a: jss.erfcx(a), lambda a: 2 * a * _erfcx(a) - _const(2 / math.sqrt(math.pi), a))


def _entr_value(a):
    # PyTorch's kernel: NaN stays, -a log a above 0, 0 at 0, -inf below
    positive = a > 0
    value = -a * jnp.log(jnp.where(positive, a, 1))
    value = jnp.where(positive, value, jnp.where(a == 0, _const(0, a), _const(-jnp.inf, a)))
    return jnp.where(jnp.isnan(a), a, value)


# PyTorch's derivative -(1 + log a): inf at 0, NaN below
_entr = _unary_with_derivative(_entr_value, lambda a: -(1 + jnp.log(a)))


def _xlog1py_value(a, b):
    # PyTorch's kernel: NaN where b is NaN, else 0 where a == 0, else a log1p(b)
    zero = a == 0
    value = a * jnp.log1p(jnp.where(zero, jnp.zeros((), b.dtype), b))
    value = jnp.where(zero, jnp.zeros((), value.dtype), value)
    return jnp.where(jnp.isnan(b), jnp.full((), jnp.nan, value.dtype), value)


def _xlog1py_derivatives(a, b, out):
    # PyTorch's: a gets log1p(b), 0 where a == 0 and b <= -1; b gets a / (b + 1)
    masked = (a == 0) & (b <= -1)
    log1p_b = jnp.log1p(jnp.where(masked, jnp.zeros((), b.dtype), b))
    return jnp.where(masked, jnp.zeros((), log1p_b.dtype), log1p_b), a / (b + 1)


_xlog1py = _with_derivatives(_xlog1py_value, _xlog1py_derivatives)

# ---- the Hurwitz zeta function and the regularized incomplete gamma functions ---------------------------


def _zeta_value(x, q):
    """PyTorch's zeta(x, q): inf at x == 1, NaN below 1, inf at the poles q = 0, -1, ..., NaN for q < 0 and a
    non-integer x; the Euler-Maclaurin sum elsewhere (jss.zeta, whose own boundary values differ)."""
    x, q = jnp.broadcast_arrays(x, q)
    nan, inf = _const(jnp.nan, x), _const(jnp.inf, x)
    value = jss.zeta(x, q)
    # x = inf: PyTorch's sum is 1 at q == 1 and inf below (some term q^-x is), NaN above (its tail is 0 * inf)
    value = jnp.where(jnp.isposinf(x), jnp.where(q == 1, 1, jnp.where(q < 1, inf, nan)), value)
    non_positive = q <= 0
    value = jnp.where(non_positive & (x != jnp.floor(x)), nan, value)
    value = jnp.where(non_positive & (q == jnp.floor(q)), inf, value)
    value = jnp.where(x < 1, nan, value)
    return jnp.where(x == 1, inf, value)


# PyTorch differentiates zeta in q only (-x zeta(x + 1, q)); its derivative in x raises before use
_zeta = _with_derivatives(_zeta_value, lambda x, q, out: (jnp.full_like(out, jnp.nan), -x * _zeta(x + 1, q)))


def _regularized_gamma(lower):
    """PyTorch's calc_igamma (lower) or calc_igammac: its boundary values in its order (a NaN argument gives a
    number at some of them), jss.gammainc / gammaincc elsewhere, computed in float64 (JAX's series loses
    float32's digits where PyTorch's does not)."""
    interior = jss.gammainc if lower else jss.gammaincc

    def value(a, x):
        a, x = jnp.broadcast_arrays(a, x)
        zero, one = (0, 1) if lower else (1, 0)
        result = interior(a.astype(jnp.float64), x.astype(jnp.float64)).astype(a.dtype)
        result = jnp.where(jnp.isinf(x), _const(one, a), result)
        result = jnp.where(jnp.isinf(a), jnp.where(jnp.isinf(x), _const(jnp.nan, a), _const(zero, a)), result)
        result = jnp.where(x == 0, _const(zero, a), result)
        result = jnp.where(a == 0, jnp.where(x > 0, _const(one, a), _const(jnp.nan, a)), result)
        return jnp.where((x < 0) | (a < 0), _const(jnp.nan, a), result)

    sign = 1 if lower else -1

    def derivatives(a, x, out):
        # PyTorch's: x gets (+/-) exp((a - 1) log x - x - lgamma(a)); a's derivative raises before use
        return jnp.full_like(out, jnp.nan), sign * jnp.exp((a - 1) * jnp.log(x) - x - jss.gammaln(a))
    return _with_derivatives(value, derivatives)


_igamma = _regularized_gamma(lower=True)
_igammac = _regularized_gamma(lower=False)


def _spherical_bessel_j0(a):
    # PyTorch's kernel: 0 at +-inf, a Taylor polynomial below 1/2, sin(a) / a elsewhere
    x2 = a * a
    series = 1 + x2 * (-1 / 6 + x2 * (1 / 120 + x2 * (-1 / 5040 + x2 * (1 / 362880 + x2 * (
        -1 / 39916800 + x2 * (1 / 6227020800))))))
    small = jnp.abs(a) < 0.5
    value = jnp.where(small, series.astype(a.dtype), jnp.sin(a) / jnp.where(small, 1, a))
    return jnp.where(jnp.isinf(a), _const(0, a), value)

