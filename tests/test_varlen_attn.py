"""tapegrad.nn.attention.varlen.varlen_attn against PyTorch: outputs, logsumexp and gradients to query, key and
value against PyTorch's scaled_dot_product_attention run sequence by sequence (PyTorch's varlen_attn needs CUDA);
shapes, dtypes, node names and errors against PyTorch's own varlen_attn on meta tensors. The tests share
shapes so that they share compiled programs (the window and the scale are arguments of the program)."""
import warnings

import numpy as np
import pytest
import torch
from torch.nn.attention import varlen as torch_varlen

import tapegrad
from tapegrad.nn.attention.varlen import AuxRequest, varlen_attn

from op_specs_nn_varlen import reference

warnings.filterwarnings("ignore", message=".*is_fx_tracing.*")


def _qkv(t_q, t_k, h_q, h_k, d, seed=0, dtype="float64"):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in ((t_q, h_q, d), (t_k, h_k, d), (t_k, h_k, d))]


def _check(arrays, cu_q, cu_k, tol=1e-10, **kw):
    """varlen_attn's output, lse and gradients against the per-sequence reference."""
    tq = [torch.tensor(a, requires_grad=True) for a in arrays]
    tg = [tapegrad.tensor(a, requires_grad=True) for a in arrays]
    out_t, lse_t = reference(torch, *tq, cu_q, cu_k, **kw)
    out_g, lse_g = varlen_attn(*tg, tapegrad.tensor(cu_q, dtype=tapegrad.int32),
                               tapegrad.tensor(cu_k, dtype=tapegrad.int32), max(np.diff(cu_q)), max(np.diff(cu_k)),
                               return_aux=AuxRequest(lse=True), **kw)
    assert out_g.dtype.name == str(out_t.dtype).split(".")[1] and lse_g.dtype == tapegrad.float32
    np.testing.assert_allclose(out_g.detach().numpy(), out_t.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(lse_g.detach().numpy(), lse_t.detach().numpy(), rtol=1e-6, atol=1e-6)
    weights = np.random.default_rng(9).standard_normal(out_t.shape).astype(arrays[0].dtype)
    (out_t * torch.tensor(weights)).sum().backward()
    (out_g * tapegrad.tensor(weights)).sum().backward()
    for a, b in zip(tg, tq):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol)
    return out_g, lse_g


CU_Q, CU_K = [0, 3, 4, 9], [0, 3, 7, 12]


@pytest.mark.parametrize("window", [(-1, -1), (-1, 0), (2, 0), (1, 1), (-1, 1), (0, -1), (0, 0)])
def test_windows_match_sdpa_per_sequence(window):
    _check(_qkv(9, 12, 2, 2, 4), CU_Q, CU_K, window_size=window)


def test_equal_lengths_causal_scale_and_unused_tail_keys():
    cu = [0, 4, 5, 9]   # the last three of the 12 key tokens belong to no sequence
    _check(_qkv(9, 12, 2, 2, 4, seed=1), cu, cu, window_size=(-1, 0), scale=0.25)


def test_gqa_matches_sdpa_with_enable_gqa():
    _check(_qkv(9, 12, 4, 2, 4, seed=2), CU_Q, CU_K, enable_gqa=True, window_size=(-1, 0))


def test_a_query_without_keys_gives_zero_and_infinite_lse():
    # window (0, 0) and more queries than keys: the first two queries of sequence 0 face no key
    out, lse = _check(_qkv(9, 12, 2, 2, 4, seed=4), [0, 4, 6, 9], [0, 2, 5, 12], window_size=(0, 0))
    assert np.all(out.detach().numpy()[:2] == 0) and np.all(np.isinf(lse.detach().numpy()[:, :2]))


def test_lse_gradient_is_ignored_as_by_pytorch():
    # PyTorch's varlen_attn backward drops the logsumexp's gradient (its lse still requires grad): a loss of
    # the lse alone gives zero gradients
    q, k, v = (tapegrad.tensor(a, requires_grad=True) for a in _qkv(9, 12, 2, 2, 4, seed=5))
    out, lse = varlen_attn(q, k, v, tapegrad.tensor(CU_Q), tapegrad.tensor(CU_K), 5, 5,
                           return_aux=AuxRequest(lse=True))
    assert lse.requires_grad and lse.grad_fn is out.grad_fn
    lse.sum().backward()
    for t in (q, k, v):
        assert not np.any(t.grad.numpy())


def test_shapes_dtypes_node_name_match_pytorch_on_meta():
    q, k = torch.randn(9, 4, 8, device="meta", requires_grad=True), torch.randn(12, 2, 8, device="meta")
    cu_t = torch.tensor(CU_Q, device="meta", dtype=torch.int32)
    out_t, lse_t = torch_varlen.varlen_attn(q, k, k, cu_t, cu_t, 5, 5, return_aux=torch_varlen.AuxRequest(lse=True),
                                            enable_gqa=True)
    qg, kg = tapegrad.randn(9, 4, 8, requires_grad=True), tapegrad.randn(12, 2, 8)
    cu_g = tapegrad.tensor(CU_Q, dtype=tapegrad.int32)
    out_g, lse_g = varlen_attn(qg, kg, kg, cu_g, tapegrad.tensor(CU_K, dtype=tapegrad.int32), 5, 5,
                               return_aux=AuxRequest(lse=True), enable_gqa=True)
    assert tuple(out_g.shape) == tuple(out_t.shape) and tuple(lse_g.shape) == tuple(lse_t.shape)
    assert out_g.dtype.name == "float32" and lse_g.dtype.name == str(lse_t.dtype).split(".")[1]
    assert type(out_g.grad_fn).__name__ == type(out_t.grad_fn).__name__
    assert repr(AuxRequest()) == repr(torch_varlen.AuxRequest()) and AuxRequest(lse=True).lse
    assert not isinstance(varlen_attn(qg, kg, kg, cu_g, cu_g, 5, 5, enable_gqa=True), tuple)


