"""Run every workload for tapegrad, PyTorch eager and hand-written jax.jit; print and save the table.

    python -m benchmarks            # full run (a few minutes on 2 CPU cores)
    python -m benchmarks --quick    # fewer rounds, for a smoke test

Results go to benchmarks/results/<device>.json and .md.
"""
import argparse
import json
import os
import platform
import subprocess
import sys

import jax
import numpy as np

import tapegrad as tg

from . import jax_models as J
from . import models as M
from .harness import measure

try:
    import torch
except ImportError:  # PyTorch is optional: tapegrad and JAX still run
    torch = None

HERE = os.path.dirname(os.path.abspath(__file__))


def device_name():
    d = jax.devices()[0]
    if d.platform == "cpu":
        return f"cpu-{os.cpu_count()}cores"
    return d.device_kind.replace(" ", "-").lower()


def torch_device():
    return "cuda" if torch is not None and torch.cuda.is_available() and jax.devices()[0].platform == "gpu" \
        else "cpu"


def _sync_torch():
    if torch_device() == "cuda":
        torch.cuda.synchronize()


# ---- contestants per workload -----------------------------------------------------------

def mlp_manual():
    c = {}
    params = M.mlp_init(tg)
    x, y = M.mlp_batch(tg)
    c["tapegrad"] = lambda: M.mlp_step_manual(tg, params, x, y).item()
    if torch is not None:
        tparams = [p.to(torch_device()).detach().requires_grad_() for p in M.mlp_init(torch)]
        tx, ty = (t.to(torch_device()) for t in M.mlp_batch(torch))
        c["torch"] = lambda: M.mlp_step_manual(torch, tparams, tx, ty).item()
    jp = [p._value for p in M.mlp_init(tg)]
    jx, jy = (t._value for t in M.mlp_batch(tg))
    state = {"p": jp}

    def jax_step():
        state["p"], loss = J.mlp_step_sgd(state["p"], jx, jy)
        loss.block_until_ready()
    c["jax.jit"] = jax_step
    return c


def mlp_momentum():
    c = {}
    params = M.mlp_init(tg)
    opt = tg.optim.SGD(params, lr=M.LR, momentum=0.9)
    x, y = M.mlp_batch(tg)
    c["tapegrad"] = lambda: M.mlp_step_optim(tg, params, opt, x, y).item()
    if torch is not None:
        tparams = [p.to(torch_device()).detach().requires_grad_() for p in M.mlp_init(torch)]
        topt = torch.optim.SGD(tparams, lr=M.LR, momentum=0.9)
        tx, ty = (t.to(torch_device()) for t in M.mlp_batch(torch))
        c["torch"] = lambda: M.mlp_step_optim(torch, tparams, topt, tx, ty).item()
    import jax.numpy as jnp
    state = {"p": [p._value for p in M.mlp_init(tg)]}
    state["b"] = [jnp.zeros_like(p) for p in state["p"]]
    jx, jy = (t._value for t in M.mlp_batch(tg))

    def jax_step():
        state["p"], state["b"], loss = J.mlp_step_momentum(state["p"], state["b"], jx, jy)
        loss.block_until_ready()
    c["jax.jit"] = jax_step
    return c


def _chain_inputs():
    return np.random.default_rng(0).standard_normal(M.CHAIN_N).astype(np.float32)


def chain_backward_only():
    """Only backward() is timed; the forward is recorded before the clock starts."""
    import time
    c = {}
    x = tg.tensor(_chain_inputs(), requires_grad=True)

    def timed(build, run):
        def step():
            loss = build()
            t0 = time.perf_counter()
            run(loss)
            return time.perf_counter() - t0
        return step

    def tg_backward(loss):
        loss.backward()
        x.grad._value.block_until_ready()
        x.grad = None
    c["tapegrad"] = timed(lambda: M.chain_forward(x), tg_backward)
    if torch is not None:
        tx = torch.tensor(_chain_inputs(), requires_grad=True, device=torch_device())

        def torch_backward(loss):
            loss.backward()
            _sync_torch()
            tx.grad = None
        c["torch"] = timed(lambda: M.chain_forward(tx), torch_backward)
    jx = jax.device_put(_chain_inputs())
    c["jax.jit"] = timed(lambda: None, lambda _: J.chain_grad(jx).block_until_ready())
    return c


