"""Tensor methods and operators, bound to the functional API and the op table."""
import builtins
import functools
import inspect
import numbers
import types

import jax.numpy as jnp
import numpy as np

from . import _dtypes as D
from . import _functional
from . import _placement, _views
from ._argument_errors import reraise
from ._dispatch import apply
from ._grad_mode import no_grad
from ._functional import _random
from ._broadcast_errors import broadcast_error as _broadcast_error
from ._functional._arith import _floor_divide
from ._indexing import getitem, setitem
from ._functional._put import _parse_indices, _check_put_values
from ._inplace import (inplace, commit, check_inplace, name_as_inplace, _can_cast, _untracked_write, refused_cast,
                       warn_complex_to_real)
from ._overlap import check_overlap, loop_reads
from ._scalar_range import check_fits
from ._ops import elementwise as E, indexing as I
from ._tensor import Tensor
from ._view_info import ViewInfo

# the functional API without its out= wrapper (see _functional.WITHOUT_OUT)
F = types.SimpleNamespace(**{**vars(_functional), **_functional.WITHOUT_OUT})


def _compared(x):
    """x == array: the array compared as a tensor, as PyTorch's __eq__ does (its other operators refuse it)."""
    if isinstance(x, np.ndarray):
        from ._creation import tensor
        return tensor(x)
    return F.scalar_or_tensor(x)


def _reflected(fn):
    def method(self, other):
        try:
            other = F.scalar_or_tensor(other)
        except TypeError:
            return NotImplemented
        return fn(other, self)
    return method


def _forward(fn, operand=F.scalar_or_tensor):
    """An operator: its other operand a tensor or a number, else NotImplemented. A NumPy array too, as PyTorch's
    operators: Python then asks NumPy, which computes `tensor op array` itself (a tensor of NumPy's result, see
    __array_wrap__) and refuses `array op tensor`."""
    def method(self, other):
        try:
            other = operand(other)
        except TypeError:
            return NotImplemented
        return fn(self, other)
    return method


def _reflected_division(self, other):
    # PyTorch's other / x is x.reciprocal() * other, an array's product computed by NumPy
    if isinstance(other, np.ndarray):
        return F.reciprocal(self) * other
    try:
        other = F.scalar_or_tensor(other)
    except TypeError:
        return NotImplemented
    return F.mul(F.reciprocal(self), other)


def _power(fn):
    forward = _forward(fn)

    def method(self, other, modulo=None):   # pow(x, y, m): NotImplemented, so Python's TypeError, as for PyTorch
        return NotImplemented if modulo is not None else forward(self, other)
    return method


_CPP_NAMED_CASTS = {"clamp_", "clamp_min_", "clamp_max_", "clip_"}   # (with number bounds)
_SCALED = {"add_", "sub_", "subtract_", "__iadd__", "__isub__"}


def _check_bound_cast(self, args, kwargs):
    """clamp_ with number bounds: PyTorch's clamp refuses a result self cannot hold (an integer tensor, a float
    bound) in its meta function, before its loop checks for overlapping memory."""
    bounds = [b for b in (*args, *kwargs.values()) if b is not None]
    if not bounds or any(isinstance(b, Tensor) for b in bounds):
        return
    if self.dtype.is_complex or self.dtype.is_floating_point and not any(isinstance(b, complex) for b in bounds):
        return   # (a float tensor holds any real bound: the hot path)
    _refuse_cast(self, bounds, cpp_names=True)


def _refuse_cast(self, operands, cpp_names=False):
    """PyTorch's refusal of an in-place result (self promoted with `operands`) that self cannot hold."""
    from ._functional._common import result_dtype
    dtype = result_dtype(self, *operands)
    if dtype is not self.dtype and not _can_cast(dtype, self.dtype):
        raise refused_cast(dtype, self.dtype, cpp_names)


def _check_scaled_cast(self, other, subtract):
    """In place, PyTorch refuses a result self cannot hold before it reads alpha (out of place, alpha first);
    a subtraction refuses bools before either."""
    if not isinstance(other, Tensor):
        return   # (a number or a list: the op words its errors)
    if other.dtype is self.dtype and other.dtype is not D.bool_:
        return   # (one dtype: nothing to refuse, the hot path, which imports nothing)
    from ._functional._arith import _check_bool_subtraction
    if subtract and (self.dtype is D.bool_ or other.dtype is D.bool_):
        _check_bool_subtraction(self, other)   # (before the overlap check, as PyTorch's sub_check)
    if other.dtype is self.dtype:
        return
    try:
        if tuple(np.broadcast_shapes(tuple(self.shape), tuple(other.shape))) != tuple(self.shape):
            return   # (a shape error: the commit words it first, as PyTorch)
    except ValueError:
        return
    _refuse_cast(self, (other,))


