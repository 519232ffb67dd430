"""Argument parsing shared by the functional API: scalars, dims, shapes, dtype names."""
import builtins
import math
import numbers

import jax
import numpy as np
from jax.export import is_symbolic_dim

from .. import _dtypes as D, _faults, _value_checks
from .._arg_types import as_size, check_lone_size, int_list
from .._meta import MetaArray
from .._tensor import Tensor, _wrap_dim

_SCALARS = (builtins.bool, builtins.int, builtins.float, builtins.complex)

# PyTorch's C++ scalar-type names, used in its error messages.
SCALAR_NAME = D.SCALAR_NAMES


class DynamicShape(jax.errors.ConcretizationTypeError):
    """A traced value whose elements would decide the size of an op's result (nonzero, unique, masked_select):
    a trace cannot have it. `op`: the aten op PyTorch's vmap names."""

    def __init__(self, tracer, op):
        super().__init__(tracer, f"the size of {op}'s result, which its values decide")
        self.op = op


def sized_by(value, op):
    """value on the host (see read_on_host) to count the size of op's result with; DynamicShape for a traced
    value (inside tapegrad.compile a graph break, inside a vmap PyTorch's error)."""
    if isinstance(value, jax.core.Tracer):
        raise DynamicShape(value, op)
    if type(value) is MetaArray:   # (PyTorch's meta kernels refuse these too: the size needs the values)
        raise NotImplementedError(f"{op} on a meta tensor: the size of its result depends on the values, and a "
                                  "meta tensor holds none. Run it on a tensor with data.")
    return read_on_host(value)


def read_on_host(value):
    """(array module, value) to count or check a concrete value with: NumPy on the value itself where it lives
    in host memory (a CPU array), else jax.numpy on its device. Counts that decide an output's size and checks
    that raise PyTorch's errors read values as PyTorch syncs; jnp would compile a program per new shape."""
    if isinstance(value, np.ndarray) or (not isinstance(value, jax.core.Tracer)   # (a trace reads it as before)
                                         and builtins.all(d.platform == "cpu" for d in value.devices())):
        if _faults._in_flight[0] is not None:   # the array may be a program's result not yet awaited
            _faults.confirm()
        return np, np.asarray(value)
    return jax.numpy, value


def scalar_or_tensor(x):
    """Python/NumPy scalars pass as Python scalars; tensors as themselves; else TypeError (a NumPy array too:
    PyTorch's functions take none where they take a tensor, and its operators leave arrays to NumPy)."""
    if isinstance(x, Tensor) or type(x) in _SCALARS:
        return x
    if isinstance(x, (numbers.Number, np.bool_)):   # (NumPy's bool is no Number: PyTorch reads it as a bool)
        return x.item() if hasattr(x, "item") else x
    raise TypeError(f"expected Tensor or number, got {type(x).__name__}")


def as_tensor(x, like=None):
    """A tensor from a tensor, scalar or nested list (for arguments PyTorch requires as tensors)."""
    if isinstance(x, Tensor):
        return x
    from .._creation import tensor
    return tensor(x)


def check_tensor(x, fn, arg="input"):
    if not isinstance(x, Tensor):
        from .._argument_errors import _tp_name
        raise TypeError(f"{fn}(): argument '{arg}' (position 1) must be Tensor, not {_tp_name(x)}")


def check_tensors(fn, *named, optional=()):
    """PyTorch's TypeError for a number (or anything else) where `fn` takes a Tensor. `named` are
    (value, parameter name) in the signature's order from position 1, or (value, name, position) where
    other parameters come between; a name in `optional` may be None."""
    for position, (value, name, *at) in enumerate(named, 1):
        if not isinstance(value, Tensor) and not (value is None and name in optional):
            position = at[0] if at else position
            raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not "
                            f"{type(value).__name__}. Wrap a number in tapegrad.tensor(...).")


def wrap_dim(dim, ndim):
    return _wrap_dim(dim, ndim)


