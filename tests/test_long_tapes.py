"""Tapes longer than one program may hold run in bounded chunks once they come back (tapegrad/_chunks.py).

A loop's iterations fall into identical chunks, so an unrolled RNN compiles a few chunk programs whatever
its length, and every tier a chunk can run on (op by op, NumPy, XLA) gives PyTorch's gradients. To keep
these tests small, a "long" tape here is one over 48 ops, in chunks of 12..24.
"""
import numpy as np
import pytest

import tapegrad
from tapegrad import _chunks, _programs

from conftest import assert_close, from_torch
from xla_events import counting

pytestmark = pytest.mark.usefixtures("fresh_program_caches")


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch):
    monkeypatch.setattr(_programs, "MAX_PROGRAM_OPS", 48)
    monkeypatch.setattr(_chunks, "CHUNK_MIN", 12)
    monkeypatch.setattr(_chunks, "CHUNK_MAX", 24)
    monkeypatch.setattr(_chunks.cuts, "__defaults__", (12, 24))


def chunk_programs():
    return [key for key in _programs._programs.entries if key[0] in ("plan", "backward-chunk")]


def test_cuts_end_where_the_first_op_comes_back():
    period = [7, 3, 5, 3]
    sids = [1, 2] + period * 20 + [9]
    spans = _chunks.cuts(sids)
    assert spans[0][0] == 0 and spans[-1][1] == len(sids)
    assert all(b == c for (_, b), (c, _) in zip(spans, spans[1:]))
    assert all(b - a <= 24 for a, b in spans)
    middle = {tuple(sids[a:b]) for a, b in spans[1:-1]}
    assert len(middle) == 1 and len(next(iter(middle))) % len(period) == 0


def _rnn(lib, W, U, x, steps):
    h = lib.zeros(4, 8)
    for t in range(steps):
        h = (h @ W + x[t] @ U).tanh()
    return h.pow(2).mean()


@pytest.mark.parametrize("steps", [20, 40])
def test_an_unrolled_rnn_gets_pytorchs_gradients_on_every_tier_and_compiles_a_few_chunks(torch, steps):
    rng = np.random.default_rng(0)
    Wn, Un = rng.standard_normal((8, 8)) / 3, rng.standard_normal((3, 8))
    xn = rng.standard_normal((steps, 4, 3))
    W, U = (torch.tensor(a, dtype=torch.float32, requires_grad=True) for a in (Wn, Un))
    _rnn(torch, W, U, torch.tensor(xn, dtype=torch.float32), steps).backward()
    tW, tU = (tapegrad.tensor(a, dtype=tapegrad.float32, requires_grad=True) for a in (Wn, Un))
    tx = tapegrad.tensor(xn, dtype=tapegrad.float32)
    with counting() as xla:
        for run in range(2 + _programs.STEADY_STREAK + 2):
            loss = _rnn(tapegrad, tW, tU, tx, steps)
            loss.backward()
            assert_close(tW.grad, W.grad, rtol=1e-5, atol=1e-6)
            assert_close(tU.grad, U.grad, rtol=1e-5, atol=1e-6)
            tW.grad = tU.grad = None
            if run == _programs.STEADY_STREAK:
                compiled = xla.compiles
        steady = (xla.compiles, xla.executions)
        loss = _rnn(tapegrad, tW, tU, tx, steps)
        loss.backward()
    assert xla.compiles == steady[0] == compiled   # nothing compiles once the tape is steady
    programs = chunk_programs()
    assert 0 < len(programs) <= 8   # a few distinct chunks, not one per iteration
    assert xla.executions - steady[1] <= len(programs) + (4 * steps * 2) // 12   # a call per chunk, no op-by-op


def test_chunk_programs_do_not_grow_with_the_number_of_steps(torch):
    counts = []
    for steps in (30, 60):
        _programs.clear()
        W = tapegrad.randn(8, 8, requires_grad=True)
        U = tapegrad.randn(3, 8, requires_grad=True)
        x = tapegrad.randn(steps, 4, 3)
        for _ in range(3):
            _rnn(tapegrad, W, U, x, steps).backward()
        counts.append(len(chunk_programs()))
    assert counts[0] == counts[1]


def test_grads_accumulate_seeds_and_retain_graph_through_chunks(torch):
    """An LSTM cell unrolled (multi-output chunk()), .grad accumulating over steps, an explicit gradient,
    and a second backward through a retained graph, against PyTorch."""
    def run(lib, cell, xs, seed, twice):
        h = c = lib.zeros(2, 6)
        for x in xs:
            h, c = cell(x, (h, c))
        out = h * 2
        out.backward(seed, retain_graph=twice)
        if twice:
            out.backward(seed)

    torch.manual_seed(0)
    ref = torch.nn.LSTMCell(5, 6)
    cell = tapegrad.nn.LSTMCell(5, 6)
    cell.load_state_dict({k: from_torch(v.detach()) for k, v in ref.state_dict().items()})
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((5, 2, 5))
    seed = rng.standard_normal((2, 6))
    for run_index in range(2):   # op by op, then the chunks on NumPy (XLA's tier: the tests above)
        twice = run_index == 1
        run(torch, ref, [torch.tensor(x, dtype=torch.float32) for x in xs], torch.tensor(seed, dtype=torch.float32),
            twice)
        run(tapegrad, cell, [tapegrad.tensor(x, dtype=tapegrad.float32) for x in xs],
            tapegrad.tensor(seed, dtype=tapegrad.float32), twice)
        for (name, p), q in zip(ref.named_parameters(), cell.parameters()):
            assert_close(q.grad, p.grad, rtol=1e-4, atol=1e-5)
    assert chunk_programs()


def test_a_long_pending_computation_is_evaluated_in_chunks(torch):
    rng = np.random.default_rng(2)
    Wn, xn = rng.standard_normal((8, 8)) / 3, rng.standard_normal((30, 4, 8))
    expected = None
    for _ in range(2 + _programs.STEADY_STREAK):
        with tapegrad.no_grad():
            W, x = tapegrad.tensor(Wn, dtype=tapegrad.float32), tapegrad.tensor(xn, dtype=tapegrad.float32)
            h = tapegrad.zeros(4, 8)
            hs = []
            for t in range(30):
                h = (h @ W + x[t]).tanh()
                hs.append(h)
            value = hs[-1].sum().item()
            kept = hs[7].numpy()   # a value a live tensor holds comes back from its chunk
        if expected is None:
            tW, tx = torch.tensor(Wn, dtype=torch.float32), torch.tensor(xn, dtype=torch.float32)
            th = torch.zeros(4, 8)
            ths = []
            for t in range(30):
                th = (th @ tW + tx[t]).tanh()
                ths.append(th)
            expected = (ths[-1].sum().item(), ths[7].numpy())
        assert value == pytest.approx(expected[0], rel=1e-5)
        np.testing.assert_allclose(kept, expected[1], rtol=1e-5, atol=1e-6)
