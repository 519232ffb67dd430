"""Neural-network kernels: activations, linear/conv, dropout, embedding, attention, padding, resampling.

Optional tensors (bias, weight, mask) are trailing positional inputs; a static flag
says which are present. Inputs arrive as they are (KEEP): the Python wrappers in
`tapegrad.nn.functional` check dtypes with PyTorch's errors first.
Pooling kernels live in `nn_pooling.py`, normalisation in `nn_normalization.py`, loss kernels in
`nn_loss.py`, recurrent layers in `nn_rnn.py`.
"""
import math
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from ._elementwise_math import glu as _glu_halves, silu as _silu
from ._registry import CLAMP_COMPLEX, defop, missing_kernel, named_formula, overload, KEEP


def _nn(name, fn, **meta):
    meta.setdefault("dtype_rule", KEEP)
    return defop(name, fn, **meta)


def _zero(a):
    return jnp.zeros((), a.dtype)


# ---- activations ---------------------------------------------------------------------------

def _softplus(x, beta, threshold):
    bx = x * beta
    # Keep exp() finite in the branch where() discards, so its gradient stays finite too (where(), not
    # minimum(): at bx == threshold minimum's gradient is split in half).
    soft = jnp.log1p(jnp.exp(jnp.where(bx > threshold, threshold, bx))) / beta
    return jnp.where(bx > threshold, x, soft)


def _gelu(x, approximate, vectorized=False):
    if approximate == "tanh":
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1 + jnp.tanh(inner))
    out = 0.5 * x * (1 + lax.erf(x * (1 / math.sqrt(2))))
    if vectorized:   # PyTorch's vectorised float kernel: its erf of +inf is NaN (the scalar one's is 1)
        out = out * jnp.where(x == jnp.inf, jnp.nan, 1).astype(x.dtype)   # (a product keeps -0.0 and the gradient)
    return out


def _hardtanh(x, lo, hi):
    # PyTorch passes the gradient only strictly inside (lo, hi): the bounds are constants at the ends
    # (clip's gradient there is split in half); NaN stays NaN; its value is min(max(x, lo), hi), so x at a
    # bound keeps its own bits (relu6 of -0.0 is -0.0)
    at_bound = jax.lax.stop_gradient(x)
    inside = jnp.where((x == lo) | (x == hi), at_bound, x)
    return jnp.where(x < lo, jnp.asarray(lo, x.dtype), jnp.where(x > hi, jnp.asarray(hi, x.dtype), inside))


def _nan_or_zero(x, zero=None):
    # PyTorch's shrink kernels keep NaN (its value, and the gradient of its scalar kernel)
    return jnp.where(jnp.isnan(x), x, _zero(x) if zero is None else zero)


def _elu(x, alpha, scale, input_scale, celu=False, inplace=False):
    return _elu_value(x, alpha, scale, input_scale)


# PyTorch's derivative at 0 is the negative branch's (its test is x <= 0; NaN takes the positive one), and its
# second derivative (elu_double_backward) is masked by x < 0: 0 at 0, where the negative branch's is not.
@partial(jax.custom_jvp, nondiff_argnums=(1, 2, 3))
def _elu_value(x, alpha, scale, input_scale):
    positive = (x > 0) | jnp.isnan(x)
    neg = alpha * jnp.expm1(jnp.where(positive, jnp.zeros((), x.dtype), x) * input_scale)
    return scale * jnp.where(positive, x, neg)


@_elu_value.defjvp
def _elu_value_jvp(alpha, scale, input_scale, primals, tangents):
    (x,), (dx,) = primals, tangents
    return _elu_value(x, alpha, scale, input_scale), _elu_slope(x, alpha, scale, input_scale) * dx


@partial(jax.custom_jvp, nondiff_argnums=(1, 2, 3))
def _elu_slope(x, alpha, scale, input_scale):
    positive = (x > 0) | jnp.isnan(x)
    curve = input_scale * (alpha * scale) * jnp.exp(jnp.where(positive, jnp.zeros((), x.dtype), x) * input_scale)
    return jnp.where(positive, jnp.asarray(scale, x.dtype), curve)


