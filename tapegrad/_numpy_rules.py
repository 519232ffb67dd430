"""NumPy rules for lax primitives, with lax's semantics: the table `_numpy_eval` evaluates jaxprs with.

Each rule takes a primitive's parameters and returns a function of NumPy arrays. The rules follow lax's
semantics, not NumPy's where they differ (round-half-away, clamped dynamic slice starts, select_n's case
order, dot_general's dimension numbers). A primitive (or a parameter) without an exact rule raises
_Unsupported, and the kernel is compiled instead. The cost constants estimate what a run takes, which
`_numpy_rent` weighs against a compile's price.
"""
import math

import numpy as np

from . import (_numpy_conv, _numpy_erf, _numpy_fft, _numpy_gamma, _numpy_gather, _numpy_lapack, _numpy_linalg,
               _numpy_order, _numpy_random, _numpy_reduce, _numpy_window)

_RULES = {}
_HALF = frozenset([np.dtype(np.float16)] + ([np.dtype("bfloat16")] if hasattr(np, "bfloat16") else []))


def _rule(*names):
    def register(make):
        for n in names:
            _RULES[n] = make
        return make
    return register


def _unary(fn):
    return lambda params: fn


_WIDER = {np.dtype(np.float32): np.float64, np.dtype(np.complex64): np.complex128}


def _in_double(fn):
    """fn on float32/complex64 inputs computed in double precision (and rounded back by the caller):
    NumPy's single-precision exp, tanh, ... are vectorised approximations a few ulp off, where PyTorch
    and XLA give (nearly always) the correctly rounded value."""
    def run(*xs):
        return fn(*[x.astype(_WIDER[x.dtype]) if x.dtype in _WIDER else x for x in map(np.asarray, xs)])
    return run


for _name, _fn in {
        "exp": np.exp, "log": np.log, "log1p": np.log1p, "expm1": np.expm1, "tanh": np.tanh, "sin": np.sin,
        "cos": np.cos, "tan": np.tan, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
        "sinh": np.sinh, "cosh": np.cosh, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
        "cbrt": np.cbrt, "exp2": np.exp2, "pow": np.power, "atan2": np.arctan2,
}.items():
    _RULES[_name] = _unary(_in_double(_fn))

for _name, _fn in {
        "neg": np.negative, "sqrt": np.sqrt, "abs": np.abs, "sign": np.sign,
        "floor": np.floor, "ceil": np.ceil, "is_finite": np.isfinite, "not": np.invert,
        "real": np.real, "imag": np.imag, "conj": np.conj, "square": np.square,
        "add": np.add, "add_any": np.add, "sub": np.subtract, "mul": np.multiply, "max": np.maximum,
        "min": np.minimum, "nextafter": np.nextafter,
        "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
        "ge": np.greater_equal, "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
        "stop_gradient": lambda x: x, "copy": lambda x: x, "copy_p": lambda x: x,
        "optimization_barrier": lambda *xs: xs,
}.items():
    _RULES[_name] = _unary(_fn)


@_rule("div")
def _div(params):
    def div(x, y):
        x = np.asarray(x)
        if x.dtype.kind == "b":
            raise _Unsupported
        if x.dtype.kind in "iu":   # lax: rounds toward zero, and x / 0 is all ones (-1 signed), as XLA's
            y = np.asarray(y)
            zero = y == 0
            safe = np.where(zero, np.ones((), y.dtype), y)
            with np.errstate(all="ignore"):   # (INT_MIN / -1 wraps to INT_MIN, as XLA's)
                q = np.floor_divide(x, safe)
                if x.dtype.kind == "i":
                    q = q + ((x - q * safe != 0) & ((x < 0) != (safe < 0))).astype(q.dtype)
            return np.where(zero, np.array(-1).astype(q.dtype), q)
        return np.true_divide(x, y)
    return div


