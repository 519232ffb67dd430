"""PyTorch's legacy tensor API: typed tensor classes (FloatTensor...), Tensor.type(), is_tensor & co.

`FloatTensor` and its siblings are not Tensor subclasses (as in PyTorch): calling one builds a plain
Tensor of its dtype, and `isinstance(t, FloatTensor)` asks whether t is float32 (on its device type).
"""
import builtins

import numpy as np

from . import _dtypes as D
from ._size import Size
from ._storage import Storage
from ._tensor import Tensor
from ._host_put import put
from ._user_frames import warn_user

# PyTorch's type names: dtype -> "Float" in "torch.FloatTensor".
_TYPE_NAMES = {d: D.SCALAR_NAMES[d.name] for d in D.ALL}
_BY_TYPE_NAME = {f"{name}Tensor": d for d, name in _TYPE_NAMES.items()}
# The classes PyTorch offers (torch.FloatTensor ...); complex types have a name but no class.
_CLASSES = ("Float", "Double", "Half", "BFloat16", "Long", "Int", "Short", "Byte", "Char", "Bool")


def type_name(t):
    """PyTorch's legacy type string of a tensor: 'torch.FloatTensor', 'torch.cuda.LongTensor'."""
    prefix = "torch.cuda." if t.device.type == "cuda" else "torch."
    return f"{prefix}{_TYPE_NAMES[t.dtype]}Tensor"


