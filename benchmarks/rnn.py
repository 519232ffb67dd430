"""Recurrent workloads: a 400-step unrolled RNN, an LSTM over random lengths, truncated BPTT over a GRU."""
import numpy as np

from .catalog import JX, PT, TG
from .sides import libraries, same_init

BATCH, HIDDEN = 8, 64


# ---- 400-step unrolled RNN -------------------------------------------------------------------------------

def unrolled(lib, W, x, steps):
    """PyTorch-API code: a Python loop of `h = tanh(h @ W + x[t])`, then backward()."""
    h = lib.zeros(BATCH, HIDDEN)
    for t in range(steps):
        h = (h @ W + x[t]).tanh()
    h.pow(2).mean().backward()
    g = W.grad
    W.grad = None
    return g[0, 0].item()


def jax_unrolled_grad(steps):
    import jax
    import jax.numpy as jnp

    def loss(W, x):
        def cell(h, xt):
            return jnp.tanh(h @ W + xt), None
        h, _ = jax.lax.scan(cell, jnp.zeros((BATCH, HIDDEN), jnp.float32), x[:steps])
        return (h ** 2).mean()
    return jax.jit(jax.grad(loss))


def run_rnn_unrolled(h):
    steps = h.size(400, 20)
    h.info("steps", steps)
    rng = np.random.default_rng(0)
    Wn = (rng.standard_normal((HIDDEN, HIDDEN)) / np.sqrt(HIDDEN)).astype(np.float32)
    xn = rng.standard_normal((steps, BATCH, HIDDEN)).astype(np.float32)
    contestants = {}
    for side, lib in libraries(h).items():
        W, x = lib.tensor(Wn, requires_grad=True), lib.tensor(xn)
        contestants[side] = (lambda lib=lib, W=W, x=x: unrolled(lib, W, x, steps))
    if h.runs(JX):
        import jax.numpy as jnp
        grad, Wj, xj = jax_unrolled_grad(steps), jnp.asarray(Wn), jnp.asarray(xn)
        contestants[JX] = lambda: float(np.asarray(grad(Wj, xj))[0, 0])
    firsts = {}
    for side in (PT, JX, TG):
        if side in contestants:
            firsts[side] = h.loop("first", side, lambda i, f=contestants[side]: f(), 1)
    if firsts.get(TG) and firsts[TG]["over_budget"]:
        h.skip("steady", TG, "first forward + backward over budget")
        contestants.pop(TG)
    h.steady("steady", contestants, steps_per_round=h.size(3, 1), rounds=h.size(10, 3), warmup=2)


# ---- LSTM over batches of random length ----------------------------------------------------------------

def lstm_model(lib):
    nn = lib.nn

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(32, HIDDEN, batch_first=True)
            self.head = nn.Linear(HIDDEN, 1)

        def forward(self, x):
            out, _ = self.lstm(x)
            return self.head(out[:, -1])
    return Model()


def run_lstm_varlen(h):
    n = h.size(100, 5)
    rng = np.random.default_rng(0)
    lengths = rng.integers(5, 51, n)
    xs = [rng.standard_normal((BATCH, int(T), 32)).astype(np.float32) for T in lengths]
    ys = [rng.standard_normal((BATCH, 1)).astype(np.float32) for _ in lengths]
    h.info("distinct lengths", len(set(lengths.tolist())))
    models = {side: (lib, lstm_model(lib)) for side, lib in libraries(h).items()}
    same_init(models)
    losses = {}
    for side, (lib, model) in models.items():
        opt = lib.optim.Adam(model.parameters(), lr=1e-3)
        data = [(lib.tensor(x), lib.tensor(y)) for x, y in zip(xs, ys)]

        def step(i, lib=lib, model=model, opt=opt, data=data):
            x, y = data[i]
            opt.zero_grad()
            loss = lib.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            losses[side] = loss.item()
        h.loop("total", side, step, n)
    h.info("last loss per side", losses)


# ---- truncated BPTT over a character GRU -----------------------------------------------------------------

VOCAB, CHUNK = 48, 32


def gru_model(lib):
    nn = lib.nn

    class CharGRU(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, 32)
            self.gru = nn.GRU(32, HIDDEN, batch_first=True)
            self.head = nn.Linear(HIDDEN, VOCAB)

        def forward(self, x, state):
            out, state = self.gru(self.embed(x), state)
            return self.head(out), state
    return CharGRU()


def run_tbptt_gru(h):
    chunks = h.size(20, 3)
    data_n = np.random.default_rng(0).integers(0, VOCAB, (BATCH, chunks * CHUNK + 1))
    models = {side: (lib, gru_model(lib)) for side, lib in libraries(h).items()}
    same_init(models)
    for side, (lib, model) in models.items():
        opt = lib.optim.Adam(model.parameters(), lr=1e-3)
        data = lib.tensor(data_n)
        carry = {}

        def chunk_step(j, lib=lib, model=model, opt=opt, data=data, carry=carry):
            if j == 0:
                carry["h"] = None                      # a pass starts from a fresh hidden state
            i = j * CHUNK
            x, y = data[:, i:i + CHUNK], data[:, i + 1:i + 1 + CHUNK]
            opt.zero_grad()
            logits, state = model(x, carry["h"])
            loss = lib.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), y.reshape(-1))
            loss.backward()
            opt.step()
            carry["h"] = state.detach()
            if j == chunks - 1:
                loss.item()
        h.first_then_later("pass1", "pass_later", side, chunk_step, chunks, h.size(3, 1), unit="chunks")
