"""torch.finfo and torch.iinfo: the numerical limits of a dtype, with PyTorch's attributes and repr."""
import jax.numpy as jnp

from . import _dtypes as D


def _check_dtype_argument(name, type):
    from ._tensor import Tensor   # (a tensor is not a dtype: PyTorch's argument parser refuses it)
    if isinstance(type, Tensor):
        raise TypeError(f"{name}(): argument 'type' (position 1) must be torch.dtype, not Tensor. Pass its "
                        "dtype, e.g. x.dtype.")


class finfo:
    """Limits of a floating dtype (a complex dtype reports its real part's)."""

    def __init__(self, type=None):
        _check_dtype_argument("finfo", type)
        type = D.get_default_dtype() if type is None else D.as_dtype(type)
        if not (type.is_floating_point or type.is_complex):
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to handle "
                            "'torch.finfo'")
        info = jnp.finfo(type.np)
        self.dtype = info.dtype.name
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)

    def __eq__(self, other):
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, eps={self.eps:g}, "
                f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype."""

    def __init__(self, type):
        _check_dtype_argument("iinfo", type)
        type = D.as_dtype(type)
        if type is D.bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type.is_floating_point or type.is_complex:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to handle "
                            "'torch.iinfo'")
        info = jnp.iinfo(type.np)
        self.dtype = type.name
        self.bits = int(info.bits)
        self.max = int(info.max)
        self.min = int(info.min)

    def __eq__(self, other):
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
