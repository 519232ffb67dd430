"""Random numbers: PyTorch's API (manual_seed, Generator, rand...).

A draw into a CPU tensor takes PyTorch's CPU stream (`_cpu_generator`): after `manual_seed(s)`, rand,
randn, randint, randperm, normal, the in-place fills (uniform_, normal_, random_, exponential_, cauchy_,
geometric_, log_normal_, bernoulli_), bernoulli, multinomial, dropout, rrelu, poisson, _standard_gamma
and what is built on them (nn.init, module initialisation, pruning, distributions, data loading) give
PyTorch's numbers, eagerly or under tapegrad.compile (whose programs take the draws as inputs:
_compile._draws). Draws on other devices, under other traces (vmap, functional transforms), and those of
rrelu, poisson and _standard_gamma under tapegrad.compile (how many they draw depends on values) use
jax.random keys from the same seed: reproducible, but not PyTorch's numbers.
"""

import contextlib
import math

import jax
import jax.numpy as jnp
import numpy as np

from . import _dtypes as D, _meta
from ._cpu_generator import MASK64, CpuStream
from ._functional._common import check_tensor
from ._host_put import put
from ._pointwise_layout import lay_out_like

try:  # private but long-stable: whether any JAX trace is running (a draw then belongs to a program)
    from jax._src.core import trace_state_clean as _no_trace
except ImportError:  # pragma: no cover
    def _no_trace():
        return False

_DEFAULT_SEED = 67280421310721  # PyTorch's default_generator initial seed


class Generator:
    """A source of random keys. `manual_seed` resets it; each draw advances it."""

    def __init__(self, device="cpu"):
        self.device = device
        self._cpu = str(device).split(":")[0] == "cpu"
        self.manual_seed(_DEFAULT_SEED)

    def manual_seed(self, seed):
        seed = int(seed)
        if not -(1 << 63) <= seed < 1 << 64:
            raise ValueError("Overflow when unpacking long long")
        self._seed = seed & MASK64   # PyTorch keeps seeds as uint64: manual_seed(-1) has initial_seed 2**64 - 1
        self._counter = 0            # key draws (the key of draw i is the seed's key folded with i)
        self._host_draws = 0
        self._made_key = None   # made at the first draw: making one starts JAX's backend (see tapegrad.distributed)
        self._stream = None     # PyTorch's CPU stream, made at its first draw
        return self

    @property
    def draws(self):
        """Draws made so far, by key or on the host (code that must notice draws compares this count)."""
        return self._counter + self._host_draws

    def _cpu_stream(self):
        if self._stream is None:
            self._stream = CpuStream(self._seed)
        return self._stream

    def _snapshot(self):
        """Everything a later draw depends on, cheaply (what get_state holds, without making its bytes)."""
        stream = None if self._stream is None else self._stream.copy()
        return self._seed, self._counter, self._host_draws, stream

    def _restore(self, snapshot):
        seed, counter, host_draws, stream = snapshot
        self.manual_seed(seed)
        self._counter, self._host_draws = counter, host_draws
        self._stream = None if stream is None else stream.copy()

    @property
    def _key(self):
        if self._made_key is None:
            seed = self._seed
            with jax.ensure_compile_time_eval():   # a constant, even when the first draw is inside a trace
                self._made_key = jax.random.key(seed)
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
        """PyTorch's state bytes (a uint8 tensor of 5056): the CPU stream, and tapegrad's key draw count."""
        from ._creation import tensor
        data = self._cpu_stream().state_bytes(self._seed, self._counter)
        return tensor(np.frombuffer(data, np.uint8).copy(), dtype=D.uint8)

    def set_state(self, state):
        from ._tensor import Tensor
        if not isinstance(state, Tensor) or state.dtype is not D.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        stream, seed, counter = CpuStream.from_bytes(np.asarray(state.numpy()).tobytes())
        self.manual_seed(seed)
        self._stream, self._counter = stream, counter

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


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices", device_type="cuda"):
    """PyTorch's fork_rng: draws inside the block leave the default generator as it was, its CPU stream
    and the keys other devices draw from (one generator serves every device here, so `devices` needs no
    listing)."""
    from .device import device
    device(device_type)   # PyTorch's error for a device type that does not exist
    if not enabled:
        yield
        return
    snapshot = default_generator._snapshot()
    try:
        yield
    finally:
        default_generator._restore(snapshot)


