"""Creation functions: tensor, as_tensor, from_numpy, zeros/ones/full/empty/arange/linspace/eye, *_like."""
import builtins
import functools
import math
import numbers

import jax
import jax.numpy as jnp
import numpy as np

from . import _dtypes as D
from ._arg_types import as_size, check_lone_size
from ._tracer_warnings import CONSTANT as _CONSTANT, warn as _warn_tracer
from ._functional._common import check_tensor
from ._functional._out import with_out
from ._grad_mode import _state
from ._scalar_range import check_fits
from ._tensor import Tensor
from ._pointwise_layout import lay_out_like
from ._value_checks import check_storage_size
from ._meta import META, MetaArray
from .device import device as _device, to_jax_device
from ._host_put import put
from ._user_frames import warn_user

_default_device = [None]  # None: the CPU, as PyTorch


def set_default_device(dev):
    _default_device[0] = None if dev is None else _device(dev)


def get_default_device():
    return _default_device[0] or _device("cpu")


def _jax_device(dev):
    dev = dev if dev is not None else _default_device[0]
    return to_jax_device(dev if dev is not None else "cpu")


def check_requires_grad(dtype, requires_grad, fix):
    """A factory's refusal of requires_grad for a dtype that cannot have gradients, in PyTorch's words (not
    requires_grad_'s lowercase ones), then `fix`: one sentence of what to pass instead."""
    if requires_grad and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(f"Only Tensors of floating point and complex dtype can require gradients (got {dtype}). "
                           + fix)


def _leaf(value, requires_grad=False):
    t = Tensor._wrap(value, _state.inference)
    if requires_grad:
        check_requires_grad(t.dtype, True, "Pass a floating dtype, e.g. dtype=torch.float32.")
        t.requires_grad_(True)
    return t


_SEQUENCES = (list, tuple, range)   # the Python sequences torch.tensor reads element by element


def _infer_dtype(data):
    """PyTorch's dtype inference for Python data: each element's own type (bool, int64, the default
    float or complex for Python numbers; their dtype for NumPy scalars and tensors), promoted together."""
    found = [None]

    def visit(x):
        if isinstance(x, Tensor):
            seen = x.dtype
        elif isinstance(x, np.generic) and not isinstance(x, (np.str_, np.bytes_)):
            seen = D.from_jax(x.dtype)
        elif isinstance(x, builtins.bool):
            seen = D.bool_
        elif isinstance(x, builtins.int):
            seen = D.int64
        elif isinstance(x, builtins.float):
            seen = D.get_default_dtype()
        elif isinstance(x, builtins.complex):
            seen = D._default_complex()
        elif isinstance(x, _SEQUENCES):
            for y in x:
                visit(y)
            return
        elif isinstance(x, (str, bytes)):
            raise TypeError(f"new(): invalid data type '{type(x).__name__}'. Convert strings to numbers first.")
        else:
            raise RuntimeError(f"Could not infer dtype of {type(x).__name__}. Pass numbers, sequences of "
                               "numbers, NumPy arrays or tensors.")
        found[0] = seen if found[0] is None else D.promote_types(found[0], seen)
    visit(data)
    return D.get_default_dtype() if found[0] is None else found[0]


def _check_first_elements(data):
    """PyTorch sizes nested data along its first elements before it reads them: a string met there is a
    sequence of strings without end."""
    x = data
    while isinstance(x, _SEQUENCES) and len(x):
        x = x[0]
        if isinstance(x, str):
            raise ValueError("too many dimensions 'str'")


def _check_nested(data, dim=0):
    """PyTorch's errors for ragged nested sequences (NumPy's would name its own internals)."""
    if not data:
        return
    nested = [isinstance(x, _SEQUENCES) for x in data]
    if not any(nested):
        return
    if not all(nested):
        raise TypeError("not a sequence: nested lists must have the same depth everywhere "
                        "(e.g. [[1, 2], [3, 4]], not [[1, 2], 3])")
    n = len(data[0])
    for x in data:
        if len(x) != n:
            raise ValueError(f"expected sequence of length {n} at dim {dim + 1} (got {len(x)}). "
                             "Pad the rows to the same length first.")
    for x in data:
        _check_nested(x, dim + 1)


