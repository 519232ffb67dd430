"""scaled_dot_product_attention and the multi-head attention forward."""
import math

import jax
import jax.numpy as jnp

from ... import _dtypes as D
from ..._creation import _leaf, zeros
from ..._functional._joins import cat
from ..._dispatch import apply
from ...device import MIXED_DEVICES
from ..._ops import elementwise as E, nn as K
from .linear import linear
from .sparse import keep_mask
from ..._autocast import policy
from ..._functional._common import check_tensors


def _attend(q, k, v, mask, dropout_p, is_causal, scale, groups=1):
    """(output, probabilities) of softmax(q k^T scale + mask) v with optional dropout on the probabilities."""
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else float(scale)
    extra, mask_kind = [], None
    if mask is not None:
        extra.append(mask)
        mask_kind = "bool" if mask.dtype is D.bool_ else "float"
    dropout_scale = 1.0
    if dropout_p > 0.0:
        shape = jnp.broadcast_shapes(tuple(q.shape[:-1]), tuple(k.shape[:-2]) + (1,)) + (k.shape[-2],)
        extra.append(keep_mask(shape, dropout_p, q.device))
        dropout_scale = 1.0 / (1.0 - dropout_p)
    return apply(K.attention, q, k, v, *extra, scale=scale, causal=bool(is_causal), mask_kind=mask_kind,
                 dropout_scale=dropout_scale, groups=groups)


@policy("scaled_dot_product_attention")
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
                                 enable_gqa=False):
    check_tensors("scaled_dot_product_attention", (query, "query"), (key, "key"), (value, "value"))
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                           "is_causal=True. Pass either the mask or is_causal=True, not both.")
    if query.dtype is not key.dtype or query.dtype is not value.dtype:
        raise RuntimeError(f"Expected query, key, and value to have the same dtype, but got query.dtype: "
                           f"{query.dtype} key.dtype: {key.dtype} and value.dtype: {value.dtype} instead.")
    if _flash_kernel(query, key, value, attn_mask, dropout_p, enable_gqa):
        groups = query.shape[1] // key.shape[1]
        return _attend(query, key, value, attn_mask, dropout_p, is_causal, scale, groups)[0]
    return _math(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)


def _flash_kernel(q, k, v, mask, dropout_p, enable_gqa):
    """PyTorch's CPU choice of its fused kernel (sdp_utils_cpp's use_flash_attention_cpp): 4-d inputs with
    one batch size and head count (or query heads a multiple of the key/value heads with enable_gqa),
    equal head dims, no dropout, a mask without gradient that broadcasts from 2 or 4 dims, non-empty
    sequences, unit last-dim strides. Elsewhere PyTorch records its math path (and so does tapegrad)."""
    if dropout_p > 0.0 or not (q.ndim == k.ndim == v.ndim == 4):
        return False
    if not q.shape[0] == k.shape[0] == v.shape[0] or k.shape[1] != v.shape[1]:
        return False
    if q.shape[1] != k.shape[1] and not (enable_gqa and q.shape[1] % k.shape[1] == 0):
        return False
    if not (q.shape[3] == k.shape[3] == v.shape[3]) or 0 in (q.shape[2], k.shape[2]):
        return False
    if mask is not None:
        if mask.requires_grad or mask.shape[-2] not in (q.shape[2], 1) or mask.shape[-1] not in (k.shape[2], 1):
            return False
        if mask.ndim == 4:
            if mask.shape[0] not in (1, q.shape[0]) or mask.shape[1] not in (1, q.shape[1]):
                return False
        elif mask.ndim != 2:
            return False
    return all(t.stride(-1) == 1 for t in (q, k, v))


