"""PyTorch's dtypes and type-promotion rules over JAX dtypes.

JAX's own promotion lattice differs from PyTorch's (e.g. int64 + float32 is
float64 in JAX's x64 mode but float32 in PyTorch), so tapegrad computes the
result dtype itself and always hands JAX explicit dtypes.
"""
import builtins

import jax.numpy as jnp
import numpy as np


class dtype:
    """A PyTorch dtype: name, JAX/NumPy dtype and category flags."""

    __slots__ = ("name", "np", "is_floating_point", "is_complex", "is_signed", "itemsize", "_rank")

    def __init__(self, name, np_dtype, rank):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.is_complex = self.np.kind == "c"
        self.is_floating_point = self.np.kind == "f" or name == "bfloat16"
        self.is_signed = name not in ("uint8", "bool")
        self.itemsize = self.np.itemsize
        self._rank = rank

    def __repr__(self):
        return f"tapegrad.{self.name}"

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self):
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    def to_complex(self):
        return {"float64": complex128, "float16": complex64, "bfloat16": complex64}.get(self.name, complex64) \
            if not self.is_complex else self


bool_ = dtype("bool", np.bool_, 0)
uint8 = dtype("uint8", np.uint8, 1)
int8 = dtype("int8", np.int8, 1)
int16 = dtype("int16", np.int16, 1)
int32 = dtype("int32", np.int32, 1)
int64 = dtype("int64", np.int64, 1)
float16 = dtype("float16", np.float16, 2)
bfloat16 = dtype("bfloat16", jnp.bfloat16, 2)
float32 = dtype("float32", np.float32, 2)
float64 = dtype("float64", np.float64, 2)
complex64 = dtype("complex64", np.complex64, 3)
complex128 = dtype("complex128", np.complex128, 3)

ALL = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64, complex128)
_BY_NP = {d.np: d for d in ALL}
_BY_NAME = {d.name: d for d in ALL}
# the JAX dtypes autograd differentiates: floating and complex (bfloat16's NumPy kind is "V", so kinds alone
# would miss it)
DIFFERENTIABLE = frozenset(d.np for d in ALL if d.is_floating_point or d.is_complex)
# PyTorch aliases exported at top level.
ALIASES = {"half": float16, "float": float32, "double": float64, "short": int16, "int": int32, "long": int64,
           "cfloat": complex64, "cdouble": complex128, "bool": bool_}


# PyTorch's scalar type names (c10::ScalarType's), as its kernels' messages print them: '"lt_cpu" not
# implemented for 'ComplexFloat'', "expected scalar type Long but found Float"
SCALAR_NAMES = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
                "int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
                "bool": "Bool", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


# The C++ type names PyTorch's messages print for a dtype (caffe2::TypeMeta's)
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half", "bfloat16": "c10::BFloat16",
              "int64": "long int", "int32": "int", "int16": "short int", "int8": "signed char",
              "uint8": "unsigned char", "bool": "bool", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>"}


def cpp_name(d):
    """PyTorch's C++ name of the tapegrad dtype d, as its messages print it ("double", "long int" ...)."""
    return _CPP_NAMES[d.name]


def _by_name(name):
    return _BY_NAME[name]


def from_jax(np_dtype):
    """The tapegrad dtype of a JAX/NumPy dtype."""
    if isinstance(np_dtype, np.dtype):   # an array's own dtype (Tensor.dtype): no conversion
        found = _BY_NP.get(np_dtype)
        if found is not None:
            return found
    try:
        return _BY_NP[np.dtype(np_dtype)]
    except KeyError:
        if np.dtype(np_dtype).kind in "USOVMm":   # text, objects, records, dates: no tensor holds them
            raise TypeError(f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).type.__name__}. The only "
                            "supported types are: float64, float32, float16, complex64, complex128, int64, int32, "
                            "int16, int8, uint64, uint32, uint16, uint8, and bool.") from None
        raise TypeError(f"tapegrad has no dtype for {np_dtype}") from None


def as_dtype(d):
    """Accept a tapegrad dtype, a NumPy dtype or a Python type (float, int, bool, complex)."""
    if d is None or isinstance(d, dtype):
        return d
    # Python types name fixed dtypes in PyTorch, whatever the default dtype.
    if d is builtins.float:
        return float64
    if d is builtins.int:
        return int64
    if d is builtins.bool:
        return bool_
    if d is builtins.complex:
        return complex128
    return from_jax(d)


# ---- default dtype -----------------------------------------------------------

_default = [float32]
# Caches whose entries depend on the default dtype (the dtype of Python floats, of true division):
# modules register them here and set_default_dtype empties them.
default_dtype_caches = []


def set_default_dtype(d):
    if not isinstance(d, dtype):   # PyTorch takes dtype objects only, not float or NumPy dtypes
        raise TypeError(f"invalid dtype object: only floating-point types are supported as the default type, "
                        f"got {d!r}. Pass a dtype, e.g. torch.float64.")
    if d not in (float16, bfloat16, float32, float64):
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default[0] = d
    for cache in default_dtype_caches:
        cache.clear()


def get_default_dtype():
    return _default[0]


def _default_complex():
    return complex128 if _default[0] is float64 else complex64


# ---- type promotion (PyTorch's rules) -----------------------------------------
#
# Categories: bool < integer < floating < complex. Participants are ranked:
# dimensioned tensors, then zero-dim tensors, then Python scalars. A lower
# rank participant only matters when its category is higher than everything
# above it, and then it contributes its category's default dtype (for
# scalars) or its own dtype (for zero-dim tensors).

def promote_types(a, b):
    """torch.promote_types for two dtypes."""
    if a is b:
        return a
    if a._rank != b._rank:
        hi, lo = (a, b) if a._rank > b._rank else (b, a)
        if hi.is_complex and lo.is_floating_point and lo is float64:
            return complex128
        return hi
    if a._rank == 3:
        return complex128 if complex128 in (a, b) else complex64
    if a._rank == 2:
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a.itemsize > b.itemsize else b
    # Integers: uint8 with a signed type needs the next wider signed type.
    if uint8 in (a, b):
        other = b if a is uint8 else a
        return int16 if other is int8 else other
    return a if a.itemsize > b.itemsize else b


def _category_dtype_of_scalar(x):
    if isinstance(x, builtins.bool):
        return bool_
    if isinstance(x, builtins.int):
        return int64
    if isinstance(x, builtins.float):
        return get_default_dtype()
    if isinstance(x, builtins.complex):
        return _default_complex()
    raise TypeError(f"unsupported scalar type {type(x).__name__}")


def result_type(dims_dtypes, zero_dim_dtypes, scalars):
    """PyTorch's result dtype from dimensioned tensors, zero-dim tensors and Python scalars."""
    result = None
    for d in dims_dtypes:
        result = d if result is None else promote_types(result, d)
    zd = None
    for d in zero_dim_dtypes:
        zd = d if zd is None else promote_types(zd, d)
    if zd is not None:
        if result is None:
            result = zd
        elif zd._rank > result._rank:
            result = _lift(result, zd)
    for s in scalars:
        sd = _category_dtype_of_scalar(s)
        if result is None:
            result = sd
        elif sd._rank > result._rank:
            result = _lift(result, sd)
    return result


def _lift(current, higher):
    """Promote `current` into the higher category of `higher`, keeping width where PyTorch does."""
    if higher.is_complex and current.is_floating_point:
        return complex128 if current is float64 else complex64
    return higher