def _inplace_method(fn, name, elementwise=False, scalar_arg=None):
    """x.op_(...) / x op= y: the out-of-place function, then written into x. args[scalar_arg] PyTorch reads
    once, as a number, before its loop: it is neither checked for overlap nor read again."""
    operator = name.startswith("__i")

    def method(self, *args, **kwargs):
        if operator and isinstance(args[0], np.ndarray):
            return NotImplemented   # x op= array: Python computes x op array and rebinds x, as for PyTorch
        check_inplace(self, args)
        if name in _SCALED:
            _check_scaled_cast(self, args[0] if args else kwargs.get("other"), "sub" in name)
        elif name in _CPP_NAMED_CASTS:
            _check_bound_cast(self, args, kwargs)
        looped = args if scalar_arg is None else args[:scalar_arg] + args[scalar_arg + 1:]
        shared = check_overlap(self, looped)
        result = fn(self, *args, **kwargs)
        if result is NotImplemented:   # x += [1, 2]: Python then raises its TypeError, as for PyTorch
            return NotImplemented
        value = _loop_value(self, args, kwargs, fn, result, scalar_arg) if shared and elementwise else None
        cpp_names = name in _CPP_NAMED_CASTS and not any(isinstance(a, Tensor) for a in (*args, *kwargs.values()))
        commit(self, result, value, name, cpp_names)
        return self
    method.__name__ = name
    return method


def _loop_value(self, args, kwargs, fn, result, scalar_arg=None):
    """What PyTorch's loop leaves in self when an operand reads memory it writes (`_overlap.loop_reads`), or
    None: fn evaluated again with those reads taken from the values written, once per link of the longest
    chain of such reads. Autograd records the op on the old values, as PyTorch's does."""
    if result.dtype is not self.dtype or tuple(result.shape) != tuple(self.shape):
        return None   # commit refuses it
    found = loop_reads(self, [None if k == scalar_arg else a for k, a in enumerate(args)])
    if found is None:
        return None
    reads, depth = found
    shape = tuple(self.shape)
    with no_grad():
        target = self.detach()
        plain = [a.detach() if isinstance(a, Tensor) else a for a in args]
        reads = [(k, Tensor._wrap(jnp.asarray(src)).to(self.device), Tensor._wrap(jnp.asarray(mask)).to(self.device))
                 for k, src, mask in reads]
        flat = result.detach().reshape(-1)
        for _ in range(depth):
            now = list(plain)
            for k, src, mask in reads:
                now[k] = F.where(mask, flat[src], plain[k].expand(shape).reshape(-1)).reshape(shape)
            flat = fn(target, *now, **kwargs).reshape(-1)
    return flat.reshape(shape)


# ---- operators -----------------------------------------------------------------------
_OPERATORS = {
    "add": F.add, "sub": F.sub, "mul": F.mul, "truediv": F.div, "floordiv": F.floor_divide,
    "mod": F.remainder, "pow": F.pow, "matmul": F.matmul, "and": F.bitwise_and, "or": F.bitwise_or,
    "xor": F.bitwise_xor, "lshift": F.bitwise_left_shift, "rshift": F.bitwise_right_shift,
}
# 2 + x, 2 * x and 2 / x: PyTorch computes x.add(2), x.mul(2) and x.reciprocal() * 2 (torch.add(2, x) keeps
# the scalar first).
_REFLECTED = {"add": _forward(F.add), "mul": _forward(F.mul), "truediv": _reflected_division,
              "pow": _power(lambda self, other: F.pow(other, self))}
for _name, _fn in _OPERATORS.items():
    setattr(Tensor, f"__{_name}__", _power(_fn) if _name == "pow" else _forward(_fn))
    setattr(Tensor, f"__r{_name}__", _REFLECTED.get(_name) or _reflected(_fn))
    if _name != "matmul":   # (PyTorch's Tensor has no __imatmul__: a @= b rebinds a to a @ b)
        setattr(Tensor, f"__i{_name}__", _inplace_method(_forward(_fn), f"__i{_name}__", True))
Tensor.__rsub__ = _forward(lambda self, other: F.rsub(self, other))
for _name, _fn in {"eq": F.eq, "ne": F.ne, "lt": F.lt, "le": F.le, "gt": F.gt, "ge": F.ge}.items():
    # (x == array compares with the array as a tensor, as PyTorch's; the others leave it to NumPy)
    setattr(Tensor, f"__{_name}__", _forward(_fn, _compared if _name == "eq" else F.scalar_or_tensor))