def _key(generator):
    if _VMAP_LEVELS:
        _refuse_in_vmap()
    key = (generator or default_generator).next_key()
    for randomness, index in _VMAP_LEVELS:
        if randomness == "different":   # one key per element of that map
            key = jax.random.fold_in(key, index)
    return key


_VMAP_LEVELS = []   # the vmaps tracing their function now, outermost first: (randomness, element index)


@contextlib.contextmanager
def vmap_level(randomness, index):
    """While a vmap traces its function: draws follow its `randomness` ("error" refuses them, "same" draws one
    value for the batch, "different" folds the element's `index` into the key). None: no vmap."""
    if randomness is None:
        yield
        return
    _VMAP_LEVELS.append((randomness, index))
    try:
        yield
    finally:
        _VMAP_LEVELS.pop()


def _refuse_in_vmap():
    if any(randomness == "error" for randomness, _ in _VMAP_LEVELS):
        raise RuntimeError("vmap: called random operation while in randomness error mode. Please either use the "
                           "'same' or 'different' randomness flags on vmap or perform the randomness operation out "
                           "of vmap")


TRACE_DRAWS = [None]   # while tapegrad.compile traces a function: its _compile._draws.TraceDraws


def host_stream(generator, device=None, value_dependent=False):
    """The generator's PyTorch CPU stream for a draw made now into a tensor on `device` (None: the default
    device), or None where a jax.random key draws it: another device, or a JAX trace running (the draw
    is then part of a program, run again at each call), but for tapegrad.compile's (see _compile._draws).
    value_dependent: the sampler's number of draws depends on values (rrelu, gamma, poisson), which a
    program's inputs cannot: keys draw it under tapegrad.compile too."""
    gen = generator or default_generator
    tracing = TRACE_DRAWS[0]
    if tracing is not None and value_dependent:
        return None
    if not gen._cpu or tracing is None and ("next_key" in gen.__dict__ or not _no_trace()):
        return None
    if device is None:
        from ._creation import get_default_device
        device = get_default_device()
    if str(device).split(":")[0] != "cpu":
        return None
    gen._host_draws += 1
    return gen._cpu_stream() if tracing is None else tracing.stream(gen)


def bernoulli(shape, prob, dtype, device=None, generator=None, scale=None):
    """A jax.Array of `shape` and tapegrad dtype on `device`: 1 with probability `prob`, else 0 (`scale`, a
    value of the dtype, in place of 1: dropout's noise, made where it is drawn rather than by a division
    on the device afterwards). On a CPU, eagerly, PyTorch's bernoulli_(prob) (one uniform double per element);
    elsewhere a jax.random draw."""
    stream = host_stream(generator, device)
    if stream is None:
        kept = jax.random.bernoulli(_key(generator), prob, tuple(shape))
        return kept.astype(dtype.np) if scale is None else jnp.where(kept, scale, jnp.zeros((), dtype.np))
    kept = (stream.uniform(math.prod(shape), np.float64) < prob).reshape(shape)
    if scale is not None:   # (the draws are a traced program's input under tapegrad.compile: its where)
        where = np.where if isinstance(kept, np.ndarray) else jnp.where
        return placed(where(kept, scale, np.zeros((), dtype.np)), device)
    return placed(kept.astype(dtype.np), device)


def placed(values, device):
    """Host-drawn values as a jax.Array on the tapegrad `device` (None: the default one)."""
    from ._creation import _jax_device
    return put(values, _jax_device(device))


