"""The JAX functions the elementwise op-table entries are built from, with PyTorch's values and derivatives where
jnp's differ (pow, clamp, maximum's ties, atan2, xlogy, logit, lgamma, ldexp, i0, frexp ...)."""
import functools

import jax
import jax.numpy as jnp
import jax.scipy.special as jss

from ._registry import named_formula


def _is_float(a):
    return jnp.issubdtype(a.dtype, jnp.inexact)


def _pow(a, b):
    if isinstance(b, int) and not isinstance(b, bool):
        return jax.lax.integer_pow(a, b) if b >= 0 or _is_float(a) else jnp.power(a, b)
    if not jnp.issubdtype(a.dtype, jnp.floating):
        return _integer_power(a, b) if jnp.issubdtype(a.dtype, jnp.integer) else jnp.power(a, b)
    b = jnp.asarray(b)
    dtype = jnp.result_type(a, b) if jnp.issubdtype(b.dtype, jnp.inexact) else a.dtype
    return _real_pow(a.astype(dtype), b.astype(dtype))


def _integer_power(a, b):
    """PyTorch's powi: a negative exponent gives 1 for a base of 1, 1 or -1 for a base of -1 (by the
    exponent's parity), else 0 (jnp.power's overflows into garbage)."""
    b = jnp.asarray(b)
    if not jnp.issubdtype(b.dtype, jnp.integer):
        return jnp.power(a, b)
    out = _wrapping_power(a, jnp.maximum(b, 0) if jnp.issubdtype(b.dtype, jnp.signedinteger) else b)
    if not jnp.issubdtype(b.dtype, jnp.signedinteger):
        return out
    one = jnp.ones((), out.dtype)
    inverse = jnp.where(a == 1, one, jnp.where(a == -1, jnp.where(b % 2 == 0, one, -one), jnp.zeros((), out.dtype)))
    return jnp.where(b < 0, inverse, out)


def _wrapping_power(a, b):
    """a ** b (b >= 0) by squaring over every bit of b, wrapping around as C's integers (jnp.power reads six
    bits of b only: 3 ** 81 came out as 3 ** 17)."""
    dtype = jnp.result_type(a, b)
    a, b = jnp.broadcast_arrays(jnp.asarray(a, dtype), jnp.asarray(b, dtype))

    def step(_, carry):
        out, base, rest = carry
        out = jnp.where(rest & 1 == 1, out * base, out)
        return out, base * base, rest >> 1
    bits = jnp.iinfo(dtype).bits
    return jax.lax.fori_loop(0, bits, step, (jnp.ones_like(a), a, b))[0]


def _with_derivatives(fn, derivatives):
    """fn(a, b) differentiated by derivatives(a, b, out) -> (d out/da, d out/db): PyTorch's formulas
    where JAX's differ at a point."""
    f = jax.custom_jvp(fn)

    def jvp(primals, tangents):
        (a, b), (da, db) = primals, tangents
        out = fn(a, b)
        d_a, d_b = derivatives(a, b, out)
        # An argument that is not differentiated has a symbolic zero tangent: its term is left out, so a
        # derivative that is NaN there (pow's log(a) for a < 0) does not turn forward mode's result NaN.
        terms = [d * t for d, t in ((d_a, da), (d_b, db)) if type(t) is not jax.custom_derivatives.SymbolicZero]
        return out, jnp.broadcast_to(sum(terms[1:], terms[0]), out.shape).astype(out.dtype)
    f.defjvp(jvp, symbolic_zeros=True)
    return f


def _is_symbolic_zero(t):
    return type(t) is jax.custom_derivatives.SymbolicZero


def _torch_pow(scalar_exponent):
    """jnp.power differentiated by PyTorch's formulas, written on this same function so that every order of
    derivative takes them (JAX's own rule makes its exponent safe at 0 only once: the third derivative of
    x ** 2.0 is NaN at 0). A tensor exponent (PowBackward1, and PowBackward2's scalar base): a gets
    where(b == 0, 0, grad * (b * a ** (b - 1))), b gets grad * where(a == 0 & b >= 0, 0, result * log(a)),
    neither branch made safe, so that the next order is NaN where PyTorch's is. A Python scalar exponent that
    is not an integer (PowBackward0; integers take integer_pow): grad * (b * a ** (b - 1)), never 0."""
    @jax.custom_jvp
    def pow_(a, b):
        return jnp.power(a, b)

    def jvp(primals, tangents):
        (a, b), (da, db) = primals, tangents
        out = pow_(a, b)
        zero = jnp.zeros((), out.dtype)
        terms = []
        if not _is_symbolic_zero(da):
            factor = b * pow_(a, b - 1)
            if scalar_exponent:
                terms.append(da * factor)
            else:
                # the tangent masked first, so that the gradient's formula ends in the where (WhereBackward0)
                b_zero = b == 0
                terms.append(jnp.where(b_zero, zero, da) * jnp.where(b_zero, jnp.ones((), out.dtype), factor))
        if not _is_symbolic_zero(db):
            terms.append(db * jnp.where((a == 0) & (b >= 0), zero, out * jnp.log(a)))
        return out, jnp.broadcast_to(sum(terms[1:], terms[0]), out.shape).astype(out.dtype)
    pow_.defjvp(jvp, symbolic_zeros=True)
    return pow_


