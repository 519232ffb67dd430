"""The benchmark workloads, written once against the PyTorch API.

`lib` is either `torch` or `tapegrad`: the same code runs under both, which is
the point of tapegrad. Hand-written JAX versions live in `jax_models.py`.
"""
import numpy as np

MLP_SIZES = (784, 256, 256, 10)
BATCH = 128
LR = 0.01


def mlp_init(lib, seed=0, dtype="float32"):
    """Weights drawn with NumPy so every library starts from identical values."""
    rng = np.random.default_rng(seed)
    params = []
    for fan_in, fan_out in zip(MLP_SIZES[:-1], MLP_SIZES[1:]):
        bound = 1 / np.sqrt(fan_in)
        w = rng.uniform(-bound, bound, (fan_out, fan_in)).astype(dtype)
        b = rng.uniform(-bound, bound, (fan_out,)).astype(dtype)
        params += [lib.tensor(w, requires_grad=True), lib.tensor(b, requires_grad=True)]
    return params


def mlp_batch(lib, seed=1, dtype="float32"):
    rng = np.random.default_rng(seed)
    x = lib.tensor(rng.standard_normal((BATCH, MLP_SIZES[0])).astype(dtype))
    y = lib.tensor(rng.integers(0, MLP_SIZES[-1], BATCH))
    return x, y


def mlp_forward(lib, params, x):
    F = lib.nn.functional
    h = x
    for i in range(0, len(params) - 2, 2):
        h = F.relu(F.linear(h, params[i], params[i + 1]))
    return F.linear(h, params[-2], params[-1])


def mlp_step_manual(lib, params, x, y):
    """The seed chapter's four steps: forward, backward, update under no_grad, zero the grads."""
    loss = lib.nn.functional.cross_entropy(mlp_forward(lib, params, x), y)
    loss.backward()
    with lib.no_grad():
        for p in params:
            p -= LR * p.grad
    for p in params:
        p.grad.zero_()
    return loss


def mlp_step_optim(lib, params, opt, x, y):
    opt.zero_grad()
    loss = lib.nn.functional.cross_entropy(mlp_forward(lib, params, x), y)
    loss.backward()
    opt.step()
    return loss


# ---- 200-op elementwise chain ---------------------------------------------------------

CHAIN_N = 256
CHAIN_OPS = 200


def chain_forward(x):
    y = x
    for _ in range(CHAIN_OPS // 4):
        y = y * 1.01
        y = y.sin()
        y = y + 0.5
        y = y.tanh()
    return y.sum()


# ---- transformer block ------------------------------------------------------------------

VOCAB, D, HEADS, SEQ, TBATCH = 100, 64, 2, 32, 16


def transformer_model(lib, seed=0):
    lib.manual_seed(seed)
    nn = lib.nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, D)
            self.pos = nn.Parameter(lib.zeros(SEQ, D))
            self.ln1 = nn.LayerNorm(D)
            self.qkv = nn.Linear(D, 3 * D)
            self.proj = nn.Linear(D, D)
            self.ln2 = nn.LayerNorm(D)
            self.fc1 = nn.Linear(D, 4 * D)
            self.fc2 = nn.Linear(4 * D, D)
            self.head = nn.Linear(D, VOCAB)

        def forward(self, tokens):
            B, T = tokens.shape
            h = self.embed(tokens) + self.pos
            q, k, v = self.qkv(self.ln1(h)).split(D, dim=-1)
            q = q.reshape(B, T, HEADS, D // HEADS).transpose(1, 2)
            k = k.reshape(B, T, HEADS, D // HEADS).transpose(1, 2)
            v = v.reshape(B, T, HEADS, D // HEADS).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / (D // HEADS) ** 0.5)
            att = att.softmax(dim=-1)
            a = (att @ v).transpose(1, 2).reshape(B, T, D)
            h = h + self.proj(a)
            h = h + self.fc2(nn.functional.gelu(self.fc1(self.ln2(h))))
            return self.head(h)

    return Block()


def transformer_batch(lib, seed=1):
    rng = np.random.default_rng(seed)
    tokens = lib.tensor(rng.integers(0, VOCAB, (TBATCH, SEQ)))
    targets = lib.tensor(rng.integers(0, VOCAB, (TBATCH, SEQ)))
    return tokens, targets


def transformer_step(lib, model, opt, tokens, targets):
    opt.zero_grad()
    logits = model(tokens)
    loss = lib.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
    loss.backward()
    opt.step()
    return loss
