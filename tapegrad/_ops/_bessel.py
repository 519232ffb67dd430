"""PyTorch's Bessel and Airy kernels of torch.special (bessel_j0/j1/y0/y1, modified_bessel_i0/i1/k0/k1 and the
scaled k0/k1, airy_ai) in JAX: the same Cephes approximations, branch for branch, computed in the input's dtype
as PyTorch's are (coefficients: _cephes_tables)."""
import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jss

from . import _cephes_tables as C

_QUARTER_PI = 0.785398163397448309615660845819875721
_THREE_QUARTERS_PI = 2.356194490192344928846982537459627163
_SQRT_2_OVER_PI = 0.797884560802865355879892119868763737
_TWO_OVER_PI = 0.636619772367581343075535053490057448


def _horner(z, coefficients):
    value = jnp.zeros_like(z)
    for c in coefficients:
        value = value * z + c
    return value


def _chebyshev_series(z, coefficients):
    # Cephes' chbevl, as PyTorch's kernels unroll it
    p, q, a = jnp.zeros_like(z), jnp.zeros_like(z), jnp.full_like(z, coefficients[0])
    for c in coefficients[1:]:
        p, q = q, a
        a = z * q - p + c
    return 0.5 * (a - p)


def _where_safe(condition, x, safe):
    # x where the branch is taken, a harmless point elsewhere (so that the untaken branch makes no NaN or inf)
    return jnp.where(condition, x, jnp.asarray(safe, x.dtype))


_ORDER_0 = (C.BESSEL_J0_PP, C.BESSEL_J0_PQ, C.BESSEL_J0_QP, C.BESSEL_J0_QQ, _QUARTER_PI)
_ORDER_1 = (C.BESSEL_J1_PP, C.BESSEL_J1_PQ, C.BESSEL_J1_QP, C.BESSEL_J1_QQ, _THREE_QUARTERS_PI)


def _asymptotic(x, z, order, sine_first):
    """The large-x form of J0 J1 Y0 Y1: (P cos(x - phase) - 5/x Q sin(x - phase)) sqrt(2 / (pi x)), with sin
    and cos exchanged (and Q's sign) for Y."""
    pp, pq, qp, qq, phase = order
    p = _horner(z, pp) / _horner(z, pq)
    q = _horner(z, qp) / _horner(z, qq)
    if sine_first:
        value = p * jnp.sin(x - phase) + 5 / x * q * jnp.cos(x - phase)
    else:
        value = p * jnp.cos(x - phase) - 5 / x * q * jnp.sin(x - phase)
    return value * _SQRT_2_OVER_PI / jnp.sqrt(x)


def bessel_j0(x):
    x = jnp.abs(x)
    small = x <= 5
    xs = _where_safe(small, x, 1.0)
    x2 = xs * xs
    near = (x2 - 5.78318596294678452118e+00) * (x2 - 3.04712623436620863991e+01) * _horner(x2, C.BESSEL_J0_RP) \
        / _horner(x2, C.BESSEL_J0_RQ)
    near = jnp.where(xs < 0.00001, 1 - xs * xs / 4, near)
    xl = _where_safe(~small, x, 10.0)
    far = _asymptotic(xl, 25 / (xl * xl), _ORDER_0, sine_first=False)
    return jnp.where(small, near, far)


def bessel_j1(x):
    negative = x < 0
    x = jnp.abs(x)
    small = x <= 5
    xs = _where_safe(small, x, 1.0)
    x2 = xs * xs
    near = _horner(x2, C.BESSEL_J1_RP) / _horner(x2, C.BESSEL_J1_RQ) * xs * (x2 - 1.46819706421238932572e+01) \
        * (x2 - 4.92184563216946036703e+01)
    xl = _where_safe(~small, x, 10.0)
    far = _asymptotic(xl, 5 / xl * (5 / xl), _ORDER_1, sine_first=False)
    value = jnp.where(small, near, far)
    return jnp.where(negative, -value, value)


def bessel_y0(x):
    small = x <= 5
    xs = _where_safe(small & (x > 0), x, 1.0)
    x2 = xs * xs
    near = _horner(x2, C.BESSEL_Y0_YP) / _horner(x2, C.BESSEL_Y0_YQ) + _TWO_OVER_PI * jnp.log(xs) * bessel_j0(xs)
    near = jnp.where(x == 0, -jnp.inf, jnp.where(x < 0, jnp.nan, near))
    xl = _where_safe(~small, x, 10.0)
    far = _asymptotic(xl, 25 / (xl * xl), _ORDER_0, sine_first=True)
    return jnp.where(small, near, far).astype(x.dtype)


