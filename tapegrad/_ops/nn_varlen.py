"""Variable-length attention over packed sequences (PyTorch's torch.nn.attention.varlen kernel).

Query tokens (T_q, H_q, D) and key/value tokens (T_k, H_kv, D) hold N sequences back to back, sequence i at
cu_q[i]:cu_q[i+1] and cu_k[i]:cu_k[i+1]. A query attends to the keys of its own sequence (the first used_k[i]
of them), within a window (left, right) around the diagonal aligned at the sequences' ends (flash attention's
bottom-right alignment: (-1, 0) is causal).

The sequences are gathered into a padded batch (N, max_q) x (N, max_k), as flash attention walks each
sequence's block: one sequence's values never meet another's, so a nan or inf in one stays there (a single
masked attention over all the packed tokens would multiply other sequences' values by zero weights, and
0 * nan is nan). The offsets, the window and the scale are program arguments; max_q and max_k, which
PyTorch's kernel also takes, set the padded shapes.
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


def _padded(x, starts, valid):
    """x's tokens starts[i] + j for j < valid.shape[1], as (N, width, ...); zeros where not valid."""
    rows = jnp.clip(starts[:, None] + jnp.arange(valid.shape[1], dtype=starts.dtype)[None], 0, x.shape[0] - 1)
    return jnp.where(valid.reshape(valid.shape + (1,) * (x.ndim - 1)), x[rows], jnp.zeros((), x.dtype))


def _varlen_attention(q, k, v, cu_q, cu_k, used_k, scale, left, right, *, groups, max_q, max_k):
    """(output (T_q, H_q, D), logsumexp (H_q, T_q) in float32); a query with no key gives 0 and +inf."""
    len_q = cu_q[1:] - cu_q[:-1]
    used_k = used_k.astype(cu_k.dtype)
    iq, ik = jnp.arange(max_q, dtype=cu_q.dtype), jnp.arange(max_k, dtype=cu_k.dtype)
    valid_q = iq[None] < len_q[:, None]                      # (N, max_q)
    valid_k = ik[None] < used_k[:, None]                     # (N, max_k)
    work = jnp.promote_types(q.dtype, jnp.float32)
    qp = _padded(q.astype(work), cu_q[:-1], valid_q)         # (N, max_q, H, D)
    kp, vp = (_padded(x.astype(work), cu_k[:-1], valid_k) for x in (k, v))
    if groups > 1:
        kp, vp = jnp.repeat(kp, groups, axis=2), jnp.repeat(vp, groups, axis=2)
    # the diagonal: a query at position i of a sequence of n_q queries and n_k keys faces key i + n_k - n_q
    diagonal = (iq[None] + (used_k - len_q)[:, None])[:, :, None]
    allowed = valid_q[:, :, None] & valid_k[:, None, :]
    allowed &= (right < 0) | (ik[None, None] <= diagonal + right)
    allowed &= (left < 0) | (ik[None, None] >= diagonal - left)
    s = jnp.einsum("bqhd,bkhd->bhqk", qp, kp) * jnp.asarray(scale, work)
    s = jnp.where(allowed[:, None], s, jnp.asarray(-jnp.inf, work))
    top = jax.lax.stop_gradient(jnp.max(s, axis=-1, keepdims=True))
    top = jnp.where(jnp.isfinite(top), top, jnp.zeros((), work))
    p = jnp.exp(s - top)
    total = jnp.sum(p, axis=-1, keepdims=True)
    empty = total == 0
    out = jnp.einsum("bhqk,bkhd->bqhd", p / jnp.where(empty, jnp.ones((), work), total), vp)
    lse = jnp.where(empty, jnp.asarray(jnp.inf, work), jnp.log(jnp.where(empty, 1, total)) + top)[..., 0]
    # back to the packed tokens: each reads its own row (tokens past the last sequence: 0 and +inf)
    seq, clipped, pos = _sequence_of(cu_q, q.shape[0])
    inside = (seq < cu_q.shape[0] - 1) & (pos < max_q)
    pos = jnp.clip(pos, 0, max_q - 1)
    out = jnp.where(inside[:, None, None], out[clipped, pos], jnp.zeros((), work))
    lse = jnp.where(inside[None], lse[clipped, :, pos].T, jnp.asarray(jnp.inf, work))
    # PyTorch's backward ignores the logsumexp's gradient: so does this one
    return out.astype(q.dtype), jax.lax.stop_gradient(lse).astype(jnp.float32)


varlen_attention = defop("varlen_attention", _varlen_attention, dtype_rule=KEEP, diff=(0, 1, 2), nout=2,
                         node_name="GeneratedBackwardFor_torch_attn__varlen_attn_defaultBackward")
