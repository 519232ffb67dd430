"""dropout, embedding, embedding_bag, one_hot."""
import jax
import jax.numpy as jnp
import numpy as np

from ... import _dtypes as D, _value_checks
from ..._creation import _leaf, zeros
from ..._grad_mode import no_grad
from ..._dispatch import apply
from ..._functional._common import check_tensors
from ..._inplace import refused_cast
from ..._ops import nn as K
from ...device import MIXED_DEVICES
from ...random import bernoulli
from ..._arg_types import as_bool, as_int
from ._util import maybe_inplace, SCALAR_NAMES
from ..._user_frames import warn_user


def keep_mask(shape, p, device=None, generator=None):
    """A bool Tensor, True with probability 1 - p (dropout's kept elements)."""
    return _leaf(bernoulli(tuple(shape), 1.0 - p, D.bool_, device, generator))


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _noise(shape, p, dtype, device):
    """PyTorch's dropout noise: bernoulli(1 - p) in the input's dtype, divided by 1 - p (no gradient). A kept
    element's value is the same division, 1 / (1 - p) in the dtype, made once on the host."""
    scale = np.asarray(1, dtype.np) / np.asarray(1.0 - p, dtype.np)
    return _leaf(bernoulli(tuple(shape), 1.0 - p, dtype, device, scale=scale))


def dropout(input, p=0.5, training=True, inplace=False):
    """As PyTorch's at::dropout: its fused native_dropout kernel on CUDA (NativeDropoutBackward0); elsewhere
    the input times a noise tensor (MulBackward0), and times a zero tensor for p = 1."""
    _check_p(p)
    as_bool(training, "train", "dropout_" if inplace else "dropout", 3)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:   # PyTorch multiplies by a zero tensor: a wrapped 0 records the same node, on any device
        return maybe_inplace(input, _zeroed(input), inplace)
    _check_noise_dtype(input)
    if _fused_kernel(input):
        out = apply(K.dropout, input, keep_mask(input.shape, p, input.device), 1.0 / (1.0 - p))
    else:
        out = input * _noise(input.shape, p, input.dtype, input.device)
    return maybe_inplace(input, out, inplace)


def _zeroed(input):
    """Dropout of everything: the input times a zero of its dtype (a wrapped 0.0 for floating input)."""
    if input.dtype.is_floating_point or input.dtype.is_complex:
        return input * 0.0
    return input * zeros((), dtype=input.dtype)


def _check_noise_dtype(input):
    """PyTorch draws the noise in the input's dtype, with bernoulli_, which has no complex kernel, and multiplies by
    it in place of the input's dtype: integers cannot hold it."""
    if input.dtype.is_complex:
        raise NotImplementedError(f"\"bernoulli_scalar_cpu_\" not implemented for '{SCALAR_NAMES[input.dtype.name]}'. "
                                  "Dropout takes real tensors: apply it to .real and .imag, or to a real view "
                                  "(torch.view_as_real).")
    if not input.dtype.is_floating_point:
        raise refused_cast(D.float32, input.dtype, hint=". Dropout takes floating tensors: convert first, e.g. "
                                                          "x.float().")


def _fused_kernel(input):
    """PyTorch's is_fused_kernel_acceptable: a CUDA tensor. A process that never placed a tensor on an
    accelerator does not ask; a value traced by tapegrad.compile lives on the default backend's device."""
    if not MIXED_DEVICES[0]:
        return False
    if isinstance(input._peek(), jax.core.Tracer):
        return jax.default_backend() == "gpu"
    return input.device.type == "cuda"


def native_dropout(input, p, train):
    """torch.native_dropout: (output, mask), the fused kernel PyTorch's CUDA dropout records."""
    if train is False:
        mask = _leaf(jnp.ones(tuple(input.shape), bool))
        return apply(K.dropout, input, mask, 1.0), mask
    mask = keep_mask(input.shape, p, input.device)
    return apply(K.dropout, input, mask, 0.0 if p == 1.0 else 1.0 / (1.0 - p)), mask


def _check_aten_p(p):
    if p < 0.0 or p > 1.0:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")