def bessel_y1(x):
    small = x <= 5
    xs = _where_safe(small & (x > 0), x, 1.0)
    x2 = xs * xs
    near = xs * (_horner(x2, C.BESSEL_Y1_YP) / _horner(x2, C.BESSEL_Y1_YQ)) + _TWO_OVER_PI * (
        bessel_j1(xs) * jnp.log(xs) - 1 / xs)
    near = jnp.where(x == 0, -jnp.inf, jnp.where(x < 0, jnp.nan, near))
    xl = _where_safe(~small, x, 10.0)
    far = _asymptotic(xl, 5 / xl * (5 / xl), _ORDER_1, sine_first=True)
    return jnp.where(small, near, far).astype(x.dtype)


def _modified_k(x, order, scaled):
    """K0 or K1 (times exp(x) when scaled): Chebyshev series in x^2 - 2 up to 2 (with the log term of I0 or I1),
    in 8/x - 2 above; inf at 0, NaN below."""
    a_coefficients, b_coefficients = (C.BESSEL_K0_A, C.BESSEL_K0_B) if order == 0 else (C.BESSEL_K1_A, C.BESSEL_K1_B)
    small = x <= 2
    xs = _where_safe(small & (x > 0), x, 1.0)
    series = _chebyshev_series(xs * xs - 2, a_coefficients)
    if order == 0:
        # (PyTorch's log(0.5 * x) is a double's: its K0 is computed in float64 there)
        near = series - jnp.log(0.5 * xs.astype(jnp.float64)) * jss.i0(xs)
    else:
        near = jnp.log(0.5 * xs) * jss.i1(xs) + series / xs
    if scaled:
        near = near * jnp.exp(xs)
    xl = _where_safe(~small, x, 4.0)
    far = _chebyshev_series(8 / xl - 2, b_coefficients) / jnp.sqrt(xl)
    if not scaled:
        far = jnp.exp(-xl) * far
    value = jnp.where(small, near.astype(x.dtype), far)
    return jnp.where(x == 0, jnp.inf, jnp.where(x < 0, jnp.nan, value)).astype(x.dtype)


def modified_bessel_k0(x):
    return _modified_k(x, 0, scaled=False)


def modified_bessel_k1(x):
    return _modified_k(x, 1, scaled=False)


def scaled_modified_bessel_k0(x):
    return _modified_k(x, 0, scaled=True)


def scaled_modified_bessel_k1(x):
    return _modified_k(x, 1, scaled=True)


def _airy_series(x):
    """Ai's power series f, g (Ai = c1 f - c2 g), summed until a term of f is below eps, as PyTorch's loop."""
    eps = jnp.finfo(x.dtype).eps
    z = x * x * x

    def cond(state):
        return jnp.any(state[-1] > eps)

    def body(state):
        f, g, m, n, k, t = state
        on = t > eps
        m2, k2 = m * z, k + 1
        m2 = m2 / k2
        n2 = n * z
        k2 = k2 + 1
        n2 = n2 / k2
        m2 = m2 / k2
        f2 = f + m2
        k2 = k2 + 1
        n2 = n2 / k2
        g2 = g + n2
        t2 = jnp.abs(m2 / f2)
        pick = lambda new, old: jnp.where(on, new, old)  # noqa: E731
        return pick(f2, f), pick(g2, g), pick(m2, m), pick(n2, n), pick(k2, k), pick(t2, t)

    one = jnp.ones_like(x)
    f, g, *_ = jax.lax.while_loop(cond, body, (one, x, one, x, one, one))
    return f, g


def airy_ai(x):
    negative_far = x < -2.09
    xn = _where_safe(negative_far, x, -4.0)
    root = jnp.sqrt(-xn)
    z = 1 / (-2 * xn * root / 3)
    zz = z * z
    t = -2 * xn * root / 3 + 0.25 * math.pi
    negative = 5.64189583547756286948e-01 / jnp.sqrt(root) * (
        jnp.sin(t) * (1 + zz * _horner(zz, C.AIRY_AI_AFN) / _horner(zz, C.AIRY_AI_AFD))
        - jnp.cos(t) * (z * _horner(zz, C.AIRY_AI_AGN) / _horner(zz, C.AIRY_AI_AGD)))
    positive_far = x >= 2.09
    xp = _where_safe(positive_far, x, 4.0)
    zeta = 2 * xp * jnp.sqrt(xp) / 3
    positive = 5.64189583547756286948e-01 * (_horner(1 / zeta, C.AIRY_AI_AN) / _horner(1 / zeta, C.AIRY_AI_AD)) / (
        2 * jnp.sqrt(jnp.sqrt(xp)) * jnp.exp(zeta))
    # the series, where PyTorch sums it: between -2.09 and 2.09 (and NaN)
    in_series = ~negative_far & ~positive_far
    f, g = _airy_series(_where_safe(in_series, x, 0.0))
    series = 0.355028053887817239260 * f - 0.258819403792806798405 * g
    value = jnp.where(negative_far, negative, jnp.where(positive_far, positive, series))
    value = jnp.where(x > 103.892, 0, value)
    return jnp.where(jnp.isinf(x), jnp.nan, value).astype(x.dtype)