@_elu_slope.defjvp
def _elu_slope_jvp(alpha, scale, input_scale, primals, tangents):
    (x,), (dx,) = primals, tangents
    negative = x < 0
    bend = input_scale * input_scale * (alpha * scale) * jnp.exp(jnp.where(negative, x, jnp.zeros((), x.dtype))
                                                                   * input_scale)
    return _elu_slope(x, alpha, scale, input_scale), jnp.where(negative, bend, jnp.zeros((), x.dtype)) * dx


# inplace=True: PyTorch's in-place kernels (elu_, leaky_relu_...), whose nodes are named *Backward1 and (but
# threshold_'s) save the result instead of the input; celu=True: celu, which PyTorch records as its own node
def _in_place(name, **statics):
    return overload(name, inplace=True, saves_output=True, saves_inputs=(), **statics)


leaky_relu = _nn("leaky_relu", lambda x, slope, inplace=False: jnp.where(x > 0, x, x * slope), fused_backward=True,
                 backward_name=True, overloads=[_in_place("LeakyReluBackward1")])
elu = _nn("elu", _elu, overloads=[_in_place("CeluBackward1", celu=True), overload("CeluBackward0", celu=True),
                                  _in_place("EluBackward1")], backward_name="EluBackwardBackward0")
gelu = _nn("gelu", _gelu, backward_name="GeluBackwardBackward0")
silu = _nn("silu", lambda x: _silu(x))
mish = _nn("mish", lambda x: x * jnp.tanh(_softplus(x, 1.0, 20.0)))
softplus = _nn("softplus", _softplus, backward_name="SoftplusBackwardBackward0")
hardtanh = _nn("hardtanh", _hardtanh, fused_backward=True, backward_name=True)
# PyTorch's backward kernels of these take the input as a recorded argument (fused_backward), and pass the
# gradient only strictly inside each linear piece: where() sends none to the constant side of a bound.
threshold = _nn("threshold", lambda x, th, value, inplace=False: jnp.where(x <= th, jnp.asarray(value, x.dtype), x),
                fused_backward=True, backward_name=True,
                overloads=[overload("ThresholdBackward1", inplace=True)])   # (saves its input)
hardsigmoid = _nn("hardsigmoid", lambda x: _hardsigmoid(x), backward_name="torch::autograd::NotImplemented",
                  no_double_backward=(RuntimeError, "derivative for aten::hardsigmoid_backward is not implemented"))
# (between the thresholds PyTorch's kernel gives x * 0: -0.0 for a negative x)
softshrink = _nn("softshrink", lambda x, lambd: jnp.where(x > lambd, x - lambd, jnp.where(x < -lambd, x + lambd,
                                                                                           _nan_or_zero(x, x * 0))),
                 fused_backward=True, backward_name=True)
hardshrink = _nn("hardshrink", lambda x, lambd: jnp.where((x > lambd) | (x < -lambd), x, _nan_or_zero(x)),
                 fused_backward=True, backward_name=True)
# The slope is a Python scalar (evaluation: the mean of the bounds) or a tensor of drawn slopes (training).
rrelu = _nn("rrelu", lambda x, slope, inplace=False: jnp.where(x > 0, x, x * slope), diff=(0,),
            node="rrelu_with_noise", fused_backward=True, backward_name=True,
            overloads=[_in_place("RreluWithNoiseBackward1")])


@jax.custom_jvp
def _hardsigmoid(x):
    middle = (x > -3) & (x < 3) | jnp.isnan(x)
    return jnp.where(middle, (x + 3) / 6, jnp.where(x >= 3, jnp.ones((), x.dtype), _zero(x)))


@_hardsigmoid.defjvp
def _hardsigmoid_jvp(primals, tangents):
    # PyTorch's slope is the float constant 1.0f / 6.0f in every dtype, float64 included.
    (x,), (t,) = primals, tangents
    slope = jnp.where((x > -3) & (x < 3), jnp.asarray(float(np.float32(1 / 6)), x.dtype), _zero(x))
    return _hardsigmoid(x), t * slope


def _hardswish(x):
    # PyTorch's derivative is the middle piece's (x / 3 + 1/2) strictly inside (-3, 3), the outer pieces' at the ends.
    # x * 0 below -3: PyTorch's -inf gives NaN there
    # (the middle piece on a finite stand-in outside it, so no inf * 0 reaches the gradient)
    inner = jnp.where((x > -3) & (x < 3), x, _zero(x))
    return jnp.where(x <= -3, x * 0, jnp.where(x < 3, inner * (inner + 3) / 6, x))