class tensortype(type):
    """The metaclass of the typed tensor classes (PyTorch's torch.tensortype)."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == cls._device_type

    def __call__(cls, *args, **kwargs):
        return _construct(cls, args, kwargs)


def _typed_class(name, device_type):
    dtype = _BY_TYPE_NAME[name + "Tensor"]
    module = "tapegrad" if device_type == "cpu" else "tapegrad.cuda"
    return tensortype(name + "Tensor", (), {"dtype": dtype, "_device_type": device_type, "is_sparse": False,
                                            "is_cuda": device_type == "cuda", "__module__": module,
                                            "__slots__": ()})


CPU_CLASSES = {name + "Tensor": _typed_class(name, "cpu") for name in _CLASSES}
CUDA_CLASSES = {name + "Tensor": _typed_class(name, "cuda") for name in _CLASSES}


def _construct(cls, args, kwargs):
    """FloatTensor(), FloatTensor(*sizes), FloatTensor(data), FloatTensor(tensor of the same dtype)."""
    from . import _creation
    from .device import device as device_cls, is_available
    where = f"{cls.__module__.replace('tapegrad', 'torch')}.{cls.__name__}"
    device = kwargs.pop("device", None)
    if kwargs:
        got = [type(a).__name__ for a in args] + [f"{k}={type(v).__name__}" for k, v in kwargs.items()]
        raise TypeError(f"new() received an invalid combination of arguments - got ({', '.join(got)}), but expected "
                        "one of:\n * (*, torch.device device = None)\n * (Tensor other)\n * (tuple of ints size, *, "
                        "torch.device device = None)\n * (object data, *, torch.device device = None)\n"
                        f"{where} takes only device; use torch.tensor(data, dtype=..., requires_grad=...) "
                        "for the rest.")
    if device is not None and device_cls(device).type != cls._device_type:
        raise RuntimeError(f"legacy constructor expects device type: {cls._device_type} but device type: "
                           f"{device_cls(device).type} was passed. Use torch.tensor(data, device=...) instead.")
    if cls._device_type == "cuda" and not is_available("gpu"):
        raise TypeError(f"type {where} not available. Torch not compiled with CUDA enabled. "
                        f"JAX sees no GPU: use torch.{cls.__name__} for CPU tensors.")
    device = cls._device_type if cls._device_type == "cuda" else device
    if not args:
        return _zeros(cls.dtype, (0,), device)
    first = args[0]
    if len(args) == 1 and isinstance(first, Tensor):
        if first.dtype is not cls.dtype:
            raise TypeError(f"expected TensorOptions(dtype={_TYPE_NAMES[cls.dtype]}) (got TensorOptions(dtype="
                            f"{_TYPE_NAMES[first.dtype]})): {where}(tensor) only wraps a tensor of its own dtype. "
                            f"Convert instead, e.g. t.type({where}) or t.to(torch.{cls.dtype.name}).")
        from ._dispatch import apply
        from ._ops import shape
        return apply(shape.alias, first)   # shares the storage, as PyTorch's (AliasBackward0)
    if len(args) == 1 and not isinstance(first, Size) and not _is_int(first):
        if isinstance(first, (list, tuple, np.ndarray)):
            return _creation._leaf(_creation._array(first, cls.dtype, device))
        if isinstance(first, str):
            raise TypeError("new(): invalid data type 'str'. Pass numbers or sequences of numbers.")
        raise TypeError(f"new(): data must be a sequence (got {type(first).__name__}). Pass a list, e.g. "
                        f"{where}([{first!r}]), or sizes, e.g. {where}(2, 3).")
    sizes = tuple(first) if len(args) == 1 and isinstance(first, Size) else args
    for position, size in enumerate(sizes):
        if not _is_int(size):
            raise TypeError(f"new(): argument 'size' failed to unpack the object at pos {position + 1} with error "
                            f"\"type must be tuple of ints,but got {type(size).__name__}\". Sizes are ints; "
                            "pass data as one list.")
    return _zeros(cls.dtype, _creation._shape(sizes), device)


def _zeros(dtype, shape, device):
    # Uninitialised memory in PyTorch; zeros here (JAX has no uninitialised arrays), made by NumPy so that
    # creating one compiles nothing (a jnp.zeros is a program per shape and dtype).
    from . import _creation
    return _creation._leaf(put(np.zeros(shape, dtype.np), _creation._jax_device(device)))


def _is_int(x):
    return isinstance(x, (builtins.int, np.integer)) and not isinstance(x, (builtins.bool, np.bool_))


# ---- Tensor.type() -----------------------------------------------------------------------

def _target(spec):
    """(dtype, device type or None) that a .type() argument names."""
    if isinstance(spec, D.dtype):
        return spec, None
    if isinstance(spec, tensortype):
        return spec.dtype, spec._device_type
    if spec is Tensor:
        return D.get_default_dtype(), "cpu"
    if isinstance(spec, str):
        name = spec
        for library in ("torch.", "tapegrad."):
            if name.startswith(library):
                rest = name[len(library):]
                device = "cuda" if rest.startswith("cuda.") else "cpu"
                rest = rest[len("cuda."):] if device == "cuda" else rest
                if rest == "Tensor":
                    return D.get_default_dtype(), device
                if rest in _BY_TYPE_NAME:
                    return _BY_TYPE_NAME[rest], device
        raise ValueError(f"invalid type: '{spec}'. Name a tensor type, e.g. 'torch.DoubleTensor', "
                         "or pass a dtype, e.g. torch.float64.")
    if isinstance(spec, type):
        name = spec.__name__ if spec.__module__ == "builtins" else f"{spec.__module__}.{spec.__name__}"
        raise ValueError(f"invalid type: '{name}'. Name a tensor type, e.g. torch.DoubleTensor, "
                         "or pass a dtype, e.g. torch.float64.")
    raise TypeError("dtype must be a type, str, or dtype object, e.g. torch.float64 or 'torch.DoubleTensor'")


def tensor_type(self, dtype=None, non_blocking=False, **kwargs):
    """Tensor.type(): PyTorch's type string with no argument; otherwise a conversion, as .to()."""
    if kwargs:
        raise TypeError(f"type() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if dtype is None:
        return type_name(self)
    target, device = _target(dtype)
    if device is None or device == self.device.type:
        return self.to(target)
    return self.to(target, device=device)


Tensor.type = tensor_type


# ---- top-level predicates --------------------------------------------------------------------

def is_tensor(obj):
    return isinstance(obj, Tensor)


def is_storage(obj):
    # tapegrad hands out no storage objects, so this is True only for its internal ones
    return isinstance(obj, Storage)


def _tensor_arg(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}. "
                        f"Wrap it first, e.g. torch.{name}(torch.tensor(x)).")
    return input


def is_floating_point(input):
    return _tensor_arg("is_floating_point", input).is_floating_point()


def is_complex(input):
    return _tensor_arg("is_complex", input).is_complex()


def numel(input):
    return _tensor_arg("numel", input).numel()


def get_device(input):
    return _tensor_arg("get_device", input).get_device()


def is_inference(input):
    return _tensor_arg("is_inference", input).is_inference()


def detach(input):
    return _tensor_arg("detach", input).detach()


def set_default_tensor_type(t):
    """Deprecated in PyTorch: the default dtype from a typed class or its name."""
    warn_user("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
              "torch.set_default_dtype() and torch.set_default_device() as alternatives.", UserWarning)
    dtype, device = _target(t)
    D.set_default_dtype(dtype)
    if device == "cuda":
        from ._creation import set_default_device
        set_default_device("cuda")
