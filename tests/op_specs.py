"""One spec per op-table entry: how to call it in PyTorch and in tapegrad, on which inputs.

A case's `fn(lib, *tensors)` is written once and run with `lib` = torch and `lib` = tapegrad
(tinygrad's helper_test_op style). Inputs are descriptors, drawn with a fixed seed:

    F(2, 3)        float tensor of the dtype under test (float32 and float64), values in [-2, 2)
    F(2, low=0.1)  ... with another range;  C(2, 3): complex of the matching width
    I(2, high=3)   int64 in [0, high);  B(2, 3): bool;  A(int_array): this exact int64 array
    D("int32", 2)  a tensor of a fixed dtype (values small integers)

grad=False: no gradient comparison with PyTorch (ops that are not differentiable, whose gradient
PyTorch defines differently on purpose, or whose random draws differ from PyTorch's).
fd=False: no finite-difference check (kinks or non-finite derivatives at the sample); every
differentiable op keeps at least one case with the check (test_op_table enforces it).
compare=False: values are random; only shapes and dtypes are compared with PyTorch. tapegrad runs
every case under a fixed key, so finite differences of random ops still hold.
"""
import numpy as np


class F:
    def __init__(self, *shape, low=-2.0, high=2.0):
        self.shape, self.low, self.high = shape, low, high

    def draw(self, rng, float_dtype):
        return rng.uniform(self.low, self.high, self.shape).astype(float_dtype)


class C(F):
    def draw(self, rng, float_dtype):
        real = rng.uniform(self.low, self.high, (2,) + self.shape)
        return (real[0] + 1j * real[1]).astype(np.complex64 if float_dtype == "float32" else np.complex128)


class I:
    def __init__(self, *shape, high=3, low=0):
        self.shape, self.low, self.high = shape, low, high

    def draw(self, rng, float_dtype):
        return rng.integers(self.low, self.high, self.shape).astype(np.int64)


class A:
    def __init__(self, values, dtype="int64"):
        self.values = np.asarray(values, dtype)

    def draw(self, rng, float_dtype):
        return self.values


class B:
    def __init__(self, *shape):
        self.shape = shape

    def draw(self, rng, float_dtype):
        return rng.random(self.shape) < 0.5


class D:
    def __init__(self, dtype, *shape, low=-4, high=5):
        self.dtype, self.shape, self.low, self.high = dtype, shape, low, high

    def draw(self, rng, float_dtype):
        if self.dtype == "bool":
            return rng.random(self.shape) < 0.5
        return rng.integers(self.low, self.high, self.shape).astype(self.dtype)


class Case:
    def __init__(self, fn, *inputs, grad=True, fd=True, compare=True, rtol=None):
        self.fn, self.inputs = fn, inputs
        self.grad, self.fd, self.compare, self.rtol = grad, fd, compare, rtol


def cases(*cs):
    return list(cs)


def _spd(lib, a):
    # A symmetric positive-definite matrix from any square one.
    return a @ a.mT + 3 * lib.eye(a.shape[-1], dtype=a.dtype)


def _unary(name, *inputs, **kw):
    return cases(Case(lambda lib, a: getattr(lib, name)(a), *(inputs or (F(2, 3),)), **kw),
                 Case(lambda lib, a: getattr(a, name)(), *(inputs or (F(4),)), **kw))


def _binary(name, low=-2.0, high=2.0, **kw):
    return cases(Case(lambda lib, a, b: getattr(lib, name)(a, b), F(2, 3, low=low, high=high),
                      F(3, low=low, high=high), **kw),
                 Case(lambda lib, a, b: getattr(a, name)(b), F(2, 1, low=low, high=high),
                      F(1, 4, low=low, high=high), **kw))


def _compare(name):
    return cases(Case(lambda lib, a, b: getattr(lib, name)(a, b), F(2, 3), F(3)),
                 Case(lambda lib, a: getattr(lib, name)(a, 0.5), F(4)),
                 Case(lambda lib, a, b: getattr(lib, name)(a, b), D("int64", 3), D("int32", 3)))


POS = dict(low=0.2, high=2.0)
UNIT = dict(low=-0.9, high=0.9)