Tensor.__neg__ = lambda self: F.neg(self)
Tensor.__pos__ = lambda self: F.positive(self)
Tensor.__abs__ = lambda self: F.abs(self)


def _invert(self):
    if self.dtype is D.bool_:
        return F.logical_not(self)
    if self.dtype.is_floating_point or self.dtype.is_complex:   # (PyTorch's Python operator checks first)
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type tensors; to negate "
                        "a mask held as floats use x.logical_not()")
    return F.bitwise_not(self)


Tensor.__invert__ = _invert
Tensor.__getitem__ = getitem
Tensor.__setitem__ = setitem


def _contains(self, element):
    if not isinstance(element, (Tensor, numbers.Number)):
        raise RuntimeError(f"Tensor.__contains__ only supports Tensor or scalar, but you passed in a {type(element)}.")
    return builtins.bool((element == self).any())   # (element first: a size mismatch names it tensor a)


def _reversed(self):
    return self if self.ndim == 0 else F.flip(self, 0)


Tensor.__contains__ = _contains
Tensor.__reversed__ = _reversed

# ---- methods that are the functional API with self first -----------------------------
# Functions PyTorch offers only as torch.* (no Tensor method).
_NOT_METHODS = {
    "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_shapes", "broadcast_tensors", "cat", "column_stack",
    "complex", "concat", "concatenate", "dstack", "einsum", "hstack", "polar", "row_stack", "rsub", "stack",
    "std_mean", "var_mean", "tensordot", "view_as_complex", "view_as_real", "vstack", "where", "real", "imag",
    "numel", "searchsorted", "cdist", "meshgrid", "fill", "vander", "hann_window", "hamming_window",
    "blackman_window", "bartlett_window", "kaiser_window", "bucketize", "isin", "chain_matmul", "block_diag",
    "cartesian_prod", "combinations", "trapezoid", "trapz", "cumulative_trapezoid", "unravel_index", "result_type",
    "can_cast", "view_copy", "t_copy", "transpose_copy", "permute_copy", "expand_copy", "squeeze_copy",
    "unsqueeze_copy", "select_copy", "slice_copy", "diagonal_copy", "detach_copy", "alias_copy", "unbind_copy",
    "split_copy", "split_with_sizes_copy", "unfold_copy", "as_strided_copy", "view_as_real_copy",
    "view_as_complex_copy",
}
def _takes_out(fn):
    try:
        return "out" in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


def _refusing_out(fn, name):
    """fn as a method: the functions accept out= (and ignore it, see _functional._out), PyTorch's methods take
    none, so one given raises PyTorch's TypeError rather than going unwritten."""
    @functools.wraps(fn)
    def method(*args, **kwargs):
        if "out" in kwargs:
            raise TypeError(f"{name}() got an unexpected keyword argument 'out'. Tensor methods write no out= "
                            f"tensor: call torch.{name.rstrip('_')}(..., out=t) or assign the result.")
        try:
            return fn(*args, **kwargs)
        except TypeError as e:   # (arguments that fit none of PyTorch's signatures: its parser's error)
            reraise(e, "method", name, args[1:], kwargs)
    method.__name__ = name
    method.parses_arguments = True
    return method


def _method(fn, name, function=None):
    """fn bound as method `name`, refusing out= where the function it calls (fn, or `function`) takes one."""
    return _refusing_out(fn, name) if _takes_out(function or fn) else fn


for _name in F.__all__:
    if _name not in _NOT_METHODS:
        setattr(Tensor, _name, _method(getattr(F, _name), _name))
Tensor.svd = _method(F._linalg_functions.svd_legacy, "svd")   # torch.svd's (U, S, V), as a method too
Tensor.qr = _method(F._linalg_functions.qr_legacy, "qr")   # torch.qr's `some`, as a method too
Tensor.polygamma = lambda self, n: F.polygamma(n, self)   # the order is n, input for torch.polygamma only
Tensor.is_signed = lambda self: self.dtype.is_signed