def chain_forward_backward():
    c = {}
    x = tg.tensor(_chain_inputs(), requires_grad=True)

    def tg_step():
        M.chain_forward(x).backward()
        x.grad._value.block_until_ready()
        x.grad = None
    c["tapegrad"] = tg_step
    if torch is not None:
        tx = torch.tensor(_chain_inputs(), requires_grad=True, device=torch_device())

        def torch_step():
            M.chain_forward(tx).backward()
            _sync_torch()
            tx.grad = None
        c["torch"] = torch_step
    jx = jax.device_put(_chain_inputs())
    c["jax.jit"] = lambda: J.chain_grad(jx).block_until_ready()
    return c


def transformer():
    import jax.numpy as jnp
    c = {}
    model = M.transformer_model(tg)
    opt = tg.optim.AdamW(model.parameters(), lr=1e-3)
    tok, tgt = M.transformer_batch(tg)
    c["tapegrad"] = lambda: M.transformer_step(tg, model, opt, tok, tgt).item()
    if torch is not None:
        tmodel = M.transformer_model(torch).to(torch_device())
        topt = torch.optim.AdamW(tmodel.parameters(), lr=1e-3)
        ttok, ttgt = (t.to(torch_device()) for t in M.transformer_batch(torch))
        c["torch"] = lambda: M.transformer_step(torch, tmodel, topt, ttok, ttgt).item()
    p = {k: v._value for k, v in M.transformer_model(tg).state_dict().items()}
    state = {"p": p, "m": {k: jnp.zeros_like(v) for k, v in p.items()},
             "v": {k: jnp.zeros_like(v) for k, v in p.items()}, "t": 0}
    jtok, jtgt = (t._value for t in M.transformer_batch(tg))

    def jax_step():
        s = state
        s["p"], s["m"], s["v"], s["t"], loss = J.transformer_step_adamw(s["p"], s["m"], s["v"], s["t"], jtok, jtgt)
        loss.block_until_ready()
    c["jax.jit"] = jax_step
    return c


WORKLOADS = [
    # name, builder, steps per round, baseline for the target, target ratio
    ("MLP 784-256-256-10, manual SGD under no_grad", mlp_manual, 20, "jax.jit", 1.2),
    ("MLP, optim.SGD(momentum=0.9)", mlp_momentum, 20, "jax.jit", 1.2),
    ("200-op chain: backward() only", chain_backward_only, 50, "torch", 0.4),
    ("200-op chain: forward + backward", chain_forward_backward, 50, "torch", 1.3),
    ("transformer block (d=64, 2 heads, AdamW)", transformer, 10, "jax.jit", 1.1),
]


def run_timings(rounds):
    rows = []
    for name, build, steps, baseline, target in WORKLOADS:
        contestants = build()
        if name.endswith("backward() only"):
            # these steps return their own timed duration (the forward is excluded)
            results = {}
            for impl, fn in contestants.items():
                for _ in range(3):
                    fn()
            samples = {impl: [] for impl in contestants}
            for _ in range(rounds):
                for impl, fn in contestants.items():
                    samples[impl].append(sum(fn() for _ in range(steps)) / steps * 1e3)
            from .harness import summarize
            results = {impl: summarize(s) for impl, s in samples.items()}
        else:
            results = measure(contestants, steps, rounds)
        rows.append({"workload": name, "results": results, "baseline": baseline, "target": target})
        print(format_row(rows[-1]), flush=True)
    return rows