SPECS = {
    # ---- arithmetic ---------------------------------------------------------------------------------
    "add": cases(Case(lambda lib, a, b: lib.add(a, b), F(2, 3), F(3)),
                 Case(lambda lib, a: a + 2, F(3)),
                 Case(lambda lib, a, b: a + b, D("int32", 3), D("int64", 3)),
                 Case(lambda lib, a, b: a + b, F(2), C(2))),
    "add_scaled": cases(Case(lambda lib, a, b: lib.add(a, b, alpha=2.5), F(2, 3), F(3))),
    "sub": cases(Case(lambda lib, a, b: a - b, F(2, 3), F(2, 1)), Case(lambda lib, a: a.sub(1), D("int64", 3))),
    "sub_scaled": cases(Case(lambda lib, a, b: a.sub(b, alpha=3), F(2, 3), F(3))),
    "rsub": cases(Case(lambda lib, a: 2 - a, F(3)), Case(lambda lib, a: 1.5 - a, D("int64", 3))),
    "mul": cases(Case(lambda lib, a, b: a * b, F(2, 3), F(3)), Case(lambda lib, a: a * True, D("uint8", 3)),
                 Case(lambda lib, a, b: a * b, C(3), C(3)),
                 Case(lambda lib, a, b: lib.einsum("i,j->ij", [a, b]), F(2), F(3)),   # einsum without contraction
                 # dropout on the CPU: the input times bernoulli noise / (1 - p), in place too; feature dropout
                 Case(lambda lib, a: lib.nn.functional.dropout(a, 0.4), F(3, 4), grad=False, compare=False),
                 Case(lambda lib, a: lib.nn.functional.dropout(a * 1, 0.4, inplace=True), F(3, 4), grad=False,
                      compare=False),
                 Case(lambda lib, a: lib.nn.functional.dropout2d(a, 0.4), F(2, 3, 2, 2), grad=False, compare=False),
                 Case(lambda lib, a: lib.nn.functional.dropout(a, 1.0), F(3))),
    "div": cases(Case(lambda lib, a, b: a / b, F(2, 3), F(3, **POS)), Case(lambda lib, a: a / 3, D("int64", 4)),
                 Case(lambda lib, a, b: lib.true_divide(a, b), C(3), C(3, **POS))),
    "div_trunc": cases(Case(lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"), F(5), F(5, **POS)),
                       Case(lambda lib, a, b: lib.div(a, b, rounding_mode="trunc"), D("int64", 6),
                            D("int64", 6, low=1))),
    "div_floor": cases(Case(lambda lib, a, b: a.div(b, rounding_mode="floor"), F(5), F(5, **POS)),
                       Case(lambda lib, a, b: a.div(b, rounding_mode="floor"), D("int64", 6), D("int64", 6, low=1))),
    # floor_divide and a number's remainder: PyTorch's backward raises (tests/test_no_derivative.py)
    "floor_divide": cases(Case(lambda lib, a, b: a // b, F(5), F(5, **POS), grad=False, fd=False),
                          Case(lambda lib, a: a // -3, D("int64", 6))),
    "floor_divide_": cases(Case(lambda lib, a, b: (a * 1).floor_divide_(b), F(5), F(5, **POS), grad=False,
                                fd=False),
                           Case(lambda lib, a: a.clone().__ifloordiv__(-3), D("int64", 6))),
    "remainder": cases(Case(lambda lib, a, b: a % b, F(2, 3), F(3, **POS)),
                       Case(lambda lib, a: lib.remainder(a, -3), D("int64", 6))),
    "remainder_scalar_self": cases(Case(lambda lib, a: 5 % a, D("int64", 6, low=1)),
                                   Case(lambda lib, a: lib.remainder(1.5, a), F(2, 3, **POS), grad=False,
                                        fd=False)),
    "fmod": cases(Case(lambda lib, a, b: lib.fmod(a, b), F(2, 3), F(3, **POS)),
                  Case(lambda lib, a: a.fmod(-3), D("int64", 6))),
    "pow": cases(Case(lambda lib, a, b: a ** b, F(2, 3, **POS), F(3)), Case(lambda lib, a: 2 ** a, F(4)),
                 Case(lambda lib, a: a.pow(2), D("int64", 4)), Case(lambda lib, a: a ** 2, C(3))),
    # a tensor to a bool tensor's power (its input's gradient raises, as PyTorch's: tests/test_no_derivative.py)
    "pow_bool_exponent": cases(Case(lambda lib, a: a ** lib.tensor([True, False, True]), F(2, 3), grad=False,
                                    fd=False),
                               Case(lambda lib, a: a.pow(lib.tensor(False)), D("int64", 3), grad=False, fd=False)),
    # a floating tensor to a Python number
    "pow_scalar": cases(Case(lambda lib, a: a ** 3, F(4)), Case(lambda lib, a: lib.pow(a, 0.5), F(3, **POS)),
                        Case(lambda lib, a: lib.float_power(a, 2), F(3)), Case(lambda lib, a: a.pow(0), F(3)),
                        Case(lambda lib, a: lib.pow(a, -1.5), F(3, **POS)), Case(lambda lib, a: a ** 2.0, F(2, 3))),
    "maximum": _binary("maximum") + cases(Case(lambda lib, a, b: lib.maximum(a, b), A([1.0, 2.0, 3.0], "float64"),
                                               A([1.0, 0.0, 3.0], "float64"), fd=False)),
    "minimum": _binary("minimum"),
    "fmax": _binary("fmax"),
    "fmin": _binary("fmin"),
    "atan2": _binary("atan2") + cases(Case(lambda lib, a, b: lib.arctan2(a, b), D("int64", 3), D("int32", 3))),
    "hypot": _binary("hypot"),
    "xlogy": cases(Case(lambda lib, a, b: lib.xlogy(a, b), F(2, 3), F(3, **POS)),
                   # F.kl_div records PyTorch's pointwise formula (xlogy) and reduction
                   Case(lambda lib, x, y: lib.nn.functional.kl_div(x, y, reduction="batchmean"), F(3, 4),
                        F(3, 4, low=0.1, high=1.0)),
                   Case(lambda lib, b: lib.xlogy(2.0, b), F(3, **POS)),
                   # zeros in both: d/da is 0 where b <= 0, d/db is NaN at 0 / 0
                   Case(lambda lib, a, b: a.xlogy(b), A([0.0, 0.0, 1.5, 0.0], "float64"),
                        A([0.5, 0.0, 2.0, -1.0], "float64"), fd=False)),
    "copysign": cases(Case(lambda lib, a, b: lib.copysign(a, b), F(2, 3), F(3)),
                      Case(lambda lib, a: a.copysign(-1.0), A([0.0, 1.5, -2.0], "float64"), fd=False)),
    "lerp": cases(Case(lambda lib, a, b: lib.lerp(a, b, 0.3), F(2, 3), F(3)),
                  Case(lambda lib, a, b, w: a.lerp(b, w), F(2, 3), F(3), F(2, 3, low=0, high=1))),
    "clamp": cases(Case(lambda lib, a: lib.clamp(a, -1, 1), F(2, 5)),
                   Case(lambda lib, a, lo, hi: a.clamp(lo, hi), F(2, 5), F(5, low=-2, high=0), F(5, low=0, high=2)),
                   Case(lambda lib, a: lib.clip(a, -1, 2), D("int64", 5)),
                   Case(lambda lib, a: lib.clamp(a, min=0.5), F(2, 3)),
                   Case(lambda lib, a, m: a.clamp(max=m), F(2, 3), F(3))),
    "clamp_min": cases(Case(lambda lib, a: lib.clamp_min(a, 0.5), F(2, 3)),
                       # F.normalize: the input over its norm clamped at eps, as PyTorch records it
                       Case(lambda lib, x: lib.nn.functional.normalize(x, dim=1), F(3, 4)),
                       Case(lambda lib, x: lib.nn.functional.normalize(x, p=3.0, dim=0), F(3, 4)),
                       Case(lambda lib, a: a.clamp_min(0), D("int32", 4)),
                       Case(lambda lib, a, m: a.clamp_min(m), F(2, 3), F(3))),
    "clamp_max": cases(Case(lambda lib, a: lib.clamp_max(a, 0.5), F(2, 3)),
                       Case(lambda lib, a, m: a.clamp_max(m), F(2, 3), F(3))),
    "addcmul": cases(Case(lambda lib, a, b, c: lib.addcmul(a, b, c, value=0.5), F(2, 3), F(3), F(2, 3))),
    "addcdiv": cases(Case(lambda lib, a, b, c: a.addcdiv(b, c, value=2), F(2, 3), F(3), F(2, 3, **POS))),
    "where": cases(Case(lambda lib, c, a, b: lib.where(c, a, b), B(2, 3), F(2, 3), F(3)),
                   Case(lambda lib, c, a: lib.where(c, a, 0.0), B(3), F(3)),
                   Case(lambda lib, c, a, b: a.where(c, b), B(3), F(3), F(3)),
                   Case(lambda lib, c, a, b: lib.where(c, a, b), B(3), D("int32", 3), D("int64", 3))),

    # ---- comparison and logic -----------------------------------------------------------------------
    "eq": _compare("eq"), "ne": _compare("ne"), "lt": _compare("lt"), "le": _compare("le"), "gt": _compare("gt"),
    "ge": _compare("ge"),
    "isclose": cases(Case(lambda lib, a, b: lib.isclose(a, a + b * 1e-6), F(3, 4), F(4)),
                     Case(lambda lib, a: lib.tensor([lib.allclose(a, a * (1 + 1e-7)), lib.equal(a, a + 1)]), F(3))),
    "isnan": _unary("isnan"), "isinf": _unary("isinf"), "isfinite": _unary("isfinite"),
    "isposinf": _unary("isposinf"), "isneginf": _unary("isneginf"), "signbit": _unary("signbit"),
    "deg2rad": _unary("deg2rad") + cases(Case(lambda lib, a: lib.deg2rad(a), D("int64", 3))),
    "rad2deg": _unary("rad2deg"),
    "logical_and": cases(Case(lambda lib, a, b: lib.logical_and(a, b), B(2, 3), B(3)),
                         Case(lambda lib, a, b: a.logical_and(b), F(3), D("int64", 3))),
    "logical_or": cases(Case(lambda lib, a, b: lib.logical_or(a, b), B(2, 3), B(3))),
    "logical_xor": cases(Case(lambda lib, a, b: lib.logical_xor(a, b), B(2, 3), D("int32", 3))),
    "logical_not": cases(Case(lambda lib, a: lib.logical_not(a), B(3)), Case(lambda lib, a: ~a, B(3)),
                         Case(lambda lib, a: a.logical_not(), F(3))),
    "bitwise_and": cases(Case(lambda lib, a, b: a & b, D("int64", 3), D("int32", 3)),
                         Case(lambda lib, a, b: lib.bitwise_and(a, b), B(3), B(3))),
    "bitwise_or": cases(Case(lambda lib, a, b: a | b, D("int64", 3), D("uint8", 3, low=0))),
    "bitwise_xor": cases(Case(lambda lib, a: a ^ 6, D("int16", 3))),
    "bitwise_not": cases(Case(lambda lib, a: ~a, D("int64", 3)), Case(lambda lib, a: lib.bitwise_not(a), B(3))),
    "bitwise_left_shift": cases(Case(lambda lib, a: a << 2, D("int64", 3))),
    "bitwise_right_shift": cases(Case(lambda lib, a, b: a >> b, D("int64", 3), D("int64", 3, low=0, high=3))),

    # ---- unary ---------------------------------------------------------------------------------------
    "neg": _unary("neg") + cases(Case(lambda lib, a: -a, D("int32", 3)), Case(lambda lib, a: -a, C(3))),
    # PyTorch's add.Scalar, recorded by composites: F.rms_norm is x * rsqrt(mean(x ** 2) + eps) * weight
    "add_scalar": cases(Case(lambda lib, x, w: lib.nn.functional.rms_norm(x, [4], w), F(3, 4), F(4)),
                        Case(lambda lib, x: lib.nn.functional.rms_norm(x, (2, 3), eps=0.1), F(2, 2, 3))),
    "abs": _unary("abs") + cases(Case(lambda lib, a: a.abs(), D("int64", 3)), Case(lambda lib, a: abs(a), C(3)),
                                 # F.l1_loss: |input - target|, then the reduction, as PyTorch records it
                                 Case(lambda lib, x, y: lib.nn.functional.l1_loss(x, y, reduction="sum"), F(3, 4),
                                      F(3, 4))),
    "sign": _unary("sign") + cases(Case(lambda lib, a: a.sign(), D("int64", 3))),
    "sgn": _unary("sgn") + cases(Case(lambda lib, a: a.sgn(), C(3))),
    "floor": _unary("floor") + cases(Case(lambda lib, a: a.floor(), D("int64", 3))),
    "ceil": _unary("ceil"),
    "round": _unary("round") + cases(Case(lambda lib, a: lib.round(a * 10, decimals=1), F(5)),
                                     Case(lambda lib, a: lib.round(a), A([0.5, 1.5, 2.5, -0.5], "float64"), fd=False)),
    "trunc": _unary("trunc") + cases(Case(lambda lib, a: lib.fix(a), F(3))),
    "frac": _unary("frac"),
    "square": _unary("square") + cases(Case(lambda lib, a: a.square(), D("int64", 3))),
    # a / a.round() makes nan and inf, whose derivatives are not finite: no finite differences there.
    "nan_to_num": cases(Case(lambda lib, a: lib.nan_to_num(a / a.round()), F(2, 4), fd=False),
                        Case(lambda lib, a: (a / a.round()).nan_to_num(1.0, 5.0, -5.0), F(2, 4), fd=False),
                        Case(lambda lib, a: lib.nan_to_num(a.log()), F(5), fd=False),
                        Case(lambda lib, a: lib.nan_to_num(a, 0.5, 3.0, -3.0),
                             A([1.5, np.nan, np.inf, -np.inf, -0.5], "float64")),
                        Case(lambda lib, a: lib.nan_to_num(a * 2), F(2, 3))),
    "exp": _unary("exp") + cases(Case(lambda lib, a: a.exp(), D("int64", 3)), Case(lambda lib, a: a.exp(), C(3))),
    "exp2": _unary("exp2"), "expm1": _unary("expm1"),
    "log": _unary("log", F(2, 3, **POS)) + cases(Case(lambda lib, a: a.log(), C(3))),
    "log2": _unary("log2", F(3, **POS)), "log10": _unary("log10", F(3, **POS)),
    "log1p": _unary("log1p", F(3, **POS)),
    "sqrt": _unary("sqrt", F(2, 3, **POS)) + cases(Case(lambda lib, a: a.sqrt(), D("int64", 3, low=0))),
    "rsqrt": _unary("rsqrt", F(3, **POS)),
    "reciprocal": _unary("reciprocal", F(3, **POS)),
    "sin": _unary("sin") + cases(Case(lambda lib, a: a.sin(), C(3))), "cos": _unary("cos"),
    "tan": _unary("tan", F(3, **UNIT)),
    "asin": _unary("asin", F(3, **UNIT)) + cases(Case(lambda lib, a: lib.arcsin(a), F(3, **UNIT))),
    "acos": _unary("acos", F(3, **UNIT)), "atan": _unary("atan"),
    "sinh": _unary("sinh"), "cosh": _unary("cosh"), "tanh": _unary("tanh") + cases(Case(lambda lib, a: a.tanh(), C(3))),
    "asinh": _unary("asinh"), "acosh": _unary("acosh", F(3, low=1.2, high=3)), "atanh": _unary("atanh", F(3, **UNIT)),
    "sigmoid": _unary("sigmoid"),
    "logit": _unary("logit", F(3, low=0.1, high=0.9)) + cases(Case(lambda lib, a: lib.logit(a, eps=0.2),
                                                                    F(6, low=0.05, high=0.95), fd=False)),
    "lgamma": _unary("lgamma", F(3, low=0.1, high=4.0)), "digamma": _unary("digamma", F(3, low=0.1, high=4.0)),
    "erf": _unary("erf"), "erfc": _unary("erfc"), "erfinv": _unary("erfinv", F(3, **UNIT)),
    "sinc": cases(Case(lambda lib, a: lib.sinc(a), A([0.0, 1.0, -0.5, 1.7], "float64"))),
    "relu": _unary("relu"),

    # ---- complex -------------------------------------------------------------------------------------
    "angle": cases(Case(lambda lib, a: lib.angle(a), C(2, 3)), Case(lambda lib, a: a.angle(), F(4), fd=False)),
    "conj_physical": cases(Case(lambda lib, a: lib.conj_physical(a) * a.sin(), C(3)),
                           Case(lambda lib, a: a.conj_physical(), C(3))),
    "conj": cases(Case(lambda lib, a: lib.conj(a) * a, C(3)), Case(lambda lib, a: a.mH.exp(), C(2, 3)),
                  Case(lambda lib, a: a.H, C(2, 3))),
    # the imaginary part of a conjugate view reads the stored one negated (PyTorch's _neg_view)
    "neg_view": cases(Case(lambda lib, a: (a * a).conj().imag, C(2, 3)), Case(lambda lib, a: a.mH.imag.exp(), C(2, 3))),
    "complex": cases(Case(lambda lib, a, b: lib.complex(a, b).exp(), F(3), F(3))),
    "polar": cases(Case(lambda lib, a, b: lib.polar(a, b), F(3, **POS), F(3))),
    "view_as_real": cases(Case(lambda lib, a: lib.view_as_real(a.sin()), C(2, 3)),
                          # real and imag: a select of view_as_real, as PyTorch records them
                          Case(lambda lib, a: (a * a).real, C(2, 3)), Case(lambda lib, a: lib.real(a.exp()), C(3)),
                          Case(lambda lib, a: (a * a).imag, C(2, 3)), Case(lambda lib, a: lib.imag(a), C(3))),
    "view_as_complex": cases(Case(lambda lib, a: lib.view_as_complex(a).exp(), F(3, 2))),

    # ---- copies, casts, fills --------------------------------------------------------------------------
    "to_dtype": cases(Case(lambda lib, a: a.double() * a.float(), F(3), fd=False), Case(lambda lib, a: a.long(), F(3)),
                      Case(lambda lib, a: a.to(lib.complex128), F(3))),
    "clone": cases(Case(lambda lib, a: a.clone(), F(3)), Case(lambda lib, a: lib.clone(a), B(3))),
    "fill": cases(Case(lambda lib, a: (a * 1).fill_(2.5) * a, F(3)),
                  Case(lambda lib, a, v: (a * 1).fill_(v) * a, F(3), F())),
    "copy": cases(Case(lambda lib, a, b: (a * 1).copy_(b) * a, F(2, 3), F(3))),

    # ---- reductions ----------------------------------------------------------------------------------
    "sum": cases(Case(lambda lib, a: a.sum(), F(2, 3)), Case(lambda lib, a: lib.sum(a, (0, 2), keepdim=True), F(2, 3, 4)),
                 Case(lambda lib, a: a.sum(-1), D("int32", 2, 3)), Case(lambda lib, a: a.sum(dtype=lib.float64), F(3)),
                 Case(lambda lib, a: a.sum(0), B(3, 2)), Case(lambda lib, a: a.sum(1), C(2, 3))),
    "mean": cases(Case(lambda lib, a: a.mean(), F(2, 3)), Case(lambda lib, a: lib.mean(a, [-1, 0], True), F(2, 3, 4))),
    "nansum": cases(Case(lambda lib, a: a.nansum(), F(2, 3)), Case(lambda lib, a: lib.nansum(a, (0, 2), keepdim=True), F(2, 3, 4)),
                    Case(lambda lib, a: a.nansum(-1), D("int32", 2, 3)),
                    Case(lambda lib, a: lib.nanmean(a, 0), A([[1.0, float("nan"), 3.0], [float("nan"), float("nan"), 2.0]],
                                                             "float64"), fd=False),
                    Case(lambda lib, a: (a / a.round()).nansum(1), F(2, 4), fd=False)),
    "prod": cases(Case(lambda lib, a: a.prod(), F(2, 3)), Case(lambda lib, a: lib.prod(a, 1, keepdim=True), F(2, 3)),
                  Case(lambda lib, a: a.prod(0), D("int32", 3, 2)),
                  Case(lambda lib, a: a.prod(1), A([[1.0, 0.0, 3.0], [0.0, 0.0, 2.0]], "float64"))),
    "var": cases(Case(lambda lib, a: a.var(), F(2, 3)), Case(lambda lib, a: lib.var(a, 1, unbiased=False), F(2, 3)),
                 Case(lambda lib, a: a.var(0, correction=2, keepdim=True), F(4, 3)),
                 Case(lambda lib, a: a.var(), C(4))),
    "var_mean": cases(Case(lambda lib, a: lib.var_mean(a, 1)[0], F(2, 3)),
                      Case(lambda lib, a: sum(lib.var_mean(a, (0, 1), correction=0, keepdim=True)), F(2, 3, 2))),
    "std": cases(Case(lambda lib, a: a.std(), F(2, 3)), Case(lambda lib, a: lib.std(a, (0, 1), keepdim=True), F(2, 3, 2)),
                 Case(lambda lib, a: a.std(0, False), F(4, 3)), Case(lambda lib, a: (a * 0).std(), F(3), fd=False)),
    "std_mean": cases(Case(lambda lib, a: lib.std_mean(a, 0)[0], F(3, 2)),
                      Case(lambda lib, a: lib.std_mean(a)[0] * lib.std_mean(a)[1], F(2, 3))),
    "amax": cases(Case(lambda lib, a: a.amax(), F(2, 3)), Case(lambda lib, a: lib.amax(a, (0, 2), True), F(2, 3, 2)),
                  Case(lambda lib, a: a.amax(1), A([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], "float64"), fd=False)),
    "amin": cases(Case(lambda lib, a: lib.amin(a, 1), F(2, 3)), Case(lambda lib, a: a.amin(), D("int64", 4))),
    "aminmax": cases(Case(lambda lib, a: lib.aminmax(a).min + 2 * lib.aminmax(a).max, F(2, 3)),
                     Case(lambda lib, a: sum(a.aminmax(dim=1, keepdim=True)), F(2, 3)),
                     Case(lambda lib, a: sum(a.aminmax(dim=0)), A([[1.0, 3.0, 3.0], [1.0, 2.0, 3.0]], "float64"),
                          fd=False),
                     Case(lambda lib, a: a.aminmax().max, D("int64", 4))),
    "max_all": cases(Case(lambda lib, a: a.max(), F(2, 3)), Case(lambda lib, a: lib.max(a), D("int64", 5)),
                     Case(lambda lib, a: a.max(), A([1.0, 3.0, 3.0], "float64"), fd=False)),
    "min_all": cases(Case(lambda lib, a: a.min(), F(2, 3))),
    "argmax": cases(Case(lambda lib, a: a.argmax(), F(2, 3)), Case(lambda lib, a: lib.argmax(a, 1, keepdim=True), F(2, 3)),
                    Case(lambda lib, a: a.argmax(0), A([[1, 3], [3, 1], [3, 3]]))),
    "argmin": cases(Case(lambda lib, a: a.argmin(-1), F(2, 3)), Case(lambda lib, a: lib.argmin(a), D("int32", 5))),
    "logsumexp": cases(Case(lambda lib, a: a.logsumexp(1), F(2, 3)),
                       Case(lambda lib, a: lib.logsumexp(a, (0, 1), keepdim=True), F(2, 3)),
                       Case(lambda lib, a: a.logsumexp(0), D("int64", 3))),
    "cumsum": cases(Case(lambda lib, a: a.cumsum(1), F(2, 3)), Case(lambda lib, a: lib.cumsum(a, 0), D("int32", 4)),
                    Case(lambda lib, a: a.cumsum(0, dtype=lib.float64), F(3))),
    "cumprod": cases(Case(lambda lib, a: a.cumprod(1), F(2, 3)), Case(lambda lib, a: lib.cumprod(a, 0), D("int64", 4)),
                     Case(lambda lib, a: a.cumprod(0), A([2.0, 0.0, 3.0, 4.0], "float64"))),
    "logcumsumexp": cases(Case(lambda lib, a: lib.logcumsumexp(a, 1), F(2, 3))),
    # ties move the index to the later element; a NaN stays the extreme, and each later NaN takes its index
    "cummax_indices": cases(Case(lambda lib, a: lib.cummax(a, 0).indices,
                                 A([1.0, 1.0, 0.5, float("nan"), 2.0, float("nan")], "float64"))),
    "cummax_values": cases(Case(lambda lib, a: lib.cummax(a, 1), F(2, 4))),
    "cummin_indices": cases(Case(lambda lib, a: lib.cummin(a, 0).indices,
                                 A([1.0, 1.0, 0.0, 0.0, float("nan"), -1.0], "float64"))),
    "cummin_values": cases(Case(lambda lib, a: a.cummin(-1), F(2, 4))),
    # PyTorch raises on backward through the weights (NotImplemented); here they differentiate
    "bincount": cases(Case(lambda lib, i, w: lib.bincount(i, w, minlength=6), I(7, high=5), F(7), grad=False),
                      Case(lambda lib, i: i.bincount(), I(7, high=5))),
    "all": cases(Case(lambda lib, a: a.all(), B(2, 3)), Case(lambda lib, a: lib.all(a, 1, keepdim=True), D("int64", 2, 3)),
                 Case(lambda lib, a: a.all(0), D("uint8", 2, 3, low=0, high=2))),
    "any": cases(Case(lambda lib, a: a.any(), B(2, 3)), Case(lambda lib, a: lib.any(a, 0), F(2, 3))),
    "count_nonzero": cases(Case(lambda lib, a: lib.count_nonzero(a), D("int64", 3, 4, low=-1, high=2)),
                           Case(lambda lib, a: a.count_nonzero(1), D("int64", 3, 4, low=-1, high=2))),

    # ---- sorting and selection -----------------------------------------------------------------------------
    "argsort": cases(Case(lambda lib, a: a.argsort(1), F(2, 4)),
                     Case(lambda lib, a: lib.argsort(a, dim=0, descending=True, stable=True), D("int64", 6))),
    "sort_values": cases(Case(lambda lib, a: a.sort(1), F(2, 4)),
                         Case(lambda lib, a: lib.sort(a, dim=0, descending=True, stable=True), D("int64", 6)),
                         Case(lambda lib, a: lib.msort(a), F(3, 2))),
    "searchsorted": cases(Case(lambda lib, s, v: lib.searchsorted(s.sort().values, v), F(5), F(2, 3)),
                          Case(lambda lib, s, v: lib.searchsorted(s.sort().values, v, right=True, out_int32=True),
                               F(2, 4), F(2, 3))),
    "topk_indices": cases(Case(lambda lib, a: a.topk(2).indices, F(2, 5))),
    "topk_values": cases(Case(lambda lib, a: a.topk(2), F(2, 5)), Case(lambda lib, a: lib.topk(a, 3, 0, largest=False), F(5, 2))),
    "kthvalue_indices": cases(Case(lambda lib, a: a.kthvalue(2, 1).indices, F(2, 5))),
    "kthvalue_values": cases(Case(lambda lib, a: a.kthvalue(2), F(2, 5)),
                             Case(lambda lib, a: lib.kthvalue(a, 3, 0, keepdim=True), F(5, 2))),
    "median_indices": cases(Case(lambda lib, a: a.median(1).indices, F(2, 5))),
    "median_values": cases(Case(lambda lib, a: a.median(1), F(2, 5)), Case(lambda lib, a: lib.median(a, 0, True), F(4, 2))),
    "median_all": cases(Case(lambda lib, a: a.median(), F(2, 5)), Case(lambda lib, a: a.median(), D("int64", 7)),
                        Case(lambda lib, a: a.median(), A([1.0, 2.0, 2.0, 5.0], "float64"), fd=False)),
    "mode_indices": cases(Case(lambda lib, a: a.mode(1).indices, A([[1, 2, 2, 3, 3, 0], [5, 5, 1, 1, 2, 2]]))),
    "mode_values": cases(Case(lambda lib, a: a.mode(), A([[1, 2, 2, 3, 3, 0], [5, 5, 1, 1, 2, 2]])),
                         Case(lambda lib, a: lib.mode(a.round(), 0, keepdim=True), F(5, 2), fd=False),
                         Case(lambda lib, a: a.mode(1), F(2, 5))),
    "max_values": cases(Case(lambda lib, a: a.max(1), F(2, 3)), Case(lambda lib, a: lib.max(a, 0, keepdim=True), F(2, 3)),
                        Case(lambda lib, a: a.max(0), A([[1.0, 3.0], [1.0, 2.0]], "float64"), fd=False)),
    "min_values": cases(Case(lambda lib, a: a.min(1), F(2, 3)), Case(lambda lib, a: lib.min(a, -1), D("int32", 2, 3))),
    # unique's nodes cannot be differentiated, in PyTorch as here (tests/test_no_derivative.py)
    "unique": cases(Case(lambda lib, a: lib.unique(a, return_inverse=True, return_counts=True), D("int64", 3, 4)),
                    Case(lambda lib, a: a.round().unique(), F(6), grad=False, fd=False)),
    "unique_take": cases(Case(lambda lib, a: lib.unique(a, dim=1, return_counts=True),
                              A([[1.0, 2.0, 1.0, 0.5], [3.0, 4.0, 3.0, 0.5]], "float64"), grad=False, fd=False),
                         Case(lambda lib, a: lib.unique_consecutive(a, return_inverse=True),
                              A([1.0, 1.0, 2.0, 2.0, 1.0], "float64"), grad=False, fd=False),
                         Case(lambda lib, a: lib.unique_consecutive(a, dim=0),
                              A([[1.0, 2.0], [1.0, 2.0], [0.0, 2.0]], "float64"), grad=False, fd=False)),

    # ---- shape views ---------------------------------------------------------------------------------------
    "view": cases(Case(lambda lib, a: a.view(3, 2), F(2, 3)), Case(lambda lib, a: a.reshape(-1), F(2, 3)),
                  Case(lambda lib, a: a.flatten(), F(2, 3, 2)), Case(lambda lib, a: a.unflatten(1, (2, 2)), F(3, 4)),
                  Case(lambda lib, a, b: a.view_as(b), F(2, 3), F(6)), Case(lambda lib, a: lib.ravel(a), F(2, 2))),
    "as_strided": cases(Case(lambda lib, a: a.as_strided((2, 2), (1, 2), 1), F(6)),
                        Case(lambda lib, a: (a * 2).as_strided((3, 2), (1, 1)).exp(), F(2, 3))),
    "view_dtype": cases(Case(lambda lib, a: a.view(lib.int32 if a.dtype == lib.float32 else lib.int64), F(2, 3),
                             grad=False),
                        Case(lambda lib, a: a.view(lib.uint8).view(a.dtype), F(3), grad=False)),
    # kron: the operands viewed with unit dims interleaved, multiplied, viewed back (_unsafe_view), as PyTorch
    "reshape_copy": cases(Case(lambda lib, a: a.t().reshape(6), F(2, 3)), Case(lambda lib, a: a.mT.flatten(), F(2, 2, 3)),
                          Case(lambda lib, a, b: lib.kron(a, b), F(2, 2), F(2, 3)),
                          Case(lambda lib, a, b: lib.kron(a, b), F(3), F(2, 2))),
    "expand": cases(Case(lambda lib, a: a.expand(2, 3), F(3)), Case(lambda lib, a: lib.broadcast_to(a, (2, 2, 3)), F(2, 1, 3)),
                    Case(lambda lib, a, b: a.expand_as(b), F(1, 3), F(2, 3)),
                    # repeat_interleave by a count: unsqueezed, expanded, copied and viewed, as PyTorch
                    Case(lambda lib, a: a.repeat_interleave(2), F(2, 3)),
                    Case(lambda lib, a: lib.repeat_interleave(a, 2, dim=1), F(2, 2)),
                    Case(lambda lib, a, b: lib.broadcast_tensors(a, b), F(2, 1), F(3))),
    "transpose": cases(Case(lambda lib, a: a.transpose(0, 2), F(2, 3, 4)), Case(lambda lib, a: a.mT, F(2, 3, 4)),
                       Case(lambda lib, a: lib.swapaxes(a, 0, 1), F(2, 3)), Case(lambda lib, a: a.mH, C(2, 2, 3))),
    # (.T is a permute and .H a transpose then conj, as PyTorch records them: specs of permute and conj)
    "t": cases(Case(lambda lib, a: a.t(), F(2, 3)), Case(lambda lib, a: lib.t(a), F(3, 2))),
    "permute": cases(Case(lambda lib, a: a.permute(2, 0, 1), F(2, 3, 4)), Case(lambda lib, a: lib.movedim(a, 0, -1), F(2, 3, 4)),
                     Case(lambda lib, a: a.T, F(2, 3, 4)), Case(lambda lib, a: a.T, F(2, 3))),
    "unsqueeze": cases(Case(lambda lib, a: a.unsqueeze(1), F(2, 3)), Case(lambda lib, a: lib.unsqueeze(a, -1), F(2))),
    "squeeze": cases(Case(lambda lib, a: a.squeeze(), F(2, 1, 3, 1)), Case(lambda lib, a: a.squeeze((1, 3)), F(2, 1, 3, 1)),
                     Case(lambda lib, a: lib.squeeze(a, 0), F(2, 1))),
    "alias": cases(Case(lambda lib, a: _legacy_wrap(lib, a) * 2, F(2, 3))),
    "reshape_alias": cases(Case(lambda lib, a: a.t().reshape(3, 2, 2), F(4, 3)),
                           Case(lambda lib, a: a.mT.reshape(2, 3, 2), F(2, 2, 3))),
    "diagonal": cases(Case(lambda lib, a: a.diagonal(), F(3, 3)), Case(lambda lib, a: lib.diagonal(a, 1, 0, 2), F(3, 2, 4)),
                      Case(lambda lib, a: lib.einsum("ii", a), F(3, 3)),   # einsum's repeated label
                      Case(lambda lib, a: lib.einsum("iji->j", a), F(3, 2, 3))),
    "split": cases(Case(lambda lib, a: a.split(2, 1), F(2, 5)), Case(lambda lib, a: lib.split(a, [1, 3], 0), F(4, 2)),
                   Case(lambda lib, a: a.chunk(3), F(5))),
    "unbind": cases(Case(lambda lib, a: a.unbind(1), F(2, 3)), Case(lambda lib, a: lib.unbind(a), F(2))),
    "select": cases(Case(lambda lib, a: a[1], F(3, 2)), Case(lambda lib, a: a.select(1, -1), F(3, 2)),
                    Case(lambda lib, a: a[..., 0], F(2, 3))),
    "slice": cases(Case(lambda lib, a: a[1:], F(3, 2)), Case(lambda lib, a: a.narrow(1, 1, 2), F(2, 4)),
                   Case(lambda lib, a: a[::2, 1::2], F(5, 4)), Case(lambda lib, a: a[:], F(2)),
                   Case(lambda lib, a: lib.tensor_split(a, 3, 1), F(2, 4))),   # slices, as PyTorch's
    "index_unsqueeze": cases(Case(lambda lib, a: a[None], F(3)), Case(lambda lib, a: a[:, None], F(2, 3))),
    "index_alias": cases(Case(lambda lib, a: a[...], F(3)), Case(lambda lib, a: a[:, 0:3], F(2, 3))),

    # ---- shape copies -------------------------------------------------------------------------------------
    "flip": cases(Case(lambda lib, a: a.flip(0), F(2, 3)), Case(lambda lib, a: lib.flip(a, (0, 1)), F(2, 3)),
                  Case(lambda lib, a: lib.fliplr(a), F(2, 3))),
    "rot90": cases(Case(lambda lib, a: lib.rot90(a), F(2, 3)), Case(lambda lib, a: a.rot90(3, (2, 0)), F(2, 3, 4)),
                   Case(lambda lib, a: lib.rot90(a, -2, (1, 0)), F(2, 3))),
    "roll": cases(Case(lambda lib, a: a.roll(1, 1), F(2, 3)), Case(lambda lib, a: lib.roll(a, (1, -1), (0, 1)), F(2, 3)),
                  Case(lambda lib, a: lib.roll(a, 2), F(2, 3))),
    "tril": cases(Case(lambda lib, a: a.tril(), F(3, 3)), Case(lambda lib, a: lib.tril(a, -1), F(2, 3, 4))),
    "triu": cases(Case(lambda lib, a: a.triu(1), F(3, 4)), Case(lambda lib, a: lib.triu(a), D("int64", 3, 3))),
    "cat": cases(Case(lambda lib, a, b: lib.cat([a, b]), F(2, 3), F(1, 3)), Case(lambda lib, a, b: lib.cat((a, b), 1), F(2, 1), F(2, 3)),
                 Case(lambda lib, a, b: lib.concat([a, b]), D("int32", 2), F(3)),
                 Case(lambda lib, a, b: lib.hstack([a, b]), F(2), F(3)), Case(lambda lib, a, b: lib.vstack([a, b]), F(3), F(2, 3))),
    "stack": cases(Case(lambda lib, a, b: lib.stack([a, b]), F(2, 3), F(2, 3)), Case(lambda lib, a, b: lib.stack((a, b), -1), F(2), F(2))),
    "repeat": cases(Case(lambda lib, a: a.repeat(2, 1), F(2, 3)), Case(lambda lib, a: a.repeat(2, 1, 2), F(3)),
                    Case(lambda lib, a: a.tile((2,)), F(2, 3)), Case(lambda lib, a: lib.tile(a, (2, 2)), F(3))),
    "repeat_interleave": cases(Case(lambda lib, a, r: a.repeat_interleave(r, 0), F(3, 2), A([1, 0, 3])),
                               Case(lambda lib, r: lib.repeat_interleave(r), A([2, 1, 0, 1]))),
    "diag": cases(Case(lambda lib, a: lib.diag(a), F(3)), Case(lambda lib, a: a.diag(1), F(3, 3)), Case(lambda lib, a: lib.diag(a, -1), F(2))),
    "diag_embed": cases(Case(lambda lib, a: lib.diag_embed(a), F(2, 3)), Case(lambda lib, a: a.diag_embed(1, 0, 2), F(2, 3))),

    # ---- indexing ------------------------------------------------------------------------------------------
    "index": cases(Case(lambda lib, a, i: a[i], F(4, 3), A([0, 2, 2, -1])), Case(lambda lib, a, m: a[m], F(3, 2), B(3, 2)),
                   Case(lambda lib, a, i: a[1:, i], F(3, 4), A([[0, 1], [3, 3]])),
                   Case(lambda lib, a, i, j: a[i, :, j], F(3, 2, 4), A([0, 2]), A([1, 3])),
                   Case(lambda lib, a, m: a[m, 1], F(3, 2), B(3))),
    "index_put": cases(Case(lambda lib, a, v: _setitem(a, (slice(None), 1), v), F(2, 3), F(2)),
                       Case(lambda lib, a, i, v: _setitem(a, (i, slice(1, None)), v), F(3, 3), A([2, 0]), F(2)),
                       Case(lambda lib, a, m: _setitem(a, m, 0.5), F(2, 3), B(2, 3)),
                       Case(lambda lib, a, i, v: a.index_put((i,), v, accumulate=True), F(4), A([0, 0, 2]), F(3)),
                       Case(lambda lib, a, i, v: a.index_put((i,), v), F(4, 2), A([3, 1]), F(2))),
    "copy_slices": cases(Case(lambda lib, a, v: _write_through_view(a, v), F(3, 4), F(4)),
                         Case(lambda lib, a, v: _write_into_view(a, lambda w: w.copy_(v)), F(3, 4), F(4)),
                         Case(lambda lib, a: _write_into_view(a, lambda w: w.fill_(2.0)), F(3, 4)),
                         Case(lambda lib, a: _write_into_view(a, lambda w: w.pow_(2).exp_()), F(3, 4)),
                         Case(lambda lib, a, v: _write_into_view(a, lambda w: w.__setitem__(0, v[0])), F(3, 4), F(4)),
                         Case(lambda lib, a, v: _write_into_view(a, lambda w: w.add_(v, alpha=2)), F(3, 4), F(4)),
                         # circular padding is PyTorch's composite of slice copies into a new tensor
                         Case(lambda lib, x: lib.nn.functional.pad(x, (-1, 2, 3, 1), mode="circular"), F(3, 4, 5))),
    "view_replay": cases(Case(lambda lib, a, v: _write_through_view(a, v)[1], F(3, 4), F(4))),
    "gather": cases(Case(lambda lib, a, i: a.gather(1, i), F(3, 4), I(3, 2, high=4)),
                    Case(lambda lib, a, i: lib.gather(a, 0, i), F(3, 4), I(2, 3, high=3))),
    "scatter": cases(Case(lambda lib, a, i, s: a.scatter(1, i, s), F(3, 4), A([[0, 1], [2, 3], [3, 0]]), F(3, 2)),
                     Case(lambda lib, a, i, s: lib.scatter(a, 0, i, s, reduce="add"), F(3, 2), A([[0, 1], [0, 1]]), F(2, 2),
                          grad=False, fd=False)),
    "scatter_value": cases(Case(lambda lib, a, i: a.scatter(1, i, 2.5), F(3, 4), A([[0, 1], [2, 3], [3, 0]]))),
    "scatter_add": cases(Case(lambda lib, a, i, s: a.scatter_add(0, i, s), F(3, 4), I(4, 4, high=3), F(4, 4))),
    "scatter_reduce": cases(*(Case(lambda lib, a, i, s, r=r, inc=inc: a.scatter_reduce(0, i, s, r, include_self=inc),
                                   F(3, 2), A([[0, 1], [0, 1], [2, 1]]), F(3, 2))
                              for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)),
                            # prod with zeros in self and src: none, one and two in a slot.
                            *(Case(lambda lib, a, i, s, inc=inc: a.scatter_reduce(0, i, s, "prod", include_self=inc),
                                   A([[0.0, 1.5], [-0.5, 2.0], [1.2, 0.0]], "float64"), A([[0, 1], [0, 1], [2, 1], [0, 1]]),
                                   A([[0.7, 0.0], [0.0, -1.3], [0.0, 0.8], [1.1, 0.9]], "float64"))
                              for inc in (True, False))),
    "index_select": cases(Case(lambda lib, a, i: a.index_select(1, i), F(3, 4), A([3, 0, 0])),
                          Case(lambda lib, a, i: lib.index_select(a, 0, i), D("int32", 3, 2), A([2]))),
    "index_add": cases(Case(lambda lib, a, i, s: a.index_add(0, i, s, alpha=2), F(3, 2), A([0, 2, 0]), F(3, 2))),
    "index_copy": cases(Case(lambda lib, a, i, s: a.index_copy(1, i, s), F(2, 4), A([3, 0]), F(2, 2))),
    "index_fill": cases(Case(lambda lib, a, i: a.index_fill(1, i, -1.5), F(2, 4), A([3, 0])),
                        Case(lambda lib, a, i, v: lib.index_fill(a, 0, i, v), F(3, 2), A([1]), F())),
    "masked_fill": cases(Case(lambda lib, a, m: a.masked_fill(m, 0.5), F(2, 3), B(3)),
                         Case(lambda lib, a, m, v: lib.masked_fill(a, m, v), F(2, 3), B(2, 3), F())),
    "masked_scatter": cases(Case(lambda lib, a, m, s: a.masked_scatter(m, s), F(2, 3), B(2, 3), F(7))),
    "take": cases(Case(lambda lib, a, i: a.take(i), F(3, 4), A([[0, 11], [-1, 5]]))),
    "take_along_dim": cases(Case(lambda lib, a, i: lib.take_along_dim(a, i, 1), F(3, 4), I(3, 2, high=4)),
                            Case(lambda lib, a, i: a.take_along_dim(i), F(3, 4), A([1, 11])),
                            Case(lambda lib, a: lib.take_along_dim(a, a.argsort(1), 1), F(2, 3))),
    "nonzero": cases(Case(lambda lib, a: a.nonzero(), D("int64", 3, 4, low=-1, high=2)),
                     Case(lambda lib, a: lib.where(a), B(2, 3)), Case(lambda lib, a: lib.nonzero(a, as_tuple=True), B(4)),
                     Case(lambda lib, a: lib.argwhere(a), F(2, 2))),
    "nonzero_static": cases(Case(lambda lib, a: lib.nonzero_static(a, size=5), D("int64", 3, 4, low=-1, high=2)),
                            Case(lambda lib, a: lib.nonzero_static(a, size=2, fill_value=7), B(2, 3)),
                            Case(lambda lib, a: lib.nonzero_static(a, size=3), F(4)),
                            Case(lambda lib, a: a.nonzero_static(size=1), F(2, 2))),
    "masked_select": cases(Case(lambda lib, a, m: a.masked_select(m), F(2, 3), B(3)),
                           Case(lambda lib, a, m: lib.masked_select(a, m), F(3), B(2, 3))),

    # ---- linear algebra ------------------------------------------------------------------------------------
    "matmul": cases(Case(lambda lib, a, b: a @ b, F(2, 3), F(3, 4)), Case(lambda lib, a, b: lib.matmul(a, b), F(2, 2, 3), F(3)),
                    Case(lambda lib, a, b: a @ b, F(3), F(5, 3, 2)), Case(lambda lib, a, b: a @ b, C(2, 3), C(3))),
    "mm": cases(Case(lambda lib, a, b: a.mm(b), F(2, 3), F(3, 4)),
                # tensordot: both operands permuted and reshaped to matrices, mm, a view, as PyTorch
                Case(lambda lib, a, b: lib.tensordot(a, b, dims=([1, 0], [0, 1])), F(3, 4, 2), F(4, 3)),
                Case(lambda lib, a, b: lib.tensordot(a, b, 1), F(2, 3), F(3, 2)),
                Case(lambda lib, x, w: lib.nn.functional.linear(x, w), F(4), F(2, 4))),   # F.linear without bias
    "bmm": cases(Case(lambda lib, a, b: lib.bmm(a, b), F(2, 2, 3), F(2, 3, 1)),
                 # einsum: PyTorch's pairwise contractions (permute, reshape, bmm), in opt_einsum's order
                 Case(lambda lib, a, b: lib.einsum("bij,bjk->bik", a, b), F(2, 2, 3), F(2, 3, 2)),
                 Case(lambda lib, a, b, c: lib.einsum("abc,cd,bd->a", a, b, c), F(2, 3, 4), F(4, 5), F(3, 5)),
                 Case(lambda lib, a, b: lib.einsum("...ij,...jk", a, b), F(2, 1, 2, 3), F(4, 3, 2)),
                 Case(lambda lib, a, b: lib.einsum(a, [0, 1], b, [1, 2], [0, 2]), F(2, 3), F(3, 4))),
    "mv": cases(Case(lambda lib, a, b: a.mv(b), F(2, 3), F(3))),
    "dot": cases(Case(lambda lib, a, b: lib.dot(a, b), F(3), F(3)), Case(lambda lib, a, b: a.dot(b), C(3), C(3)),
                 Case(lambda lib, a, b: lib.tensordot(a, b), F(3, 3), F(3, 3))),   # every dim contracted
    "vdot": cases(Case(lambda lib, a, b: lib.vdot(a, b), C(3), C(3)), Case(lambda lib, a, b: a.vdot(b), F(3), F(3))),
    "outer": cases(Case(lambda lib, a, b: lib.outer(a, b), F(3), F(2)), Case(lambda lib, a, b: a.outer(b), D("int64", 2), F(3))),
    "addmv": cases(Case(lambda lib, c, a, b: lib.addmv(c, a, b, beta=0.5, alpha=2), F(2), F(2, 3), F(3)),
                   Case(lambda lib, c, a, b: c.addmv(a, b), F(1), F(2, 3), F(3))),
    "addmm": cases(Case(lambda lib, c, a, b: lib.addmm(c, a, b, beta=0.5, alpha=2), F(2, 4), F(2, 3), F(3, 4)),
                   Case(lambda lib, c, a, b: c.addmm(a, b), F(4), F(2, 3), F(3, 4)),
                   # F.linear records addmm (or mm) on the weight's transpose, as PyTorch
                   Case(lambda lib, x, w, b: lib.nn.functional.linear(x, w, b), F(2, 3, 4), F(5, 4), F(5))),
    "baddbmm": cases(Case(lambda lib, c, a, b: lib.baddbmm(c, a, b, alpha=0.5), F(2, 2, 4), F(2, 2, 3), F(2, 3, 4))),
    "cross": cases(Case(lambda lib, a, b: lib.linalg.cross(a, b), F(2, 3), F(2, 3)),
                   Case(lambda lib, a, b: lib.cross(a, b, dim=0), F(3, 2), F(3, 2))),
    "trace": cases(Case(lambda lib, a: a.trace(), F(3, 3))),
    "inv": cases(Case(lambda lib, a: lib.linalg.inv(_spd(lib, a)), F(3, 3)),
                 Case(lambda lib, a: lib.linalg.inv(a + 4 * lib.eye(3, dtype=a.dtype)).inverse(), F(2, 3, 3))),
    "det": cases(Case(lambda lib, a: lib.linalg.det(a), F(3, 3)), Case(lambda lib, a: a.det(), F(2, 2, 2))),
    "slogdet": cases(Case(lambda lib, a: lib.linalg.slogdet(a), F(3, 3)), Case(lambda lib, a: lib.logdet(_spd(lib, a)), F(3, 3))),
    "solve": cases(Case(lambda lib, a, b: lib.linalg.solve(_spd(lib, a), b), F(3, 3), F(3)),
                   Case(lambda lib, a, b: lib.linalg.solve(_spd(lib, a), b), F(2, 3, 3), F(2, 3, 2)),
                   Case(lambda lib, a, b: lib.linalg.solve(_spd(lib, a), b, left=False), F(3, 3), F(2, 3))),
    "cholesky": cases(Case(lambda lib, a: lib.linalg.cholesky(_spd(lib, a)), F(3, 3)),
                      Case(lambda lib, a: lib.linalg.cholesky(_spd(lib, a), upper=True), F(2, 3, 3)),
                      Case(lambda lib, a: lib.cholesky(_spd(lib, a), True), F(3, 3))),   # legacy
    "solve_triangular": cases(
        Case(lambda lib, a, b: lib.linalg.solve_triangular(a + 3 * lib.eye(3, dtype=a.dtype), b, upper=False), F(3, 3), F(2, 3, 2)),
        Case(lambda lib, a, b: lib.linalg.solve_triangular(a + 3 * lib.eye(3, dtype=a.dtype), b, upper=True, left=False,
                                                           unitriangular=True), F(2, 3, 3), F(2, 3))),
    "qr": cases(Case(lambda lib, a: [x * x for x in lib.linalg.qr(a)], F(4, 3)),
                Case(lambda lib, a: [x * x for x in lib.linalg.qr(a, mode="complete")], F(3, 3))),
    "svd": cases(Case(lambda lib, a: _svd_invariants(lib.linalg.svd(a, full_matrices=False)), F(4, 3))),
    "matrix_exp": cases(Case(lambda lib, a: lib.linalg.matrix_exp(a), F(3, 3)),
                        Case(lambda lib, a: lib.matrix_exp(a * 0.5), F(2, 2, 2))),
    "svdvals": cases(Case(lambda lib, a: lib.linalg.svdvals(a), F(3, 4))),
    # svdvals under autograd (U and Vh computed, S the node's output 1), as the nuc and 2-norms record it
    "svdvals_uv": cases(Case(lambda lib, a: lib.linalg.matrix_norm(a, "nuc"), F(3, 3)),
                        Case(lambda lib, a: lib.linalg.matrix_norm(a, 2), F(3, 2)),
                        Case(lambda lib, a: lib.linalg.matrix_norm(a, -2, dim=(0, 2), keepdim=True), F(3, 2, 4))),
    "eigh": cases(Case(lambda lib, a: _eigh_invariants(lib.linalg.eigh(a + a.mT)), F(3, 3))),
    "eigvalsh": cases(Case(lambda lib, a: lib.linalg.eigvalsh(a + a.mT), F(3, 3))),
    "pinv": cases(Case(lambda lib, a: lib.linalg.pinv(a), F(4, 3)), Case(lambda lib, a: a.pinverse(), F(2, 3)),
                  # hermitian=True reads a's lower triangle only, yet its gradient is the general formula's
                  # (PyTorch's pinv_backward), which finite differences of the value do not follow
                  Case(lambda lib, a: lib.linalg.pinv(_spd(lib, a) + lib.triu(a, 1), hermitian=True), F(3, 3),
                       fd=False)),
    "vector_norm": cases(Case(lambda lib, a: lib.linalg.vector_norm(a), F(2, 3)), Case(lambda lib, a: a.norm(), F(3)),
                         Case(lambda lib, a: lib.linalg.vector_norm(a, 1, dim=1), F(2, 3), fd=False),
                         Case(lambda lib, a: lib.linalg.vector_norm(a, float("inf"), 0, keepdim=True), F(2, 3)),
                         Case(lambda lib, a: lib.linalg.norm(a, 3, dim=-1), F(2, 3)),
                         Case(lambda lib, a: lib.norm(a * 0, dim=0), F(2), fd=False),
                         Case(lambda lib, a: lib.linalg.vector_norm(a), C(3)),
                         Case(lambda lib, a: lib.linalg.vector_norm(a, 0), A([1.0, 0.0, 2.0], "float64")),
                         # ATen's at::norm inside pairwise_distance (NormBackward1)
                         Case(lambda lib, a, b: lib.nn.functional.pairwise_distance(a, b, 3), F(3, 4), F(3, 4)),
                         # matrix norms PyTorch computes as vector norms (then amax/amin of the 1-norms)
                         Case(lambda lib, a: lib.linalg.matrix_norm(a), F(2, 3)),
                         Case(lambda lib, a: lib.linalg.norm(a, float("inf")), F(3, 3)),
                         Case(lambda lib, a: lib.linalg.matrix_norm(a, -1, keepdim=True), F(2, 3, 3)),
                         Case(lambda lib, a: lib.linalg.matrix_norm(a, float("-inf"), dim=(2, 0)), F(3, 2, 4))),
    "cdist": cases(Case(lambda lib, a, b: lib.cdist(a, b), F(3, 2), F(4, 2)),
                   Case(lambda lib, a, b: lib.cdist(a, b, p=float("inf")), F(2, 3, 2), F(2, 4, 2)),
                   # zero distances (gradient 0 there) and the p < 1 path
                   Case(lambda lib, a: lib.cdist(a, a, p=0.5), F(3, 2), fd=False)),
    "dist": cases(Case(lambda lib, a, b: lib.dist(a, b), F(2, 3), F(3)),
                  Case(lambda lib, a, b: a.dist(b, float("inf")), F(2, 3), F(2, 3)),
                  Case(lambda lib, a, b: lib.dist(a, b, 2.5), F(3), F(3)),
                  Case(lambda lib, a, b: lib.dist(a, b, 1), F(2, 3), F(2, 3), fd=False),
                  # (PyTorch's gradient of the 0-"norm" is undefined, a None .grad; tapegrad's is zeros)
                  Case(lambda lib, a, b: lib.dist(a, b, 0), F(3), F(3), grad=False),
                  # a zero difference: the norm's gradient is 0 there
                  Case(lambda lib, a: lib.dist(a, a * 1), F(2, 2), fd=False),
                  Case(lambda lib, a, b: lib.dist(a, b), C(3), C(3))),

    # ---- random fills: shapes, dtypes, ranges and nodes here; values from the same seed in test_cpu_random_stream --
    "uniform": cases(Case(lambda lib, a: _bounded((a * 1).uniform_(-1, 2), lib, -1, 2), F(50), compare=False)),
    "normal": cases(Case(lambda lib, a: (a * 1).normal_(3, 0.1), F(200), compare=False)),
    # torch.normal of tensor means/stds: draws, and a zero gradient to them by PyTorch's definition
    "normal_tensor": cases(Case(lambda lib, m, s: lib.normal(m, s), F(3, 4), F(4, low=0.1, high=1.0), compare=False,
                                fd=False),
                           Case(lambda lib, m: lib.normal(m, 0.5), F(3), compare=False, fd=False),
                           Case(lambda lib, s: lib.normal(1.0, s), F(2, 2, low=0.1, high=1.0), compare=False,
                                fd=False)),
    "exponential": cases(Case(lambda lib, a: _bounded((a * 1).exponential_(), lib, 0, 1e9), F(50), compare=False)),
    "cauchy": cases(Case(lambda lib, a: (a * 1).cauchy_(0.5, 2.0), F(50), compare=False)),
    "geometric": cases(Case(lambda lib, a: _bounded((a * 1).geometric_(0.3), lib, 1, 1e9), F(50), compare=False)),
    "log_normal": cases(Case(lambda lib, a: _bounded((a * 1).log_normal_(0.5, 0.25), lib, 0, 1e9), F(50),
                             compare=False)),
    "random": cases(Case(lambda lib, a: _bounded(a.clone().random_(2, 5), lib, 2, 4), D("int64", 40), compare=False),
                    Case(lambda lib, a: _bounded((a * 1).random_(4), lib, 0, 3), F(40), compare=False)),
    "bernoulli_fill": cases(Case(lambda lib, a: _bounded((a * 1).bernoulli_(0.3), lib, 0, 1), F(40), compare=False)),
    "bernoulli": cases(Case(lambda lib, p: _bounded(lib.bernoulli(p), lib, 0, 1), F(40, low=0, high=1), compare=False)),
    "multinomial": cases(Case(lambda lib, p: _bounded(lib.multinomial(p, 2), lib, 0, 3), F(3, 4, low=0.1, high=1), compare=False),
                         Case(lambda lib, p: _bounded(p.multinomial(5, True), lib, 0, 3), F(4, low=0.1, high=1), compare=False)),
    "poisson": cases(Case(lambda lib, r: _bounded(lib.poisson(r), lib, 0, 1e9), F(40, low=0.5, high=8), compare=False)),
    # Its gradient is the implicit one, which finite differences at a fixed key do not give;
    # tests/test_distributions.py compares it with PyTorch's _standard_gamma_grad at tapegrad's draws.
    "standard_gamma": cases(Case(lambda lib, a: _bounded(lib._standard_gamma(a), lib, 0, 1e9), F(40, low=0.5, high=4),
                                 compare=False, grad=False, fd=False)),
}


def _legacy_wrap(lib, a):
    # The legacy constructor of a's own dtype wraps it (an alias sharing its storage).
    return (lib.DoubleTensor if a.dtype == lib.float64 else lib.FloatTensor)(a)


def _setitem(a, index, value):
    out = a * 1
    out[index] = value
    return out


def _write_through_view(a, v):
    # In-place through a view of a tensor in the graph: one node on the base, the view rebased.
    base = a * 1
    view = base[1]
    view.mul_(2).add_(v)
    return base, view


def _write_into_view(a, write):
    base = a * 1
    write(base[1])
    return base


def _svd_invariants(usv):
    u, s, vh = usv
    return s, u * u, vh * vh


def _eigh_invariants(result):
    values, vectors = result
    return values, vectors * vectors


def _bounded(t, lib, low, high):
    # Random results are checked for their range here, in both libraries.
    if not bool(((t >= low) & (t <= high)).all()):
        raise AssertionError(f"values outside [{low}, {high}]: {t}")
    return t