def refuse_complex(x, kernel=None, message=None, error=NotImplementedError):
    """PyTorch's CPU kernels that have no complex version: its error for a complex input (`kernel`: the name
    in its '"kernel" not implemented for ...' text; else `message`). JAX would order or round complex values."""
    if isinstance(x, Tensor) and x.dtype.is_complex:
        raise error(message or f"\"{kernel}\" not implemented for '{SCALAR_NAME[x.dtype.name]}'. Take .real, "
                               f".imag or .abs() first.")


def wrap_dim_of_dims(dim, ndim):
    """wrap_dim for a function that needs a real dim, where PyTorch's maybe_wrap_dim refuses a 0-d tensor's."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return _wrap_dim(dim, ndim)


def dims(dim, ndim):
    """None (all dims) or a sorted tuple of wrapped dims; an empty list means all, as PyTorch."""
    if dim is None:
        return None
    if isinstance(dim, (list, tuple)):
        if len(dim) == 0:
            return None
        # read as PyTorch's int lists are (a bool after the first element is an int, a float is refused)
        wrapped = [_wrap_dim(d, ndim) for d in int_list(dim, "dim")]
        seen = set()
        for d in wrapped:   # (the first repeat in the order given is the one PyTorch names)
            if d in seen:
                raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
            seen.add(d)
        return tuple(sorted(wrapped))
    return (_wrap_dim(dim, ndim),)


def numel_of(xs):
    return math.prod(xs)


def shape_args(shape, name="size", fname=None):
    """(2, 3), ((2, 3),) and ([2, 3],) all mean the shape (2, 3). name, fname: the argument and the function,
    which PyTorch's TypeError for a value that is not an int names."""
    check_lone_size(shape, name, fname)
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    if len(shape) == 1 and isinstance(shape[0], Tensor) and shape[0].ndim:
        shape = shape[0].tolist()
    # a symbolic size (tapegrad.export with dynamic shapes) stays one
    return tuple(s if type(s) is builtins.int or is_symbolic_dim(s) else as_size(s, i, name, fname)
                 for i, s in enumerate(shape, 1))


def is_float(t):
    return t.dtype.is_floating_point or t.dtype.is_complex


def result_dtype(*xs):
    """PyTorch's promotion over tensors and Python scalars."""
    tensors = [x for x in xs if isinstance(x, Tensor)]
    return D.result_type([t.dtype for t in tensors if t.ndim], [t.dtype for t in tensors if not t.ndim],
                         [x for x in xs if not isinstance(x, Tensor)])


def check_index_bounds(idx, size, dim, error=IndexError, message=None, negative=True):
    """Raise PyTorch's error for an index outside [-size, size), or [0, size) where negative indices are refused
    (JAX would clamp it silently). message: the error's text, formatted with i, dim and size."""
    value = idx._value if isinstance(idx, Tensor) else idx
    if not builtins.hasattr(value, "dtype"):
        value = np.asarray(value)
    if value.size == 0:
        return

    def make_error(i, at):
        i = builtins.int(i)
        return error(message.format(i=i, dim=dim, size=size) if message else
                     f"index {i} is out of bounds for dimension {dim} with size {size}")
    low = -size if negative else 0
    _value_checks.check_array(value, lambda v, xp: (v >= size) | (v < low), make_error, strict=True)


def check_index_dtype(idx, fn, arg="index"):
    if idx.dtype is not D.int64 and idx.dtype is not D.int32:
        raise RuntimeError(f"{fn}(): Expected dtype int64 for {arg}")


def sizes_argument(fn, name, args, named):
    """The dims or sizes a shape function takes as PyTorch's do: positionally (x.permute(1, 0), a list) or
    as the keyword `name` (x.permute(dims=[1, 0])); PyTorch's TypeErrors when missing or unexpected."""
    if name in named:
        args = (named.pop(name),) + args
    if named:
        raise TypeError(f"{fn}() got an unexpected keyword argument '{next(iter(named))}'")
    if not args:
        raise TypeError(f'{fn}() missing 1 required positional arguments: "{name}"')
    return args