def _to_numpy(data):
    if isinstance(data, Tensor):
        return np.asarray(data._value)
    if isinstance(data, _SEQUENCES):
        return np.array([_element(x) if isinstance(x, Tensor) else _to_numpy(x) if isinstance(x, _SEQUENCES)
                         else x for x in data])
    return np.asarray(data)


def _element(t):
    """A tensor inside a sequence: PyTorch reads it as one number, and refuses one of another size."""
    if t.numel() != 1:
        if t.dtype.is_floating_point or t.dtype.is_complex:
            raise ValueError("only one element tensors can be converted to Python scalars. Stack tensors with "
                             "torch.stack instead.")
        raise TypeError("only integer tensors of a single element can be converted to an index. Stack tensors "
                        "with torch.stack instead.")
    return np.asarray(t._value).reshape(())


def _check_fits_dtype(raw, dtype):
    """PyTorch's torch.tensor refuses a Python number its integer dtype cannot hold (NumPy would wrap it)."""
    if not raw.size or dtype is D.bool_ or dtype.is_floating_point or dtype.is_complex \
            or raw.dtype.kind not in "iufb":
        return
    info = np.iinfo(dtype.np)
    # (an integer below an unsigned type's range wraps around, as two's complement, down to -max)
    low = -info.max if info.min == 0 and raw.dtype.kind != "f" else info.min
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(raw) if raw.dtype.kind == "f" else np.zeros(raw.shape, bool)
        bad |= (raw < low) | (raw > info.max)
    if bad.any():
        raise RuntimeError(f"value cannot be converted to type {dtype.name} without overflow")


def _array(data, dtype, device):
    """A jax.Array on the target device from Python/NumPy/JAX data."""
    dtype = D.as_dtype(dtype)
    if isinstance(data, Tensor):
        arr = data._value
        if dtype is None:
            dtype = data.dtype
        return jax.device_put(arr.astype(dtype.np), _jax_device(device) if device is not None else None) \
            if device is not None else arr.astype(dtype.np)
    if isinstance(data, jax.Array):
        if dtype is None:
            dtype = D.from_jax(data.dtype)
        return jax.device_put(data.astype(dtype.np), _jax_device(device))
    if isinstance(data, (np.ndarray, np.generic)):   # NumPy scalars keep their dtype, as in PyTorch
        if dtype is None:
            dtype = D.from_jax(data.dtype)
        if isinstance(data, np.generic):   # (a NumPy scalar is read as a number; an array is cast as it is)
            _check_fits_dtype(np.asarray(data), dtype)
        # np.array copies: jax.device_put of an aligned NumPy buffer on CPU is zero-copy, so later writes
        # to that buffer (e.g. a torch tensor's .numpy()) would leak into this immutable value.
        return put(np.array(data, dtype.np), _jax_device(device))
    if isinstance(data, _SEQUENCES):
        _check_first_elements(data)
    if dtype is None:
        dtype = _infer_dtype(data)
    if isinstance(data, _SEQUENCES):
        _check_nested(data)
    raw = _to_numpy(data)
    if raw.dtype.kind in "uO" and dtype.name == "int64" and raw.size and (
            np.any(raw > np.iinfo(np.int64).max) or np.any(raw < np.iinfo(np.int64).min)):
        raise ValueError("Overflow when unpacking long long")   # NumPy would wrap it around silently
    _check_fits_dtype(raw, dtype)
    return put(np.asarray(raw, dtype=dtype.np), _jax_device(device))


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf tensor copying `data` (PyTorch's torch.tensor)."""
    _warn_tracer(_CONSTANT)
    if isinstance(data, Tensor):
        warn_user("To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
                  "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor).",
                  UserWarning)
    if requires_grad:
        d = D.as_dtype(dtype) or (data.dtype if isinstance(data, Tensor) else None)
        if d is None and not isinstance(data, (np.ndarray, jax.Array)):
            d = _infer_dtype(data)
        elif d is None:
            d = D.from_jax(data.dtype)
        check_requires_grad(d, True, "Create a float tensor, e.g. torch.tensor(2.0, requires_grad=True).")
    return _leaf(_array(data, dtype, device), requires_grad)


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor) and (dtype is None or D.as_dtype(dtype) is data.dtype) and device is None:
        return data
    return _leaf(_array(data, dtype, device))