def host_values(stream, kind, shape, dtype, *params, order=None):
    """Draws of `kind` (a CpuStream distribution: "uniform", "normal", "integers", ...) for a tensor of `shape`
    and tapegrad dtype, in the order PyTorch fills its memory: `order` lists the dims outermost first when that is not
    their own order (a strided tensor). A complex tensor draws its real view, as PyTorch's kernels fill it."""
    n = int(np.prod(shape, dtype=np.int64))
    np_dtype = np.dtype(dtype.np)
    real = np_dtype.kind == "c"
    draw_dtype = np.dtype(np.float32 if np_dtype == np.complex64 else np.float64) if real else np_dtype
    count = 2 * n if real else n
    if kind == "uniform":
        flat = stream.uniform(count, draw_dtype, *params)
    elif kind == "normal":
        mean, std = params
        flat = stream.normal(count, draw_dtype, mean, std / np.sqrt(2) if real else std, order is None)
    else:   # exponential, cauchy, geometric, log_normal, integers
        flat = getattr(stream, kind)(count, draw_dtype, *params)
    if real:   # (arithmetic rather than a view: the draws may be a trace's inputs)
        pairs = flat.reshape(-1, 2)
        flat = (pairs[:, 0] + 1j * pairs[:, 1]).astype(np_dtype)
    if order is None:
        return flat.reshape(shape)
    return flat.reshape([shape[d] for d in order]).transpose(np.argsort(order))


def _drawn(name, draw, generator, *static):
    """draw(key, *static), run by a kernel shared by every draw with these statics: on a CPU a new shape
    runs on NumPy (see _numpy_random) instead of compiling a program for it."""
    from . import _programs
    kernel = _programs.kernel(("random", name) + static,
                              lambda: lambda k: draw(jax.random.wrap_key_data(k), *static))
    return kernel(jax.random.key_data(_key(generator)))


def _make(value, requires_grad, device):
    from ._creation import _leaf
    return _leaf(placed(value, device), requires_grad)


def _no_draws(shape, dtype, requires_grad):
    """A tensor of draws on the meta device: no data, so nothing is drawn (the generators stay where they are)."""
    from ._creation import _leaf
    return _leaf(_meta.MetaArray(shape, dtype.np), requires_grad)


def _check_random_bounds(d):
    if d.is_complex:
        raise RuntimeError("check_random_bounds handles only integral, floating-point and boolean types. Draw "
                           "into a real dtype, then convert.")


def _float_dtype(dtype, kernel="check_uniform_bounds"):
    d = D.as_dtype(dtype) or D.get_default_dtype()
    if not d.is_floating_point and not d.is_complex:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{D.SCALAR_NAMES[d.name]}'. "
                                  "Pass a floating dtype, e.g. dtype=torch.float32.")
    return d


def _size(size, fname=None):
    from ._creation import _shape
    return _shape(size, fname)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None):
    from ._ops.random_fill import uniform_values
    d, shape = _float_dtype(dtype), _size(size, "rand")
    if _meta.named(device):
        return _no_draws(shape, d, requires_grad)
    stream = host_stream(generator, device)
    if stream is not None:
        return _make(host_values(stream, "uniform", shape, d), requires_grad, device)
    return _make(_drawn("rand", uniform_values, generator, shape, d.np), requires_grad, device)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False, out=None):
    return normal(0.0, 1.0, _size(size, "randn"), generator=generator, dtype=dtype, device=device,
                  requires_grad=requires_grad)


