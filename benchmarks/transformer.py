"""Transformer workloads: one block + AdamW (steady and first steps), nanoGPT-style random batches,
and autoregressive generation with `idx[:, -block:]`."""
import time

import numpy as np

from .catalog import JX, TG
from .mlp import first_steps
from .sides import jax_step_fn, libraries, same_init, to_jax

VOCAB, D, HEADS, BLOCK, BATCH = 65, 64, 2, 32, 16
LR, BETAS, EPS, WD = 1e-3, (0.9, 0.999), 1e-8, 0.01


# ---- PyTorch-API model (tapegrad and torch) -----------------------------------------------------------

def gpt(lib, n_layer, causal):
    nn, F = lib.nn, lib.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
            self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
            self.fc1, self.fc2 = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

        def forward(self, h, mask):
            B, T, _ = h.shape
            q, k, v = self.qkv(self.ln1(h)).split(D, dim=-1)
            q, k, v = (t.reshape(B, T, HEADS, D // HEADS).transpose(1, 2) for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) * (1.0 / (D // HEADS) ** 0.5)
            if mask is not None:
                att = att.masked_fill(mask[:, :, :T, :T] == 0, float("-inf"))
            a = (att.softmax(dim=-1) @ v).transpose(1, 2).reshape(B, T, D)
            h = h + self.proj(a)
            return h + self.fc2(F.gelu(self.fc1(self.ln2(h))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(VOCAB, D), nn.Embedding(BLOCK, D)
            self.blocks = nn.ModuleList([Block() for _ in range(n_layer)])
            self.head = nn.Linear(D, VOCAB)
            self.causal = causal
            if causal:
                self.register_buffer("mask", lib.tril(lib.ones(BLOCK, BLOCK)).reshape(1, 1, BLOCK, BLOCK))

        def forward(self, idx):
            T = idx.shape[1]
            h = self.tok(idx) + self.pos(lib.arange(T))
            for b in self.blocks:
                h = b(h, self.mask if self.causal else None)
            return self.head(h)
    return GPT()


def train_step(lib, model, opt, x, y):
    opt.zero_grad()
    loss = lib.nn.functional.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))
    loss.backward()
    opt.step()
    return loss.item()


def param_shapes(n_layer):
    """The floating-point state of `gpt(lib, n_layer, causal=False)`, in state_dict order."""
    shapes = {"tok.weight": (VOCAB, D), "pos.weight": (BLOCK, D)}
    for i in range(n_layer):
        b = f"blocks.{i}."
        shapes.update({b + "ln1.weight": (D,), b + "ln1.bias": (D,), b + "ln2.weight": (D,), b + "ln2.bias": (D,),
                       b + "qkv.weight": (3 * D, D), b + "qkv.bias": (3 * D,), b + "proj.weight": (D, D),
                       b + "proj.bias": (D,), b + "fc1.weight": (4 * D, D), b + "fc1.bias": (4 * D,),
                       b + "fc2.weight": (D, 4 * D), b + "fc2.bias": (D,)})
    shapes.update({"head.weight": (VOCAB, D), "head.bias": (VOCAB,)})
    return shapes


# ---- hand-written JAX (non-causal, the parameters of `gpt(lib, n_layer, causal=False)`) ------------------

def _layer_norm(h, w, b):
    import jax.numpy as jnp
    mu = h.mean(-1, keepdims=True)
    var = ((h - mu) ** 2).mean(-1, keepdims=True)
    return (h - mu) / jnp.sqrt(var + 1e-5) * w + b


def jax_loss(p, tokens, targets):
    import jax
    import jax.numpy as jnp
    B, T = tokens.shape
    lin = lambda x, name: x @ p[name + ".weight"].T + p[name + ".bias"]
    h = p["tok.weight"][tokens] + p["pos.weight"][:T]
    n_layer = len({k.split(".")[1] for k in p if k.startswith("blocks.")})
    for i in range(n_layer):
        b = f"blocks.{i}."
        q, k, v = jnp.split(lin(_layer_norm(h, p[b + "ln1.weight"], p[b + "ln1.bias"]), b + "qkv"), 3, axis=-1)
        q, k, v = (t.reshape(B, T, HEADS, D // HEADS).transpose(0, 2, 1, 3) for t in (q, k, v))
        att = jax.nn.softmax(q @ k.transpose(0, 1, 3, 2) * (1.0 / (D // HEADS) ** 0.5), axis=-1)
        h = h + lin((att @ v).transpose(0, 2, 1, 3).reshape(B, T, D), b + "proj")
        f = jax.nn.gelu(lin(_layer_norm(h, p[b + "ln2.weight"], p[b + "ln2.bias"]), b + "fc1"), approximate=False)
        h = h + lin(f, b + "fc2")
    logp = jax.nn.log_softmax(lin(h, "head").reshape(-1, VOCAB))
    return -jnp.take_along_axis(logp, targets.reshape(-1)[:, None], axis=1).mean()


def jax_adamw(p, m, v, t, tokens, targets):
    """torch.optim.AdamW's arithmetic; t is a float32 scalar so every call has the same signature."""
    import jax
    import jax.numpy as jnp
    loss, g = jax.value_and_grad(jax_loss)(p, tokens, targets)
    b1, b2 = BETAS
    t = t + 1
    step, c2 = LR / (1 - b1 ** t), jnp.sqrt(1 - b2 ** t)
    m = {k: b1 * m[k] + (1 - b1) * g[k] for k in p}
    v = {k: b2 * v[k] + (1 - b2) * g[k] * g[k] for k in p}
    p = {k: p[k] * (1 - LR * WD) - step * m[k] / (jnp.sqrt(v[k]) / c2 + EPS) for k in p}
    return p, m, v, t, loss


# ---- workloads --------------------------------------------------------------------------------------------

def _batch(seed=1):
    rng = np.random.default_rng(seed)
    return rng.integers(0, VOCAB, (BATCH, BLOCK)), rng.integers(0, VOCAB, (BATCH, BLOCK))


def _block_contestants(h):
    tok, tgt = _batch()
    models = {side: (lib, gpt(lib, 1, causal=False)) for side, lib in libraries(h).items()}
    arrays = same_init(models, shapes=param_shapes(1))
    out = {}
    for side, (lib, model) in models.items():
        opt = lib.optim.AdamW(model.parameters(), lr=LR, weight_decay=WD)
        x, y = lib.tensor(tok), lib.tensor(tgt)
        out[side] = (lambda lib=lib, model=model, opt=opt, x=x, y=y: train_step(lib, model, opt, x, y))
    if h.runs(JX):
        import jax.numpy as jnp
        p = to_jax(arrays)
        zeros = {k: jnp.zeros_like(a) for k, a in p.items()}
        state = (p, zeros, {k: jnp.zeros_like(a) for k, a in p.items()}, jnp.zeros((), jnp.float32))
        out[JX] = jax_step_fn(jax_adamw, state, to_jax((tok, tgt)))
    return out


def run_transformer_adamw(h):
    h.steady("steady", _block_contestants(h), steps_per_round=h.size(10, 3), rounds=h.size(15, 3))


def run_first_step_transformer(h):
    first_steps(h, _block_contestants(h))


def run_nanogpt_batches(h):
    n = h.size(30, 4)
    rng = np.random.default_rng(0)
    text = rng.integers(0, VOCAB, 5000)
    offsets = [rng.integers(0, len(text) - BLOCK - 1, BATCH).tolist() for _ in range(n)]
    models = {side: (lib, gpt(lib, 2, causal=True)) for side, lib in libraries(h).items()}
    same_init(models)
    losses = {}
    for side, (lib, model) in models.items():
        opt = lib.optim.AdamW(model.parameters(), lr=LR, weight_decay=WD)
        data = lib.tensor(text)

        def step(k, lib=lib, model=model, opt=opt, data=data, side=side):
            ix = offsets[k]                                   # get_batch: random offsets each step
            x = lib.stack([data[i:i + BLOCK] for i in ix])
            y = lib.stack([data[i + 1:i + 1 + BLOCK] for i in ix])
            losses[side] = train_step(lib, model, opt, x, y)
        res = h.loop("total", side, step, n, record_steps=True)
        if res and res["over_budget"]:
            h.skip("per_step", side, "30 steps over budget")
        elif res:
            later = res["steps_ms"][n // 3:]
            h.value("per_step", side, float(np.median(later)), "ms",
                    compiles=sum(res["step_compiles"][n // 3:]), note=f"median of steps {n // 3 + 1}..{n}")
    h.info("last loss per side", losses)


def compile_floor_ms():
    """XLA's cost to compile a one-op program (tanh of a shape not seen before): the floor for first sight."""
    import jax
    import jax.numpy as jnp
    x = jnp.ones((7, 13, 3), jnp.float32)
    t0 = time.perf_counter()
    jax.jit(jnp.tanh)(x).block_until_ready()
    return (time.perf_counter() - t0) * 1e3


def run_generate_40(h):
    n_new, prompt = h.size(40, 4), np.random.default_rng(0).integers(0, VOCAB, (1, 8))
    models = {side: (lib, gpt(lib, 2, causal=True)) for side, lib in libraries(h).items()}
    same_init(models)
    floor = compile_floor_ms() if h.runs(TG) else None
    if floor:
        h.info("one-op compile floor (ms)", floor)
    generated = {}
    for side, (lib, model) in models.items():
        model.eval()
        box = {}

        def token(k, lib=lib, model=model, box=box):
            with lib.no_grad():
                if k == 0:
                    box["idx"] = lib.tensor(prompt)
                logits = model(box["idx"][:, -BLOCK:])
                nxt = logits[:, -1, :].argmax(-1, keepdim=True)
                box["idx"] = lib.cat([box["idx"], nxt], 1)
                if k == n_new - 1:
                    box["idx"][0, -1].item()
        first = h.loop("call1", side, token, n_new, unit="tokens")
        if side == TG and first and floor:
            h.info("first call in one-op compile floors", first["value"] / floor)
        if first and first["over_budget"]:
            h.skip("call2", side, "first call over budget")
            continue
        h.loop("call2", side, token, n_new, unit="tokens")
        generated[side] = box["idx"][0].tolist()
    if len(generated) > 1:
        h.info("sides generated the same tokens", len({tuple(g) for g in generated.values()}) == 1)