def from_numpy(array):
    if not isinstance(array, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(array).__name__})")
    return _leaf(_array(array, None, None))


def legacy_tensor_value(args, device):
    """Tensor(*sizes) -> uninitialised float32; Tensor(sequence) -> data as float32."""
    if not args:
        return jnp.zeros((0,), D.get_default_dtype().np, device=_jax_device(device))
    if len(args) == 1 and not isinstance(args[0], (builtins.int, np.integer)):
        return _array(args[0], D.get_default_dtype() if not isinstance(args[0], Tensor) else None, device)
    return jnp.zeros(tuple(args), D.get_default_dtype().np, device=_jax_device(device))


def _shape(size, fname=None):
    """The shape a creation function `fname` is given (sizes, or one tuple or list of them)."""
    check_lone_size(size, fname=fname)
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    out = tuple(as_size(s, i, fname=fname) for i, s in enumerate(size, 1))
    negative = next((s for s in out if s < 0), None)
    if negative is not None:
        if fname == "zeros":   # (PyTorch's zeros checks the sizes itself, in words of its own)
            raise RuntimeError("zeros: Dimension size must be non-negative.")
        raise RuntimeError(f"Trying to create tensor with negative dimension {negative}: {list(out)}")
    return out


def _filled(shape, fill, dtype, device, requires_grad):
    dtype = D.as_dtype(dtype) or D.get_default_dtype()
    check_storage_size(shape, dtype.np.itemsize)
    target = _jax_device(device)
    if target is META:
        return _leaf(MetaArray(shape, dtype.np), requires_grad)
    if target.platform == "cpu" and not isinstance(fill, Tensor):
        # NumPy fills it and hands it over: jnp.full would compile an XLA program for every new shape
        value = put(np.full(shape, _as_fill(fill, dtype.np), dtype.np), target)
    else:
        value = jnp.full(shape, fill, dtype.np, device=target)
    return _leaf(value, requires_grad)


def _as_fill(number, np_dtype):
    """The number as np_dtype, converted as PyTorch's fill converts it once check_fits let it through: a
    complex number's real part (its imaginary part is 0 there), an integer wrapped into an unsigned type
    (full(..., -1, dtype=uint8) is 255), a float beyond half's range inf; NumPy would raise or warn."""
    value = np.asarray(number)
    if np_dtype == np.bool_:
        return value != 0
    if np.iscomplexobj(value) and not np.issubdtype(np_dtype, np.complexfloating):
        value = value.real
    with np.errstate(over="ignore", invalid="ignore"):
        return value.astype(np_dtype)


