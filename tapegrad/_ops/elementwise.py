"""Elementwise ops: arithmetic, comparison, unary maths, activations."""
import jax
import jax.numpy as jnp

from ._registry import defop, SAME, FLOAT, COMPARE, KEEP

# ---- binary arithmetic ------------------------------------------------------------
add = defop("add", lambda a, b: a + b)
add_scaled = defop("add_scaled", lambda a, b, alpha: a + alpha * b, diff=(0, 1), node="add")
sub = defop("sub", lambda a, b: a - b)
sub_scaled = defop("sub_scaled", lambda a, b, alpha: a - alpha * b, diff=(0, 1), node="sub")
rsub = defop("rsub", lambda a, b: b - a)
mul = defop("mul", lambda a, b: a * b)
div = defop("div", lambda a, b: a / b, dtype_rule=FLOAT)
div_trunc = defop("div_trunc", lambda a, b: _trunc_div(a, b), node="div")
div_floor = defop("div_floor", lambda a, b: _floor_div(a, b), node="div")
floor_divide = defop("floor_divide", lambda a, b: _floor_div(a, b))
remainder = defop("remainder", lambda a, b: a - _floor_div(a, b) * b if _is_float(a) else jnp.remainder(a, b))
fmod = defop("fmod", lambda a, b: jnp.fmod(a, b))
pow = defop("pow", lambda a, b: _pow(a, b))
maximum = defop("maximum", lambda a, b: jnp.where((a >= b) | jnp.isnan(a), a, b))
minimum = defop("minimum", lambda a, b: jnp.where((a <= b) | jnp.isnan(a), a, b))
atan2 = defop("atan2", lambda a, b: jnp.arctan2(a, b), dtype_rule=FLOAT)

# ---- comparison (never differentiable) -------------------------------------------
eq = defop("eq", lambda a, b: a == b, dtype_rule=COMPARE)
ne = defop("ne", lambda a, b: a != b, dtype_rule=COMPARE)
lt = defop("lt", lambda a, b: a < b, dtype_rule=COMPARE)
le = defop("le", lambda a, b: a <= b, dtype_rule=COMPARE)
gt = defop("gt", lambda a, b: a > b, dtype_rule=COMPARE)
ge = defop("ge", lambda a, b: a >= b, dtype_rule=COMPARE)
logical_and = defop("logical_and", lambda a, b: jnp.logical_and(a, b), dtype_rule=KEEP)
logical_or = defop("logical_or", lambda a, b: jnp.logical_or(a, b), dtype_rule=KEEP)
logical_xor = defop("logical_xor", lambda a, b: jnp.logical_xor(a, b), dtype_rule=KEEP)
logical_not = defop("logical_not", lambda a: jnp.logical_not(a), dtype_rule=KEEP)
bitwise_and = defop("bitwise_and", lambda a, b: a & b)
bitwise_or = defop("bitwise_or", lambda a, b: a | b)
bitwise_xor = defop("bitwise_xor", lambda a, b: a ^ b)
bitwise_not = defop("bitwise_not", lambda a: ~a, dtype_rule=KEEP)

# ---- unary --------------------------------------------------------------------------
neg = defop("neg", lambda a: -a, dtype_rule=KEEP)
abs = defop("abs", lambda a: jnp.abs(a), dtype_rule=KEEP)
sign = defop("sign", lambda a: jnp.sign(a), dtype_rule=KEEP)
exp = defop("exp", lambda a: jnp.exp(a), dtype_rule=FLOAT, saves_output=True)
log = defop("log", lambda a: jnp.log(a), dtype_rule=FLOAT)
sqrt = defop("sqrt", lambda a: jnp.sqrt(a), dtype_rule=FLOAT, saves_output=True)
rsqrt = defop("rsqrt", lambda a: jax.lax.rsqrt(a), dtype_rule=FLOAT, saves_output=True)
sin = defop("sin", lambda a: jnp.sin(a), dtype_rule=FLOAT)
cos = defop("cos", lambda a: jnp.cos(a), dtype_rule=FLOAT)
tan = defop("tan", lambda a: jnp.tan(a), dtype_rule=FLOAT, saves_output=True)
tanh = defop("tanh", lambda a: jnp.tanh(a), dtype_rule=FLOAT, saves_output=True)
sigmoid = defop("sigmoid", lambda a: jax.nn.sigmoid(a), dtype_rule=FLOAT, saves_output=True)
relu = defop("relu", lambda a: jnp.where(a > 0, a, jnp.zeros((), a.dtype)), dtype_rule=KEEP,
             saves_output=True)
reciprocal = defop("reciprocal", lambda a: 1 / a, dtype_rule=FLOAT, saves_output=True)
square = defop("square", lambda a: a * a, dtype_rule=KEEP, node="pow")
floor = defop("floor", lambda a: jnp.floor(a) if _is_float(a) else a, dtype_rule=KEEP)
ceil = defop("ceil", lambda a: jnp.ceil(a) if _is_float(a) else a, dtype_rule=KEEP)
round = defop("round", lambda a, decimals=0: jnp.round(a, decimals) if _is_float(a) else a, dtype_rule=KEEP)
trunc = defop("trunc", lambda a: jnp.trunc(a) if _is_float(a) else a, dtype_rule=KEEP)


def _clamp(a, lo, hi):
    # PyTorch passes the gradient through where lo <= a <= hi (inclusive), unlike jnp.clip's ties.
    if lo is not None:
        a = jnp.where(a < lo, jnp.asarray(lo, a.dtype), a)
    if hi is not None:
        a = jnp.where(a > hi, jnp.asarray(hi, a.dtype), a)
    return a


clamp = defop("clamp", lambda a, lo, hi: _clamp(a, lo, hi), diff=(0,))
clamp_min = defop("clamp_min", lambda a, lo: _clamp(a, lo, None), diff=(0,))
clamp_max = defop("clamp_max", lambda a, hi: _clamp(a, None, hi), diff=(0,))
where = defop("where", lambda c, a, b: jnp.where(c, a, b), diff=(1, 2), dtype_rule=KEEP)
to_dtype = defop("to_dtype", lambda a, dtype: a.astype(dtype), dtype_rule=KEEP, node="to_copy")
clone = defop("clone", lambda a: a + jnp.zeros((), a.dtype) if a.dtype != jnp.bool_ else a | False,
              dtype_rule=KEEP)
fill = defop("fill", lambda a, v: jnp.full(a.shape, v, a.dtype), diff=(1,), dtype_rule=KEEP)
copy = defop("copy", lambda a, src: jnp.broadcast_to(src.astype(a.dtype), a.shape), diff=(1,),
             dtype_rule=KEEP, node_name="CopyBackwards")


def _is_float(a):
    return jnp.issubdtype(a.dtype, jnp.inexact)


def _pow(a, b):
    if isinstance(b, int) and not isinstance(b, bool):
        return jax.lax.integer_pow(a, b) if b >= 0 or _is_float(a) else jnp.power(a, b)
    return jnp.power(a, b)


def _trunc_div(a, b):
    return jnp.trunc(a / b) if _is_float(a) else jnp.sign(a) * jnp.sign(b) * (jnp.abs(a) // jnp.abs(b))


def _floor_div(a, b):
    return jnp.floor(a / b) if _is_float(a) else jnp.floor_divide(a, b)