def aten_dropout(input, p, train):
    """torch.dropout: nn.functional's, with ATen's RuntimeError for p outside [0, 1]."""
    _check_aten_p(p)
    return dropout(input, p, train)


_SELU_ALPHA = 1.7580993408473766   # -selu's alpha times its scale: where alpha dropout sends a dropped element


def alpha_dropout(input, p, train):
    return _alpha_dropout(input, p, train, feature=False)


def feature_alpha_dropout(input, p, train):
    return _alpha_dropout(input, p, train, feature=True)


def _alpha_dropout(input, p, train, feature):
    """torch.alpha_dropout / torch.feature_alpha_dropout, as PyTorch's _dropout_impl on every device: noise
    bernoulli(1 - p) (one per (sample, channel) for feature dropout), a = 1 / sqrt((alpha^2 p + 1)(1 - p)),
    and the input times noise * a plus (noise - 1) * alpha * a + alpha * a * p (MulBackward0, AddBackward0)."""
    _check_aten_p(p)
    if not train or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        return _zeroed(input)
    _check_noise_dtype(input)
    shape = tuple(input.shape)
    if feature:
        if input.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = shape[:2] + (1,) * (input.ndim - 2)
    dtype = input.dtype.np
    kept = bernoulli(shape, 1.0 - p, input.dtype, input.device)
    a = 1.0 / np.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
    shift = (kept - 1) * jnp.asarray(_SELU_ALPHA * a, dtype) + jnp.asarray(_SELU_ALPHA * a * p, dtype)
    return input * _leaf(kept * jnp.asarray(a, dtype)) + _leaf(shift)


def _feature_dropout(input, p, training, inplace, spatial):
    # PyTorch's feature dropout on every device: the input times noise of one value per (sample, channel)
    _check_p(p)
    as_bool(training, "train", "feature_dropout_" if inplace else "feature_dropout", 3)
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if p == 1.0:
        return maybe_inplace(input, _zeroed(input), inplace)
    _check_noise_dtype(input)
    batched = input.ndim == spatial + 2
    shape = tuple(input.shape[:2 if batched else 1]) + (1,) * (input.ndim - (2 if batched else 1))
    return maybe_inplace(input, input * _noise(shape, p, input.dtype, input.device), inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    return _feature_dropout(input, p, training, inplace, 1)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """As PyTorch's: any input is taken as (N, C, ...), one noise value per (sample, channel), with its warnings for
    the ranks other than 4."""
    _check_p(p)
    if input.ndim not in (3, 4):
        warn_user(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and will result in "
                  "an error in a future release. To retain the behavior and silence this warning, please use dropout "
                  "instead. Note that dropout2d exists to provide channel-wise dropout on inputs with 2 spatial "
                  "dimensions, a channel dimension, and an optional batch dimension (i.e. 3D or 4D inputs).")
    if input.ndim == 3:
        warn_user("dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout behavior is "
                  "desired - input is interpreted as shape (N, C, L), where C is the channel dim. This behavior will "
                  "change in a future release to interpret the input as one without a batch dimension, i.e. shape "
                  "(C, H, W). To maintain the 1D channel-wise dropout behavior, please switch to using dropout1d "
                  "instead.")
    if input.ndim < 2 and training and 0.0 < p < 1.0 and input.numel():
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    # (no unbatched case: one noise value per element of the first two dims, whatever the rank)
    return _feature_dropout(input, p, training, inplace, max(input.ndim - 2, 0))


def _check_indices(input, name, position=1):
    if input.dtype not in (D.int64, D.int32):
        raise RuntimeError(f"Expected tensor for argument #{position} 'indices' to have one of the following scalar types: "
                           f"Long, Int; but got torch.{SCALAR_NAMES[input.dtype.name]}Tensor instead (while "
                           f"checking arguments for {name}). Convert the indices with .long().")


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False,
              sparse=False):
    check_tensors("embedding", (weight, "weight"), (input, "indices"))
    as_bool(scale_grad_by_freq, "scale_grad_by_freq", "embedding", 4)
    as_bool(sparse, "sparse", "embedding", 5)
    if max_norm is not None:
        _check_indices(input, "embedding_renorm_", 2)
    if padding_idx is not None:
        if weight.ndim == 0:   # (F.embedding reads weight.size(0) for it first)
            raise IndexError("Dimension specified as 0 but tensor has no dimensions")
        padding_idx = _wrap_padding(padding_idx, weight.shape[0])
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    _check_indices(input, "embedding")
    if weight.shape[0] == 0 and input.numel():   # (PyTorch's index_select of the rows says so)
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    _check_rows(input, weight.shape[0])
    if max_norm is not None:
        _renorm_rows(weight, input, max_norm, norm_type)
    return apply(K.embedding, weight, input, padding_idx=padding_idx, scale_grad_by_freq=bool(scale_grad_by_freq))


