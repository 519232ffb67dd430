"""The claims and patterns of docs/changing_shapes.md, run: bucketing, the short last batch, generation
with a fixed-size buffer, and a compiled function meeting new shapes. Programs are counted with JAX's own
compile events (tests/xla_events.py); values are compared with PyTorch. (Offsets as program inputs are
tested in test_values_as_inputs.py.)"""
import warnings

import numpy as np
import pytest

import tapegrad
from tapegrad import _programs
from conftest import assert_close, require
from xla_events import counting

pytestmark = pytest.mark.usefixtures("fresh_program_caches")

BUCKETS = (16, 32, 48)


def _bucketed(lib, x):
    length = x.shape[1]
    bucket = next(b for b in BUCKETS if b >= length)
    return lib.nn.functional.pad(x, (0, 0, 0, bucket - length)), length


def _step_structures():
    return sum(1 for key in _programs._programs.entries if key[0] == "step")


def test_bucketed_random_lengths_make_one_step_per_bucket_and_keep_the_outputs():
    torch = require("torch")
    rng = np.random.default_rng(0)
    lengths = rng.integers(5, 49, 12)
    assert len(set(lengths.tolist())) > len(BUCKETS)
    xs = [rng.standard_normal((4, int(t), 3)).astype(np.float32) for t in lengths]
    ys = [rng.standard_normal((4, 1)).astype(np.float32) for _ in lengths]

    def model(lib):
        lib.manual_seed(0)
        return lib.nn.LSTM(3, 5, batch_first=True), lib.nn.Linear(5, 1)

    theirs, ours = model(torch), model(tapegrad)
    for a, b in zip([*theirs[0].parameters(), *theirs[1].parameters()], [*ours[0].parameters(), *ours[1].parameters()]):
        with tapegrad.no_grad():
            b.copy_(tapegrad.tensor(a.detach().numpy()))
    opt = tapegrad.optim.SGD([*ours[0].parameters(), *ours[1].parameters()], lr=0.01)
    for x, y in zip(xs, ys):
        padded, length = _bucketed(tapegrad, tapegrad.tensor(x))
        out, _ = ours[0](padded)
        loss = tapegrad.nn.functional.mse_loss(ours[1](out[:, length - 1]), tapegrad.tensor(y))
        opt.zero_grad()
        loss.backward()
        opt.step()
    # one structure per bucket, plus the first step (no .grad yet) and the first update (state created)
    assert _step_structures() <= len(BUCKETS) + 2
    # the padding after the last real step changes nothing there: the unpadded model's output (torch)
    x = xs[0]
    reference, _ = theirs[0](torch.tensor(x))
    fresh = model(tapegrad)[0]
    for a, b in zip(theirs[0].parameters(), fresh.parameters()):
        with tapegrad.no_grad():
            b.copy_(tapegrad.tensor(a.detach().numpy()))
    padded, length = _bucketed(tapegrad, tapegrad.tensor(x))
    out, _ = fresh(padded)
    assert_close(out[:, length - 1].detach(), reference[:, -1].detach(), rtol=1e-5, atol=1e-6)


@pytest.mark.usefixtures("no_program_rent")   # the compiled tier at once: what the short batch adds to it
def test_the_short_last_batch_adds_one_step_program_once():
    rng = np.random.default_rng(1)
    X = tapegrad.tensor(rng.standard_normal((300, 8)).astype(np.float32))
    Y = tapegrad.tensor(rng.integers(0, 3, 300))
    tapegrad.manual_seed(0)
    model = tapegrad.nn.Sequential(tapegrad.nn.Linear(8, 16), tapegrad.nn.ReLU(), tapegrad.nn.Linear(16, 3))
    opt = tapegrad.optim.SGD(model.parameters(), lr=0.1)

    def epoch():
        for i in range(0, 300, 64):   # four batches of 64, then one of 44
            loss = tapegrad.nn.functional.cross_entropy(model(X[i:i + 64]), Y[i:i + 64])
            opt.zero_grad()
            loss.backward()
            opt.step()
        return loss.item()

    with counting() as xla:
        epoch()
        first = xla.compiles
        epoch()
        # the short batch comes back: its step (and the reading of its targets, checked on the host)
        assert _step_structures() == 2 and xla.compiles - first <= 2
        second = xla.compiles
        for _ in range(2):
            epoch()
        assert xla.compiles == second


@pytest.mark.usefixtures("no_program_rent")
def test_generation_with_a_fixed_size_buffer_runs_one_program_every_token():
    tapegrad.manual_seed(0)
    block = 8
    embed, head = tapegrad.nn.Embedding(5, 6), tapegrad.nn.Linear(6, 5)
    mask = tapegrad.ones(block, block).tril().bool()

    def model(idx):
        h = embed(idx)
        scores = (h @ h.transpose(-1, -2)).masked_fill(~mask, float("-inf"))
        return head(scores.softmax(-1) @ h)

    ids, buffer = [1], np.zeros((1, block), dtype=np.int64)
    with tapegrad.no_grad(), counting() as xla:
        for token in range(3 * block):
            context = ids[-block:]
            buffer[0, :len(context)] = context
            logits = model(tapegrad.tensor(buffer))
            probs = tapegrad.nn.functional.softmax(logits[0, len(context) - 1], dim=-1)
            ids.append(int(probs.argmax()))
            if token == 2:
                settled = xla.compiles   # the buffer's structure came back and compiled
        assert xla.compiles == settled


def test_compiled_function_compiles_per_new_shape_and_bucketing_bounds_it():
    def f(x):
        return (x.tanh() * 2).sum(0)

    compiled = tapegrad.compile(f, dynamic=True)
    with counting() as xla:
        for n in (3, 4, 5):
            compiled(tapegrad.ones(n, 2))
        per_shape = xla.compiles
        for n in (3, 4, 5):
            compiled(tapegrad.ones(n, 2))
        assert xla.compiles == per_shape >= 3   # one program per shape, found again
    bucketed = tapegrad.compile(f, dynamic=True)
    with counting() as xla, warnings.catch_warnings():
        warnings.simplefilter("error")
        for n in (3, 4, 5, 6, 7):
            x = tapegrad.nn.functional.pad(tapegrad.ones(n, 2), (0, 0, 0, 8 - n))   # zeros add nothing to sum
            assert bucketed(x).tolist() == pytest.approx([2 * n * np.tanh(1.0)] * 2)
        assert xla.compiles <= 2   # one bucket: one program (and at most one kernel for the padding)
