"""nn.utils.rnn (padding, packing) and RNN/LSTM/GRU over PackedSequence, against PyTorch."""
import numpy as np
import pytest
import torch

import tapegrad as tg
import tapegrad.nn as nn
from tapegrad.nn.utils import rnn as R

TR = torch.nn.utils.rnn


def _tg(t, requires_grad=False):
    return tg.tensor(t.detach().numpy(), requires_grad=requires_grad)


def _close(got, expect, **kw):
    np.testing.assert_allclose(got.detach().numpy(), expect.detach().numpy(), rtol=1e-9, atol=1e-11, **kw)


def _same_packed(got, expect):
    _close(got.data, expect.data)
    assert got.batch_sizes.tolist() == expect.batch_sizes.tolist()
    for a, b in ((got.sorted_indices, expect.sorted_indices), (got.unsorted_indices, expect.unsorted_indices)):
        assert (a is None) == (b is None) and (a is None or a.tolist() == b.tolist())


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [False, True])
def test_pack_and_pad_round_trip_with_grads(batch_first, enforce_sorted):
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    x = torch.randn(4, 5, 2, dtype=torch.float64) if batch_first else torch.randn(5, 4, 2, dtype=torch.float64)
    tx, mx = x.clone().requires_grad_(), _tg(x, True)
    tp = TR.pack_padded_sequence(tx, torch.tensor(lengths), batch_first, enforce_sorted)
    mp = R.pack_padded_sequence(mx, tg.tensor(lengths), batch_first, enforce_sorted)
    _same_packed(mp, tp)
    # grad_fn differs (PyTorch's PackPaddedSequenceBackward0 is an index_select here), so the repr is compared
    # without a graph.
    with torch.no_grad(), tg.no_grad():
        assert repr(R.pack_padded_sequence(mx, lengths, batch_first, enforce_sorted)) == repr(
            TR.pack_padded_sequence(tx, lengths, batch_first, enforce_sorted)).replace("torch.", "tapegrad.")
    (tout, tlen), (mout, mlen) = (TR.pad_packed_sequence(tp, batch_first, -1.5, 7),
                                  R.pad_packed_sequence(mp, batch_first, -1.5, 7))
    _close(mout, tout)
    assert mlen.tolist() == tlen.tolist() and mlen.dtype == tg.int64
    w = torch.randn(tout.shape, dtype=torch.float64)
    (tout * w).sum().backward()
    (mout * _tg(w)).sum().backward()
    _close(mx.grad, tx.grad)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence(batch_first, padding_side):
    seqs = [torch.randn(n, 3, dtype=torch.float64) for n in (2, 4, 1)]
    expect = TR.pad_sequence(seqs, batch_first, 0.5, padding_side)
    got = R.pad_sequence([_tg(s) for s in seqs], batch_first, 0.5, padding_side)
    _close(got, expect)
    if padding_side == "right":  # unpad_sequence reads right-padded sequences, as PyTorch's
        for a, b in zip(R.unpad_sequence(got, tg.tensor([2, 4, 1]), batch_first), seqs):
            _close(a, b)


@pytest.mark.parametrize("enforce_sorted", [False, True])
def test_pack_sequence_and_unpack(enforce_sorted):
    seqs = [torch.randn(n, 2, dtype=torch.float64) for n in ((4, 2, 1) if enforce_sorted else (2, 4, 1))]
    tp, mp = TR.pack_sequence(seqs, enforce_sorted), R.pack_sequence([_tg(s) for s in seqs], enforce_sorted)
    _same_packed(mp, tp)
    for a, b in zip(R.unpack_sequence(mp), TR.unpack_sequence(tp)):
        _close(a, b)


def test_errors():
    x = torch.zeros(3, 2)
    for lib, mod in ((torch, TR), (tg, R)):
        with pytest.raises(RuntimeError, match="must be sorted in decreasing order when `enforce_sorted` is True"):
            mod.pack_padded_sequence(lib.zeros(3, 2), [1, 2])
        with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0"):
            mod.pack_padded_sequence(lib.zeros(3, 2), [2, 0])
        packed = mod.pack_padded_sequence(lib.zeros(3, 2), [3, 1])
        with pytest.raises(ValueError, match="Expected total_length to be at least the length of the longest"):
            mod.pad_packed_sequence(packed, total_length=2)
    del x


