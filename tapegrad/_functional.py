"""PyTorch's functional API (torch.add, torch.sum, ...) over the op table.

Each function parses PyTorch's arguments into the op's inputs and statics
and calls `apply`; the maths is in `_ops`.
"""
import builtins
import numbers

import numpy as np

from . import _dtypes as D
from ._dispatch import apply
from ._ops import elementwise as E, reduction as R, shape as S, linalg as L
from ._tensor import Tensor, _wrap_dim

_SCALARS = (builtins.bool, builtins.int, builtins.float, builtins.complex)


def scalar_or_tensor(x):
    """Python/NumPy scalars pass as Python scalars; tensors as themselves; else TypeError."""
    if isinstance(x, Tensor) or type(x) in _SCALARS:
        return x
    if isinstance(x, numbers.Number):
        return x.item() if hasattr(x, "item") else x
    if isinstance(x, np.ndarray):
        from ._creation import tensor
        return tensor(x)
    raise TypeError(f"expected Tensor or number, got {type(x).__name__}")


# ---- arithmetic ----------------------------------------------------------------------

def add(input, other, *, alpha=1, out=None):
    other = scalar_or_tensor(other)
    if alpha == 1:
        return apply(E.add, input, other)
    _check_alpha(input, other, alpha)
    return apply(E.add_scaled, input, other, alpha)


def sub(input, other, *, alpha=1, out=None):
    other = scalar_or_tensor(other)
    if isinstance(input, Tensor) and input.dtype is D.bool_ and isinstance(other, Tensor) \
            and other.dtype is D.bool_:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if alpha == 1:
        return apply(E.sub, input, other)
    _check_alpha(input, other, alpha)
    return apply(E.sub_scaled, input, other, alpha)


subtract = sub


def _check_alpha(input, other, alpha):
    tensors = [t for t in (input, other) if isinstance(t, Tensor)]
    if isinstance(alpha, builtins.float) and all(not (t.dtype.is_floating_point or t.dtype.is_complex)
                                                   for t in tensors):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating point number.")


def rsub(input, other, *, alpha=1):
    return sub(scalar_or_tensor(other), input, alpha=alpha) if isinstance(other, Tensor) \
        else apply(E.rsub, input, scalar_or_tensor(other))


def mul(input, other, *, out=None):
    return apply(E.mul, input, scalar_or_tensor(other))


multiply = mul


def div(input, other, *, rounding_mode=None, out=None):
    other = scalar_or_tensor(other)
    if rounding_mode is None:
        return apply(E.div, input, other)
    if rounding_mode == "trunc":
        return apply(E.div_trunc, input, other)
    if rounding_mode == "floor":
        return apply(E.div_floor, input, other)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                       f"'{rounding_mode}'")


divide = true_divide = div


def floor_divide(input, other, *, out=None):
    return apply(E.floor_divide, input, scalar_or_tensor(other))


def remainder(input, other, *, out=None):
    return apply(E.remainder, input, scalar_or_tensor(other))


def fmod(input, other, *, out=None):
    return apply(E.fmod, input, scalar_or_tensor(other))


def pow(input, exponent, *, out=None):
    return apply(E.pow, scalar_or_tensor(input), scalar_or_tensor(exponent))


def maximum(input, other, *, out=None):
    return apply(E.maximum, input, other)


def minimum(input, other, *, out=None):
    return apply(E.minimum, input, other)


def atan2(input, other, *, out=None):
    return apply(E.atan2, input, scalar_or_tensor(other))


