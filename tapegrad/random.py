"""Random numbers: PyTorch's API (manual_seed, Generator, rand...) over jax.random keys.

Streams differ from PyTorch's (different algorithms); seeding gives
reproducible results within tapegrad.
"""

import jax
import jax.numpy as jnp

from . import _dtypes as D
from ._pointwise_layout import lay_out_like

_DEFAULT_SEED = 67280421310721  # PyTorch's default_generator initial seed


class Generator:
    """A source of random keys. `manual_seed` resets it; each draw advances it."""

    def __init__(self, device="cpu"):
        self.device = device
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed):
        seed = int(seed)
        self._seed = seed
        self._counter = 0
        self._made_key = None   # made at the first draw: making one starts JAX's backend (see tapegrad.distributed)
        return self

    @property
    def _key(self):
        if self._made_key is None:
            seed = self._seed
            with jax.ensure_compile_time_eval():   # a constant, even when the first draw is inside a trace
                self._made_key = jax.random.key(seed & 0xFFFFFFFFFFFFFFFF if seed >= 0 else seed % (1 << 64))
        return self._made_key

    @_key.setter
    def _key(self, key):
        self._made_key = key

    def seed(self):
        import random as _pyrandom
        s = _pyrandom.SystemRandom().getrandbits(63)
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        from ._creation import tensor
        return tensor([self._seed & 0xFFFFFFFF, self._seed >> 32, self._counter], dtype=D.int64)

    def set_state(self, state):
        lo, hi, counter = (int(v) for v in state.tolist())
        self.manual_seed(lo | (hi << 32))
        self._counter = counter

    def next_key(self):
        self._counter += 1
        return jax.random.fold_in(self._key, self._counter)


default_generator = Generator()


def manual_seed(seed):
    return default_generator.manual_seed(seed)


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state):
    default_generator.set_state(state)


def _key(generator):
    return (generator or default_generator).next_key()


def _drawn(name, draw, generator, *static):
    """draw(key, *static), run by a kernel shared by every draw with these statics: on a CPU a new shape
    runs on NumPy (see _numpy_random) instead of compiling a program for it."""
    from . import _programs
    kernel = _programs.kernel(("random", name) + static,
                              lambda: lambda k: draw(jax.random.wrap_key_data(k), *static))
    return kernel(jax.random.key_data(_key(generator)))


def _make(value, requires_grad, device):
    from ._creation import _leaf, _jax_device
    return _leaf(jax.device_put(value, _jax_device(device)), requires_grad)


_KERNEL_TYPE_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
                      "int64": "Long", "complex64": "ComplexFloat", "complex128": "ComplexDouble"}


def _check_random_bounds(d):
    if d.is_complex:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and boolean types. Draw "
                           "into a real dtype, then convert.")


def _float_dtype(dtype, kernel="check_uniform_bounds"):
    d = D.as_dtype(dtype) or D.get_default_dtype()
    if not d.is_floating_point and not d.is_complex:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_KERNEL_TYPE_NAMES[d.name]}'. "
                                  "Pass a floating dtype, e.g. dtype=torch.float32.")
    return d


def _size(size):
    from ._creation import _shape
    return _shape(size)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None):
    from ._ops.random_fill import uniform_values
    d = _float_dtype(dtype)
    return _make(_drawn("rand", uniform_values, generator, _size(size), d.np), requires_grad, device)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None):
    d = _float_dtype(dtype, "normal_kernel_cpu")
    return _make(_drawn("randn", jax.random.normal, generator, _size(size), d.np), requires_grad, device)


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    if size is None:
        given = ", ".join(type(a).__name__ for a in (low, high) if a is not None)
        if not isinstance(high, (tuple, list)):
            raise TypeError(f"randint() received an invalid combination of arguments - got ({given}), but expected "
                            "one of: (int high, tuple of ints size) or (int low, int high, tuple of ints size). "
                            "Pass a size, e.g. torch.randint(10, (3,)).")
        high, size = None, high
    if high is None:
        # randint(high, size): PyTorch's overload without `low`.
        low, high = 0, low
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    d = D.as_dtype(dtype) or D.int64
    _check_random_bounds(d)
    value = _drawn("randint", lambda k, *a: jax.random.randint(k, *a[:3], jnp.int64).astype(a[3]), generator,
                   tuple(size), low, high, d.np)
    return _make(value, requires_grad, device)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    d = D.as_dtype(dtype) or D.int64
    if d.is_complex:
        raise NotImplementedError(f"\"randperm\" not implemented for '{_KERNEL_TYPE_NAMES[d.name]}'. Pass a real "
                                  "dtype, e.g. dtype=torch.int64.")
    _size((n,))
    value = _drawn("randperm", lambda k, n, dt: jax.random.permutation(k, n).astype(dt), generator, n, d.np)
    return _make(value, requires_grad, device)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    from ._tensor import Tensor
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        # PyTorch's NormalBackward1/2/3 node (a zero gradient to the tensor arguments)
        from ._dispatch import apply
        from ._functional._random import _key as key_tensor
        from ._ops import random_fill as RF
        dtype = (mean if isinstance(mean, Tensor) else std).dtype
        mean = mean if isinstance(mean, Tensor) else float(mean)
        std = std if isinstance(std, Tensor) else float(std)
        if isinstance(std, Tensor):
            from . import _value_checks
            _value_checks.check(std, lambda v, xp: v < 0, lambda v, at: RuntimeError(
                "normal expects all elements of std >= 0.0. Pass a std tensor without negative values."))
        elif std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        return apply(RF.normal_tensor, mean, std, key_tensor(generator), dtype=dtype.name)
    d = _float_dtype(dtype, "normal_kernel_cpu")
    z = _drawn("randn", jax.random.normal, generator, tuple(size), d.np)
    mean = complex(mean, mean) if d.is_complex else mean   # PyTorch's complex normal: both parts about mean
    return _make((mean + std * z).astype(d.np), requires_grad, device)


def rand_like(input, *, dtype=None, device=None, requires_grad=False, generator=None, memory_format=None):
    return lay_out_like(rand(*input.shape, dtype=dtype or input.dtype, device=device, requires_grad=requires_grad,
                             generator=generator), input, memory_format)


def randn_like(input, *, dtype=None, device=None, requires_grad=False, generator=None, memory_format=None):
    return lay_out_like(randn(*input.shape, dtype=dtype or input.dtype, device=device, requires_grad=requires_grad,
                              generator=generator), input, memory_format)


def randint_like(input, low, high=None, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    return lay_out_like(randint(low, high, tuple(input.shape), dtype=dtype or input.dtype, device=device), input,
                        memory_format)
