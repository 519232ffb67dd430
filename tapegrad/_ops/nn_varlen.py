"""Variable-length attention over packed sequences (PyTorch's torch.nn.attention.varlen kernel).

Query tokens (T_q, H_q, D) and key/value tokens (T_k, H_kv, D) hold N sequences back to back, sequence i at
cu_q[i]:cu_q[i+1] and cu_k[i]:cu_k[i+1]. A query attends to the keys of its own sequence (the first used_k[i]
of them), within a window (left, right) around the diagonal aligned at the sequences' ends (flash attention's
bottom-right alignment: (-1, 0) is causal). The whole batch is one masked attention over the packed tokens, so
one program serves every split of the tokens into sequences.
"""
import jax
import jax.numpy as jnp

from ._registry import KEEP, defop


def _sequence_of(cu, n_tokens):
    """For each token: its sequence (N for tokens past the last sequence) and its position in it."""
    n = cu.shape[0] - 1
    index = jnp.arange(n_tokens, dtype=cu.dtype)
    seq = jnp.sum(index[:, None] >= cu[None, 1:], axis=1, dtype=cu.dtype)   # compiles faster than searchsorted
    clipped = jnp.minimum(seq, n - 1)
    return seq, clipped, index - cu[clipped]


def _varlen_attention(q, k, v, cu_q, cu_k, used_k, scale, left, right, *, groups):
    """(output (T_q, H_q, D), logsumexp (H_q, T_q) in float32); a query with no key gives 0 and +inf.

    scale and the window (left, right; -1: unlimited) are arguments, not statics: one program serves them all."""
    n = cu_q.shape[0] - 1
    seq_q, sq, pos_q = _sequence_of(cu_q, q.shape[0])
    seq_k, sk, pos_k = _sequence_of(cu_k, k.shape[0])
    used_k = used_k.astype(cu_k.dtype)
    valid_q = seq_q < n
    valid_k = (seq_k < n) & (pos_k < used_k[sk])
    allowed = (seq_q[:, None] == seq_k[None, :]) & valid_q[:, None] & valid_k[None, :]
    # the diagonal: a query at position i of a sequence of n_q queries and n_k keys faces key i + n_k - n_q
    diagonal = (pos_q + used_k[sq] - (cu_q[sq + 1] - cu_q[sq]))[:, None]
    allowed &= (right < 0) | (pos_k[None, :] <= diagonal + right)
    allowed &= (left < 0) | (pos_k[None, :] >= diagonal - left)
    work = jnp.promote_types(q.dtype, jnp.float32)
    if groups > 1:
        k, v = jnp.repeat(k, groups, axis=1), jnp.repeat(v, groups, axis=1)
    s = jnp.einsum("qhd,khd->hqk", q.astype(work), k.astype(work)) * jnp.asarray(scale, work)
    s = jnp.where(allowed[None], s, jnp.asarray(-jnp.inf, work))
    top = jax.lax.stop_gradient(jnp.max(s, axis=-1, keepdims=True))
    top = jnp.where(jnp.isfinite(top), top, jnp.zeros((), work))
    p = jnp.exp(s - top)
    total = jnp.sum(p, axis=-1, keepdims=True)
    empty = total == 0
    out = jnp.einsum("hqk,khd->qhd", p / jnp.where(empty, jnp.ones((), work), total), v.astype(work))
    lse = jnp.where(empty, jnp.asarray(jnp.inf, work), jnp.log(jnp.where(empty, 1, total)) + top)[..., 0]
    # PyTorch's backward ignores the logsumexp's gradient: so does this one
    return out.astype(q.dtype), jax.lax.stop_gradient(lse).astype(jnp.float32)


varlen_attention = defop("varlen_attention", _varlen_attention, dtype_rule=KEEP, diff=(0, 1, 2), nout=2,
                         node_name="GeneratedBackwardFor_torch_attn__varlen_attn_defaultBackward")