def clamp(input, min=None, max=None, *, out=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if max is None:
        return apply(E.clamp_min, input, scalar_or_tensor(min))
    if min is None:
        return apply(E.clamp_max, input, scalar_or_tensor(max))
    return apply(E.clamp, input, scalar_or_tensor(min), scalar_or_tensor(max))


clip = clamp


def clamp_min(input, min):
    return apply(E.clamp_min, input, scalar_or_tensor(min))


def clamp_max(input, max):
    return apply(E.clamp_max, input, scalar_or_tensor(max))


def where(condition, input=None, other=None):
    if input is None and other is None:
        from ._ops_nonzero import nonzero_tuple
        return nonzero_tuple(condition)
    return apply(E.where, condition, scalar_or_tensor(input), scalar_or_tensor(other)) \
        if isinstance(input, Tensor) and isinstance(other, Tensor) else _where_scalars(condition, input, other)


def _where_scalars(condition, input, other):
    from ._creation import tensor
    vals = [scalar_or_tensor(v) for v in (input, other)]
    dtype = D.result_type([v.dtype for v in vals if isinstance(v, Tensor) and v.ndim],
                          [v.dtype for v in vals if isinstance(v, Tensor) and not v.ndim],
                          [v for v in vals if not isinstance(v, Tensor)])
    vals = [v.to(dtype) if isinstance(v, Tensor) else tensor(v, dtype=dtype) for v in vals]
    return apply(E.where, condition, *vals)


def _unary(op):
    def f(input, *, out=None):
        return apply(op, input)
    f.__name__ = op.name
    return f


neg = negative = _unary(E.neg)
abs = absolute = _unary(E.abs)
sign = _unary(E.sign)
exp = _unary(E.exp)
log = _unary(E.log)
sqrt = _unary(E.sqrt)
rsqrt = _unary(E.rsqrt)
sin = _unary(E.sin)
cos = _unary(E.cos)
tan = _unary(E.tan)
tanh = _unary(E.tanh)
sigmoid = _unary(E.sigmoid)
relu = _unary(E.relu)
reciprocal = _unary(E.reciprocal)
square = _unary(E.square)
floor = _unary(E.floor)
ceil = _unary(E.ceil)
trunc = _unary(E.trunc)
logical_not = _unary(E.logical_not)
bitwise_not = _unary(E.bitwise_not)


def round(input, *, decimals=0, out=None):
    return apply(E.round, input, decimals=decimals)


def _binary(op):
    def f(input, other, *, out=None):
        return apply(op, scalar_or_tensor(input), scalar_or_tensor(other))
    f.__name__ = op.name
    return f


eq = _binary(E.eq)
ne = not_equal = _binary(E.ne)
lt = less = _binary(E.lt)
le = less_equal = _binary(E.le)
gt = greater = _binary(E.gt)
ge = greater_equal = _binary(E.ge)
logical_and = _binary(E.logical_and)
logical_or = _binary(E.logical_or)
logical_xor = _binary(E.logical_xor)
bitwise_and = _binary(E.bitwise_and)
bitwise_or = _binary(E.bitwise_or)
bitwise_xor = _binary(E.bitwise_xor)


def clone(input, *, memory_format=None):
    return apply(E.clone, input)


# ---- reductions ------------------------------------------------------------------------

def _dims(dim, ndim):
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        return tuple(sorted(_wrap_dim(d, ndim) for d in dim))
    return (_wrap_dim(dim, ndim),)


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    dtype = D.as_dtype(dtype)
    if dtype is None and not (input.dtype.is_floating_point or input.dtype.is_complex):
        dtype = D.int64
    return apply(R.sum, input, dim=_dims(dim, input.ndim), keepdim=builtins.bool(keepdim),
                 dtype=dtype.np if dtype is not None else None)


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    dtype = D.as_dtype(dtype)
    d = dtype or input.dtype
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a floating point "
                           f"or complex dtype. Got: {_ScalarName[d.name]}. Convert first, e.g. x.float().mean().")
    return apply(R.mean, input, dim=_dims(dim, input.ndim), keepdim=builtins.bool(keepdim),
                 dtype=dtype.np if dtype is not None else None)


_ScalarName = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
               "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
               "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


# ---- matrix products ---------------------------------------------------------------------

def _check_same_dtype(a, b, what):
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {a.dtype.name[:0]}"
                           f"{_cname(a.dtype)} != {_cname(b.dtype)}" if what == "mm" else
                           f"expected both tensors to have the same dtype, got {a.dtype} and {b.dtype}")


def _cname(d):
    return {"float32": "float", "float64": "double", "int64": "long int", "int32": "int",
            "float16": "c10::Half", "bfloat16": "c10::BFloat16"}.get(d.name, d.name)


def matmul(input, other, *, out=None):
    if input.ndim == 0 or other.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are {input.ndim}D and "
                           f"{other.ndim}D")
    _check_same_dtype(input, other, "mm")
    a, b = input.shape, other.shape
    inner_a = a[-1]
    inner_b = b[-2] if len(b) > 1 else b[0]
    if inner_a != inner_b:
        raise RuntimeError(_mm_shape_error(a, b))
    return apply(L.matmul, input, other)


