"""Random in-place fills (x.uniform_(), ...) and sampling (bernoulli, multinomial, poisson, gamma)."""
import builtins

import jax
import numpy as np

from .. import _dtypes as D, _meta, _value_checks
from .._dispatch import apply
from .._inplace import check_inplace, inplace
from .._ops import random_fill as RF
from .._tensor import Tensor
from ._common import SCALAR_NAME, read_on_host


def _key(generator):
    from ..random import _key as next_key
    return Tensor._wrap(jax.random.key_data(next_key(generator)).astype(jax.numpy.int64))


def _drawn(t, generator, kind, *params, dtype=None, fresh=False):
    """(source, statics) for a fill of t: the values (of `dtype`, t's by default) drawn on the host in
    PyTorch's CPU stream, in the order PyTorch fills t's memory (fresh: a new contiguous tensor of t's
    shape), or, where a key draws them (tapegrad.random.host_stream), a key's data."""
    from ..random import host_stream, host_values, placed
    stream = host_stream(generator, t.device)
    if stream is None:
        return _key(generator), {}
    order = None
    if not fresh and not t.is_contiguous():   # PyTorch's serial kernels walk the memory, outermost stride first
        order = sorted(range(t.ndim), key=lambda d: -t.stride(d))
    values = host_values(stream, kind, tuple(t.shape), dtype or t.dtype, *params, order=order)
    return Tensor._wrap(placed(values, t.device)), {"drawn": True}


def _fill(self, generator, kind, op, *params):
    """self filled in place by the op with draws of `kind` (Python float parameters). A fill PyTorch refuses
    (a leaf that requires grad) draws nothing."""
    check_inplace(self)
    if _meta.is_meta(self):   # (no data: nothing to draw)
        self._storage.bump()
        return self
    source, drawn = _drawn(self, generator, kind, *params)
    return inplace(self, op, source, *(builtins.float(v) for v in params), **drawn)


def _check_continuous(t, distribution, cpp=False):
    """(cpp: the dtype named as C++ does, 'long int', as cauchy_'s message; else as exponential_'s, 'Long')"""
    if not t.dtype.is_floating_point:
        name = D.cpp_name(t.dtype) if cpp else SCALAR_NAME[t.dtype.name]
        raise RuntimeError(f"{distribution} distribution is a continuous probability distribution. dtype must be a "
                           f"floating point but you specified {name}. Fill a real floating "
                           "tensor, e.g. x.float().")


def _check_float(t, name):
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        raise NotImplementedError(f"\"{name}\" not implemented for '{SCALAR_NAME[t.dtype.name]}'. Fill a "
                                  "floating tensor, e.g. x.float().")


def _check_real_float(t, name):
    # samplers PyTorch has for real floating types only
    if not t.dtype.is_floating_point:
        raise NotImplementedError(f"\"{name}\" not implemented for '{SCALAR_NAME[t.dtype.name]}'. Use a real "
                                  "floating tensor, e.g. x.float().")


def uniform_(self, a=0.0, b=1.0, *, generator=None):
    _check_float(self, "check_uniform_bounds")
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={a} > to={b}")
    return _fill(self, generator, "uniform", RF.uniform, a, b)


def normal_(self, mean=0.0, std=1.0, *, generator=None):
    _check_float(self, "normal_kernel_cpu")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    return _fill(self, generator, "normal", RF.normal, mean, std)


def exponential_(self, lambd=1.0, *, generator=None):
    _check_continuous(self, "Exponential")
    if lambd <= 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return _fill(self, generator, "exponential", RF.exponential, lambd)




def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    _check_continuous(self, "Cauchy", cpp=True)
    if sigma <= 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma}")
    return _fill(self, generator, "cauchy", RF.cauchy, median, sigma)


def geometric_(self, p, *, generator=None):
    if self.dtype.is_complex or self.dtype.name == "bool":
        raise NotImplementedError(f"\"geometric_cpu\" not implemented for '{SCALAR_NAME[self.dtype.name]}'. Fill a "
                                  "real tensor, then convert.")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p}")
    return _fill(self, generator, "geometric", RF.geometric, p)


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    _check_real_float(self, "log_normal_cpu")
    if std <= 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std}")
    return _fill(self, generator, "log_normal", RF.log_normal, mean, std)