def format_row(row):
    res = row["results"]
    base = res.get(row["baseline"], {}).get("median_ms")
    parts = []
    for impl in ("tapegrad", "torch", "jax.jit"):
        if impl in res:
            r = res[impl]
            parts.append(f"{impl} {r['median_ms']:.3f} ms [{r['p25_ms']:.3f}-{r['p75_ms']:.3f}]")
    ratio = res["tapegrad"]["median_ms"] / base if base else float("nan")
    row["ratio"] = ratio
    met = "met" if ratio <= row["target"] else "NOT met"
    return f"{row['workload']}: " + "; ".join(parts) + \
        f" | tapegrad/{row['baseline']} = {ratio:.2f} (target <= {row['target']}: {met})"


def run_first_steps():
    rows = []
    for workload in ("mlp", "transformer"):
        times = {}
        for impl in ("tapegrad", "jax", "torch"):
            if impl == "torch" and torch is None:
                continue
            out = subprocess.run([sys.executable, "-m", "benchmarks.first_step", workload, impl],
                                 capture_output=True, text=True, cwd=os.path.dirname(HERE))
            if out.returncode != 0:
                print(out.stderr[-2000:], file=sys.stderr)
                continue
            times[impl] = json.loads(out.stdout.strip().splitlines()[-1])["times_ms"]
        row = {"workload": workload, "times_ms": times}
        if "tapegrad" in times and "jax" in times:
            row["ratio_first"] = times["tapegrad"][0] / times["jax"][0]
            row["ratio_first3"] = sum(times["tapegrad"]) / sum(times["jax"])
        rows.append(row)
        print(f"first steps ({workload}): " + "; ".join(f"{k} " + "/".join(f"{t:.0f}" for t in v) + " ms"
                                                       for k, v in times.items())
              + (f" | tapegrad/jax first step = {row['ratio_first']:.2f}, first three = "
                 f"{row['ratio_first3']:.2f} (target <= 1.5)" if "ratio_first" in row else ""), flush=True)
    return rows


def run_memory(steps):
    out = {}
    for impl in ("tapegrad", "jax"):
        p = subprocess.run([sys.executable, "-m", "benchmarks.memory", impl, str(steps)], capture_output=True,
                           text=True, cwd=os.path.dirname(HERE))
        if p.returncode == 0:
            out[impl] = json.loads(p.stdout.strip().splitlines()[-1])
        else:
            print(p.stderr[-2000:], file=sys.stderr)
    if "tapegrad" in out and "jax" in out:
        t, j = out["tapegrad"], out["jax"]
        out["ratio_peak"] = t["peak_mib"] / j["peak_mib"]
        out["growth_after_warmup_mib"] = t["peak_mib"] - t["warm_mib"]
        print(f"peak RSS over {steps} MLP steps: tapegrad {t['peak_mib']:.0f} MiB (after warm-up "
              f"{t['warm_mib']:.0f}, growth {out['growth_after_warmup_mib']:.0f}), jax {j['peak_mib']:.0f} MiB "
              f"| ratio {out['ratio_peak']:.2f} (target <= 1.3, flat)", flush=True)
    return out


def run_optimizer_calls(steps=10):
    """Compiled calls per optimizer step on a 20-parameter model (10 Linear layers)."""
    out = {}
    model = tg.nn.Sequential(*[tg.nn.Linear(32, 32) for _ in range(10)])
    assert len(list(model.parameters())) == 20
    x = tg.randn(8, 32)
    for name, make in (("SGD(momentum)", lambda p: tg.optim.SGD(p, lr=0.01, momentum=0.9)),
                       ("Adam", lambda p: tg.optim.Adam(p, lr=1e-3)),
                       ("AdamW", lambda p: tg.optim.AdamW(p, lr=1e-3))):
        opt = make(model.parameters())
        for _ in range(2):   # the first step creates the optimizer state (momentum buffers...)
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            opt.step()
        before = tg.optim.Optimizer.step_cache_info()
        for _ in range(steps):
            opt.zero_grad()
            model(x).pow(2).mean().backward()
            opt.step()
        after = tg.optim.Optimizer.step_cache_info()
        out[name] = {"calls_per_step": (after["calls"] - before["calls"]) / steps,
                     "new_traces": after["traces"] - before["traces"]}
        print(f"optimizer step, 20 parameters, {name}: {out[name]['calls_per_step']:.0f} compiled call(s) per "
              f"step, {out[name]['new_traces']} retraces over {steps} steps", flush=True)
    return out


