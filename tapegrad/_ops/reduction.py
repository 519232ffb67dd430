"""Reductions and scans. `dim` is None (all) or a sorted tuple of non-negative dims."""
import functools
import math

import jax
import jax.numpy as jnp

from ._cumprod_reverse import cumprod_reverse
from ._registry import defop, overload, FLOAT, KEEP
from ._signed_zero import plus_zero


def _safe_sqrt(x):
    # sqrt with a zero gradient at 0, as PyTorch's std/norm backward masks it.
    zero = x == 0
    return jnp.where(zero, jnp.zeros((), x.dtype), jnp.sqrt(jnp.where(zero, jnp.ones((), x.dtype), x)))


def _var(a, dim, correction, keepdim):
    n = a.size if dim is None else math.prod(a.shape[d] for d in dim)
    mean = jnp.mean(a, axis=dim, keepdims=True)
    centred = a - mean
    sq = jnp.real(centred * jnp.conj(centred)) if jnp.iscomplexobj(a) else centred * centred
    return jnp.sum(sq, axis=dim, keepdims=keepdim) / max(n - correction, 0)


def _bool_reduce(fn, a, dim, keepdim):
    out = fn(a != 0, axis=dim, keepdims=keepdim)
    return out.astype(jnp.uint8) if a.dtype == jnp.uint8 else out


sum = defop("sum", lambda a, dim, keepdim, dtype: jnp.sum(a, axis=dim, keepdims=keepdim, dtype=dtype),
            dtype_rule=KEEP, overloads=[overload("SumBackward1", dim=tuple)])


def _sum_back(static, shape, out_shape):
    # sum_backward: the gradient unsqueezed at each reduced dim, then expanded (all strides 0 where reduced)
    if static["dtype"] is not None or static["dim"] == ():
        return None
    dims = () if static["keepdim"] or static["dim"] is None else sorted(d % len(shape) for d in static["dim"])
    return [("unsqueeze", d) for d in dims] + [("expand", shape)]


sum.hands_grad = _sum_back


@functools.lru_cache(maxsize=None)
def _nansum(dim, keepdim, dtype):
    """nansum with PyTorch's gradient, grad * isnan(input).logical_not(): a NaN input's gradient is zero
    unless the gradient itself is inf or NaN (jnp.nansum's where would zero it regardless)."""
    @jax.custom_jvp
    def f(a):
        return jnp.nansum(a, axis=dim, keepdims=keepdim, dtype=dtype)

    @f.defjvp
    def _(primals, tangents):
        (a,), (da,) = primals, tangents
        kept = jnp.logical_not(jnp.isnan(a)).astype(da.dtype)
        return f(a), jnp.sum(da * kept, axis=dim, keepdims=keepdim, dtype=dtype)
    return f


nansum = defop("nansum", lambda a, dim, keepdim, dtype: _nansum(dim, keepdim, dtype)(a), dtype_rule=KEEP)
mean = defop("mean", lambda a, dim, keepdim, dtype: jnp.mean(a, axis=dim, keepdims=keepdim, dtype=dtype),
             dtype_rule=KEEP, overloads=[overload("MeanBackward1", dim=tuple)])
# PyTorch's backward of these reads both the input and the result (derivatives.yaml): an in-place change
# of either makes it fail, even where JAX's VJP reads neither (a 0-d input)
SELF_AND_RESULT = dict(saves_inputs=(0,), saves_output=True)
# PyTorch's prod backward, grad * (result / input), reads the input but for a 0-d one (the gradient
# passes through); JAX's reads nothing over a one-element reduction: tie it to the input (fused_backward)
@functools.lru_cache(maxsize=None)
def _prod_as_torch(dim, keepdim, dtype):
    """prod whose gradient is PyTorch's: grad * (result / input) when the input has no zero at all (so a
    NaN anywhere in a slice makes that slice's gradient NaN), else the product of the other elements
    (prod_safe_zeros_backward). JAX's own rule is neither: it never divides, and an infinity next to a
    zero gives NaN where PyTorch's gives a number."""
    def reduce(a):
        return jnp.prod(a, axis=dim, keepdims=keepdim, dtype=dtype)

    @jax.custom_jvp
    def f(a):
        return reduce(a)

    @f.defjvp
    def _(primals, tangents):
        (a,), (da,) = primals, tangents
        out = reduce(a)
        if a.ndim == 0:
            return out, da.astype(out.dtype)   # PyTorch passes the gradient through: it reads no input
        factor = _prod_factor(a, out, dim, keepdim)
        tangent = jnp.sum(da.astype(out.dtype) * factor, axis=dim, keepdims=keepdim)
        if dim is None:   # PyTorch's prod() backward is zeros, whatever the gradient, with two zeros or more
            tangent = jnp.where(jnp.sum(a == 0) > 1, jnp.zeros((), tangent.dtype), tangent)
        return out, tangent
    return f