def test_head_errors_match_pytorch():
    cu_t, cu_g = torch.tensor(CU_Q), tapegrad.tensor(CU_Q)
    for shapes, gqa in ((((9, 2, 4), (9, 1, 4)), False), (((9, 3, 4), (9, 2, 4)), True)):
        with pytest.raises(ValueError) as et:
            torch_varlen.varlen_attn(torch.zeros(shapes[0]), torch.zeros(shapes[1]), torch.zeros(shapes[1]), cu_t,
                                     cu_t, 5, 5, enable_gqa=gqa)
        with pytest.raises(ValueError) as eg:
            varlen_attn(tapegrad.zeros(shapes[0]), tapegrad.zeros(shapes[1]), tapegrad.zeros(shapes[1]), cu_g,
                        cu_g, 5, 5, enable_gqa=gqa)
        assert str(eg.value) == str(et.value)


def test_seqused_k_keeps_the_first_keys_and_is_inference_only():
    arrays = _qkv(9, 12, 2, 2, 4, seed=6)
    used = [2, 4, 3]
    tq = [torch.tensor(a) for a in arrays]
    out_t, lse_t = reference(torch, *tq, CU_Q, CU_K, window_size=(-1, 0), seqused_k=used)
    q, k, v = (tapegrad.tensor(a, requires_grad=True) for a in arrays)
    args = (tapegrad.tensor(CU_Q), tapegrad.tensor(CU_K), 5, 5)
    with tapegrad.no_grad():
        out_g, lse_g = varlen_attn(q, k, v, *args, window_size=(-1, 0), seqused_k=tapegrad.tensor(used),
                                   return_aux=AuxRequest(lse=True))
    np.testing.assert_allclose(out_g.numpy(), out_t.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(lse_g.numpy(), lse_t.numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="seqused_k is an inference-only parameter"):
        varlen_attn(q, k, v, *args, seqused_k=tapegrad.tensor(used))


def test_block_table_reads_a_paged_kv_cache():
    rng = np.random.default_rng(7)
    page, pages = 4, 6
    used = [5, 4, 3]
    table = [[5, 1], [0, 3], [2, 4]]
    key_pool, value_pool = (rng.standard_normal((pages, page, 2, 4)) for _ in range(2))
    query = rng.standard_normal((9, 2, 4))
    # the same keys and values packed sequence after sequence, as the reference reads them
    packed_k, packed_v = ([pool[table[i][t // page], t % page] for i, n in enumerate(used) for t in range(n)]
                          for pool in (key_pool, value_pool))
    cu_q, cu_k = [0, 4, 6, 9], [0, 5, 9, 12]
    out_t, lse_t = reference(torch, torch.tensor(query), torch.tensor(np.stack(packed_k)),
                             torch.tensor(np.stack(packed_v)), cu_q, cu_k, window_size=(-1, 0))
    out_g, lse_g = varlen_attn(tapegrad.tensor(query), tapegrad.tensor(key_pool), tapegrad.tensor(value_pool),
                               tapegrad.tensor(cu_q, dtype=tapegrad.int32), None, 5, 7, window_size=(-1, 0),
                               seqused_k=tapegrad.tensor(used, dtype=tapegrad.int32),
                               block_table=tapegrad.tensor(table, dtype=tapegrad.int32),
                               return_aux=AuxRequest(lse=True))
    np.testing.assert_allclose(out_g.numpy(), out_t.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(lse_g.numpy(), lse_t.numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="block_table requires seqused_k"):
        varlen_attn(tapegrad.tensor(query), tapegrad.tensor(key_pool), tapegrad.tensor(value_pool),
                    tapegrad.tensor(cu_q), None, 5, 7, block_table=tapegrad.tensor(table))

# float32 values and gradients, and the float64 finite-difference check: tests/op_specs_nn_varlen.py


def test_nan_and_inf_in_one_sequence_stay_in_it():
    # the sequences are separate attentions: a non-finite value reaches no other sequence's output or gradient
    q, k, v = _qkv(9, 12, 2, 2, 4, seed=3)
    k[7, 0, 1], v[8, 1, 2], q[0, 0, 0] = np.nan, np.inf, np.nan   # sequence 2's key/value, sequence 0's query
    tg = [tapegrad.tensor(a, requires_grad=True) for a in (q, k, v)]
    out = varlen_attn(*tg, tapegrad.tensor(CU_Q, dtype=tapegrad.int32), tapegrad.tensor(CU_K, dtype=tapegrad.int32),
                      4, 5)
    out.sum().backward()
    clean_q = [1, 2, 3]   # sequence 0 but its nan query, and sequence 1 (whose keys are tokens 3..6)
    assert np.isfinite(out.detach().numpy()[clean_q]).all()
    assert np.isfinite(tg[0].grad.numpy()[clean_q]).all()
    assert np.isfinite(tg[1].grad.numpy()[3:7]).all() and np.isfinite(tg[2].grad.numpy()[3:7]).all()
