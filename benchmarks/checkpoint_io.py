"""Checkpoint save/load of a large state_dict: tapegrad vs PyTorch, wall time and peak resident memory.

    python benchmarks/checkpoint_io.py [--mib 400] [--dir /tmp] [--repeat 3]

Not part of the default catalog (it writes several hundred MiB to disk). Each measurement runs in a
fresh process that imports only its own library, so its peak RSS (getrusage) minus its RSS before the
load is what that load costs. "touch" reads every element once afterwards (NumPy sum), so a
memory-mapped load pays its reads there. Each figure is the fastest of --repeat fresh processes.
"""
import argparse
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
TENSOR_ELEMENTS = 1 << 20   # 4 MiB float32 tensors, as the layers of a mid-sized model


def rss_mib():
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20


def peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(side, action, path, mib):
    import numpy as np
    lib = __import__("torch" if side == "torch" else "tapegrad")
    as_numpy = (lambda t: t.numpy()) if side == "torch" else (lambda t: np.asarray(t._value))
    before = rss_mib()
    start = time.perf_counter()
    if action == "save":
        n = mib * 2 ** 20 // (4 * TENSOR_ELEMENTS)
        rng = np.random.default_rng(0)
        sd = {f"layer{i}.weight": lib.tensor(rng.standard_normal(TENSOR_ELEMENTS, np.float32)) for i in range(n)}
        before = rss_mib()
        start = time.perf_counter()
        lib.save(sd, path)
        print(f"{time.perf_counter() - start:.3f} {peak_mib() - before:.0f} 0")
        return
    sd = lib.load(path, mmap=action == "load_mmap", weights_only=True)
    loaded = time.perf_counter() - start
    peak_load = peak_mib() - before
    total = sum(float(as_numpy(t).sum(dtype=np.float64)) for t in sd.values())
    touched = time.perf_counter() - start
    assert total == total
    print(f"{loaded:.3f} {peak_load:.0f} {touched:.3f}")


def run(side, action, path, mib, repeat):
    """The fastest of `repeat` fresh processes (the machine may be shared: the minimum is the least noisy)."""
    return min((run_once(side, action, path, mib) for _ in range(repeat)), key=lambda r: r[0])


def run_once(side, action, path, mib):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", side, action, path, str(mib)],
                         env=env, capture_output=True, text=True, check=True)
    return [float(x) for x in out.stdout.split()[-3:]]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=400)
    ap.add_argument("--dir", default="/tmp")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--child", nargs=4, metavar=("SIDE", "ACTION", "PATH", "MIB"))
    args = ap.parse_args()
    if args.child:
        side, action, path, mib = args.child
        child(side, action, path, int(mib))
        return
    paths = {side: os.path.join(args.dir, f"checkpoint_io_{side}_{os.getpid()}.pt") for side in ("torch", "tapegrad")}
    try:
        print(f"state_dict of {args.mib} MiB float32 ({TENSOR_ELEMENTS * 4 >> 20} MiB tensors); "
              "peak = peak RSS minus RSS before, MiB")
        print(f"{'side':9} {'action':10} {'file from':9} {'seconds':>8} {'peak':>6} {'+touch s':>9}")
        for side in ("torch", "tapegrad"):
            secs, peak, _ = run(side, "save", paths[side], args.mib, args.repeat)
            print(f"{side:9} {'save':10} {'-':9} {secs:8.2f} {peak:6.0f} {'':>9}")
        for writer in ("torch", "tapegrad"):
            for side in ("torch", "tapegrad"):
                for action in ("load", "load_mmap"):
                    secs, peak, touched = run(side, action, paths[writer], args.mib, args.repeat)
                    print(f"{side:9} {action:10} {writer:9} {secs:8.2f} {peak:6.0f} {touched:9.2f}")
    finally:
        for p in paths.values():
            if os.path.exists(p):
                os.remove(p)


if __name__ == "__main__":
    main()