_real_pow = _torch_pow(scalar_exponent=False)
_scalar_pow = _torch_pow(scalar_exponent=True)


@functools.partial(jax.custom_jvp, nondiff_argnums=(1,))
def _integer_pow(a, k):
    return jax.lax.integer_pow(a, k)


@_integer_pow.defjvp
def _integer_pow_jvp(k, primals, tangents):
    # PyTorch's pow_backward: zeros for k == 0 (depending on nothing), else grad * (k * a ** (k - 1)), whose
    # a ** 0 is still a function of a (JAX's own rule folds it into a constant one order early)
    (a,), (da,) = primals, tangents
    out = _integer_pow(a, k)
    if k == 0:
        return out, jnp.zeros_like(out)
    return out, da * (k * _integer_pow(a, k - 1))


def rsqrt(a):
    """1 / sqrt(a), each step rounded as PyTorch's kernels compute it (XLA's rsqrt, and the form it folds
    1 / sqrt(a) into, differs in the last bit for a third of float32 values)."""
    return 1 / jax.lax.optimization_barrier(jnp.sqrt(a))


def _trunc_div(a, b):
    return jnp.trunc(_true_div(a, b)) if _is_float(a) else jnp.sign(a) * jnp.sign(b) * (jnp.abs(a) // jnp.abs(b))


def _true_div(a, b):
    """a / b, element by element. XLA rewrites a division by a broadcast value into a multiplication by its
    reciprocal, whose result differs from PyTorch's IEEE quotient in the last bit (x / 3.0: a third of float32
    elements); the broadcast divisor behind an optimization barrier keeps the division."""
    shape = jnp.broadcast_shapes(jnp.shape(a), jnp.shape(b))
    if jnp.shape(b) != shape and (_is_float(jnp.asarray(a)) or _is_float(jnp.asarray(b))):
        b = jax.lax.optimization_barrier(jnp.broadcast_to(b, shape))
    return a / b


def _floor_div(a, b):
    return _floor_div_floating(a, b) if _is_float(a) else jnp.floor_divide(a, b)


def _floor_div_floating(a, b):
    """PyTorch's div_floor_floating (Python's float //): the quotient of a - fmod(a, b), which is exact, not
    floor(a / b), whose rounding can cross an integer (-1 / -0.1 in float32: 10 vs PyTorch's 9). Every step
    rounds to the dtype, half precision's too, as PyTorch's scalar kernel does."""
    dtype = jnp.result_type(a, b)
    mod = jax.lax.rem(*jnp.broadcast_arrays(jnp.asarray(a, dtype), jnp.asarray(b, dtype)))   # C's fmod
    div = _true_div(a - mod, b)
    div = jnp.where((mod != 0) & ((b < 0) != (mod < 0)), div - 1, div)
    floor = jnp.floor(div)
    rounded = jnp.where(div - floor > 0.5, floor + 1, floor)
    out = jnp.where(div != 0, rounded, jnp.copysign(jnp.zeros((), dtype), a / b))
    # (dividing by zero: IEEE's result); a step function: its derivative is 0 everywhere, as PyTorch's
    return jax.lax.stop_gradient(jnp.where(b == 0, a / b, out))


def _max_split(a, b, pick):
    # PyTorch splits the gradient evenly between a and b where they tie (its value a: -0.0 of max(-0.0, 0.0));
    # NaN propagates, and where a NaN makes them unordered both get the whole gradient.
    if not _is_float(a):
        return jnp.where(pick(a, b), a, b)
    a, b = jnp.broadcast_arrays(a, b)
    return jnp.where(pick(a, b), a, jnp.where(pick(b, a), b, jnp.where(a == b, _tie(a, b), a + b)))


@jax.custom_jvp
def _tie(a, b):
    """a, where a == b: its derivative half a's and half b's."""
    return a


@_tie.defjvp
def _tie_jvp(primals, tangents):
    return primals[0], 0.5 * tangents[0] + 0.5 * tangents[1]


def _fmax(a, b, pick):
    # NaN is ignored; ties send the gradient to a (PyTorch's fmax/fmin).
    return jnp.where(pick(a, b) | (a == b) | jnp.isnan(b), a, b)


def _clamp(a, lo, hi):
    # PyTorch's value min(max(a, lo), hi) (NaN in a or a bound gives NaN) and its clamp_backward masks: a
    # gets the gradient where lo <= a <= hi (inclusive, unlike jnp.clip's ties), lo where a < lo < hi, hi
    # where a > hi or hi < lo; elsewhere (NaN, a < lo == hi) the value is a constant.
    lo = None if lo is None else jnp.asarray(lo, a.dtype)
    hi = None if hi is None else jnp.asarray(hi, a.dtype)
    value = a if lo is None else jnp.maximum(a, lo)
    value = jax.lax.stop_gradient(value if hi is None else jnp.minimum(value, hi))
    out = value
    inside = jnp.ones(a.shape, bool)
    if lo is not None:
        inside = inside & (a >= lo)
    if hi is not None:
        inside = inside & (a <= hi)
    out = jnp.where(inside, a, out)
    if lo is not None:
        out = jnp.where((a < lo) if hi is None else (a < lo) & (lo < hi), lo, out)
    if hi is not None:
        out = jnp.where((a > hi) if lo is None else (a > hi) | (hi < lo), hi, out)
    if _is_float(a):   # (NaN where the value is, the gradient still the branch's; not out + 0.0 elsewhere,
        out = jnp.where(jnp.isnan(value), out + value, out)   # which would turn -0.0 into +0.0)
    return out


def _unary_with_derivative(fn, derivative):
    """fn(a, *static) differentiated by derivative(a, *static): PyTorch's formula where JAX's differs at a point."""
    f = jax.custom_jvp(fn, nondiff_argnums=tuple(range(1, fn.__code__.co_argcount)))

    def jvp(*args):
        static, ((a,), (t,)) = args[:-2], args[-2:]
        return f(a, *static), derivative(a, *static) * t
    f.defjvp(jvp)
    return f


def _logit_value(a, eps):
    if eps is not None:
        a = _clamp(a, eps, 1 - eps)
    return jnp.log(a / (1 - a))


def _logit_derivative(a, eps):
    # PyTorch's logit_backward: 1 / (a (1 - a)), NaN outside [0, 1] (0 outside [eps, 1 - eps] with eps)
    slope = 1 / (a * (1 - a))
    if eps is None:
        return jnp.where((a < 0) | (a > 1), jnp.asarray(jnp.nan, a.dtype), slope)
    return jnp.where((a < eps) | (a > 1 - eps), jnp.zeros((), a.dtype), slope)


_logit = _unary_with_derivative(_logit_value, _logit_derivative)


def _digamma(a):
    # PyTorch's digamma(+-0) is -+inf (JAX's NaN)
    return jnp.where(a == 0, jnp.copysign(jnp.asarray(jnp.inf, a.dtype), -a), jss.digamma(a))


def _trigamma(a):
    # PyTorch's calc_trigamma: the reflection below 1/2, six steps of the recurrence, the asymptotic series.
    # inf at 0, 6.6e32 at -1 (sin(pi x) rounds off 0 there), 0 at inf, NaN at -inf; jss.polygamma(1, a)'s
    # are inf, inf, NaN, inf
    pi = jnp.asarray(jnp.pi, a.dtype)
    reflect = a < 0.5
    sin = jnp.sin(pi * a)
    result = jnp.where(reflect, -(pi * pi) / (sin * sin), jnp.zeros((), a.dtype))
    x = jnp.where(reflect, 1 - a, a)
    for _ in range(6):
        result, x = result + 1 / (x * x), x + 1
    ixx = 1 / (x * x)
    result = result + (1 + 1 / (2 * x) + ixx * (1 / 6 - ixx * (1 / 30 - ixx * (1 / 42)))) / x
    return jnp.where(reflect, -result, result)


def _polygamma_value(a, n):
    """PyTorch's polygamma(n, a): digamma, trigamma, then (-1)^(n+1) n! zeta(n + 1, a), whose zeta is inf at
    the poles 0, -1, ... -inf (JAX's zeta is NaN at some of them)."""
    if n == 0:
        return _digamma(a)
    if n == 1:
        return _trigamma(a)
    pole = (a <= 0) & (a == jnp.floor(a))
    zeta = jnp.where(pole, jnp.asarray(jnp.inf, a.dtype), jss.zeta(jnp.asarray(n + 1, a.dtype), a))
    factorial = jnp.exp(jss.gammaln(jnp.asarray(n + 1, a.dtype)))
    return (1 if n % 2 else -1) * factorial * zeta


# polygamma(n, a)' is polygamma(n + 1, a) at every order, as PyTorch's derivatives.yaml
_polygamma = _unary_with_derivative(_polygamma_value, lambda a, n: _polygamma(a, n + 1))
# lgamma' is PyTorch's digamma (-inf at 0); digamma' is polygamma(1, a) (inf at 0)
_lgamma = _unary_with_derivative(lambda a: jss.gammaln(a), _digamma)


def _digamma_op(a):
    return _polygamma(a, 0)


def _mvlgamma_derivative(a, p):
    # PyTorch's mvlgamma_backward: the sum of digamma(a - j / 2), j < p, differentiated as digamma
    return sum((_digamma_op(a - j / 2) for j in range(1, p)), _digamma_op(a))


_mvlgamma = _unary_with_derivative(lambda a, p: jss.multigammaln(a, p), _mvlgamma_derivative)


def _atan2_derivatives(a, b, out):
    # PyTorch's formula (b, -a) / (a^2 + b^2), with 0 at the origin where JAX's is NaN
    norm = a * a + b * b
    origin = norm == 0
    safe = jnp.where(origin, jnp.ones((), norm.dtype), norm)
    zero = jnp.zeros((), norm.dtype)
    return jnp.where(origin, zero, b / safe), jnp.where(origin, zero, -a / safe)


_atan2 = _with_derivatives(jnp.arctan2, _atan2_derivatives)
# PyTorch's formula (a, b) / hypot(a, b): NaN at the origin, where JAX's safe rule gives 1/2
_hypot = _with_derivatives(jnp.hypot, lambda a, b, out: (a / out, b / out))


def _xlogy(a, b):
    # 0 where a == 0, unless b is NaN (PyTorch's xlogy)
    zero = (a == 0) & ~jnp.isnan(b)
    product = a * jnp.log(jnp.where(zero, jnp.ones((), b.dtype), b))
    return jnp.where(zero, jnp.zeros((), product.dtype), product)


def _xlogy_derivatives(a, b, out):
    # PyTorch's formulas: d/da = log(b), 0 where a == 0 and b <= 0; d/db = a / b
    masked = (a == 0) & (b <= 0)
    log_b = jnp.log(jnp.where(masked, jnp.ones((), b.dtype), b))
    return jnp.where(masked, jnp.zeros((), log_b.dtype), log_b), a / b


def _copysign_derivatives(a, b, out):
    # PyTorch's: result / a, 0 where a == 0; the sign's source gets a zero gradient
    zero = a == 0
    return jnp.where(zero, jnp.zeros((), a.dtype), out / jnp.where(zero, jnp.ones((), a.dtype), a)), jnp.zeros_like(b)


_xlogy_op = _with_derivatives(_xlogy, _xlogy_derivatives)


@jax.custom_vjp
def _xlogy_broadcast(a, b):
    return _xlogy(a, b)


def _xlogy_backward(saved, g):
    # PyTorch's XlogyBackward: xlogy(grad, other) where the derivative formula has grad * log(other), so that a
    # zero gradient stays 0 where log(other) is NaN. That xlogy is the custom-JVP form: a custom VJP inside a
    # backward formula would stop forward mode over it (hessian's jacfwd over jacrev).
    a, b = saved
    return _masked_xlogy(g, a, b).astype(a.dtype), (g * a / b).astype(b.dtype)


# traced as a call named after the masked_fill that ends PyTorch's formula (its create_graph node)
_masked_xlogy = named_formula("MaskedFillBackward0", lambda g, a, b: jnp.where(
    (a == 0) & (b <= 0), jnp.zeros((), g.dtype), _xlogy_op(g, b)))


_xlogy_broadcast.defvjp(lambda a, b: (_xlogy(a, b), (a, b)), _xlogy_backward)


def xlogy_reverse(a, b):
    """xlogy differentiated by PyTorch's backward formulas (the op's reverse form)."""
    shape = jnp.broadcast_shapes(jnp.shape(a), jnp.shape(b))
    return _xlogy_broadcast(jnp.broadcast_to(a, shape), jnp.broadcast_to(b, shape))


_copysign = _with_derivatives(jnp.copysign, _copysign_derivatives)


def _heaviside(a, values):
    # PyTorch's kernel: values where a == 0, else (a > 0), so NaN gives 0
    return jnp.where(a == 0, values, (a > 0).astype(a.dtype)).astype(a.dtype)


# PyTorch's nextafter passes the gradient to `input` where input != other (0 where they are equal), none to
# `other`
_nextafter = _with_derivatives(jnp.nextafter, lambda a, b, out: (
    jnp.where(a != b, jnp.ones((), out.dtype), jnp.zeros((), out.dtype)), jnp.zeros_like(out)))
# PyTorch's formulas 1 / (1 + exp(other - self)) and 1 / (1 + 2 ** (other - self)): NaN where both are the
# same infinity, 0 and 1 where one is infinite, where JAX's rule differs
_logaddexp = _with_derivatives(jnp.logaddexp, lambda a, b, out: (1 / (1 + jnp.exp(b - a)), 1 / (1 + jnp.exp(a - b))))
_logaddexp2 = _with_derivatives(
    jnp.logaddexp2, lambda a, b, out: (1 / (1 + jnp.exp2(b - a)), 1 / (1 + jnp.exp2(a - b))))


def _ldexp(a, b):
    # PyTorch's formula: input * 2 ** other
    return a * jnp.exp2(b)


# PyTorch's derivative grad * 2 ** other is computed in other's dtype: for an integer exponent, an integer
# power, 0 where other < 0
_ldexp_integer = _with_derivatives(
    _ldexp, lambda a, b, out: (jnp.where(b < 0, jnp.zeros((), out.dtype), jnp.exp2(b)), jnp.zeros_like(out)))


@jax.custom_jvp
def _frexp(a):
    mantissa, exponent = jnp.frexp(a)
    return mantissa, exponent.astype(jnp.int32)


@_frexp.defjvp
def _frexp_jvp(primals, tangents):
    # PyTorch's derivative of the mantissa: grad / 2 ** exponent; the exponent has none
    (a,), (t,) = primals, tangents
    mantissa, exponent = _frexp(a)
    return (mantissa, exponent), (t / jnp.exp2(exponent).astype(t.dtype), jnp.zeros(exponent.shape, jax.dtypes.float0))


@jax.custom_jvp
def _i0(a):
    return jss.i0(a)


# PyTorch's derivative i1(a); JAX's, through i0e(a) * exp(|a|), gives 1 at 0
_i0.defjvp(lambda primals, tangents: (_i0(primals[0]), jss.i1(primals[0]) * tangents[0]))


# ---- PyTorch's logistic kernels ---------------------------------------------------------------
# PyTorch computes 1 / (1 + exp(-x)), in float32 for half types: 0 once exp(-x) overflows (float32 below about
# -88.7), where XLA's logistic goes on down through exp(x). silu and glu are written over the same formula.

_HALF = (jnp.float16, jnp.bfloat16)


def _in_opmath(fn):
    """fn computed in float32 for half-precision inputs, rounded once at the end (PyTorch's opmath)."""
    @functools.wraps(fn)
    def opmath(*xs):
        if xs[0].dtype in _HALF:
            return fn(*(x.astype(jnp.float32) for x in xs)).astype(xs[0].dtype)
        return fn(*xs)
    return opmath


def _logistic(x):
    return 1 / (1 + jnp.exp(-x))


@jax.custom_jvp
def sigmoid(x):
    return _in_opmath(_logistic)(x)


@sigmoid.defjvp
def _sigmoid_jvp(primals, tangents):
    # PyTorch's sigmoid_backward, (1 - y) * y from the result in its own dtype (exp(-x)'s derivative overflows
    # to inf / inf far below 0), in float32 for half types
    y = sigmoid(primals[0])
    return y, _in_opmath(lambda t, y: t * ((1 - y) * y))(tangents[0], y)


@jax.custom_jvp
def _silu(x):
    return x / (1 + jnp.exp(-x))


@_silu.defjvp
def _silu_jvp(primals, tangents):
    # PyTorch's silu_backward: s * (1 + x * (1 - s)) with s = 1 / (1 + exp(-x)), which keeps -0.0 far below 0
    (x,), (t,) = primals, tangents
    s = _logistic(x)
    return _silu(x), t * (s * (1 + x * (1 - s)))


silu = _in_opmath(_silu)


@jax.custom_jvp
def glu(a, b):
    return _in_opmath(lambda a, b: a * _logistic(b))(a, b)


@glu.defjvp
def _glu_jvp(primals, tangents):
    # PyTorch's glu_backward: sigmoid(b) stored in the input's dtype first; d/db = (1 - s) * s * a in float32
    # for half types
    (a, b), (ta, tb) = primals, tangents
    s = sigmoid(b)
    db = _in_opmath(lambda s, a, tb: (1 - s) * s * a * tb)(s, a, tb)
    return glu(a, b), ta * s + db