@jax.custom_jvp
def _log_sigmoid(x):
    # PyTorch's min(0, x) - log1p(exp(-|x|)): +0 at +inf, where JAX's -softplus(-x) gives -0
    return jnp.minimum(0, x) - jnp.log1p(jnp.exp(-jnp.abs(x)))


@_log_sigmoid.defjvp
def _log_sigmoid_jvp(primals, tangents):
    # PyTorch's log_sigmoid_backward: (x < 0) - sign * z / (1 + z) with z = exp(-|x|), sign -1 from 0 up
    (x,), (t,) = primals, tangents
    z = jnp.exp(-jnp.abs(x))
    q = z / (1 + z)
    return _log_sigmoid(x), jnp.where(x < 0, 1 - q, q) * t


def _glu(x, dim):
    a, b = jnp.split(x, 2, axis=dim)
    return _glu_halves(a, b)


hardswish = _nn("hardswish", _hardswish, backward_name="HardswishBackwardBackward0")
logsigmoid = _nn("logsigmoid", _log_sigmoid, node="log_sigmoid", backward_name="LogSigmoidBackwardBackward0")
glu = _nn("glu", _glu)
# the weight arrives reshaped to broadcast over the input's channel dim (PyTorch's _prelu_kernel)
prelu = _nn("prelu", lambda x, w: jnp.where(x > 0, x, w * x), node="_prelu_kernel", fused_backward=True,
            backward_name=True, saves_inputs=(0, 1))
# PyTorch's _softmax_backward_data and _log_softmax_backward_data, on the result
def _axis(x, dim):   # a 0-d tensor's dim 0 (or -1) is the whole of it
    return dim if x.ndim else None


_softmax_backward = named_formula("SoftmaxBackwardDataBackward0", lambda g, y, x, dim: y * (
    g - jnp.sum(g * y, axis=_axis(y, dim), keepdims=True)))
_log_softmax_backward = named_formula("LogSoftmaxBackwardDataBackward0", lambda g, y, x, dim: g - jnp.exp(y) * jnp.sum(
    g, axis=_axis(y, dim), keepdims=True))
softmax = _nn("softmax", lambda x, dim: jax.nn.softmax(x, axis=_axis(x, dim)), saves_inputs=(), node="_softmax",
              result_backward=_softmax_backward)
log_softmax = _nn("log_softmax", lambda x, dim: jax.nn.log_softmax(x, axis=_axis(x, dim)), saves_inputs=(),
                  node="_log_softmax", result_backward=_log_softmax_backward)


def _safe_softmax(x, dim):
    # rows that are -inf throughout are 0, not NaN; the softmax runs on 0 there, so their gradient is 0 too
    empty = jnp.all(x == -jnp.inf, axis=dim, keepdims=True)
    out = jax.nn.softmax(jnp.where(empty, jnp.zeros((), x.dtype), x), axis=dim)
    return jnp.where(empty, jnp.zeros((), out.dtype), out)


# PyTorch's _safe_softmax: the softmax of attention's math path
safe_softmax = _nn("safe_softmax", _safe_softmax, saves_inputs=(), node="_safe_softmax",
                   result_backward=_softmax_backward)

# ---- linear -------------------------------------------------------------------------------------
# F.linear records what PyTorch records (t, addmm or mm, views): see nn/_functional/linear.py.


# F.bilinear's product of rows (N, in1) and (N, in2) through the weight (out, in1, in2), as PyTorch's
# _trilinear call: the inputs are flattened to rows and the bias added around it.
trilinear = _nn("trilinear", lambda x1, w, x2: jnp.einsum("ni,oij,nj->no", x1, w, x2))

# ---- convolution -------------------------------------------------------------------------------
_SPATIAL = {1: "H", 2: "HW", 3: "DHW"}


def _dimension_numbers(nd):
    s = _SPATIAL[nd]
    return ("NC" + s, "OI" + s, "NC" + s)


def _conv(x, w, bias, stride, padding, dilation, groups):
    nd = x.ndim - 2
    y = lax.conv_general_dilated(x, w, stride, padding, rhs_dilation=dilation, feature_group_count=groups,
                                 dimension_numbers=_dimension_numbers(nd))
    return y if bias is None else y + bias.reshape((-1,) + (1,) * nd)