# In-place variants x.op_(...) that PyTorch has, for the functions above (comparisons: further down).
_INPLACE = [
    "abs", "absolute", "acos", "acosh", "add", "addbmm", "addcdiv", "addcmul", "addmm", "addmv", "addr", "arccos",
    "arccosh", "arcsin",
    "arcsinh", "arctan", "arctan2", "arctanh", "asin", "asinh", "atan", "atan2", "atanh", "baddbmm",
    "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or", "bitwise_right_shift", "bitwise_xor", "ceil", "copysign",
    "clamp", "clamp_max", "clamp_min", "clip", "conj_physical", "cos", "cosh", "cumprod", "cumsum", "deg2rad",
    "div",
    "digamma", "divide", "erf", "erfc", "erfinv", "exp", "exp2", "expm1", "fix", "float_power", "floor",
    "floor_divide", "fmod", "frac", "gcd", "heaviside", "hypot", "i0", "igamma", "igammac", "index_add",
    "index_copy", "index_fill", "lcm", "ldexp", "mvlgamma", "nextafter", "lerp", "lgamma", "log", "log10", "log1p",
    "log2", "index_reduce",
    "logical_and",
    "logical_not", "logical_or", "logical_xor", "logit", "masked_fill", "masked_scatter", "mul", "multiply",
    "nan_to_num", "neg", "negative", "pow", "put", "rad2deg", "reciprocal", "relu", "remainder", "renorm", "round",
    "rsqrt", "scatter", "scatter_add", "scatter_reduce", "sgn", "sigmoid", "sign", "sin", "sinc", "sinh", "sqrt",
    "square", "sub", "subtract", "tan", "tanh", "tril", "triu", "true_divide", "trunc", "xlogy",
]
# the ones PyTorch computes element by element (a TensorIterator loop) from several tensors
_ELEMENTWISE = {
    "add", "addcdiv", "addcmul", "arctan2", "atan2", "bitwise_and", "bitwise_left_shift", "bitwise_or",
    "bitwise_right_shift", "bitwise_xor", "clamp", "clamp_max", "clamp_min", "clip", "copysign", "div", "divide",
    "float_power", "floor_divide", "fmod", "gcd", "heaviside", "hypot", "igamma", "igammac", "lcm", "ldexp", "lerp",
    "nextafter",
    "logical_and", "logical_or", "logical_xor",
    "mul", "multiply", "pow", "remainder", "sub", "subtract", "true_divide", "xlogy",
}
_SCALAR_ARG = {"masked_fill": 1}   # the value: PyTorch fills with value.item()
for _name in _INPLACE:
    setattr(Tensor, _name + "_", _method(_inplace_method(getattr(F, _name), _name + "_", _name in _ELEMENTWISE,
                                                         _SCALAR_ARG.get(_name)), _name + "_", getattr(F, _name)))
Tensor.polygamma_ = _inplace_method(lambda self, n: F.polygamma(n, self, _op=E.polygamma_), "polygamma_")
# floor_divide_ and //=: their backward's error names floor_divide_, as PyTorch's.
Tensor.floor_divide_ = _inplace_method(
    lambda self, other: _floor_divide(self, other, E.floor_divide_), "floor_divide_", True)
Tensor.__ifloordiv__ = _inplace_method(_forward(lambda self, other: _floor_divide(self, other, E.floor_divide_)),
                                       "__ifloordiv__", True)
# In place, PyTorch records conj_physical_ on real tensors too (ConjPhysicalBackward1).
Tensor.conj_physical_ = _inplace_method(lambda self: apply(E.conj_physical, self), "conj_physical_")


def _inplace_comparison(op, name):
    """x.eq_(y): the comparison computed in x's dtype, so that it records PyTorch's node (a zero gradient)."""
    def method(self, other):
        other = F.scalar_or_tensor(other)
        check_inplace(self, (other,))
        check_overlap(self, (other,))
        commit(self, apply(op, self, other, dtype=self.dtype.np))
        return self
    method.__name__ = name
    return method


for _op, _names in {E.eq: ("eq",), E.ne: ("ne", "not_equal"), E.lt: ("lt", "less"), E.le: ("le", "less_equal"),
                    E.gt: ("gt", "greater"), E.ge: ("ge", "greater_equal")}.items():
    for _name in _names:
        setattr(Tensor, _name + "_", _inplace_comparison(_op, _name + "_"))