def _prod_factor(a, out, dim, keepdim):
    """d prod / d a: result / input without a zero in the input, else the product of the others."""
    zero = a == 0
    ratio = _unreduced(out, dim, keepdim) / jnp.where(zero, jnp.ones((), a.dtype), a).astype(out.dtype)   # (no 0/0)
    return jnp.where(jnp.any(zero), _product_of_others(a.astype(out.dtype), dim), ratio)


def _unreduced(x, dim, keepdim):
    return x if keepdim or dim is None else jnp.expand_dims(x, dim)   # (a 0-d result broadcasts)


def _prod_backward(g, result, a, dim, keepdim, dtype):
    """PyTorch's prod_backward on the result (create_graph: see Op.result_backward)."""
    if a.ndim == 0:
        return g
    return _unreduced(g, dim, keepdim) * jnp.conj(_prod_factor(a, result, dim, keepdim))


def _product_of_others(a, dim):
    """Each element's product of the other elements of its slice (`dim`: None for all, or one dim), as
    exclusive products from both ends (PyTorch's prod_safe_zeros_backward: no division, so zeros and
    infinities give what it gives)."""
    if dim is None:
        return _product_of_others(a.reshape(-1), (0,)).reshape(a.shape)
    axis, = dim
    if a.shape[axis] == 0:   # (an empty slice: no element, no product to take)
        return a
    ones = jnp.ones_like(jax.lax.slice_in_dim(a, 0, 1, axis=axis))
    before = jnp.cumprod(jnp.concatenate([ones, jax.lax.slice_in_dim(a, 0, -1, axis=axis)], axis), axis=axis)
    flipped = jnp.flip(a, axis)
    after = jnp.flip(jnp.cumprod(jnp.concatenate([ones, jax.lax.slice_in_dim(flipped, 0, -1, axis=axis)], axis),
                                 axis=axis), axis)
    return before * after


prod = defop("prod", lambda a, dim, keepdim, dtype: _prod_as_torch(dim, keepdim, dtype)(a),
             dtype_rule=KEEP, overloads=[overload("ProdBackward1", dim=tuple)], saves_inputs=(0,),
             fused_backward=lambda a: a.ndim > 0, result_backward=_prod_backward)
var = defop("var", _var, dtype_rule=KEEP)


def _std_backward(g, result, a, dim, correction, keepdim):
    """PyTorch's std_backward on the result: var_backward of grad / (2 * result), zero where the result is."""
    g = jnp.where(result == 0, jnp.zeros((), g.dtype), g / (result * 2))
    dof = (a.size if dim is None else math.prod(a.shape[d] for d in dim)) - correction
    if a.ndim == 0 or dim is None:
        mean = jnp.mean(a)
        if dof <= 0:   # 2 / dof is infinite: NaN where the input equals its mean (inf * 0), else infinite
            return g * jnp.where(a == mean, jnp.asarray(jnp.nan, a.dtype), jnp.asarray(jnp.inf, a.dtype))
        return (2.0 / dof) * g * (a - mean)
    scale = 2.0 / dof if dof else math.inf
    return scale * _unreduced(g, dim, keepdim) * (a - jnp.mean(a, axis=dim, keepdims=True))


std = defop("std", lambda a, dim, correction, keepdim: _safe_sqrt(_var(a, dim, correction, keepdim)),
            dtype_rule=KEEP, saves_inputs=(0,), result_backward=_std_backward)
# One node with both results, as PyTorch's (VarMeanBackward0, StdMeanBackward0).
var_mean = defop("var_mean", lambda a, dim, correction, keepdim: (
    _var(a, dim, correction, keepdim), jnp.mean(a, axis=dim, keepdims=keepdim)), dtype_rule=KEEP, nout=2)
std_mean = defop("std_mean", lambda a, dim, correction, keepdim: (
    _safe_sqrt(_var(a, dim, correction, keepdim)), jnp.mean(a, axis=dim, keepdims=keepdim)), dtype_rule=KEEP,
    nout=2, saves_inputs=(0,), saves_output=(0,))   # (PyTorch's backward reads the input and the std)
