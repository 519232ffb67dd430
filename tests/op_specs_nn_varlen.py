"""Specs for variable-length attention (tapegrad/_ops/nn_varlen.py); see op_specs.py for the format.

PyTorch's varlen_attn runs only on CUDA, so its oracle here is `reference`: PyTorch's
scaled_dot_product_attention run sequence by sequence with the window as a boolean mask."""
from op_specs import F, Case, cases

CU_Q, CU_K = [0, 2, 5, 9], [0, 3, 5, 11]


def window_mask(lib, n_q, n_k, left, right):
    """Flash attention's window (bottom-right aligned): query i sees keys i + n_k - n_q - left .. + right."""
    i = lib.arange(n_q).reshape(-1, 1) + (n_k - n_q)
    j = lib.arange(n_k).reshape(1, -1)
    allowed = lib.ones(n_q, n_k, dtype=lib.bool)
    if right >= 0:
        allowed = allowed & (j <= i + right)
    if left >= 0:
        allowed = allowed & (j >= i - left)
    return allowed


def reference(torch, q, k, v, cu_q, cu_k, scale=None, window_size=(-1, -1), enable_gqa=False, seqused_k=None):
    """(output, logsumexp) of varlen attention from PyTorch's SDPA and logsumexp, one sequence at a time."""
    import math
    outs, lses = [], []
    scale_ = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    for i in range(len(cu_q) - 1):
        n_k = int(seqused_k[i]) if seqused_k is not None else cu_k[i + 1] - cu_k[i]
        qi = q[cu_q[i]:cu_q[i + 1]].transpose(0, 1)
        ki, vi = (t[cu_k[i]:cu_k[i] + n_k].transpose(0, 1) for t in (k, v))
        mask = window_mask(torch, qi.shape[1], n_k, *window_size)
        outs.append(torch.nn.functional.scaled_dot_product_attention(
            qi, ki, vi, attn_mask=mask, scale=scale, enable_gqa=enable_gqa).transpose(0, 1))
        kr = ki.repeat_interleave(qi.shape[0] // ki.shape[0], 0)
        scores = (qi @ kr.transpose(-1, -2) * scale_).masked_fill(~mask, float("-inf"))
        lse = torch.logsumexp(scores, -1)
        lses.append(torch.where(torch.isinf(lse), float("inf"), lse).float())   # flash: +inf where no key
    return torch.cat(outs), torch.cat(lses, 1)


def varlen(lib, q, k, v, cu_q=CU_Q, cu_k=CU_K, **kw):
    """tapegrad's varlen_attn, or PyTorch's reference for it."""
    if lib.__name__ == "torch":
        return reference(lib, q, k, v, cu_q, cu_k, **kw)[0]
    seq_q, seq_k = lib.tensor(cu_q, dtype=lib.int32), lib.tensor(cu_k, dtype=lib.int32)
    return lib.nn.attention.varlen.varlen_attn(q, k, v, seq_q, seq_k, 4, 6, **kw)


SPECS = {
    "varlen_attention": cases(
        Case(lambda lib, q, k, v: varlen(lib, q, k, v), F(9, 2, 4), F(11, 2, 4), F(11, 2, 4)),
        Case(lambda lib, q, k, v: varlen(lib, q, k, v, window_size=(-1, 0), scale=0.3), F(9, 2, 4), F(11, 2, 4),
             F(11, 2, 4)),
        Case(lambda lib, q, k, v: varlen(lib, q, k, v, window_size=(2, 1), enable_gqa=True), F(9, 4, 3),
             F(11, 2, 3), F(11, 2, 3))),
}