def write_results(rows, first, memory, rounds, optim_calls=None):
    dev = device_name()
    meta = {"device": dev, "jax_device": str(jax.devices()[0]), "platform": platform.platform(),
            "python": platform.python_version(), "jax": jax.__version__,
            "torch": getattr(torch, "__version__", None), "tapegrad": tg.__version__, "rounds": rounds,
            "cpu_count": os.cpu_count()}
    data = {"meta": meta, "timings": rows, "first_steps": first, "memory": memory, "optimizer_calls": optim_calls}
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", f"{dev}.json"), "w") as f:
        json.dump(data, f, indent=1, default=float)
    lines = [f"# tapegrad benchmarks on {dev}", "",
             f"JAX device `{meta['jax_device']}`, {meta['platform']}, Python {meta['python']}, jax {meta['jax']}, "
             f"torch {meta['torch']}. Per-step medians over {rounds} interleaved rounds; [p25-p75] in brackets.",
             "", "| workload | tapegrad ms | torch eager ms | jax.jit ms | ratio | target |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        res = r["results"]
        cell = lambda k: (f"{res[k]['median_ms']:.3f} [{res[k]['p25_ms']:.3f}-{res[k]['p75_ms']:.3f}]"
                          if k in res else "-")
        lines.append(f"| {r['workload']} | {cell('tapegrad')} | {cell('torch')} | {cell('jax.jit')} | "
                     f"{r['ratio']:.2f} vs {r['baseline']} | <= {r['target']} |")
    for f_row in first:
        t = f_row["times_ms"]
        lines.append(f"| first 3 steps, {f_row['workload']} (ms each) | "
                     + " | ".join("/".join(f"{x:.0f}" for x in t[k]) if k in t else "-"
                                  for k in ("tapegrad", "torch", "jax"))
                     + f" | first {f_row.get('ratio_first', float('nan')):.2f}, three "
                       f"{f_row.get('ratio_first3', float('nan')):.2f} vs jax | <= 1.5 |")
    if "ratio_peak" in memory:
        lines.append(f"| peak RSS, 1000 MLP steps (MiB) | {memory['tapegrad']['peak_mib']:.0f} (growth after warm-up "
                     f"{memory['growth_after_warmup_mib']:.0f}) | - | {memory['jax']['peak_mib']:.0f} | "
                     f"{memory['ratio_peak']:.2f} vs jax | <= 1.3, flat |")
    for name, r in (optim_calls or {}).items():
        lines.append(f"| optimizer step, 20-parameter model, {name} | {r['calls_per_step']:.0f} compiled call per step, "
                     f"{r['new_traces']} retraces | - | - | - | one call |")
    with open(os.path.join(HERE, "results", f"{dev}.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote benchmarks/results/{dev}.md and .json")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", help="substring of a workload name")
    a = ap.parse_args()
    rounds = 5 if a.quick else 15
    global WORKLOADS
    if a.only:
        WORKLOADS = [w for w in WORKLOADS if a.only in w[0]]
    print(f"device: {device_name()} ({jax.devices()[0]}); torch: {getattr(torch, '__version__', 'absent')}")
    rows = run_timings(rounds)
    if a.only:
        return
    optim_calls = run_optimizer_calls()
    first = run_first_steps()
    memory = run_memory(300 if a.quick else 1000)
    write_results(rows, first, memory, rounds, optim_calls)


if __name__ == "__main__":
    main()