def _math(query, key, value, mask, dropout_p, is_causal, scale, enable_gqa):
    """PyTorch's _scaled_dot_product_attention_math, op for op: q and k each scaled by the square root of
    the scale (MulBackward1), matmul, the (causal) mask added in place, _safe_softmax, dropout, matmul."""
    from ..._functional import _linalg, _rearrange
    from ..._functional._arith import where
    from ..._creation import ones
    from .sparse import dropout
    negative = scale is not None and scale < 0
    factor = math.sqrt(abs(scale) if negative else (1.0 / math.sqrt(query.shape[-1]) if scale is None else scale))
    q = apply(E.mul_scalar, query, -factor if negative else factor)
    device = _device_of(query)
    if is_causal:
        mask = ones(q.shape[-2], key.shape[-2], dtype=D.bool_, device=device).tril()
    if mask is not None and mask.dtype is D.bool_:   # PyTorch's convert_boolean_attn_mask
        mask = where(mask.logical_not(), float("-inf"), zeros((), dtype=q.dtype, device=device))
    if enable_gqa and key.ndim >= 3 and q.shape[-3] != key.shape[-3]:
        key = _rearrange.repeat_interleave(key, q.shape[-3] // key.shape[-3], -3)
        value = _rearrange.repeat_interleave(value, q.shape[-3] // value.shape[-3], -3)
    attn = _linalg.matmul(q, apply(E.mul_scalar, key.transpose(-2, -1), factor))
    if mask is not None:
        attn.add_(mask)
    attn = apply(K.safe_softmax, attn, dim=attn.ndim - 1)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return _linalg.matmul(attn, value)


def _device_of(t):
    """Where masks made for t go: its device once accelerators are in use (a traced value: the default one)."""
    if not MIXED_DEVICES[0] or isinstance(t._peek(), jax.core.Tracer):
        return None
    return t.device


def _float_mask(mask, dtype):
    """PyTorch's canonical mask: bool True means 'do not attend' and becomes -inf."""
    if mask is None:
        return None
    if mask.dtype is D.bool_:
        return jnp.where(mask._value, -jnp.inf, 0.0).astype(dtype.np)
    return mask._value.astype(dtype.np)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads, in_proj_weight, in_proj_bias,
                                 bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight, out_proj_bias,
                                 training=True, key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None, k_proj_weight=None,
                                 v_proj_weight=None, static_k=None, static_v=None, average_attn_weights=True,
                                 is_causal=False):
    batched = query.ndim == 3
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if use_separate_proj_weight:
        weights = (q_proj_weight, k_proj_weight, v_proj_weight)
    else:
        weights = (in_proj_weight[:embed_dim], in_proj_weight[embed_dim:2 * embed_dim],
                   in_proj_weight[2 * embed_dim:])
    biases = (None,) * 3 if in_proj_bias is None else \
        (in_proj_bias[:embed_dim], in_proj_bias[embed_dim:2 * embed_dim], in_proj_bias[2 * embed_dim:])
    q, k, v = (linear(x, w, b) for x, w, b in zip((query, key, value), weights, biases))
    attn = _float_mask(attn_mask, query.dtype)
    pad = _float_mask(key_padding_mask, query.dtype)
    # PyTorch's order: a bias_k/bias_v step appended to the projected keys, then static keys replace
    # them, then a zero key and value appended; each appended key adds a 0 column to both masks.
    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError(f"bias cannot be added to static {'key' if static_k is not None else 'value'}.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        attn, pad = _zero_column(attn), _zero_column(pad)
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k is set but bias_v is None" if bias_k is not None else
                             "bias_v is set but bias_k is None")

    def heads(x, length):
        return x.reshape(length, bsz, num_heads, head_dim).permute(1, 2, 0, 3)

    q, k, v = heads(q, tgt_len), heads(k, k.shape[0]), heads(v, v.shape[0])
    k, v = _static(static_k, k, "static_k", bsz, num_heads, head_dim), \
        _static(static_v, v, "static_v", bsz, num_heads, head_dim)
    if add_zero_attn:
        k = cat([k, zeros((bsz, num_heads, 1, head_dim), dtype=k.dtype, device=k.device)], dim=2)
        v = cat([v, zeros((bsz, num_heads, 1, head_dim), dtype=v.dtype, device=v.device)], dim=2)
        attn, pad = _zero_column(attn), _zero_column(pad)
    src_len = k.shape[2]
    mask = _merged_mask(attn, pad, query.dtype, bsz, num_heads, tgt_len, src_len)
    causal = is_causal and mask is None
    out, probs = _attend(q, k, v, mask, dropout_p if training else 0.0, causal, None)
    out = out.permute(2, 0, 1, 3).reshape(tgt_len * bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
    if not batched:
        out = out.squeeze(1)
    if not need_weights:
        return out, None
    if average_attn_weights:
        probs = probs.mean(dim=1)
    return out, (probs if batched else probs.squeeze(0))


def _zero_column(mask):
    return None if mask is None else jnp.pad(mask, [(0, 0)] * (mask.ndim - 1) + [(0, 1)])


def _static(given, computed, name, bsz, num_heads, head_dim):
    """static_k / static_v, (bsz * num_heads, S, head_dim), in place of the projected keys or values."""
    if given is None:
        return computed
    if given.shape[0] != bsz * num_heads:
        raise AssertionError(f"expecting {name}.size(0) of {bsz * num_heads}, but got {given.shape[0]}")
    if given.shape[2] != head_dim:
        raise AssertionError(f"expecting {name}.size(2) of {head_dim}, but got {given.shape[2]}")
    return given.reshape(bsz, num_heads, given.shape[1], head_dim)


def _merged_mask(attn, pad, dtype, bsz, num_heads, tgt_len, src_len):
    """The attention and key padding masks (canonical float arrays) as one (bsz, heads, L, S) additive mask."""
    if attn is None and pad is None:
        return None
    merged = jnp.zeros((bsz, num_heads, tgt_len, src_len), dtype.np)
    if attn is not None:
        merged = merged + (attn.reshape(bsz, num_heads, tgt_len, src_len) if attn.ndim == 3 else attn)
    if pad is not None:
        merged = merged + pad.reshape(bsz, 1, 1, src_len)
    return _leaf(merged)