@_rule("rem")
def _rem(params):
    def rem(x, y):
        kind = np.asarray(x).dtype.kind
        if kind == "u":   # lax: x rem 0 is x (random integer draws reduce unsigned bits this way)
            y = np.asarray(y)
            return np.where(y == 0, x, np.remainder(x, np.where(y == 0, 1, y)))
        if kind == "i":   # C's truncated remainder (the dividend's sign), and x rem 0 is x, as lax's
            y = np.asarray(y)
            with np.errstate(all="ignore"):
                return np.where(y == 0, x, np.fmod(x, np.where(y == 0, 1, y)))
        if kind == "b":
            raise _Unsupported
        return np.fmod(x, y)   # C's fmod: the sign of the dividend, as lax.rem
    return rem


def _shift(fn, fill_sign):
    def make(params):
        def shift(x, y):
            x, y = np.asarray(x), np.asarray(y)
            bits = x.dtype.itemsize * 8
            too_far = (y < 0) | (y >= bits)   # lax defines these; C (and NumPy) do not
            safe = np.where(too_far, 0, y).astype(x.dtype)
            fill = np.where(x < 0, -1, 0).astype(x.dtype) if fill_sign else np.zeros((), x.dtype)
            return np.where(too_far, fill, fn(x, safe))
        return shift
    return make


def _logical_right(x, y):
    unsigned = np.dtype(f"u{x.dtype.itemsize}")
    return np.right_shift(x.view(unsigned) if x.ndim else x.astype(unsigned), y.astype(unsigned)).astype(x.dtype)


_RULES["shift_left"] = _shift(np.left_shift, False)
_RULES["shift_right_arithmetic"] = _shift(np.right_shift, True)
_RULES["shift_right_logical"] = _shift(_logical_right, False)


@_rule("bitcast_convert_type")
def _bitcast(params):
    dtype = np.dtype(params["new_dtype"])

    def bitcast(x):
        x = np.asarray(x)
        if not x.flags.c_contiguous:   # (not np.ascontiguousarray: it makes a 0-d array 1-d)
            x = x.copy(order="C")
        if x.dtype.itemsize != dtype.itemsize:
            raise _Unsupported
        return x.view(dtype)
    return bitcast


# Giles' single-precision erfinv ("Approximating the erfinv function", 2010), as XLA evaluates it for
# float32 (normal draws: x = sqrt(2) * erfinv(uniform)); evaluated in double here, so within an ulp or two of
# XLA's float32 arithmetic. Float64 uses another approximation in XLA: left to it.
_ERFINV_CENTRAL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
                   -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
_ERFINV_TAIL = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)


@_rule("erf_inv")
def _erf_inv(params):
    def erf_inv(x):
        x = np.asarray(x)
        if x.dtype != np.float32:
            raise _Unsupported
        d = x.astype(np.float64)
        w = -np.log1p(-d * d)
        central = w < 5.0
        w = np.where(central, w - 2.5, np.sqrt(np.maximum(w, 0.0)) - 3.0)
        p = np.where(central, _ERFINV_CENTRAL[0], _ERFINV_TAIL[0])
        for a, b in zip(_ERFINV_CENTRAL[1:], _ERFINV_TAIL[1:]):
            p = np.where(central, a, b) + p * w
        return np.where(np.abs(d) == 1.0, d * np.inf, p * d)
    return erf_inv


# erf/erfc (exact GELU): fdlibm's formulas over the array (see _numpy_erf), in double
ERF_NAMES = frozenset(("erf", "erfc"))
_RULES["erf"], _RULES["erfc"] = _unary(_numpy_erf.erf), _unary(_numpy_erf.erfc)


@_rule("rsqrt")
def _rsqrt(params):
    return _in_double(lambda x: 1 / np.sqrt(x))


@_rule("logistic")
def _logistic(params):
    return _in_double(lambda x: 1 / (1 + np.exp(-x)))


@_rule("integer_pow")
def _integer_pow(params):
    y = params["y"]
    return lambda x: np.power(x, y) if y >= 0 else 1 / np.power(x, -y)