def _conv_transpose(x, w, bias, stride, padding, output_padding, dilation, groups):
    # A transposed convolution is a convolution of the stride-dilated input with the flipped kernel,
    # whose (in, out/groups) weight layout is regrouped to (out, in/groups).
    nd = x.ndim - 2
    cin, cout_g = w.shape[0], w.shape[1]
    k = w.shape[2:]
    w = w.reshape((groups, cin // groups, cout_g) + k)
    w = jnp.swapaxes(w, 1, 2).reshape((groups * cout_g, cin // groups) + k)
    w = jnp.flip(w, axis=tuple(range(2, 2 + nd)))
    pads = tuple((d * (kk - 1) - p, d * (kk - 1) - p + op)
                 for kk, p, op, d in zip(k, padding, output_padding, dilation))
    y = lax.conv_general_dilated(x, w, (1,) * nd, pads, lhs_dilation=stride, rhs_dilation=dilation,
                                 feature_group_count=groups, dimension_numbers=_dimension_numbers(nd))
    return y if bias is None else y + bias.reshape((-1,) + (1,) * nd)


# bias None: PyTorch's node still lists it (`Tensor? bias`). One backward for all: input and weight always saved.
# Its backward is convolution_backward, a kernel of the input and the weight (ConvolutionBackwardBackward0).
conv = _nn("conv", _conv, node="convolution", overloads=[overload("ConvolutionBackward0", optional=(2,))],
           saves_inputs=(0, 1), fused_backward=True, backward_name=True, tie_undefined=True)
conv_transpose = _nn("conv_transpose", _conv_transpose, node="convolution", saves_inputs=(0, 1),
                     fused_backward=True, backward_name=True, tie_undefined=True,
                     overloads=[overload("ConvolutionBackward0", optional=(2,))])

# ---- dropout, embedding -------------------------------------------------------------------------
dropout = _nn("dropout", lambda x, mask, scale: x * mask.astype(x.dtype) * jnp.asarray(scale, x.dtype),
              diff=(0,), node="native_dropout")


@jax.custom_vjp
def _grad_scaled(x, scale):
    """x, whose cotangent is multiplied by scale on the way back."""
    return x


_grad_scaled.defvjp(lambda x, scale: (x, scale), lambda scale, g: (g * scale, jnp.zeros_like(scale)))


def _embedding(weight, indices, padding_idx, scale_grad_by_freq=False):
    # padding_idx and scale_grad_by_freq change the backward only (_embedding_backward): forward-mode AD
    # gives every row's tangent, as PyTorch's embedding(weight_t, ...)
    return jnp.take(weight, indices, axis=0)


def _embedding_backward(weight, indices, padding_idx, scale_grad_by_freq=False):
    """_embedding, differentiated as PyTorch's embedding_dense_backward."""
    if padding_idx is not None:
        # The padding row gets no gradient.
        row = jnp.arange(weight.shape[0])[:, None] == padding_idx
        weight = jnp.where(row, lax.stop_gradient(weight), weight)
    rows = jnp.take(weight, indices, axis=0)
    if scale_grad_by_freq:
        # each lookup's gradient over how often its row is looked up
        counts = jnp.zeros(weight.shape[0], jnp.int64).at[indices.reshape(-1)].add(1)
        rows = _grad_scaled(rows, (1.0 / counts[indices]).astype(weight.dtype)[..., None])
    return rows


def _embedding_bag(weight, indices, segments, per_sample, bags, mode, padding_idx):
    rows = jnp.take(weight, indices, axis=0)
    keep = jnp.ones(indices.shape, weight.dtype) if padding_idx is None else \
        (indices != padding_idx).astype(weight.dtype)
    if per_sample is not None:
        rows = rows * per_sample[:, None]
    rows = rows * keep[:, None]
    if mode == "max":
        out = jax.ops.segment_max(jnp.where(keep[:, None] > 0, rows, -jnp.inf), segments, bags)
        return jnp.where(jnp.isfinite(out), out, 0)
    total = jax.ops.segment_sum(rows, segments, bags)
    if mode == "sum":
        return total
    count = jax.ops.segment_sum(keep, segments, bags)[:, None]
    return jnp.where(count > 0, total / jnp.maximum(count, 1), 0)


embedding = _nn("embedding", _embedding, diff=(0,), reverse_fn=_embedding_backward)
# per_sample None: PyTorch's node still lists it (`Tensor? per_sample_weights`).
# (the weight is saved for per_sample_weights' gradient alone; they are saved always)
embedding_bag = _nn("embedding_bag", _embedding_bag, diff=(0, 3), node="embedding_bag",
                    saves_inputs={0: 3, 1: None, 3: None},
                    overloads=[overload("EmbeddingBagBackward0", optional=(3,))])

# ---- attention --------------------------------------------------------------------------------


def _attention(q, k, v, *extra, scale, causal, mask_kind, dropout_scale, groups=1):
    """softmax(q k^T * scale + mask) [dropout] v; returns (output, attention probabilities). With groups > 1
    (grouped-query attention) each key and value head serves that many query heads."""
    extra = list(extra)
    if groups > 1:
        k, v = jnp.repeat(k, groups, axis=-3), jnp.repeat(v, groups, axis=-3)
    s = jnp.matmul(q, jnp.swapaxes(k, -1, -2)) * jnp.asarray(scale, q.dtype)
    neg_inf = jnp.asarray(-jnp.inf, s.dtype)
    if causal:
        lq, lk = s.shape[-2], s.shape[-1]
        s = jnp.where(jnp.tril(jnp.ones((lq, lk), bool)), s, neg_inf)
    if mask_kind == "bool":
        s = jnp.where(extra.pop(0), s, neg_inf)
    elif mask_kind == "float":
        s = s + extra.pop(0).astype(s.dtype)
    p = jax.nn.softmax(s, axis=-1)
    pd = p * extra.pop(0).astype(p.dtype) * jnp.asarray(dropout_scale, p.dtype) if extra else p
    return jnp.matmul(pd, v), p


# PyTorch's fused CPU kernel (4-d inputs, no dropout...; a mask is not an input of its node); its other calls
# record the math path (nn/_functional/attention.py).
attention = _nn("attention", _attention, diff=(0, 1, 2), nout=2, node="_scaled_dot_product_flash_attention_for_cpu",
                saves_output=True)

# ---- padding, resampling -------------------------------------------------------------------------
def _pad_index(n, lo, hi, mode):
    """Where each output of a reflect/replicate pad reads its input along one dim, with PyTorch's formulas
    (negative pads crop first): its padding kernels' index(). (Circular padding is PyTorch's composite of
    slice copies, recorded as such by F.pad.)"""
    out = np.arange(n + lo + hi)
    if mode == "reflect":
        index = np.where(out < lo, 2 * lo - out, np.where(out < n + lo, out, 2 * (n + lo - 1) - out))
        index = index + max(-lo, 0) - max(lo, 0)
    else:
        index = np.clip(out, lo, n + lo - 1) + max(-lo, 0) - max(lo, 0)
    return np.clip(index, 0, n - 1)


def _pad(x, *value, pads, mode, spatial=None):
    if mode == "constant":
        fill = value[0].astype(x.dtype) if value else _zero(x)
        return lax.pad(x, fill, [(lo, hi, 0) for lo, hi in pads])
    for axis, (lo, hi) in enumerate(pads):
        if lo or hi:
            x = jnp.take(x, _pad_index(x.shape[axis], lo, hi, mode), axis=axis)
    return x


def _taps(x, taps, axis):
    """sum over taps of weight * x[index] along axis; one tap without weight for nearest."""
    indices, weights = taps
    if weights is None:
        return jnp.take(x, np.asarray(indices[0]), axis=axis)
    shape = (-1,) + (1,) * (x.ndim - axis - 1)
    out = None
    for index, weight in zip(indices, weights):
        term = jnp.take(x, np.asarray(index), axis=axis) * jnp.asarray(np.asarray(weight), x.dtype).reshape(shape)
        out = term if out is None else out + term
    return out


@partial(jax.custom_jvp, nondiff_argnums=(1, 2, 3))
def _routed_taps(x, taps, backward_taps, axis):
    return _taps(x, taps, axis)


@_routed_taps.defjvp
def _routed_taps_jvp(taps, backward_taps, axis, primals, tangents):
    # Where PyTorch's backward kernel computes other indices or weights than its forward (see
    # nn/_functional/_interp_plan.py), the gradient is the backward's, not the derivative of the forward.
    return _routed_taps(primals[0], taps, backward_taps, axis), _taps(tangents[0], backward_taps, axis)


def _interpolate(x, plan, kind=None):
    """Per spatial axis, last first (PyTorch's order): the axis's taps (nn/_functional/_interp_plan.py).
    kind (PyTorch's upsample kernel, "bilinear2d"...) only names the node."""
    nd = len(plan)
    for i in reversed(range(nd)):
        taps, backward_taps = plan[i]
        axis = x.ndim - nd + i
        x = _taps(x, taps, axis) if backward_taps is None else _routed_taps(x, taps, backward_taps, axis)
    return x


def _interpolate_fixed_point(x, plan):
    """uint8 resampling as PyTorch's separable kernel: per spatial axis, last first, int16 weights with
    `precision` fraction bits (nn/_functional/_interp_fixed_point.py) summed in int32, rounded, clamped to
    a byte that the next axis reads. An axis whose size stays has no plan."""
    nd = len(plan)
    for i in reversed(range(nd)):
        if plan[i] is None:
            continue
        indices, weights, precision = plan[i]
        axis = x.ndim - nd + i
        index = np.asarray(indices)   # K taps by n_out
        w = jnp.asarray(np.asarray(weights, np.int32).reshape(index.shape + (1,) * (x.ndim - axis - 1)))
        acc = jnp.sum(jnp.take(x, index, axis=axis).astype(jnp.int32) * w, axis=axis, dtype=jnp.int32)
        x = jnp.clip((acc + (1 << (precision - 1))) >> precision, 0, 255).astype(jnp.uint8)
    return x


def _kept_input(*kept):
    # (reflection and replication padding keep their input, as PyTorch's backward kernels read it; constant
    # padding keeps nothing)
    return bool(kept) and hasattr(kept[0], "shape")


# PyTorch names the node after the mode and the number of padded (spatial) dims: ReflectionPad2DBackward0.
pad = _nn("pad", _pad, diff=(0,), node="constant_pad_nd", fused_backward=_kept_input, backward_name=True,
          overloads=[overload(f"{name}Pad{n}DBackward0", mode=mode, spatial=n, saves_inputs=(0,))
                     for mode, name in (("reflect", "Reflection"), ("replicate", "Replication")) for n in (1, 2, 3)])
# kind: PyTorch's upsample kernel ("nearest2d", "bilinear2d"...), which names the node.
_UPSAMPLE = {"nearest": "Nearest", "nearest_exact": "NearestExact", "linear": "Linear", "bilinear": "Bilinear",
             "trilinear": "Trilinear", "bicubic": "Bicubic"}
interpolate = _nn("interpolate", _interpolate, node="upsample",
                  overloads=[overload(f"Upsample{name}{n}DBackward0", kind=f"{mode}{n}d")
                             for mode, name in _UPSAMPLE.items() for n in (1, 2, 3)]
                  + [overload(f"Upsample{name}2DAaBackward0", kind=f"{mode}2d_aa")
                     for mode, name in (("bilinear", "Bilinear"), ("bicubic", "Bicubic"), ("lanczos", "Lanczos"))])
interpolate_fixed_point = _nn("interpolate_fixed_point", _interpolate_fixed_point, diff=())
one_hot = _nn("one_hot", lambda x, num_classes: jax.nn.one_hot(x, num_classes, dtype=jnp.int64), diff=())

# activations PyTorch computes with TensorIterator: their results take their input's memory order
for _op in (leaky_relu, elu, gelu, silu, mish, softplus, hardtanh, threshold, hardsigmoid, softshrink, hardshrink,
            hardswish):   # (not logsigmoid: PyTorch's log_sigmoid_forward allocates its result contiguous)
    _op.pointwise = True

# PyTorch's CPU kernels without a complex version (Op.no_kernel_for)
for _op, _kernel in ((leaky_relu, "leaky_relu_cpu"), (rrelu, "leaky_relu_cpu"), (elu, "elu_cpu"),
                     (gelu, "GeluKernelImpl"), (mish, "mish_cpu"), (softplus, "softplus_cpu"),
                     (threshold, "threshold_cpu"), (hardsigmoid, "hardsigmoid_cpu"), (softshrink, "softshrink_check"),
                     (hardshrink, "hardshrink_cpu"), (hardswish, "hardswish_cpu"), (logsigmoid, "log_sigmoid_cpu"),
                     (glu, "glu_cpu"), (prelu, "prelu_cpu")):
    _op.no_kernel_for = {"complex": missing_kernel(_kernel)}
hardtanh.no_kernel_for = {"complex": CLAMP_COMPLEX}
