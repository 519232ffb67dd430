"""PyTorch's orthogonal polynomials of torch.special (Chebyshev T U V W and their shifted forms, Hermite H and He,
Laguerre L, Legendre P) in JAX: the degree n is elementwise, so the three-term recurrence runs in one while loop
until the largest degree, each element stopping at its own (and, where PyTorch's loop does, at a NaN)."""
import jax
import jax.numpy as jnp


def _degree(n, dtype):
    """n as PyTorch's kernels read it: truncated to int64 (in the result's dtype first), -1 for what does not fit
    (NaN, inf: PyTorch's cast gives a negative integer there, whose polynomial is 0)."""
    n = jnp.asarray(n, dtype)
    fits = jnp.isfinite(n) & (jnp.abs(n) < 2.0 ** 63)
    return jnp.where(fits, jnp.trunc(jnp.where(fits, n, 0)), -1).astype(jnp.int64)


def _recurrence(step, p, q, count, stop_at_nan):
    """q after `count` steps (p, q) -> (q, step(j, p, q)), j = 1, 2, ..., per element."""
    def active(j, q):
        going = j <= count
        return going & ~jnp.isnan(q) if stop_at_nan else going

    def cond(state):
        j, _, q = state
        return jnp.any(active(j, q))

    def body(state):
        j, p, q = state
        on = active(j, q)
        r = step(j.astype(q.dtype), p, q)
        return j + 1, jnp.where(on, q, p), jnp.where(on, r, q)

    start = jnp.ones((), jnp.int64)
    return jax.lax.while_loop(cond, body, (start, p, q))[2]


def _parity(n, dtype):
    return jnp.where(n % 2 == 0, 1, -1).astype(dtype)


def _by_recurrence(x, n, first, step, skip, stop_at_nan=True):
    """1 at n == 0, `first` at n == 1, the recurrence's value above, 0 below 0; the elements where `skip` holds
    (given their value otherwise) take no step."""
    one = jnp.ones_like(x)
    p, q = jnp.broadcast_arrays(one, first)
    value = _recurrence(step, p, q, jnp.where(skip, 0, n - 1), stop_at_nan)
    value = jnp.where(n == 1, first, value)
    return jnp.where(n < 0, 0, jnp.where(n == 0, one, value))


# Chebyshev polynomials, in y (x, or 2x - 1 for the shifted ones). Per kind: the first degree's polynomial, the
# values at y = 1 and y = -1, the degree above which PyTorch uses the closed form inside (-1, 1) (unshifted,
# shifted), and that closed form in theta = acos(y).
def _closed_t(n, theta, y):
    return jnp.cos(n * theta)


def _closed_u(n, theta, y):
    s = jnp.sin(theta)
    return jnp.where(s != 0, jnp.sin((n + 1) * theta) / s, (n + 1) * jnp.cos((n + 1) * theta) / y)


def _closed_v(n, theta, y):
    return jnp.where(jnp.sin(theta / 2) != 1, jnp.cos((n + 0.5) * theta) / jnp.cos(theta / 2),
                     jnp.where(n % 2 == 0, 1, -1) * (n + n + 1))


def _closed_w(n, theta, y, at_one):
    return jnp.where(jnp.cos(theta / 2) != 1, jnp.sin((n + 0.5) * theta) / jnp.sin(theta / 2), at_one)


_CHEBYSHEV = {
    "t": (lambda y: y, lambda n: 1, lambda n: 1, (6, 6), _closed_t),
    "u": (lambda y: y + y, lambda n: n + 1, lambda n: n + 1, (8, 6), _closed_u),
    "v": (lambda y: y + y - 1, lambda n: 1, lambda n: n + n + 1, (8, 6), _closed_v),
    "w": (lambda y: y + y + 1, lambda n: n + n + 1, lambda n: 1, (8, 4), _closed_w),
}


def chebyshev(x, n, kind, shifted):
    first, at_one, at_minus_one, closed_above, closed = _CHEBYSHEV[kind]
    n = _degree(n, x.dtype)
    x, n = jnp.broadcast_arrays(x, n)
    y = x + x - 1 if shifted else x
    # the endpoints, as PyTorch tests them: |x| == 1, or x == 1 and x == 0 for the shifted ones
    top, bottom = ((x == 1), (x == 0)) if shifted else ((x == 1), (x == -1))
    inside = ~(top | bottom) & (n > closed_above[shifted]) & (jnp.abs(y) < 1)
    value = _by_recurrence(y, n, first(y), lambda j, p, q: (y + y) * q - p, top | bottom | inside)
    theta = jnp.arccos(jnp.where(inside, y, 0))
    degree = n.astype(x.dtype)
    if kind == "w":
        # where cos(theta / 2) rounds to 1: PyTorch's endpoint value at 1, or (shifted) the parity
        at_one_inside = _parity(n, x.dtype) if shifted else jnp.where(x > 0, degree + degree + 1,
                                                                      _parity(n, x.dtype))
        closed_value = _closed_w(degree, theta, y, at_one_inside)
    else:
        closed_value = closed(degree, theta, y)
    value = jnp.where(inside, closed_value, value)
    value = jnp.where(top, at_one(degree), jnp.where(bottom, _parity(n, x.dtype) * at_minus_one(degree), value))
    return jnp.where(n < 0, 0, value).astype(x.dtype)


def _hermite_limit(dtype):
    # PyTorch's degree above which the Hermite polynomials are NaN
    return 128 if dtype == jnp.float32 else 512


def hermite_h(x, n):
    n = _degree(n, x.dtype)
    x, n = jnp.broadcast_arrays(x, n)
    # PyTorch's loop variable k = 2, 4, ..., 2n - 2 multiplies p: 2j here
    beyond = n > _hermite_limit(x.dtype)
    value = _by_recurrence(x, n, x + x, lambda j, p, q: (x + x) * q - (j + j) * p, beyond, stop_at_nan=False)
    return jnp.where(beyond, jnp.nan, value).astype(x.dtype)


def hermite_he(x, n):
    n = _degree(n, x.dtype)
    x, n = jnp.broadcast_arrays(x, n)
    beyond = n > _hermite_limit(x.dtype)
    value = _by_recurrence(x, n, x, lambda j, p, q: x * q - j * p, beyond, stop_at_nan=False)
    return jnp.where(beyond, jnp.nan, value).astype(x.dtype)


def laguerre_l(x, n):
    n = _degree(n, x.dtype)
    x, n = jnp.broadcast_arrays(x, n)
    at_zero = x == 0
    value = _by_recurrence(x, n, 1 - x, lambda j, p, q: (((j + j) + (1 - x)) * q - j * p) / (j + 1), at_zero)
    return jnp.where((n >= 0) & at_zero, 1, value).astype(x.dtype)


def legendre_p(x, n):
    n = _degree(n, x.dtype)
    x, n = jnp.broadcast_arrays(x, n)
    at_end = jnp.abs(x) == 1
    value = _by_recurrence(x, n, x, lambda j, p, q: ((j + j + 1) * x * q - j * p) / (j + 1), at_end)
    endpoint = jnp.where((x > 0) | (n % 2 == 0), 1, -1)
    return jnp.where((n >= 0) & at_end, endpoint, value).astype(x.dtype)