def zeros(*sizes, size=None, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    return _filled(_shape(_given(sizes, size), "zeros"), 0, dtype, device, requires_grad)


def ones(*sizes, size=None, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    return _filled(_shape(_given(sizes, size), "ones"), 1, dtype, device, requires_grad)


def empty(*sizes, size=None, dtype=None, device=None, requires_grad=False, out=None, layout=None,
          memory_format=None):
    # Uninitialised memory in PyTorch; zeros here (JAX has no uninitialised arrays).
    return _filled(_shape(_given(sizes, size), "empty"), 0, dtype, device, requires_grad)


def _given(sizes, size):
    """The sizes given by position, or the `size` keyword (PyTorch takes either)."""
    return sizes if size is None else (size,)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False, out=None, layout=None):
    if dtype is None:
        dtype = _infer_dtype(fill_value.item() if isinstance(fill_value, Tensor) else fill_value)
    shape = _shape((size,), "full")
    check_fits(fill_value, D.as_dtype(dtype), via_double=_fills_one(shape, device))
    return _filled(shape, fill_value, dtype, device, requires_grad)


def _fills_one(shape, device):
    """Whether PyTorch fills a tensor of this shape through scalar_fill: one element on the CPU. That path
    converts the number to double first, so half and bfloat16 take it unchecked (an overflow is inf) and a
    complex number's imaginary part is refused naming double (_scalar_range.check_fits's via_double)."""
    return math.prod(shape) == 1 and _jax_device(device).platform == "cpu"


def _like(t, dtype, device):
    return (D.as_dtype(dtype) or t.dtype), (device if device is not None else t.device)


def zeros_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    check_tensor(input, "zeros_like")
    return full_like(input, 0, dtype=dtype, device=device, requires_grad=requires_grad, memory_format=memory_format)


def ones_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    check_tensor(input, "ones_like")
    return full_like(input, 1, dtype=dtype, device=device, requires_grad=requires_grad, memory_format=memory_format)


def empty_like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    check_tensor(input, "empty_like")
    return zeros_like(input, dtype=dtype, device=device, requires_grad=requires_grad, memory_format=memory_format)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    check_tensor(input, "full_like")
    d, dev = _like(input, dtype, device)
    return lay_out_like(_filled(input.shape, fill_value, d, dev, requires_grad), input, memory_format)


def arange(start=None, end=None, step=1, *, dtype=None, device=None, requires_grad=False, out=None):
    if end is None:   # arange(end)
        if start is None:
            raise TypeError('arange() missing 1 required positional arguments: "end"')
        start, end = 0, start
    elif start is None:   # arange(end=...)
        start = 0
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (vals[1] - vals[0]) * vals[2] < 0:
        raise RuntimeError("upper bound and lower bound inconsistent with step sign: "
                           f"arange({vals[0]}, {vals[1]}, {vals[2]}) would count away from its end.")
    if dtype is None:
        dtype = D.get_default_dtype() if any(isinstance(v, builtins.float) for v in vals) else D.int64
    dtype = D.as_dtype(dtype)
    if dtype is D.bool_:
        raise NotImplementedError("\"arange_cpu\" not implemented for 'Bool'. Make the range in integers, then "
                                  "convert it, e.g. arange(n).bool().")
    start, end, step = vals
    if dtype.is_floating_point or dtype.is_complex:
        n = builtins.max(0, math.ceil((end - start) / step))
        # Computed as start + i*step in float64 then cast, as PyTorch does, to avoid drift.
        value = start + np.arange(n, dtype=np.float64) * step
    else:
        value = _integer_range(start, end, step, dtype)
    return _leaf(put(value.astype(dtype.np), _jax_device(device)), requires_grad)


def _integer_range(start, end, step, dtype):
    """PyTorch's CPU arange of an integer dtype: start and step truncated to int64 (its accumulate type), the
    values start + i * step wrapped to the dtype; the length from the truncated bounds for int64, from the
    given ones (in double) for the narrower types, whose truncated step may be zero."""
    first, stride = builtins.int(start), builtins.int(step)
    if dtype is D.int64:
        if stride == 0:
            raise ValueError("step must be nonzero")
        n = -(-(builtins.int(end) - first) // stride)
    else:
        n = math.ceil((end - start) / step)
    return first + np.arange(builtins.max(0, n), dtype=np.int64) * stride


def _bound_numbers(fname, start, end):
    """start and end as numbers: a 0-d tensor is read, another refused as PyTorch's linspace/logspace do."""
    for name, v in (("start", start), ("end", end)):
        if isinstance(v, Tensor) and v.ndim:
            raise RuntimeError(f"{fname} only supports 0-dimensional start and end tensors, but got {name} with "
                               f"{v.ndim} dimension(s).")
    return tuple(v.item() if isinstance(v, Tensor) else v for v in (start, end))


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False, out=None):
    dtype = D.as_dtype(dtype) or D.get_default_dtype()
    start, end = _bound_numbers("linspace", start, end)
    if steps < 0:
        raise RuntimeError(f"number of steps must be non-negative, got {steps}")
    value = np.linspace(start, end, steps, dtype=np.float64).astype(dtype.np)
    return _leaf(put(value, _jax_device(device)), requires_grad)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False, out=None):
    dtype = D.as_dtype(dtype) or D.get_default_dtype()
    start, end = _bound_numbers("logspace", start, end)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    value = np.power(float(base), np.linspace(start, end, steps, dtype=np.float64)).astype(dtype.np)
    return _leaf(put(value, _jax_device(device)), requires_grad)