def _renorm_rows(weight, indices, max_norm, norm_type):
    """PyTorch's embedding_renorm_: the rows `indices` refers to whose norm exceeds max_norm are scaled in
    place, without grad, by max_norm / (norm + 1e-7) (computed in double, applied in the weight's dtype)."""
    with no_grad():
        referenced = zeros(weight.shape[0], dtype=D.bool_, device=weight.device)
        referenced[indices.reshape(-1)] = True
        norms = weight.norm(p=norm_type, dim=1)
        scale = (float(max_norm) / (norms.double() + 1e-7)).to(weight.dtype)
        over = referenced & (norms > max_norm)
        weight.mul_(scale.where(over, scale.new_ones(())).unsqueeze(1))


def _check_rows(input, rows):
    _value_checks.check(input, lambda i, xp: (i < 0) | (i >= rows), lambda v, at: IndexError("index out of range in self"),
                        key=("row index", rows))


def _wrap_padding(padding_idx, n):
    if (padding_idx > 0 and padding_idx >= n) or padding_idx < -n:   # (F.embedding's asserts: 0 goes unchecked)
        raise AssertionError("Padding_idx must be within num_embeddings")
    return padding_idx % n if n else padding_idx


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    if max_norm is not None:
        _check_indices(input, "embedding_renorm_", 2)
    _check_indices(input, "embedding_bag")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, but got {mode}")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                                  f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                                  "on GitHub.")
    if input.ndim == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is a mini-batch "
                             "of fixed length sequences.")
        bags, length = input.shape
        segments = np.repeat(np.arange(bags, dtype=np.int64), length)
        indices = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    else:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        indices = input
        bags = offsets.shape[0] - (1 if include_last_offset else 0)
        # the bag of each index, computed on the host: offsets change every batch, and jnp here would
        # compile a program for every new number of indices
        starts = np.asarray(offsets._value)[:bags]
        marks = np.zeros(indices.shape[0], np.int64)
        np.add.at(marks, starts[1:], 1)
        segments = np.cumsum(marks)
    if padding_idx is not None:
        padding_idx = _wrap_padding(padding_idx, weight.shape[0])
    rows = weight.shape[0]
    _value_checks.check(input, lambda i, xp: (i < 0) | (i >= rows), lambda v, at: RuntimeError(
        f"Index {at} of input takes value {v} which is not in the valid range [0, {rows})"), key=("row index", rows))
    if max_norm is not None:
        _renorm_rows(weight, indices, max_norm, norm_type)
    return apply(K.embedding_bag, weight, indices, _leaf(jax.device_put(segments)), per_sample_weights, bags=int(bags), mode=mode,
                 padding_idx=padding_idx)


def one_hot(tensor, num_classes=-1):
    num_classes = as_int(num_classes, "num_classes", "one_hot", 2)   # (a float was truncated)
    if tensor.dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if not tensor.numel():
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(np.max(np.asarray(tensor._value))) + 1
    n = int(num_classes)
    _value_checks.check(tensor, lambda i, xp: i >= n, lambda v, at: RuntimeError(
        "Class values must be smaller than num_classes."), key=("smaller than", n))
    _value_checks.check(tensor, lambda i, xp: i < 0, lambda v, at: RuntimeError("Class values must be non-negative."),
                        key=("non-negative",))
    return apply(K.one_hot, tensor, num_classes=int(num_classes))