# Ties share the gradient evenly (PyTorch's amax/amin and full max()/min()); JAX's max rule does the same.
@functools.lru_cache(maxsize=None)
def _scaled_by_count(reduce, dim, keepdim):
    """reduce over dim whose gradient is shared by the elements equal to the result (PyTorch's
    scale_grad_by_count: a slice whose result is NaN matches no element, and its gradient is NaN)."""
    @jax.custom_jvp
    def f(a):
        return reduce(a, axis=dim, keepdims=keepdim)

    @f.defjvp
    def _(primals, tangents):
        (a,), (da,) = primals, tangents
        kept = reduce(a, axis=dim, keepdims=True)
        mask = (a == kept).astype(da.dtype)
        count = jnp.sum(mask, axis=dim, keepdims=True)
        # PyTorch's (grad / count) * mask is NaN where count is 0; spelled out, since XLA folds x / 0 * 0 to 0
        weight = jnp.where(count == 0, jnp.full((), jnp.nan, da.dtype), mask / jnp.maximum(count, 1))
        tangent = jnp.sum(da * weight, axis=dim, keepdims=keepdim)
        return reduce(a, axis=dim, keepdims=keepdim), tangent
    return f


amax = defop("amax", lambda a, dim, keepdim: _scaled_by_count(jnp.max, dim, keepdim)(a), dtype_rule=KEEP,
             **SELF_AND_RESULT)
amin = defop("amin", lambda a, dim, keepdim: _scaled_by_count(jnp.min, dim, keepdim)(a), dtype_rule=KEEP,
             **SELF_AND_RESULT)
# one node for both results (AminmaxBackward0), each gradient shared among the elements equal to its extreme
aminmax = defop("aminmax", lambda a, dim, keepdim: (_scaled_by_count(jnp.min, dim, keepdim)(a),
                                                     _scaled_by_count(jnp.max, dim, keepdim)(a)),
                dtype_rule=KEEP, nout=2, saves_inputs=(0,), saves_output=(0, 1))


def _evenly_distributed(reduce):
    """reduce(a) whose gradient is shared by the elements equal to the result, or by the NaNs where the result
    is NaN (PyTorch's evenly_distribute_backward of max()/min(); amax/amin give NaNs no gradient)."""
    @jax.custom_jvp
    def f(a):
        return reduce(a)

    @f.defjvp
    def _(primals, tangents):
        (a,), (da,) = primals, tangents
        out = reduce(a)
        mask = jnp.where(jnp.isnan(out), jnp.isnan(a), a == out)
        return out, jnp.sum(jnp.where(mask, da, jnp.zeros((), da.dtype))) / jnp.sum(mask).astype(da.dtype)
    return f


max_all = defop("max_all", _evenly_distributed(jnp.max), dtype_rule=KEEP, node_name="MaxBackward1",
                **SELF_AND_RESULT)
min_all = defop("min_all", _evenly_distributed(jnp.min), dtype_rule=KEEP, node_name="MinBackward1",
                **SELF_AND_RESULT)
argmax = defop("argmax", lambda a, dim, keepdim: jnp.argmax(a, axis=dim, keepdims=keepdim), dtype_rule=KEEP)
argmin = defop("argmin", lambda a, dim, keepdim: jnp.argmin(a, axis=dim, keepdims=keepdim), dtype_rule=KEEP)


@functools.lru_cache(maxsize=None)
def _logsumexp(dim, keepdim):
    """logsumexp with PyTorch's gradient formula, grad * exp(input - result) (JAX's softmax rounds differently)."""
    @jax.custom_jvp
    def f(a):
        return jax.nn.logsumexp(a, axis=dim, keepdims=keepdim)

    @f.defjvp
    def _(primals, tangents):
        (a,), (da,) = primals, tangents
        kept = jax.nn.logsumexp(a, axis=dim, keepdims=True)
        tangent = jnp.sum(da * jnp.exp(a - kept), axis=dim, keepdims=keepdim)
        return jax.nn.logsumexp(a, axis=dim, keepdims=keepdim), tangent
    return f


logsumexp = defop("logsumexp", lambda a, dim, keepdim: _logsumexp(dim, keepdim)(a), dtype_rule=FLOAT,
                  saves_inputs=(0,), result_backward=lambda g, result, a, dim, keepdim: (
                      _unreduced(g, dim, keepdim) * jnp.conj(jnp.exp(a - _unreduced(result, dim, keepdim)))))
# (PyTorch's sum runs from +0: a run of -0.0 sums to +0.0, which XLA's prefix sum does not start from)
cumsum = defop("cumsum", lambda a, dim, dtype: plus_zero(jnp.cumsum(a, axis=dim, dtype=dtype)), dtype_rule=KEEP)
cumprod = defop("cumprod", lambda a, dim, dtype: jnp.cumprod(a, axis=dim, dtype=dtype), dtype_rule=KEEP,
                reverse_fn=cumprod_reverse, **SELF_AND_RESULT)
# (PyTorch's cumsum_backward and cumprod_backward hand the gradient on as it is where the cumulation is
# trivial: one element at most, or a cumulated dim of size 1)
cumsum.hands_grad = cumprod.hands_grad = lambda static, shape, out_shape: (
    [] if static["dtype"] is None and (math.prod(shape) <= 1 or shape[static["dim"] % len(shape)] == 1) else None)
