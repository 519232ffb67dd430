"""PyTorch's torch.nn.attention.varlen: attention over sequences of different lengths packed end to end.

PyTorch runs it only on CUDA (its flash attention kernel); tapegrad runs it anywhere JAX runs, as attention
over the sequences gathered into a padded (N, max_q) x (N, max_k) batch (tapegrad/_ops/nn_varlen.py), with
gradients for query, key and value. As for PyTorch's kernel, max_q and max_k must be at least the longest
sequence; `num_splits` tunes PyTorch's kernel launch and changes nothing here.
"""
import math
from typing import NamedTuple

from ..._dispatch import apply
from ..._grad_mode import is_grad_enabled
from ..._ops.nn_varlen import varlen_attention

__all__ = ["varlen_attn", "AuxRequest"]


class AuxRequest(NamedTuple):
    """Which auxiliary outputs varlen_attn returns besides the attention output."""
    lse: bool = False


def varlen_attn(query, key, value, cu_seq_q, cu_seq_k, max_q, max_k, *, return_aux=None, scale=None,
                window_size=(-1, -1), enable_gqa=False, seqused_k=None, block_table=None, num_splits=None):
    """Attention of packed queries (T_q, H_q, D) to packed keys/values (T_k, H_kv, D) within each sequence.

    Returns the output (T_q, H_q, D), and with return_aux=AuxRequest(lse=True) also the logsumexp of the
    scaled scores (H_q, T_q, float32). window_size=(left, right) limits a query to keys from `left` before to
    `right` after its diagonal (-1: no limit; (-1, 0) is causal). seqused_k (N,) keeps the first seqused_k[i]
    keys of sequence i; block_table (N, pages) reads the keys and values from pages (total_pages, page_size,
    H_kv, D) of a KV cache. Both are for inference: no gradient flows through them.
    """
    heads_q = query.size(1)
    heads_k = key.size(2) if block_table is not None else key.size(1)
    if not enable_gqa and heads_q != heads_k:
        raise ValueError(f"Expect query and key/value to have the same number of heads but got Hq={heads_q} and "
                         f"Hkv={heads_k}. Try setting enable_gqa=True for GQA.")
    if enable_gqa and heads_q % heads_k != 0:
        raise ValueError(f"Expect number of query heads to be a multiple of kv heads for GQA but got Hq={heads_q} "
                         f"and Hkv={heads_k}.")
    window_size = list(window_size) if window_size is not None else [-1, -1]
    if len(window_size) != 2:
        raise ValueError(f"window_size must have length 2, got {len(window_size)}")
    if query.dtype is not key.dtype or query.dtype is not value.dtype:
        raise RuntimeError(f"varlen_attn: query, key and value must have the same dtype, but got {query.dtype}, "
                           f"{key.dtype} and {value.dtype}. Convert them to one dtype first.")
    if query.dim() != 3 or (block_table is None and (key.dim() != 3 or value.dim() != 3)):
        raise RuntimeError("varlen_attn: expected query, key and value of shape (total_tokens, heads, head_dim) "
                           f"but got {tuple(query.shape)}, {tuple(key.shape)} and {tuple(value.shape)}.")
    if (seqused_k is not None or block_table is not None) and is_grad_enabled() \
            and any(t.requires_grad for t in (query, key, value)):
        name = "seqused_k" if seqused_k is not None else "block_table"
        raise RuntimeError(f"{name} is an inference-only parameter. Run under tapegrad.no_grad() or detach "
                           "query, key and value.")
    if block_table is not None:
        if seqused_k is None:
            raise RuntimeError("varlen_attn: block_table requires seqused_k (the number of valid tokens of each "
                               "sequence). Pass seqused_k.")
        key, value, cu_seq_k = _gather_pages(key, value, block_table, seqused_k)
    elif cu_seq_k is None:
        raise RuntimeError("varlen_attn: cu_seq_k is required without block_table. Pass the cumulative key "
                           "positions (N + 1,).")
    used_k = seqused_k if seqused_k is not None else cu_seq_k[1:] - cu_seq_k[:-1]
    if scale is None:
        scale = 1.0 / math.sqrt(query.size(-1))
    out, lse = apply(varlen_attention, query, key, value, cu_seq_q, cu_seq_k, used_k, float(scale),
                     int(window_size[0]), int(window_size[1]), groups=heads_q // heads_k, max_q=int(max_q),
                     max_k=int(max_k))
    if return_aux is not None and return_aux.lse:
        return out, lse
    return out


def _gather_pages(key, value, block_table, seqused_k):
    """Keys and values of a paged KV cache packed sequence after sequence, with their cumulative positions."""
    from ..._creation import tensor as make
    from ..._dtypes import int64
    page_size = key.size(1)
    used = [int(n) for n in seqused_k.tolist()]
    table = block_table.tolist()
    rows = [table[i][t // page_size] * page_size + t % page_size for i, n in enumerate(used) for t in range(n)]
    index = make(rows, dtype=int64, device=key.device)
    starts = [0]
    for n in used:
        starts.append(starts[-1] + n)
    flat_k = key.reshape(-1, *key.shape[2:])
    flat_v = value.reshape(-1, *value.shape[2:])
    return flat_k[index], flat_v[index], make(starts, dtype=seqused_k.dtype, device=key.device)
