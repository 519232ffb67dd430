"""Activation checkpointing on a deep MLP: peak resident memory and step time, with and without it.

    python benchmarks/checkpoint_memory.py [--width 1024] [--layers 32] [--batch 1024] [--every 4]

Not part of the default catalog (it needs about a GiB per process). Each figure comes from a fresh
process that imports only its own library: "peak" is the process's peak RSS (getrusage) minus its RSS
once the model and the data exist, over one warm-up step and three timed steps; "step" is the mean
time of the three timed steps. The model is `layers` Linear+Tanh blocks; with checkpointing every
`every` blocks form one region (`checkpoint(..., use_reentrant=False)`), so only the regions' inputs
are kept for the backward and each region is computed again during it.
"""
import argparse
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def rss_mib():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def child(side, mode, width, layers, batch, every):
    lib = __import__("torch" if side == "torch" else "tapegrad")
    checkpoint = __import__(f"{lib.__name__}.utils.checkpoint", fromlist=["checkpoint"]).checkpoint
    lib.manual_seed(0)
    blocks = [lib.nn.Sequential(lib.nn.Linear(width, width), lib.nn.Tanh()) for _ in range(layers)]
    regions = [lib.nn.Sequential(*blocks[i:i + every]) for i in range(0, layers, every)]
    x = lib.randn(batch, width)
    before = rss_mib()

    def step():
        h = x
        for region in regions:
            h = checkpoint(region, h, use_reentrant=False) if mode == "checkpoint" else region(h)
        loss = h.pow(2).mean()
        loss.backward()
        for b in blocks:
            for p in b.parameters():
                p.grad = None
        return loss.item()
    step()
    start = time.perf_counter()
    for _ in range(3):
        step()
    seconds = (time.perf_counter() - start) / 3
    print(f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 - before:.0f} {seconds:.3f}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--every", type=int, default=4)
    ap.add_argument("--child", nargs=2, metavar=("SIDE", "MODE"))
    args = ap.parse_args()
    sizes = (args.width, args.layers, args.batch, args.every)
    if args.child:
        child(*args.child, *sizes)
        return
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), JAX_PLATFORMS="cpu",
               TAPEGRAD_COMPILATION_CACHE="off")
    print(f"MLP of {args.layers} Linear({args.width}, {args.width})+Tanh blocks, batch {args.batch}, "
          f"a checkpoint region every {args.every} blocks; peak = peak RSS minus RSS before the first step")
    print(f"{'side':9} {'mode':11} {'peak MiB':>9} {'step s':>7}")
    for side in ("torch", "tapegrad"):
        for mode in ("plain", "checkpoint"):
            out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", side, mode,
                                  "--width", str(args.width), "--layers", str(args.layers),
                                  "--batch", str(args.batch), "--every", str(args.every)],
                                 env=env, capture_output=True, text=True, check=True)
            peak, seconds = out.stdout.split()[-2:]
            print(f"{side:9} {mode:11} {float(peak):9.0f} {float(seconds):7.2f}")


if __name__ == "__main__":
    main()
