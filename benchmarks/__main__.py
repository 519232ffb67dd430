"""tapegrad vs PyTorch eager vs hand-written jax.jit, side by side; see docs/benchmarks.md.

    python -m benchmarks                    # full run; writes benchmarks/results/<device>.json and .md,
                                            # and a plot per workload in benchmarks/results/plots/<device>/
    python -m benchmarks --quick            # every workload, small and under short budgets; writes nothing
    python -m benchmarks --only mlp_sgd,generate_40    # chosen workloads (a full run merges them into
                                                       # the results file of this device)
    python -m benchmarks --list             # the workloads and their targets
    python -m benchmarks --device cuda      # on a GPU: PyTorch eager on CUDA, tapegrad and jax.jit on JAX's GPU

Each workload runs in a process of its own (all of its sides in that one process, interleaved where it
times steady steps), so no workload inherits another's compiled programs and a step that overruns its
budget can be stopped. First-step and memory workloads use a fresh process per side. --quick runs the
other workloads in this process to save start-up time.
"""
import argparse
import os
import subprocess
import sys
import time
import traceback

from . import catalog, report
from .harness import Harness, parse_events, stdout_emitter

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


# ---- one workload, inside its process -----------------------------------------------------------------

def budget_of(workload, quick, override=None):
    return override or (workload.quick_budget_s if quick else workload.budget_s)


def run_workload_here(workload, quick, sides, emit, watchdog=False, budget=None):
    """Run one workload's function in this process, reporting through emit."""
    import importlib
    from .harness import warm_runtime
    h = Harness(quick, budget_of(workload, quick, budget), sides, emit)
    if watchdog:
        h.start_watchdog()
    warm_runtime(sides)
    module = importlib.import_module(f".{workload.family}", __package__)
    getattr(module, f"run_{workload.id}")(h)


def worker_main(args):
    workload = catalog.BY_ID[args.worker]
    sides = [args.side] if args.side else list(workload.sides)
    try:
        run_workload_here(workload, args.quick, sides, stdout_emitter, watchdog=True, budget=args.budget)
    except Exception as e:  # reported as the workload's error; the driver goes on with the next one
        stdout_emitter({"ev": "error", "error": f"{type(e).__name__}: {e}",
                        "traceback": traceback.format_exc()[-3000:]})
        sys.exit(1)


# ---- the driver ---------------------------------------------------------------------------------------

def _subprocess_events(workload, quick, budget, side=None):
    cmd = [sys.executable, "-m", "benchmarks", "--worker", workload.id] + (["--side", side] if side else []) \
        + (["--quick"] if quick else []) + (["--budget", str(budget)] if budget else [])
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    # first-sight figures must not be served from a previous run's on-disk compilation cache
    env.setdefault("JAX_ENABLE_COMPILATION_CACHE", "false")
    budget = budget_of(workload, quick, budget)
    n_sides = 1 if side else len(workload.sides)
    hard_limit = budget * 2.5 * (len(workload.measures) + 1) * n_sides + 120
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=hard_limit)
        events, rc, err = parse_events(p.stdout), p.returncode, p.stderr
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        events, rc, err = parse_events(out), None, f"ended after the hard limit of {hard_limit:.0f} s"
    if rc not in (0, 3) and not any(ev["ev"] == "error" for ev in events):
        events.append({"ev": "error", "error": f"worker exited with {rc}", "traceback": (err or "")[-3000:]})
    return events


def collect(workload, quick, isolate, budget=None):
    """Run a workload (in a subprocess, one per side, or here) and return its events."""
    if workload.process_per_side:
        events = []
        for side in workload.sides:
            events += _subprocess_events(workload, quick, budget, side)
        return events
    if isolate or not quick:
        return _subprocess_events(workload, quick, budget)
    events = []
    try:
        run_workload_here(workload, quick, list(workload.sides), events.append, budget=budget)
    except Exception as e:
        events.append({"ev": "error", "error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-3000:]})
    return events


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes, short budgets; writes no results")
    ap.add_argument("--only", help="comma-separated workload ids (see --list)")
    ap.add_argument("--list", action="store_true", help="list the workloads and exit")
    ap.add_argument("--isolate", action="store_true", help="under --quick, still one process per workload")
    ap.add_argument("--out", help="directory for the results files (default benchmarks/results; "
                                  "--quick writes only when this is given)")
    ap.add_argument("--budget", type=float, help="seconds per side and measure, for every workload "
                                                  "(default: each workload's own, see docs/benchmarks.md)")
    ap.add_argument("--device", default="cpu", help="where the PyTorch-API sides create tensors: cpu (default) "
                                                     "or cuda (jax.jit always uses JAX's default device)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--side", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    # Cold figures: no workload may load programs an earlier benchmark run left in tapegrad's disk cache
    # (the worker processes inherit this).
    os.environ.setdefault("TAPEGRAD_COMPILATION_CACHE", "off")
    os.environ["TAPEGRAD_BENCH_DEVICE"] = args.device   # read by sides.py in the worker processes
    if args.worker:
        return worker_main(args)
    if args.list:
        for w in catalog.WORKLOADS:
            targets = "; ".join(f"{m.id}: {m.target.describe() if m.target else 'reported'}" for m in w.measures)
            print(f"{w.id:24} {w.title}  [{targets}]")
        return
    chosen = catalog.WORKLOADS
    if args.only:
        names = [n.strip() for n in args.only.split(",") if n.strip()]
        unknown = [n for n in names if n not in catalog.BY_ID]
        if unknown:
            ap.error(f"unknown workload(s) {', '.join(unknown)}; python -m benchmarks --list shows them")
        chosen = [catalog.BY_ID[n] for n in names]
    device = report.device_name()
    print(f"device: {device}; mode: {'quick' if args.quick else 'full'}; workloads: {len(chosen)}", flush=True)
    from tqdm import tqdm
    results, t0 = [], time.perf_counter()
    bar = tqdm(chosen, desc="benchmarks", unit="workload", file=sys.stderr)
    for w in bar:
        bar.set_postfix_str(w.id)
        started = time.perf_counter()
        res = report.assemble(w, collect(w, args.quick, args.isolate, args.budget))
        res["wall_s"] = time.perf_counter() - started
        results.append(res)
        bar.write(report.format_workload(res), file=sys.stdout)
    bar.close()
    print(f"total {time.perf_counter() - t0:.0f} s", flush=True)
    if args.out or not args.quick:
        from . import plots
        out_dir = args.out or os.path.join(HERE, "results")
        path = report.write(results, out_dir, device, quick=args.quick, merge=bool(args.only))
        folder = plots.write_all(path)
        print(f"wrote {os.path.relpath(path, ROOT)} and .md, and the plots in {os.path.relpath(folder, ROOT)}")


if __name__ == "__main__":
    main()