def randint(low=0, high=None, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    given = ", ".join(type(a).__name__ for a in (low, high, size) if a is not None)
    if size is not None and not isinstance(size, (tuple, list)):
        raise TypeError(f"randint() received an invalid combination of arguments - got ({given}), but expected "
                        "one of: (int high, tuple of ints size) or (int low, int high, tuple of ints size). "
                        "Pass the size as a tuple, e.g. torch.randint(0, 10, (3,)).")
    if size is None:
        if high is not None and not isinstance(high, (tuple, list)):   # (read as randint(high, size))
            from ._argument_errors import _tp_name
            raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, not {_tp_name(high)}")
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
    if isinstance(size, (tuple, list)):
        size = _size((size,), "randint")
    d = D.as_dtype(dtype) or D.int64
    _check_random_bounds(d)
    if _meta.named(device):
        return _no_draws(tuple(size), d, requires_grad)
    stream = host_stream(generator, device)
    if stream is not None:
        return _make(host_values(stream, "integers", tuple(size), d, int(low), int(high)), requires_grad, device)
    value = _drawn("randint", lambda k, *a: jax.random.randint(k, *a[:3], jnp.int64).astype(a[3]), generator,
                   tuple(size), low, high, d.np)
    return _make(value, requires_grad, device)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    d = D.as_dtype(dtype) or D.int64
    if d.is_complex:
        raise NotImplementedError(f"\"randperm\" not implemented for '{D.SCALAR_NAMES[d.name]}'. Pass a real "
                                  "dtype, e.g. dtype=torch.int64.")
    _size((n,))
    if _meta.named(device):
        return _no_draws((int(n),), d, requires_grad)
    stream = host_stream(generator, device)
    if stream is not None:
        return _make(stream.permutation(int(n)).astype(d.np), requires_grad, device)
    value = _drawn("randperm", lambda k, n, dt: jax.random.permutation(k, n).astype(dt), generator, n, d.np)
    return _make(value, requires_grad, device)


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None, requires_grad=False):
    from ._tensor import Tensor
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        # PyTorch's NormalBackward1/2/3 node (a zero gradient to the tensor arguments)
        from ._broadcast_errors import broadcast_error
        from ._dispatch import apply
        from ._functional._random import _key as key_tensor
        from ._ops import random_fill as RF
        dtype = (mean if isinstance(mean, Tensor) else std).dtype
        if not (dtype.is_floating_point or dtype.is_complex):   # (the result has the tensor's dtype)
            raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for '{D.SCALAR_NAMES[dtype.name]}'. "
                                      "Pass a floating mean or std, e.g. mean.float().")
        mean = mean if isinstance(mean, Tensor) else float(mean)
        std = std if isinstance(std, Tensor) else float(std)
        if isinstance(std, Tensor):
            from . import _value_checks
            _value_checks.check(std, lambda v, xp: v < 0, lambda v, at: RuntimeError(
                "normal expects all elements of std >= 0.0. Pass a std tensor without negative values."))
        elif std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
        error = broadcast_error((mean, std))
        if error is not None:
            raise error
        shape = jnp.broadcast_shapes(*(tuple(t.shape) for t in (mean, std) if isinstance(t, Tensor)))
        device = (mean if isinstance(mean, Tensor) else std).device
        stream = host_stream(generator, device)
        if stream is None:
            return apply(RF.normal_tensor, mean, std, key_tensor(generator), dtype=dtype.name)
        # PyTorch: normal_(0, 1) of the result's shape, times std, plus mean
        noise = placed(host_values(stream, "normal", shape, dtype, 0.0, 1.0), device)
        return apply(RF.normal_tensor, mean, std, Tensor._wrap(noise), dtype=dtype.name, drawn=True)
    d = _float_dtype(dtype, "normal_kernel_cpu")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    shape = _size(size)
    if _meta.named(device):
        return _no_draws(shape, d, requires_grad)
    stream = host_stream(generator, device)
    if stream is not None:
        return _make(host_values(stream, "normal", shape, d, float(mean), float(std)), requires_grad, device)
    z = _drawn("randn", jax.random.normal, generator, shape, d.np)
    mean = complex(mean, mean) if d.is_complex else mean   # PyTorch's complex normal: both parts about mean
    return _make((mean + std * z).astype(d.np), requires_grad, device)


def rand_like(input, *, dtype=None, device=None, requires_grad=False, generator=None, memory_format=None):
    check_tensor(input, "rand_like")
    device = input.device if device is None else device   # (the input's device, as PyTorch's *_like)
    return lay_out_like(rand(*input.shape, dtype=dtype or input.dtype, device=device, requires_grad=requires_grad,
                             generator=generator), input, memory_format)


def randn_like(input, *, dtype=None, device=None, requires_grad=False, generator=None, memory_format=None):
    check_tensor(input, "randn_like")
    device = input.device if device is None else device
    return lay_out_like(randn(*input.shape, dtype=dtype or input.dtype, device=device, requires_grad=requires_grad,
                              generator=generator), input, memory_format)


def randint_like(input, low, high=None, *, dtype=None, device=None, requires_grad=False, memory_format=None):
    device = input.device if device is None else device
    return lay_out_like(randint(low, high, tuple(input.shape), dtype=dtype or input.dtype, device=device), input,
                        memory_format)