@_rule("round")
def _round(params):
    method = int(params.get("rounding_method", 0))
    if method == 1:   # to nearest even
        return np.round

    def half_away_from_zero(x):
        whole = np.trunc(x)   # x - whole is exact, where x + 0.5 may round (large float32s)
        return np.where(np.abs(x - whole) >= 0.5, whole + np.sign(x), whole)
    return half_away_from_zero


@_rule("convert_element_type")
def _convert(params):
    dtype = np.dtype(params["new_dtype"])
    if dtype.kind != "c":   # complex to real keeps the real part, as lax does (NumPy would warn)
        return lambda x: np.real(np.asarray(x)).astype(dtype)
    return lambda x: np.asarray(x).astype(dtype)


@_rule("clamp")
def _clamp(params):
    return lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi)


@_rule("select_n")
def _select_n(params):
    def select(which, *cases):
        if len(cases) == 2 and np.asarray(which).dtype == np.bool_:
            return np.where(which, cases[1], cases[0])
        return np.choose(np.asarray(which).astype(np.intp), np.broadcast_arrays(*cases))
    return select


@_rule("broadcast_in_dim")
def _broadcast_in_dim(params):
    shape, dims = tuple(params["shape"]), tuple(params["broadcast_dimensions"])

    size = math.prod(shape)

    def broadcast(x):
        x = np.asarray(x)
        if x.shape == shape:
            return x
        kept = [1] * len(shape)
        for d, s in zip(dims, x.shape):
            kept[d] = s
        if size <= _COPY_BROADCAST_UP_TO:   # a small copy costs less than np.broadcast_to's Python
            out = np.empty(shape, x.dtype)
            out[...] = x.reshape(kept)
            return out
        return np.broadcast_to(x.reshape(kept), shape)
    return broadcast


_COPY_BROADCAST_UP_TO = 16384


@_rule("reshape")
def _reshape(params):
    shape, order = tuple(params["new_sizes"]), params.get("dimensions")
    if order is not None:   # lax: the dimensions transposed first, then read in row-major order
        order = tuple(order)
        return lambda x: np.reshape(np.transpose(x, order), shape)
    return lambda x: np.reshape(x, shape)


@_rule("squeeze")
def _squeeze(params):
    dims = tuple(params["dimensions"])
    return lambda x: np.squeeze(x, dims)


@_rule("expand_dims")
def _expand_dims(params):
    dims = tuple(params["dimensions"])
    return lambda x: np.expand_dims(x, dims)


@_rule("transpose")
def _transpose(params):
    perm = tuple(params["permutation"])
    return lambda x: np.transpose(x, perm)


@_rule("rev")
def _rev(params):
    dims = tuple(params["dimensions"])
    return lambda x: np.flip(x, dims)


@_rule("dot_general")
def _dot_general(params):
    (lc, rc), (lb, rb) = params["dimension_numbers"]
    lc, rc, lb, rb = tuple(lc), tuple(rc), tuple(lb), tuple(rb)
    out = params.get("preferred_element_type")
    out = None if out is None else np.dtype(out)

    def dot(x, y):
        x, y = np.asarray(x), np.asarray(y)
        if not lb and x.ndim == 2 and y.ndim == 2 and lc == (1,):   # x @ y or x @ y.T: a matmul as it is
            r = np.matmul(x, y if rc == (0,) else y.T)
            return r if out is None else r.astype(out)
        lf = [d for d in range(x.ndim) if d not in lc and d not in lb]
        rf = [d for d in range(y.ndim) if d not in rc and d not in rb]
        xb = x.transpose(lb + tuple(lf) + lc)
        yb = y.transpose(rb + rc + tuple(rf))
        batch = xb.shape[:len(lb)]
        m = math.prod([x.shape[d] for d in lf])
        n = math.prod([y.shape[d] for d in rf])
        k = math.prod([x.shape[d] for d in lc])
        r = np.matmul(xb.reshape(batch + (m, k)), yb.reshape(batch + (k, n)))
        r = r.reshape(batch + tuple(x.shape[d] for d in lf) + tuple(y.shape[d] for d in rf))
        return r if out is None else r.astype(out)
    return dot


