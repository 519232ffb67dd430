"""Training demo: a small classifier trained PyTorch-style, the seed chapter's four steps.

    python -m tapegrad.demo [--steps N]

Forward, `loss.backward()`, update under `no_grad`, zero the grads: written
exactly as PyTorch code. The demo prints the loss falling and what the
compiled backward cache did: a repeated step compiles once and then reuses
one XLA program for the whole step.
"""
import argparse
import time

import numpy as np

import tapegrad as torch   # the point: PyTorch code, unchanged


def make_data(n=512, seed=0):
    """Two interleaved spirals: a task a linear model cannot solve."""
    rng = np.random.default_rng(seed)
    t = rng.uniform(0.25, 1.75, n) * np.pi
    label = rng.integers(0, 2, n)
    r = t / (1.75 * np.pi)
    angle = t + np.pi * label
    x = np.stack([r * np.cos(angle), r * np.sin(angle)], 1) + rng.normal(0, 0.02, (n, 2))
    return torch.tensor(x, dtype=torch.float32), torch.tensor(label)


def init_params(sizes=(2, 64, 64, 2)):
    torch.manual_seed(0)
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1 / fan_in ** 0.5
        params.append((torch.rand(fan_in, fan_out) * 2 - 1).mul_(bound).requires_grad_())
        params.append(torch.zeros(fan_out, requires_grad=True))
    return params


def forward(params, x):
    h = x
    for i in range(0, len(params) - 2, 2):
        h = (h @ params[i] + params[i + 1]).tanh()
    return h @ params[-2] + params[-1]


def cross_entropy(logits, labels):
    logp = logits - logits.exp().sum(dim=1, keepdim=True).log()
    return -(logp * (labels.unsqueeze(1) == torch.arange(logits.shape[1])).float()).sum() / logits.shape[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--lr", type=float, default=1.0)
    args = ap.parse_args(argv)
    x, y = make_data()
    params = init_params()
    torch.autograd.clear_backward_cache()
    start = time.perf_counter()
    step_times = []
    for step in range(args.steps + 1):
        t0 = time.perf_counter()
        loss = cross_entropy(forward(params, x), y)      # 1. forward
        loss.backward()                                   # 2. backward
        with torch.no_grad():                             # 3. update, outside the graph
            for p in params:
                p -= args.lr * p.grad
        for p in params:                                  # 4. zero the grads
            p.grad.zero_()
        loss_value = loss.item()
        step_times.append(time.perf_counter() - t0)
        if step % (args.steps // 10) == 0:
            with torch.no_grad():
                accuracy = (forward(params, x).argmax(dim=1) == y).float().mean().item()
            print(f"step {step:4d}  loss {loss_value:.4f}  accuracy {accuracy:.3f}")
    elapsed = time.perf_counter() - start
    info = torch.autograd.backward_cache_info()
    steady = sorted(step_times[len(step_times) // 2:])[len(step_times) // 4]
    print(f"{args.steps + 1} steps in {elapsed:.2f} s: first three (tracing and compiling) "
          f"{sum(step_times[:3]):.2f} s, then {steady * 1e3:.2f} ms per step (median)")
    print(f"backward cache: {info['hits']} hits, {info['misses']} misses, {info['compiles']} whole-step "
          f"compilations, {info['entries']} cached programs")


if __name__ == "__main__":
    main()