def _triangle_indices(row, col, offset, lower, dtype, device):
    for name, v in (("row", row), ("col", col)):
        if v < 0:
            raise RuntimeError(f"{name} must be non-negative, got{v}")
    rows, cols = np.tril_indices(row, offset, col) if lower else np.triu_indices(row, offset, col)
    value = np.stack([rows, cols]).astype((D.as_dtype(dtype) or D.int64).np)
    return _leaf(put(value, _jax_device(device)))


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (row, column) indices of the lower triangle of a row x col matrix, row by row."""
    return _triangle_indices(row, col, offset, True, dtype, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None):
    """The (row, column) indices of the upper triangle of a row x col matrix, row by row."""
    return _triangle_indices(row, col, offset, False, dtype, device)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False, out=None):
    dtype = D.as_dtype(dtype) or D.get_default_dtype()
    for name, v in (("n", n), ("m", m)):
        if v is not None and v < 0:
            raise RuntimeError(f"{name} must be greater or equal to 0, got {v}")
    target = _jax_device(device)
    if target is META:   # (a shape, not an n x m array)
        return _leaf(MetaArray((n, n if m is None else m), dtype.np), requires_grad)
    if target.platform == "cpu":   # NumPy builds it (jnp.eye compiles XLA programs for every new size)
        return _leaf(put(np.eye(n, m, dtype=dtype.np), target), requires_grad)
    return _leaf(jnp.eye(n, m, dtype=dtype.np, device=target), requires_grad)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    # PyTorch's argument is a Number: a Python or NumPy number, or a 0-d tensor that requires no grad
    if isinstance(s, Tensor) and s.ndim == 0 and not s.requires_grad:
        s = s.item()
    elif isinstance(s, Tensor) or not isinstance(s, numbers.Number):
        raise TypeError(f"scalar_tensor(): argument 's' (position 1) must be Number, not {type(s).__name__}. "
                        "Pass a number, e.g. scalar_tensor(1.0), or a 0-d tensor's value, t.item().")
    dtype = D.as_dtype(dtype) or D.get_default_dtype()
    check_fits(s, dtype, via_double=_fills_one((), device))   # as full's: 1+2j or 1e300 as float is refused
    return _filled((), s, dtype, device, requires_grad)


def _with_out(fn, name):
    # out=: the result written into the tensor given (PyTorch's autograd error names aten::zeros() ...); as
    # PyTorch's binding, out then takes the requires_grad given
    write = with_out(fn, f"aten::{name}()")

    @functools.wraps(fn)
    def factory(*args, out=None, requires_grad=False, **kwargs):
        if out is None:
            return fn(*args, requires_grad=requires_grad, **kwargs)
        return write(*args, out=out, **kwargs).requires_grad_(requires_grad)
    return factory


for _name in ("zeros", "ones", "full", "arange", "linspace", "logspace", "eye"):
    globals()[_name] = _with_out(globals()[_name], _name)