def _view_inplace(fn):
    # Shape-changing in-place ops (t_, unsqueeze_...) rebind the tensor to the new shape; a tensor that was
    # no view stays none (PyTorch's ._base is None), reading its storage through the new recipe. A view keeps
    # its base and the mode it was made in (PyTorch changes the geometry of the same tensor). They bump the
    # version as any in-place op, so a value saved before is stale at backward, as in PyTorch.
    def method(self, *args, **kwargs):
        check_inplace(self)   # a leaf that requires grad, or a view of one, refuses them too
        old = self._view
        out = fn(self, *args, **kwargs)
        info, storage = out._view, out._storage
        if info is not None and (old is None or old.base is None):
            info = ViewInfo(None, info.steps, info.positions, info.version, info.value)
        elif info is not None:
            info.base, info.creation, info.output_nr, info.grad_version = \
                old.base, old.creation, old.output_nr, old.grad_version
        self._storage, self._view = storage, info
        storage.bump()
        if info is not None and info.version == storage.version - 1:
            info.version = storage.version   # the values it caches are unchanged
        node, index = out._grad_fn, out._out_idx
        del out   # (a view of the base too, no longer needed)
        if node is not None:
            name_as_inplace(node)
            storage.counter.rebase(self._grad_fn, self._out_idx, node, index)
            self._attach(node, index)
            info.grad_version = storage.version
        elif info is not None:
            info.reshaped = True   # its gradients may no longer fit where they go (autograd._graph.reshaped_edges)
        if info is not None and info.base is not None:
            # the other views of the base (and this one, if it recorded nothing) take their history anew
            # through it (AsStridedBackward0), as PyTorch regenerates a view's grad_fn once its version moved
            _untracked_write(info.base, skip=self if node is not None else None)
        elif node is not None:
            _views.refresh_views(self)   # its views take their history anew through it, as after any in-place op
        else:
            _untracked_write(self)
        return self
    return method


for _name in ("transpose", "t", "unsqueeze", "squeeze", "swapaxes", "swapdims", "as_strided"):
    setattr(Tensor, _name + "_", _view_inplace(getattr(F, _name)))

for _name in ("uniform_", "normal_", "exponential_", "cauchy_", "geometric_", "log_normal_", "random_", "bernoulli_"):
    setattr(Tensor, _name, getattr(_random, _name))


def zero_(self):
    return inplace(self, E.fill, 0)


def fill_(self, value):
    return fill_into(self, value)


def fill_into(t, value, wrapped=False):
    """t.fill_(value); wrapped: value is a Python number that PyTorch made a 0-d tensor first (setitem's)."""
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value.ndim} dimensions.")
    value = F.scalar_or_tensor(value)
    if not wrapped:
        check_inplace(t, (value,))   # (PyTorch checks the in-place write before it converts the number)
    # a one-element CPU tensor is filled through PyTorch's scalar_fill, which converts through double too
    check_fits(value, t.dtype, via_double=wrapped or (t.numel() == 1 and t.device.type == "cpu"))
    if isinstance(value, Tensor):
        warn_complex_to_real(value.dtype, t.dtype)
    if not isinstance(value, Tensor) and not wrapped:
        return inplace(t, E.fill, value)
    # fill_ with a tensor refuses a target with several elements at one address (with a number it writes it)
    check_inplace(t, (value,))
    check_overlap(t)
    return inplace(t, E.fill, value, **({"wrapped": True} if wrapped else {}))


def copy_(self, src, non_blocking=False):
    src = F.scalar_or_tensor(src)
    check_inplace(self, (src,))
    shared = check_overlap(self, (src,))
    if isinstance(src, Tensor):
        error = _broadcast_error((self, src))   # PyTorch's copy_ names self a and src b
        if error is not None:
            raise error
        if any(a != b and a != 1 for a, b in zip(reversed(src.shape), reversed(self.shape))) \
                or src.ndim > self.ndim:
            raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast shape "
                               f"{list(F.broadcast_shapes(tuple(src.shape), tuple(self.shape)))}")
        src = _placement.follow(src, self)
        warn_complex_to_real(src.dtype, self.dtype)
    if not shared:
        return inplace(self, E.copy, src)
    result = apply(E.copy, self, src)
    commit(self, result, _loop_value(self, (src,), {}, lambda t, s: apply(E.copy, t, s), result))
    return self


def index_put_(self, indices, values, accumulate=False):
    spec, arrays = _parse_indices(self, indices, argument=0)
    _check_put_values(self, values)
    values = F.scalar_or_tensor(values)
    return inplace(self, I.index_put, values, *(Tensor._wrap(a) for a in arrays), spec=spec,
                   accumulate=builtins.bool(accumulate), whole=True)


def where(self, condition, other):
    return F.where(condition, self, other)


Tensor.zero_ = zero_
Tensor.fill_ = fill_
Tensor.copy_ = copy_
Tensor.index_put_ = index_put_
Tensor.where = where
Tensor.pinverse = F._linalg_functions.pinverse
Tensor.conj = F.conj
# x.real = v and x.imag = v write the part through its view, as PyTorch's (imag of a real tensor refuses)
Tensor.real = property(F.real, lambda self, value: F.real(self).copy_(value))
Tensor.imag = property(F.imag, lambda self, value: F.imag(self).copy_(value))
