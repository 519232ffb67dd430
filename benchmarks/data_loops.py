"""Loops over data: manual batching, EmbeddingBag with changing offsets, no_grad evaluation loops, a CNN
over batches of changing size."""
import numpy as np

from . import mlp
from .harness import rss_mib
from .sides import libraries

SMALL = (32, 64, 10)


def _small_mlp(lib):
    return [lib.tensor(a, requires_grad=True) for a in mlp.init_arrays(SMALL)]


def run_manual_batching(h):
    rows, bs = h.size(4100, 420), 64
    xn, yn = mlp.batch_arrays(rows, SMALL)
    starts = list(range(0, rows, bs))
    h.info("batches per epoch (last one short)", len(starts))
    for side, lib in libraries(h).items():
        params, X, Y = _small_mlp(lib), lib.tensor(xn), lib.tensor(yn)

        def batch_step(j, lib=lib, params=params, X=X, Y=Y):
            i = starts[j]
            loss = lib.nn.functional.cross_entropy(mlp.forward(lib, params, X[i:i + bs]), Y[i:i + bs])
            loss.backward()
            with lib.no_grad():
                for p in params:
                    p -= mlp.LR * p.grad
            for p in params:
                p.grad.zero_()
            if j == len(starts) - 1:
                loss.item()
        h.first_then_later("epoch1", "epoch_later", side, batch_step, len(starts), h.size(3, 1), unit="batches")


def run_embedding_bag(h):
    n, n_idx, bags = h.size(30, 4), 128, 16
    rng = np.random.default_rng(0)
    idx = [rng.integers(0, 1000, n_idx) for _ in range(n)]
    offsets = [np.concatenate([[0], np.sort(rng.choice(np.arange(1, n_idx), bags - 1, replace=False))])
               for _ in range(n)]
    ys = [rng.standard_normal((bags, 1)).astype(np.float32) for _ in range(n)]
    w_bag = rng.standard_normal((1000, 32)).astype(np.float32)
    w_lin, b_lin = mlp.init_arrays((32, 1))
    losses = {}
    for side, lib in libraries(h).items():
        nn = lib.nn
        bag, head = nn.EmbeddingBag(1000, 32, mode="mean"), nn.Linear(32, 1)
        with lib.no_grad():
            bag.weight.copy_(lib.tensor(w_bag))
            head.weight.copy_(lib.tensor(w_lin))
            head.bias.copy_(lib.tensor(b_lin))
        opt = lib.optim.SGD(list(bag.parameters()) + list(head.parameters()), lr=0.1)
        data = [(lib.tensor(i), lib.tensor(o), lib.tensor(y)) for i, o, y in zip(idx, offsets, ys)]

        def step(k, lib=lib, bag=bag, head=head, opt=opt, data=data, side=side):
            i, o, y = data[k]
            opt.zero_grad()
            loss = lib.nn.functional.mse_loss(head(bag(i, o)), y)
            loss.backward()
            opt.step()
            losses[side] = loss.item()
        h.loop("total", side, step, n)
    h.info("last loss per side", losses)


def run_eval_7_sizes(h):
    n, sizes = h.size(60, 7), (64, 48, 33, 17, 64, 5, 29)
    xn, yn = mlp.batch_arrays(max(sizes), SMALL)
    for side, lib in libraries(h).items():
        params, X, Y = _small_mlp(lib), lib.tensor(xn), lib.tensor(yn)
        batches = [(X[:sizes[k % 7]], Y[:sizes[k % 7]]) for k in range(n)]

        def step(k, lib=lib, params=params, batches=batches):
            with lib.no_grad():
                x, y = batches[k]
                lib.nn.functional.cross_entropy(mlp.forward(lib, params, x), y).item()
        h.loop("total", side, step, n)


def run_cnn_7_sizes(h):
    n, sizes = h.size(21, 7), (32, 48, 20, 64, 17, 40, 9)
    rng = np.random.default_rng(0)
    xn = rng.standard_normal((max(sizes), 1, 28, 28)).astype(np.float32)
    yn = rng.integers(0, 10, max(sizes))
    state = None
    for side, lib in libraries(h).items():
        nn = lib.nn
        model = nn.Sequential(nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AvgPool2d(2),
                              nn.Flatten(), nn.Linear(16 * 7 * 7, 10))
        if state is None:   # the same initial weights on every side
            state = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}
        with lib.no_grad():
            for k, v in model.state_dict().items():
                v.copy_(lib.tensor(state[k]))
        opt = lib.optim.SGD(model.parameters(), lr=0.01)
        X, Y = lib.tensor(xn), lib.tensor(yn)

        def step(k, lib=lib, model=model, opt=opt, X=X, Y=Y):
            bs = sizes[k % len(sizes)]
            opt.zero_grad()
            loss = lib.nn.functional.cross_entropy(model(X[:bs]), Y[:bs])
            loss.backward()
            opt.step()
            loss.item()
        h.loop("total", side, step, n)


def run_eval_3000(h):
    n = h.size(3000, 300)
    xn = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
    w, b = mlp.init_arrays((16, 16))
    totals = {}
    for side, lib in libraries(h).items():
        m = lib.nn.Linear(16, 16)
        with lib.no_grad():
            m.weight.copy_(lib.tensor(w))
            m.bias.copy_(lib.tensor(b))
        x = lib.tensor(xn)
        box = {}

        def step(k, lib=lib, m=m, x=x, box=box):
            with lib.no_grad():
                box["total"] = (box["total"] if k else 0.0) + m(x).pow(2).mean()
                if k == n - 1:
                    box["total"].item()
        before = rss_mib()
        res = h.loop("total", side, step, n)
        h.value("rss", side, rss_mib() - before, "MiB", note="RSS growth over the loop")
        if res and not res["over_budget"]:
            totals[side] = float(box["total"].item()) / n
    h.info("mean loss per side", totals)