all = defop("all", lambda a, dim, keepdim: _bool_reduce(jnp.all, a, dim, keepdim), dtype_rule=KEEP)
any = defop("any", lambda a, dim, keepdim: _bool_reduce(jnp.any, a, dim, keepdim), dtype_rule=KEEP)
count_nonzero = defop("count_nonzero", lambda a, dim: jnp.sum(a != 0, axis=dim, dtype=jnp.int64),
                      dtype_rule=KEEP)
def _logcumsumexp_backward(g, result, a, dim):
    """PyTorch's logcumsumexp_backward: the positive and negative parts of the gradient, each carried in log
    space by a reversed logcumsumexp (so a gradient recorded with create_graph depends on the input and
    the result, as PyTorch's, even over a dim of one element)."""
    if g.ndim == 0 or g.size == 0:
        return g
    lowest = jnp.finfo(g.dtype).min
    log_abs = jnp.log(jnp.abs(g))
    positive, negative = (jnp.where(side, log_abs, lowest) for side in (g > 0, g < 0))

    def reversed_cumulative(x):
        return jnp.flip(jax.lax.cumlogsumexp(jnp.flip(x, dim), axis=dim), dim)
    return jnp.exp(reversed_cumulative(positive - result) + a) - jnp.exp(reversed_cumulative(negative - result) + a)


logcumsumexp = defop("logcumsumexp", lambda a, dim: jax.lax.cumlogsumexp(a, axis=dim), dtype_rule=KEEP,
                     result_backward=_logcumsumexp_backward, **SELF_AND_RESULT)


def _cumulative_extreme_index(a, dim, later_wins):
    """Indices of the running max/min along dim: a tie or a NaN moves it to the later element, and a NaN
    stays the extreme once seen (PyTorch's cummax/cummin)."""
    index = jax.lax.broadcasted_iota(jnp.int64, a.shape, dim)

    def combine(earlier, later):
        (v0, i0), (v1, i1) = earlier, later
        take = jnp.isnan(v1) | (~jnp.isnan(v0) & later_wins(v1, v0)) if jnp.issubdtype(a.dtype, jnp.inexact) \
            else later_wins(v1, v0)
        return jnp.where(take, v1, v0), jnp.where(take, i1, i0)

    return jax.lax.associative_scan(combine, (a, index), axis=dim)[1]


cummax_indices = defop("cummax_indices", lambda a, dim: _cumulative_extreme_index(a, dim, jnp.greater_equal),
                       dtype_rule=KEEP, diff=())
cummin_indices = defop("cummin_indices", lambda a, dim: _cumulative_extreme_index(a, dim, jnp.less_equal),
                       dtype_rule=KEEP, diff=())
# The values are gathered at the indices, so each gradient goes to the element that held the extreme.
cummax_values = defop("cummax_values", lambda a, idx, dim: jnp.take_along_axis(a, idx, axis=dim), dtype_rule=KEEP,
                      diff=(0,), node_name="CummaxBackward0", saves_inputs=(0, 1))
cummin_values = defop("cummin_values", lambda a, idx, dim: jnp.take_along_axis(a, idx, axis=dim), dtype_rule=KEEP,
                      diff=(0,), node_name="CumminBackward0", saves_inputs=(0, 1))


def _bincount(a, *weights, length):
    if weights:
        return jax.ops.segment_sum(weights[0], a, length)
    return jax.ops.segment_sum(jnp.ones(a.shape, jnp.int64), a, length)


# The length depends on the values: the caller reads max(input) on the host (as PyTorch syncs). PyTorch has no
# derivative for the weights (its node is NotImplemented); here they differentiate.
bincount = defop("bincount", _bincount, dtype_rule=KEEP, diff=(1,), node_name="torch::autograd::NotImplemented")


def _renorm(a, p, dim, maxnorm):
    """Each slice along dim scaled to a p-norm of at most maxnorm, by maxnorm / (norm + 1e-7) (PyTorch's)."""
    axes = tuple(d for d in range(a.ndim) if d != dim)

    def norm(x):
        x = jnp.abs(x)
        if p == math.inf:
            return jnp.max(x, axis=axes, keepdims=True)
        return jnp.sum(x ** p, axis=axes, keepdims=True) ** (1 / p)
    over = jax.lax.stop_gradient(norm(a)) > maxnorm
    # the norm of the slices left as they are is not differentiated (its derivative at 0 is not finite)
    n = norm(jnp.where(over, a, jnp.ones((), a.dtype)))
    return jnp.where(over, a * (maxnorm / (n + 1e-7)).astype(a.dtype), a)


# PyTorch's renorm_backward reads the input
renorm = defop("renorm", _renorm, dtype_rule=KEEP, saves_inputs=(0,))