@_rule("slice")
def _slice(params):
    starts, limits = params["start_indices"], params["limit_indices"]
    strides = params["strides"] or (1,) * len(starts)
    index = tuple(slice(a, b, s) for a, b, s in zip(starts, limits, strides))
    return lambda x: x[index]


def _clamped_starts(shape, sizes, starts):
    # lax clamps a dynamic start so that the whole window fits
    return tuple(int(min(max(int(s), 0), d - z)) for s, d, z in zip(starts, shape, sizes))


@_rule("dynamic_slice")
def _dynamic_slice(params):
    sizes = tuple(params["slice_sizes"])

    def run(x, *starts):
        x = np.asarray(x)
        st = _clamped_starts(x.shape, sizes, starts)
        return x[tuple(slice(s, s + z) for s, z in zip(st, sizes))]
    return run


@_rule("dynamic_update_slice")
def _dynamic_update_slice(params):
    def run(x, update, *starts):
        update = np.asarray(update)
        out = np.array(x, copy=True)
        st = _clamped_starts(out.shape, update.shape, starts)
        out[tuple(slice(s, s + z) for s, z in zip(st, update.shape))] = update
        return out
    return run


@_rule("concatenate")
def _concatenate(params):
    axis = params["dimension"]
    return lambda *xs: np.concatenate(xs, axis=axis)


@_rule("stack")
def _stack(params):
    axis = params["axis"]
    return lambda *xs: np.stack(xs, axis=axis)


@_rule("unstack")
def _unstack(params):
    axis = params["axis"]
    return lambda x: tuple(np.moveaxis(np.asarray(x), axis, 0))


@_rule("split")
def _split(params):
    sizes, axis = params["sizes"], params["axis"]
    cuts = np.cumsum(sizes)[:-1]
    return lambda x: tuple(np.split(x, cuts, axis=axis))


@_rule("pad")
def _pad(params):
    config = tuple((int(lo), int(hi), int(interior)) for lo, hi, interior in params["padding_config"])
    if not any(lo < 0 or hi < 0 or interior for lo, hi, interior in config):
        widths = tuple((lo, hi) for lo, hi, _ in config)
        return lambda x, value: np.pad(x, widths, constant_values=value)

    def pad(x, value):   # interior padding (a strided window's gradient) and negative padding (a crop)
        x = np.asarray(x)
        inner = [(n - 1) * (i + 1) + 1 if n else 0 for n, (_, _, i) in zip(x.shape, config)]
        out = np.full([max(lo, 0) + n + max(hi, 0) for n, (lo, hi, _) in zip(inner, config)], value, x.dtype)
        out[tuple(slice(max(lo, 0), max(lo, 0) + n, i + 1) for n, (lo, _, i) in zip(inner, config))] = x
        return out[tuple(slice(-min(lo, 0), d + min(hi, 0)) for d, (lo, hi, _) in zip(out.shape, config))]
    return pad


@_rule("tile")
def _tile(params):
    reps = tuple(params["reps"])
    return lambda x: np.tile(x, reps)


@_rule("platform_index")
def _platform_index(params):
    # which branch of a platform_dependent cond this CPU evaluation takes: the first naming "cpu", else the
    # default (None); lax raises for a function with neither, and so does this rule (the kernel compiles)
    for i, platforms in enumerate(params["platforms"]):
        if platforms is not None and "cpu" in platforms:
            return lambda: np.int32(i)
    for i, platforms in enumerate(params["platforms"]):
        if platforms is None:
            return lambda: np.int32(i)
    raise _Unsupported


