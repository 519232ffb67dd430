"""Elementwise ops: arithmetic, comparison, bitwise, unary maths. Their op-table entries and the functions the
entries name, which make an op's family its function's module; the JAX functions behind them: _elementwise_math."""
import builtins
import math

import jax
import jax.numpy as jnp
import jax.scipy.special as jss

from ._cast import written_as
from ._elementwise_math import (
    _atan2, _clamp, _copysign, _digamma_op, _fmax, _floor_div, _frexp, _heaviside, _hypot, _i0, _integer_pow,
    _is_float, _ldexp, _ldexp_integer, _lgamma, _logaddexp, _logaddexp2, _logit, _max_split, _mvlgamma, _nextafter,
    _polygamma, _pow, _scalar_pow, _true_div, _trunc_div, _xlogy_op, rsqrt as _rsqrt, sigmoid as _sigmoid,
    xlogy_reverse)
from ._registry import CLAMP_COMPLEX, Op, defop, missing_kernel, named_formula, overload, FLOAT, COMPARE, KEEP
from ._stride_rules import same_strides

# PyTorch's node for an op whose backward it does not implement: reaching it in backward raises.
NOT_IMPLEMENTED = "torch::autograd::NotImplemented"


def _not_implemented(aten_name):
    """An op's no_derivative: PyTorch's error from backward through its NotImplemented node."""
    return lambda **_: (RuntimeError, f"derivative for aten::{aten_name} is not implemented")


@jax.custom_jvp
def abs_real(a):
    return jnp.abs(a)


@abs_real.defjvp
def _abs_real_jvp(primals, tangents):
    # PyTorch's derivative of |a| is sign(a), 0 at 0; JAX's takes 1 there
    (a,), (t,) = primals, tangents
    return jnp.abs(a), _sign(a) * t


def _pow_scalar(a, b, integer):
    """A floating tensor to a Python scalar power (`integer`: the exponent when it is an integer, a static).
    PyTorch's pow_backward branches on the exponent's value, zeros for 0, and integer_pow's rule does the
    same: which derivative of x ** 2 no longer depends on x is known when the backward is recorded."""
    if integer is not None:
        return _integer_pow(a, integer)
    return _scalar_pow(a, b)


def _remainder(a, b):
    # PyTorch's formula (fmod, then shifted into b's sign), which jnp.remainder shares. The textbook
    # a - floor(a / b) * b is not only rounded differently: XLA folds its `* b` into a select when b
    # comes from a bool, and x % False then gives x instead of NaN.
    return jnp.remainder(a, b)


def _sign(a):
    # PyTorch's sign of NaN is 0
    if _is_float(a):
        return jnp.where(jnp.isnan(a), jnp.zeros((), a.dtype), jnp.sign(a))
    return jnp.sign(a) if a.dtype != jnp.bool_ else a


def _sgn(a):
    # z / |z| for complex (0 at 0), sign for real.
    if not jnp.iscomplexobj(a):
        return _sign(a)
    r = jnp.abs(a)
    return jnp.where(r == 0, jnp.zeros((), a.dtype), a / jnp.where(r == 0, 1, r).astype(a.dtype))


def _angle(a):
    if jnp.iscomplexobj(a):
        return jnp.angle(a)
    pi = jnp.asarray(jnp.pi, a.dtype)
    # NaN stays NaN, with no gradient (PyTorch's angle_backward is 0 for real inputs)
    return jnp.where(jnp.isnan(a), jax.lax.stop_gradient(a), jnp.where(a < 0, pi, jnp.zeros((), a.dtype)))


def _nan_to_num(a, nan, posinf, neginf):
    if not _is_float(a):
        return a
    info = jnp.finfo(a.dtype)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    a = jnp.where(jnp.isnan(a), jnp.asarray(nan, a.dtype), a)
    a = jnp.where(a == jnp.inf, jnp.asarray(posinf, a.dtype), a)
    return jnp.where(a == -jnp.inf, jnp.asarray(neginf, a.dtype), a)