@pytest.mark.parametrize("mode", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_rnn_over_packed_sequence(mode, bidirectional):
    batch_first = bidirectional  # both layouts, without doubling the cases
    torch.manual_seed(0)
    ref = getattr(torch.nn, mode)(3, 4, num_layers=2, bidirectional=bidirectional, batch_first=batch_first).double()
    mine = getattr(nn, mode)(3, 4, num_layers=2, bidirectional=bidirectional, batch_first=batch_first).double()
    mine.load_state_dict({k: _tg(v) for k, v in ref.state_dict().items()})
    lengths = [2, 5, 1, 4]
    x = torch.randn(4, 5, 3, dtype=torch.float64) if batch_first else torch.randn(5, 4, 3, dtype=torch.float64)
    dirs = 2 if bidirectional else 1
    h0 = torch.randn(2 * dirs, 4, 4, dtype=torch.float64)
    t_hx = (h0, torch.randn_like(h0)) if mode == "LSTM" else h0
    m_hx = tuple(_tg(h) for h in t_hx) if mode == "LSTM" else _tg(h0)
    tx, mx = x.clone().requires_grad_(), _tg(x, True)
    t_out, t_h = ref(TR.pack_padded_sequence(tx, lengths, batch_first, enforce_sorted=False), t_hx)
    m_out, m_h = mine(R.pack_padded_sequence(mx, lengths, batch_first, enforce_sorted=False), m_hx)
    assert isinstance(m_out, R.PackedSequence)
    _same_packed(m_out, t_out)
    t_h, m_h = (t_h, m_h) if mode == "LSTM" else ((t_h,), (m_h,))
    for a, b in zip(m_h, t_h):
        _close(a, b)
    t_pad, m_pad = TR.pad_packed_sequence(t_out)[0], R.pad_packed_sequence(m_out)[0]
    _close(m_pad, t_pad)
    w = [torch.randn(t.shape, dtype=torch.float64) for t in (t_pad, *t_h)]
    sum((t * v).sum() for t, v in zip((t_pad, *t_h), w)).backward()
    sum((m * _tg(v)).sum() for m, v in zip((m_pad, *m_h), w)).backward()
    for (name, p), q in zip(ref.named_parameters(), mine.parameters()):
        np.testing.assert_allclose(q.grad.numpy(), p.grad.numpy(), rtol=1e-8, atol=1e-10, err_msg=name)
    _close(mx.grad, tx.grad)


def test_packed_output_is_zero_past_each_length():
    """Batches of one padded shape with different lengths: the steps past a sequence's end stay zero."""
    mine = nn.GRU(2, 3).double()
    outs = []
    for lengths in ([4, 4, 1], [4, 2, 2], [4, 3, 1]):
        x = tg.randn(4, 3, 2, dtype=tg.float64)
        out, h = mine(R.pack_padded_sequence(x, lengths))
        padded, _ = R.pad_packed_sequence(out)
        assert padded.shape == (4, 3, 3)
        past_end = np.arange(4)[:, None] >= np.array(lengths)[None, :]
        assert np.all(padded.detach().numpy()[past_end] == 0)
        assert np.all(padded.detach().numpy()[~past_end] != 0)


@pytest.mark.parametrize("shapes", [[(2, 2), (3, 1)], [(2, 1), (3, 2)], [(2, 2), (3, 2, 1)], [(2, 2, 3), (3, 2)],
                                    [(2, 2), (3, 3)]])
@pytest.mark.parametrize("batch_first", [False, True])
def test_pad_sequence_copies_each_sequence_into_its_slice_as_torch(shapes, batch_first):
    """PyTorch's kernel fills the first sequence's trailing shape and copies each sequence into its slice:
    a smaller trailing shape broadcasts, a larger one is refused in copy_'s words; the graph is CopySlices."""
    results = []
    for lib, rnn in ((tg, R), (torch, TR)):
        seqs = [lib.arange(float(np.prod(s))).reshape(s).requires_grad_() for s in shapes]
        try:
            out = rnn.pad_sequence(seqs, batch_first)
        except RuntimeError as e:
            results.append(("error", str(e)))
            continue
        (out * lib.arange(float(out.numel())).reshape(out.shape)).sum().backward()
        results.append((out.tolist(), type(out.grad_fn).__name__, [s.grad.tolist() for s in seqs]))
    assert results[0] == results[1]