def _mm_shape_error(a, b):
    if len(a) == 1 and len(b) == 1:
        return (f"inconsistent tensor size, expected tensor [{a[0]}] and src [{b[0]}] to have the same number "
                "of elements, but got {a[0]} and {b[0]} elements respectively")
    ra = a if len(a) > 1 else (1,) + tuple(a)
    rb = b if len(b) > 1 else tuple(b) + (1,)
    ma = f"{_prod(ra[:-1])}x{ra[-1]}"
    mb = f"{rb[-2]}x{rb[-1]}" if len(rb) == 2 else f"{_prod(rb[:-2]) * rb[-2]}x{rb[-1]}"
    return f"mat1 and mat2 shapes cannot be multiplied ({ma} and {mb})"


def _prod(xs):
    n = 1
    for x in xs:
        n *= x
    return n


def mm(input, mat2, *, out=None):
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"{'self' if input.ndim != 2 else 'mat2'} must be a matrix")
    _check_same_dtype(input, mat2, "mm")
    if input.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({input.shape[0]}x{input.shape[1]} and "
                           f"{mat2.shape[0]}x{mat2.shape[1]})")
    return apply(L.mm, input, mat2)


# ---- shapes ---------------------------------------------------------------------------------

def _infer_shape(shape, numel):
    shape = list(shape)
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        known = _prod(s for s in shape if s != -1)
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // known
    if _prod(shape) != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


def _shape_args(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    return tuple(builtins.int(s) for s in shape)


def reshape(input, *shape):
    shape = _infer_shape(_shape_args(shape), input.numel())
    if shape == tuple(input.shape):
        return apply(S.alias, input)
    return apply(S.view, input, shape=shape)


def view(input, *shape):
    if len(shape) == 1 and isinstance(shape[0], (D.dtype, type)) and not isinstance(shape[0], (tuple, list)):
        raise NotImplementedError("view(dtype) is not supported; use .to(dtype)")
    return apply(S.view, input, shape=_infer_shape(_shape_args(shape), input.numel()))


def flatten(input, start_dim=0, end_dim=-1):
    shape = tuple(input.shape)
    if not shape:
        return reshape(input, 1)
    s, e = _wrap_dim(start_dim, len(shape)), _wrap_dim(end_dim, len(shape))
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if s == e:
        return input
    return reshape(input, shape[:s] + (_prod(shape[s:e + 1]),) + shape[e + 1:])


def transpose(input, dim0, dim1):
    n = input.ndim
    return apply(S.transpose, input, dim0=_wrap_dim(dim0, n), dim1=_wrap_dim(dim1, n))


swapaxes = swapdims = transpose


def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {input.ndim}D. "
                           "Use transpose(dim0, dim1) or .mT for batches of matrices.")
    return apply(S.t, input)


def permute(input, *dims):
    dims = _shape_args(dims)
    n = input.ndim
    if len(dims) != n:
        raise RuntimeError(f"permute(sparse_coo): number of dimensions in the tensor input does not match the "
                           f"length of the desired ordering of dimensions i.e. input.dim() = {n} is not equal "
                           f"to len(dims) = {len(dims)}")
    return apply(S.permute, input, dims=tuple(_wrap_dim(d, n) for d in dims))


def unsqueeze(input, dim):
    return apply(S.unsqueeze, input, dim=_wrap_dim(dim, input.ndim + 1))


def squeeze(input, dim=None):
    shape = input.shape
    if dim is None:
        dims = tuple(i for i, s in enumerate(shape) if s == 1)
    else:
        dims = tuple(d for d in (_dims(dim, input.ndim) or ()) if shape[d] == 1) if input.ndim else ()
    return apply(S.squeeze, input, dims=dims)


def expand(input, *sizes):
    sizes = _shape_args(sizes)
    shape = tuple(input.shape)
    if len(sizes) < len(shape):
        raise RuntimeError(f"expand(torch.FloatTensor{{{list(shape)}}}, size={list(sizes)}): the number of sizes "
                           f"provided ({len(sizes)}) must be greater or equal to the number of dimensions in the "
                           f"tensor ({len(shape)})")
    padded = (1,) * (len(sizes) - len(shape)) + shape
    out = []
    for i, (want, have) in enumerate(zip(sizes, padded)):
        if want == -1:
            want = have
        elif have != 1 and want != have:
            raise RuntimeError(f"The expanded size of the tensor ({want}) must match the existing size ({have}) at "
                               f"non-singleton dimension {i}.  Target sizes: {list(sizes)}.  Tensor sizes: "
                               f"{list(shape)}")
        out.append(want)
    return apply(S.expand, input, shape=tuple(out))


def matmul_t(input):
    return transpose(input, -2, -1)