@jax.custom_jvp
def _lerp(a, b, w):
    # PyTorch's formula, exact at w == 1.
    return jnp.where(jnp.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


@_lerp.defjvp
def _lerp_jvp(primals, tangents):
    # PyTorch's LerpBackward: grad * (1 - weight) to the start, grad * weight to the end, grad * (end - start)
    # to the weight (the formula's own derivative, 1 - w + ..., made inf - inf = NaN of an infinite gradient)
    (a, b, w), (ta, tb, tw) = primals, tangents
    return _lerp(a, b, w), ta * (1 - w) + tb * w + tw * (b - a)


def _isclose(a, b, rtol, atol, equal_nan):
    if a.dtype == jnp.bool_:   # (PyTorch measures the error of bools in the default dtype: float32 here, which
                               # gives the same answer for 0 and 1 against any tolerance but at its last bit)
        a, b = a.astype(jnp.float32), b.astype(jnp.float32)
    close = jnp.abs(a - b) <= atol + rtol * jnp.abs(b)
    close = (a == b) | (close & jnp.isfinite(a) & jnp.isfinite(b))
    if equal_nan:
        close = close | (jnp.isnan(a) & jnp.isnan(b))
    return close


# ---- binary arithmetic ------------------------------------------------------------
add = defop("add", lambda a, b: a + b, wraps_scalars=True)
# PyTorch's Tensor-Scalar overloads, which its C++ composites call (rms_norm's + eps, cross_entropy's
# division by the batch size): no wrapped scalar edge.
add_scalar = defop("add_scalar", lambda a, b: a + b, diff=(0,), node_name="AddBackward1")
sub_scalar = defop("sub_scalar", lambda a, b: a - b, diff=(0,), node_name="SubBackward1")
mul_scalar = defop("mul_scalar", lambda a, b: a * b, diff=(0,), node_name="MulBackward1")
div_scalar = defop("div_scalar", lambda a, b: a / b, dtype_rule=FLOAT, diff=(0,), node_name="DivBackward1")
add_scaled = defop("add_scaled", lambda a, b, alpha: a + alpha * b, diff=(0, 1), node="add", wraps_scalars=True)
sub = defop("sub", lambda a, b: a - b, wraps_scalars=True)
sub_scaled = defop("sub_scaled", lambda a, b, alpha: a - alpha * b, diff=(0, 1), node="sub", wraps_scalars=True)
add.hands_grad, add_scaled.hands_grad, sub.hands_grad = (0, 1), (0,), (0,)   # (the others are scaled)
# alpha, when given (rsub(x, y, alpha=2) is y - 2 * x), is a third argument: a packed scalar, not a static.
rsub = defop("rsub", lambda a, b, alpha=None: b - a if alpha is None else b - alpha * a, node_name="RsubBackward1",
             overloads=[overload("RsubBackward0", "tt")], diff=(0, 1))
mul = defop("mul", lambda a, b: a * b, wraps_scalars=True, scalar_opmath=True)
div = defop("div", lambda a, b: _true_div(a, b), dtype_rule=FLOAT, wraps_scalars=True, scalar_opmath=True)
# (self's gradient reads other, other's both: self is saved for other's alone)
div_trunc = defop("div_trunc", lambda a, b: _trunc_div(a, b), node_name="DivBackward2", wraps_scalars=True,
                  saves_inputs={0: 1, 1: None}, scalar_opmath=True)
div_floor = defop("div_floor", lambda a, b: _floor_div(a, b), node_name="DivBackward2", wraps_scalars=True,
                  saves_inputs={0: 1, 1: None}, scalar_opmath=True)
floor_divide = defop("floor_divide", lambda a, b: _floor_div(a, b), node_name=NOT_IMPLEMENTED,
                     no_derivative=_not_implemented("floor_divide"), scalar_opmath=True)
# x.floor_divide_(y) and x //= y: the same, but PyTorch's error names the in-place op
floor_divide_ = defop("floor_divide_", lambda a, b: _floor_div(a, b), node_name=NOT_IMPLEMENTED,
                      no_derivative=_not_implemented("floor_divide_"), scalar_opmath=True)
# (self's gradient is grad: only other's reads the inputs)
remainder = defop("remainder", _remainder, saves_inputs=(),
                  overloads=[overload("RemainderBackward1", "tt", saves_inputs={0: 1, 1: 1})])
# remainder(number, tensor): PyTorch has no derivative for this overload
remainder_scalar_self = defop("remainder_scalar_self", _remainder, node_name=NOT_IMPLEMENTED,
                              no_derivative=_not_implemented("remainder"))
fmod = defop("fmod", lambda a, b: jnp.fmod(a, b), overloads=[overload("FmodBackward1", "tt")])
for _op in (remainder, fmod):
    _op.recorded_saves = (0, 1)   # (`-grad * self.div(other, rounding_mode=...)`: its node saves both)
# PyTorch's exponent gradient reads the result (an in-place change of it makes backward fail); a tensor
# to a number (a complex one here: see pow_scalar) saves no result
pow = defop("pow", lambda a, b: _pow(a, b),
            overloads=[overload("PowBackward1", "tt", saves_output=True), overload("PowBackward2", "st", saves_output=True)])
pow_scalar = defop("pow_scalar", _pow_scalar, node_name="PowBackward0", saves_inputs=(0,))
# PyTorch's sub refuses a bool tensor with this text, also inside PowBackward1, whose input gradient computes
# `exponent - 1`: a tensor to a bool tensor's power records, and its backward raises for the input
BOOL_SUBTRACTION = ("Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a "
                    "mask, use the `~` or `logical_not()` operator instead.")
pow_bool_exponent = defop("pow_bool_exponent", lambda a, b: _pow(a, b), node_name="PowBackward1", saves_output=True,
                          saves_inputs=(0, 1), no_derivative_at={0: (RuntimeError, BOOL_SUBTRACTION)})
maximum = defop("maximum", lambda a, b: _max_split(a, b, jnp.greater))
minimum = defop("minimum", lambda a, b: _max_split(a, b, jnp.less))
fmax = defop("fmax", lambda a, b: _fmax(a, b, jnp.greater))
fmin = defop("fmin", lambda a, b: _fmax(a, b, jnp.less))
atan2 = defop("atan2", lambda a, b: _atan2(a, b) if _is_float(a) and _is_float(b) else jnp.arctan2(a, b),
              dtype_rule=FLOAT)
# Each input's gradient reads that input and the result: PyTorch saves an input only where its gradient is wanted
hypot = defop("hypot", lambda a, b: _hypot(a, b) if _is_float(a) and _is_float(b) else jnp.hypot(a, b),
              saves_output=True, saves_inputs={0: 0, 1: 1})
xlogy = defop("xlogy", lambda a, b: _xlogy_op(a, b), dtype_rule=FLOAT, reverse_fn=xlogy_reverse,
              overloads=[overload("XlogyBackward1", "st"), overload("XlogyBackward2", "ts")])
xlogy.recorded_saves = (1,)   # (`grad * xlogy(self != 0, other)`, `grad * self / other`: self is the grad's mul's)
copysign = defop("copysign", lambda a, b: _copysign(a, b), dtype_rule=FLOAT, saves_output=True, saves_inputs={0: 0},
                 overloads=[overload("CopysignBackward1", "ts")])
# (the weight is read by the other two gradients, so saved always; they are read by the weight's alone)
lerp = defop("lerp", _lerp, overloads=[overload("LerpBackward1", "..t", saves_inputs={0: 2, 1: 2, 2: None})],
             scalar_opmath=True)
# clamp(Tensor? min, Tensor? max) lists both bounds in next_functions, given or not; Scalar bounds neither.
clamp = defop("clamp", lambda a, lo, hi: _clamp(a, lo, hi), node_name="ClampBackward1",
              overloads=[overload("ClampBackward0", ".t", optional=(1, 2)),
                         overload("ClampBackward0", "..t", optional=(1, 2))])
clamp_min = defop("clamp_min", lambda a, lo: _clamp(a, lo, None), overloads=[overload("ClampMinBackward1", "tt")])
clamp_max = defop("clamp_max", lambda a, hi: _clamp(a, None, hi), overloads=[overload("ClampMaxBackward1", "tt")])
addcmul = defop("addcmul", lambda a, b, c, value: a + value * b * c, diff=(0, 1, 2), scalar_opmath=True)
# divisor_refused: PyTorch's error when tensor2 is an integer or bool tensor, which tensor1's derivative
# (value / tensor2, written into a tensor of tensor2's dtype) raises when it is needed
addcdiv = defop("addcdiv", lambda a, b, c, value, divisor_refused=None: a + value * _true_div(b, c), diff=(0, 1, 2),
                scalar_opmath=True, saves_inputs={1: 2, 2: None}, no_derivative=lambda divisor_refused=None: (
                    None if divisor_refused is None else {1: (RuntimeError, divisor_refused)}))
addcdiv.recorded_saves = (2,)   # (`grad * value / tensor2`: tensor1 is a product's with the grad)
where = defop("where", lambda c, a, b: jnp.where(c, a, b), diff=(1, 2), dtype_rule=KEEP)

# ---- log-sum-exp of two tensors, heaviside, gcd, lcm, ldexp, nextafter, frexp, polygamma, mvlgamma, i0 ------
logaddexp = defop("logaddexp", lambda a, b: _logaddexp(a, b))
logaddexp2 = defop("logaddexp2", lambda a, b: _logaddexp2(a, b))
logaddexp.recorded_saves = logaddexp2.recorded_saves = ()   # (`grad / (1 + exp(other - self))`)
# PyTorch records heaviside but has no derivative for it: backward through it raises
heaviside = defop("heaviside", lambda a, values: _heaviside(a, values), dtype_rule=KEEP,
                  node_name=NOT_IMPLEMENTED, no_derivative=_not_implemented("heaviside"))
gcd = defop("gcd", lambda a, b: jnp.gcd(a, b))
# PyTorch's |a / gcd * b|, 0 where both are 0
lcm = defop("lcm", lambda a, b: jnp.lcm(a, b))
# PyTorch's backward reads 2 ** other and the result (other's gradient grad * result * ln 2)
ldexp = defop("ldexp", lambda a, b, integer_exponent=False: (_ldexp_integer if integer_exponent else _ldexp)(a, b),
              dtype_rule=FLOAT, saves_output=True, saves_inputs={1: 0})
nextafter = defop("nextafter", lambda a, b: _nextafter(a, b), saves_inputs={0: 0, 1: 0})
frexp = defop("frexp", lambda a: _frexp(a), dtype_rule=KEEP, nout=2, saves_output=(1,), saves_inputs=())
polygamma = defop("polygamma", lambda a, n: _polygamma(a, n), dtype_rule=FLOAT)
# x.polygamma_(n): the same, under PyTorch's node of the in-place overload
polygamma_ = defop("polygamma_", lambda a, n: _polygamma(a, n), dtype_rule=FLOAT, node_name="PolygammaBackward1")
mvlgamma = defop("mvlgamma", lambda a, p: _mvlgamma(a, p), dtype_rule=FLOAT)
i0 = defop("i0", lambda a: _i0(a), dtype_rule=FLOAT)

# ---- comparison and logic (never differentiable) ----------------------------------
def _comparison(name, compare):
    # dtype: set when the result is written into a tensor in place (x.eq_(y)), whose dtype it keeps; PyTorch
    # records a node for that (EqBackward0 for a scalar, EqBackward1 for a tensor), with a zero gradient.
    def fn(a, b, dtype=None):
        result = compare(a, b)
        return result if dtype is None else result.astype(dtype)
    return defop(name, fn, dtype_rule=COMPARE, overloads=[overload(name.title() + "Backward1", "tt")])


eq = _comparison("eq", lambda a, b: a == b)
ne = _comparison("ne", lambda a, b: a != b)
lt = _comparison("lt", lambda a, b: a < b)
le = _comparison("le", lambda a, b: a <= b)
gt = _comparison("gt", lambda a, b: a > b)
ge = _comparison("ge", lambda a, b: a >= b)
isclose = defop("isclose", _isclose, dtype_rule=COMPARE)
isnan = defop("isnan", lambda a: jnp.isnan(a), dtype_rule=KEEP)
isinf = defop("isinf", lambda a: jnp.isinf(a), dtype_rule=KEEP)
isfinite = defop("isfinite", lambda a: jnp.isfinite(a), dtype_rule=KEEP)
isposinf = defop("isposinf", lambda a: jnp.isposinf(a), dtype_rule=KEEP)
isneginf = defop("isneginf", lambda a: jnp.isneginf(a), dtype_rule=KEEP)
signbit = defop("signbit", lambda a: jnp.signbit(a), dtype_rule=KEEP)
# the constant in the result's dtype, as PyTorch multiplies by it
deg2rad = defop("deg2rad", lambda a: a * jnp.asarray(jnp.pi / 180, a.dtype), dtype_rule=FLOAT)
rad2deg = defop("rad2deg", lambda a: a * jnp.asarray(180 / jnp.pi, a.dtype), dtype_rule=FLOAT)
logical_and = defop("logical_and", lambda a, b: jnp.logical_and(a, b), dtype_rule=KEEP)
logical_or = defop("logical_or", lambda a, b: jnp.logical_or(a, b), dtype_rule=KEEP)
logical_xor = defop("logical_xor", lambda a, b: jnp.logical_xor(a, b), dtype_rule=KEEP)
logical_not = defop("logical_not", lambda a: jnp.logical_not(a), dtype_rule=KEEP)
bitwise_and = defop("bitwise_and", lambda a, b: a & b)
bitwise_or = defop("bitwise_or", lambda a, b: a | b)
bitwise_xor = defop("bitwise_xor", lambda a, b: a ^ b)
bitwise_not = defop("bitwise_not", lambda a: ~a, dtype_rule=KEEP)
bitwise_left_shift = defop("bitwise_left_shift", lambda a, b: jnp.left_shift(a, b))
bitwise_right_shift = defop("bitwise_right_shift", lambda a, b: jnp.right_shift(a, b))

# ---- unary: sign, rounding ------------------------------------------------------------
neg = defop("neg", lambda a: -a, dtype_rule=KEEP)
abs = defop("abs", lambda a: abs_real(a) if jnp.issubdtype(a.dtype, jnp.floating) else jnp.abs(a),
            dtype_rule=KEEP)
abs.recorded_saves = (0,)   # (`grad * self.sgn()`: sgn's node saves self)
sign = defop("sign", _sign, dtype_rule=KEEP)
sgn = defop("sgn", _sgn, dtype_rule=KEEP, saves_inputs=(0,), saves_output=True)
floor = defop("floor", lambda a: jnp.floor(a) if _is_float(a) else a, dtype_rule=KEEP)
ceil = defop("ceil", lambda a: jnp.ceil(a) if _is_float(a) else a, dtype_rule=KEEP)
round = defop("round", lambda a, decimals=None: jnp.round(a, decimals or 0) if _is_float(a) else a, dtype_rule=KEEP,
              overloads=[overload("RoundBackward1", decimals=int)])
trunc = defop("trunc", lambda a: jnp.trunc(a) if _is_float(a) else a, dtype_rule=KEEP)
frac = defop("frac", lambda a: a - jnp.trunc(a), dtype_rule=KEEP)
frac.hands_grad = (0,)   # (PyTorch's FracBackward0 is `self: grad`)
# PyTorch's square is pow(x, 2), differentiated as such (see _pow_scalar)
square = defop("square", lambda a: _integer_pow(a, 2) if _is_float(a) else a * a, dtype_rule=KEEP,
               node="pow")
nan_to_num = defop("nan_to_num", _nan_to_num, dtype_rule=KEEP)

# ---- unary: exponentials and logarithms ------------------------------------------------
exp = defop("exp", lambda a: jnp.exp(a), dtype_rule=FLOAT, saves_inputs=(),
            result_backward=lambda g, y, a: g * jnp.conj(y))
exp2 = defop("exp2", lambda a: jnp.exp2(a), dtype_rule=FLOAT, saves_inputs=(),
             result_backward=named_formula("MulBackward1", lambda g, y, a: g * jnp.conj(y) * math.log(2)))
expm1 = defop("expm1", lambda a: jnp.expm1(a), dtype_rule=FLOAT, saves_inputs=(),
              result_backward=lambda g, y, a: g * (jnp.conj(y) + 1))
log = defop("log", lambda a: jnp.log(a), dtype_rule=FLOAT)
log2 = defop("log2", lambda a: jnp.log2(a), dtype_rule=FLOAT)
log10 = defop("log10", lambda a: jnp.log10(a), dtype_rule=FLOAT)
log1p = defop("log1p", lambda a: jnp.log1p(a), dtype_rule=FLOAT)
for _op in (log2, log10, log1p):
    _op.recorded_saves = ()   # (`grad / (self * ln 2)`, `grad / (self + 1)`: self reaches no saving op)
sqrt = defop("sqrt", lambda a: jnp.sqrt(a), dtype_rule=FLOAT, saves_inputs=(),
             result_backward=lambda g, y, a: g / (2 * jnp.conj(y)))
rsqrt = defop("rsqrt", lambda a: _rsqrt(a), dtype_rule=FLOAT, saves_inputs=(),
              result_backward=lambda g, y, a: -0.5 * g * jnp.conj(y ** 3))
reciprocal = defop("reciprocal", lambda a: 1 / a, dtype_rule=FLOAT, saves_inputs=(),
                   result_backward=lambda g, y, a: -g * jnp.conj(y * y))

# ---- unary: trigonometric and hyperbolic ---------------------------------------------------
sin = defop("sin", lambda a: jnp.sin(a), dtype_rule=FLOAT)
cos = defop("cos", lambda a: jnp.cos(a), dtype_rule=FLOAT)
tan = defop("tan", lambda a: jnp.tan(a), dtype_rule=FLOAT, saves_inputs=(),
            result_backward=lambda g, y, a: g * jnp.conj(1 + y ** 2))
asin = defop("asin", lambda a: jnp.arcsin(a), dtype_rule=FLOAT)
acos = defop("acos", lambda a: jnp.arccos(a), dtype_rule=FLOAT)
atan = defop("atan", lambda a: jnp.arctan(a), dtype_rule=FLOAT)
sinh = defop("sinh", lambda a: jnp.sinh(a), dtype_rule=FLOAT)
cosh = defop("cosh", lambda a: jnp.cosh(a), dtype_rule=FLOAT)
tanh = defop("tanh", lambda a: jnp.tanh(a), dtype_rule=FLOAT, saves_inputs=(),
             result_backward=named_formula("TanhBackwardBackward0", lambda g, y, a: g * jnp.conj(1 - y * y)))
asinh = defop("asinh", lambda a: jnp.arcsinh(a), dtype_rule=FLOAT)
acosh = defop("acosh", lambda a: jnp.arccosh(a), dtype_rule=FLOAT)
atanh = defop("atanh", lambda a: jnp.arctanh(a), dtype_rule=FLOAT)

# ---- unary: special functions and activations ----------------------------------------------
sigmoid = defop("sigmoid", lambda a: _sigmoid(a), dtype_rule=FLOAT, saves_inputs=(),
                result_backward=named_formula("SigmoidBackwardBackward0", lambda g, y, a: g * jnp.conj((1 - y) * y)))
logit = defop("logit", lambda a, eps=None: _logit(a, eps), dtype_rule=FLOAT)
erf = defop("erf", lambda a: jss.erf(a), dtype_rule=FLOAT)
erfc = defop("erfc", lambda a: jss.erfc(a), dtype_rule=FLOAT)
@jax.custom_jvp
def _sinc(a):
    return jnp.sinc(a)


@_sinc.defjvp
def _sinc_jvp(primals, tangents):
    # jnp.sinc's derivative is 0 at 0, as PyTorch's; PyTorch's sinc_backward selects 0 there (where(x == 0, 0,
    # grad * ...)), so a NaN gradient does not reach a zero input
    out, t = jax.jvp(jnp.sinc, primals, tangents)
    return out, jnp.where(primals[0] == 0, jnp.zeros((), t.dtype), t)


sinc = defop("sinc", lambda a: _sinc(a), dtype_rule=FLOAT)
erfinv = defop("erfinv", lambda a: jss.erfinv(a), dtype_rule=FLOAT)
lgamma = defop("lgamma", lambda a: _lgamma(a), dtype_rule=FLOAT)
digamma = defop("digamma", lambda a: _digamma_op(a), dtype_rule=FLOAT)
# where(a <= 0): NaN stays NaN and keeps its gradient, as PyTorch's threshold_backward
# (-0.0 stays -0.0, as PyTorch's max(a, 0); the gradient is 0 at either zero, as its threshold_backward)
relu = defop("relu", lambda a: jnp.where(a < 0, jnp.zeros((), a.dtype), jnp.where(a == 0, jax.lax.stop_gradient(a), a)),
             dtype_rule=KEEP,
             saves_inputs=(), fused_backward=True,
             result_backward=named_formula("ThresholdBackwardBackward0",
                                           lambda g, y, a: jnp.where(y <= 0, jnp.zeros((), g.dtype), g)))

# ---- complex parts (real, imag and the real views are views: _ops/bitcast.py) ------------------
angle = defop("angle", _angle, dtype_rule=FLOAT, saves_inputs=(0,))
conj_physical = defop("conj_physical", lambda a: jnp.conj(a), dtype_rule=KEEP)
# PyTorch's conj is a lazy view (its conjugate bit): the input's elements conjugated, read through the recipe; a
# write through it stores the conjugates of what is written, at the input's own positions (Op.value_view), and
# its strides are the input's. is_conj() counts these steps in a recipe (_functional._complex).
conj = defop("conj", lambda a: jnp.conj(a), dtype_rule=KEEP, view=True,
             value_view=(lambda x, new: jnp.conj(new).astype(x.dtype), lambda p: p), stride_rule=same_strides)
# PyTorch's backward hands the gradient on as its conjugate view (grad.conj())
conj.hands_grad = lambda static, shape, out_shape: [("conj",)]
# PyTorch's negative bit, likewise a lazy view: the imaginary part of a conjugate view reads the stored one
# through it (_functional._complex.imag)
neg_view = defop("neg_view", lambda a: jnp.negative(a), dtype_rule=KEEP, view=True,
                 value_view=(lambda x, new: jnp.negative(new).astype(x.dtype), lambda p: p), stride_rule=same_strides)
complex = defop("complex", lambda re, im: jax.lax.complex(*jnp.broadcast_arrays(re, im)), dtype_rule=KEEP,
                saves_inputs={0: 0, 1: 1})
# (both gradients read the result alone)
polar = defop("polar", lambda r, t: jax.lax.complex(r * jnp.cos(t), r * jnp.sin(t)), dtype_rule=KEEP,
              saves_output=True, saves_inputs=())

# ---- copies, casts, fills ---------------------------------------------------------------------
# (complex to real: the real part, as PyTorch's copy)
to_dtype = defop("to_dtype", lambda a, dtype: written_as(a, dtype), dtype_rule=KEEP, node="to_copy")
# a copy primitive, not `a + 0`, which turned -0.0 into 0.0 (PyTorch's clone keeps every bit)
clone = defop("clone", lambda a: jnp.copy(a), dtype_rule=KEEP)
clone.elements_from = (0,)
clone.hands_grad = (0,)
# The result does not depend on `a`'s values: its gradient to `a` is zero (the old history is cut).
# wrapped: a Python number that PyTorch turned into a 0-d tensor first (setitem's), so fill_.Tensor's node
fill = defop("fill", lambda a, v, wrapped=False: jnp.full(a.shape, written_as(v, a.dtype)), dtype_rule=KEEP,
             overloads=[overload("FillBackward1", ".t"), overload("FillBackward1", ".s", optional=(1,), wrapped=True)])
copy = defop("copy", lambda a, src: jnp.broadcast_to(written_as(src, a.dtype), a.shape), dtype_rule=KEEP,
             node_name="torch::autograd::CopyBackwards", wraps_scalars=True)

# PyTorch computes all of the above with TensorIterator, but for the copies into an existing tensor (copy_,
# fill_), clone (empty_like's rule: _pointwise_layout.lay_out_like) and conj, neg_view (views: their input's layout)
for _op in [v for v in list(globals().values()) if isinstance(v, Op)]:
    _op.pointwise = _op not in (copy, fill, clone, conj, neg_view)
# pow of a Python scalar base: PyTorch's pow.Scalar allocates its result contiguous
pow.pointwise = lambda args: not isinstance(args[0], (int, float, builtins.bool, builtins.complex))

# PyTorch's CPU kernels without a complex version (Op.no_kernel_for); ordering ops and rounding have none
for _op, _kernel in ((lt, "lt_cpu"), (le, "le_cpu"), (gt, "gt_cpu"), (ge, "ge_cpu"), (atan2, "atan2_cpu"),
                     (hypot, "hypot_cpu"), (xlogy, "xlogy_cpu"), (copysign, "copysign_cpu"),
                     (nextafter, "nextafter_cpu"), (logaddexp2, "logaddexp2_cpu"), (i0, "i0_vml_cpu"),
                     (div_trunc, "div_trunc_cpu"), (div_floor, "div_floor_cpu"), (floor_divide, "div_floor_cpu"),
                     (floor_divide_, "div_floor_cpu"), (erf, "erf_vml_cpu"), (erfc, "erfc_vml_cpu"),
                     (erfinv, "erfinv_vml_cpu"), (lgamma, "lgamma_vml_cpu"), (digamma, "digamma"),
                     (mvlgamma, "arange_cpu"), (frac, "frac_cpu"), (logit, "logit_cpu"), (gcd, "gcd_cpu"),
                     (lcm, "lcm_cpu"), (remainder, "remainder_cpu"), (remainder_scalar_self, "remainder_cpu"),
                     (fmod, "fmod_cpu")):
    _op.no_kernel_for = {"complex": missing_kernel(_kernel)}
# (a shift computed in bool: bool << bool; a bool shifted by a number is promoted)
bitwise_left_shift.no_kernel_for = {"bool": missing_kernel("lshift_cpu")}
bitwise_right_shift.no_kernel_for = {"bool": missing_kernel("rshift_cpu")}
for _op in (clamp, relu):
    _op.no_kernel_for = {"complex": CLAMP_COMPLEX}
# (a tensor bound is PyTorch's maximum or minimum kernel's; the in-place polygamma_ too picks its kernel by n)
clamp_min.no_kernel_for = {"complex": lambda static, kinds: missing_kernel("maximum_cpu") if type(kinds[1]) is tuple
                           else CLAMP_COMPLEX}
clamp_max.no_kernel_for = {"complex": lambda static, kinds: missing_kernel("minimum_cpu") if type(kinds[1]) is tuple
                           else CLAMP_COMPLEX}
polygamma.no_kernel_for = polygamma_.no_kernel_for = {"complex": lambda static, kinds: missing_kernel(
    ("digamma", "trigamma")[static["n"]] if static["n"] < 2 else "polygamma")}
round.no_kernel_for = {"complex": lambda static, kinds: missing_kernel(
    "round_cpu" if static.get("decimals") else "round_vml_cpu")}
for _op in (floor, ceil, trunc):
    _op.no_kernel_for = {"complex": f"{_op.name} is not supported for complex inputs"}
sign.no_kernel_for = {"complex": "Unlike NumPy, torch.sign is not intended to support complex numbers. Please use "
                                 "torch.sgn instead"}