@_rule("iota")
def _iota(params):
    dtype, shape, dim = np.dtype(params["dtype"]), tuple(params["shape"]), params["dimension"]

    def run():
        kept = [1] * len(shape)
        kept[dim] = shape[dim]
        return np.broadcast_to(np.arange(shape[dim], dtype=dtype).reshape(kept), shape)
    return run


@_rule("complex")
def _complex(params):
    def run(x, y):
        # the parts written as they are: x + 1j * y would make (-1, nan) nan + nanj (nan * 1j)
        x, y = np.asarray(x), np.asarray(y)
        out = np.empty(np.broadcast_shapes(x.shape, y.shape), np.result_type(x, y, np.complex64))
        out.real, out.imag = x, y
        return out
    return run


# What one evaluation is expected to cost on NumPy (measured on a 2-core CPU; rough on purpose): a fixed
# cost per kernel call (flattening, transfers), per primitive, per element written and per matmul flop.
# An estimate rather than a clock, so that when a kernel gets compiled does not depend on machine load.
CALL_SECONDS = 30e-6
STEP_SECONDS = 3e-6
ELEMENT_SECONDS = 1e-9
FLOP_SECONDS = 0.1e-9


def _numel(aval):
    n = 1
    for d in getattr(aval, "shape", ()):
        n *= d
    return n


def _numel_dims(aval, dims):
    n = 1
    for d in dims:
        n *= aval.shape[d]
    return n


def _dot_seconds(params, ins, outs):
    (contracted, _), _ = params["dimension_numbers"]
    return 2 * _numel_dims(ins[0], contracted) * _numel(outs[0]) * FLOP_SECONDS


def _conv_seconds(params, ins, outs):   # each output reads a window of every input feature
    kernel = ins[1]
    window = _numel(kernel) // max(kernel.shape[params["dimension_numbers"].rhs_spec[0]], 1)
    return 2 * window * _numel(outs[0]) * FLOP_SECONDS


def _steps_seconds(params, ins, outs):   # a Python step of a few NumPy calls per row of the matrix
    return ins[0].shape[-1] * 4 * STEP_SECONDS


def _draw_seconds(params, ins, outs):
    return _numel(outs[0]) * ELEMENT_SECONDS * _numpy_random.ELEMENTS_PER_DRAW


# What a primitive costs beyond the per-step and per-element estimate (see compile_jaxpr's estimate):
# name -> (params, input avals, output avals) -> seconds
COSTS = {"dot_general": _dot_seconds, "conv_general_dilated": _conv_seconds,
         "triangular_solve": _steps_seconds, "lu": _steps_seconds,
         "random_bits": _draw_seconds, "random_split": _draw_seconds,
         **{name: lambda params, ins, outs: _numpy_erf.seconds(_numel(outs[0])) for name in ERF_NAMES},
         **{name: lambda params, ins, outs: _numel(outs[0]) * _numpy_gamma.ELEMENT_SECONDS
            for name in _numpy_gamma.RULES}}
DRAW_NAMES = frozenset(("random_bits", "random_split"))   # kernels that draw: see _numpy_rent


_RULES.update(_numpy_reduce.RULES)
_RULES.update(_numpy_gather.RULES)
_RULES.update(_numpy_random.RULES)
_RULES.update(_numpy_fft.RULES)
_RULES.update(_numpy_order.RULES)
_RULES.update(_numpy_conv.RULES)
_RULES.update(_numpy_window.RULES)
_RULES.update(_numpy_gamma.RULES)
_RULES.update(_numpy_linalg.RULES)


@_rule("pure_callback")
def _pure_callback(params):
    # a host function JAX calls from a program (linalg.ldl_factor's LAPACK): called directly
    callback = params["callback"]
    return lambda *xs: tuple(callback(*xs))
_RULES.update(_numpy_lapack.RULES)
_RULES["dim_as_value"] = lambda params: lambda: params["dim"]   # (a symbolic dimension's value: _shape_poly)


class _Unsupported(Exception):
    """A primitive (or parameter) this module has no exact NumPy rule for."""