def random_(self, from_=0, to=None, *, generator=None):
    # random_(), random_(to) and random_(from, to): the bounds left out are passed as None (the op's
    # overloads, named as PyTorch's nodes, and its defaults: [0, 2^mantissa] for floats).
    if self.dtype.is_complex:
        if to is None and from_ == 0:
            raise NotImplementedError(f"\"random_kernel_cpu\" not implemented for '{SCALAR_NAME[self.dtype.name]}'. "
                                      "Fill a real tensor, then convert.")
        raise RuntimeError("check_random_bounds handles only integral, floating-point and boolean types. Fill a "
                           "real tensor, then convert.")
    if to is None and from_ == 0:
        from_ = None
    elif to is None:
        from_, to = None, from_
    if to is not None and (from_ or 0) >= to:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_ or 0} >= to={to}")
    from_ = None if from_ is None else builtins.int(from_)
    to = None if to is None else builtins.int(to)
    high = RF.random_limit(self.dtype.np) if to is None else to
    check_inplace(self)
    source, drawn = _drawn(self, generator, "integers", from_ or 0, high)
    return inplace(self, RF.random, source, from_, to, **drawn)


def bernoulli_(self, p=0.5, *, generator=None):
    if self.dtype.is_complex:
        _check_real_float(self, "bernoulli_tensor_cpu_self_" if isinstance(p, Tensor) else "bernoulli_scalar_cpu_")
    p = p if isinstance(p, Tensor) else builtins.float(p)
    # PyTorch's CPU kernel compares a uniform with p: a double for a Python p, else one of p's dtype
    check_inplace(self)
    source, drawn = _drawn(self, generator, "uniform", dtype=_uniform_dtype(p))
    return inplace(self, RF.bernoulli_fill, source, p, **drawn)


def _uniform_dtype(p):
    """The dtype of the uniforms PyTorch's CPU bernoulli compares with p: double for a Python number or a
    double tensor, else float."""
    if not isinstance(p, Tensor) or p.dtype is D.float64:
        return D.float64
    return D.float32


def bernoulli(input, p=None, *, generator=None, out=None):
    if p is not None:
        return bernoulli_(input.clone().detach(), p, generator=generator)
    _check_float(input, "bernoulli_tensor_cpu_p_")
    _check_real_float(input, "bernoulli_tensor_cpu_self_")
    source, drawn = _drawn(input, generator, "uniform", dtype=_uniform_dtype(input), fresh=True)
    return apply(RF.bernoulli, input, source, **drawn)


def multinomial(input, num_samples, replacement=False, *, generator=None, out=None):
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           f"{SCALAR_NAME[input.dtype.name]}. Pass float probabilities, e.g. input.float().")
    n = input.shape[-1]
    if not replacement and num_samples > n:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without replacement")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    _value_checks.check_array(input._value, lambda v, xp: (v < 0) | ~xp.isfinite(v), lambda v, at: RuntimeError(
        "probability tensor contains either `inf`, `nan` or element < 0"), strict=True)
    xp, p = read_on_host(input._value)
    if builtins.bool(xp.any(xp.sum(p, -1) == 0)):
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    num_samples, replacement = builtins.int(num_samples), builtins.bool(replacement)
    if replacement and num_samples > 1:   # PyTorch's CPU kernel: one uniform double per sample
        shape = tuple(input.shape[:-1]) + (num_samples,)
        source, drawn = _drawn(input.new_empty(shape, dtype=D.float64), generator, "uniform", fresh=True)
    else:   # the Gumbel trick: one Exp(1) draw per category, of the input's dtype
        source, drawn = _drawn(input, generator, "exponential", 1.0, fresh=True)
    return apply(RF.multinomial, input.detach(), source, num_samples=num_samples, replacement=replacement, **drawn)


def _sampled(input, generator, method):
    """(source, statics) of a sampler whose number of draws depends on the values (gamma, poisson): samples
    drawn on the host as PyTorch's CPU kernel draws them, value by value (the input is read), or a key's
    data under a trace or on another device."""
    from ..random import host_stream, placed
    stream = host_stream(generator, input.device, value_dependent=True)
    if stream is None:
        return _key(generator), {}
    values = np.asarray(input.detach().contiguous().numpy())
    samples = getattr(stream, method)(values.reshape(-1), values.dtype).reshape(values.shape)
    return Tensor._wrap(placed(samples, input.device)), {"drawn": True}


def poisson(input, generator=None):
    _check_real_float(input, "poisson_cpu")
    source, drawn = _sampled(input, generator, "poisson")
    return apply(RF.poisson, input, source, **drawn)


def _standard_gamma(input, generator=None):
    _check_real_float(input, "gamma_cpu")
    source, drawn = _sampled(input, generator, "gamma")
    return apply(RF.standard_gamma, input, source, **drawn)
