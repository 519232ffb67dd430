"""A torchrun-like launcher: `python -m tapegrad.distributed.run --nproc-per-node N script.py args...`.

Starts N processes of the script on this node with PyTorch's env:// variables (MASTER_ADDR, MASTER_PORT,
RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK), waits for them, and exits with the first
failing worker's exit code (stopping the others), or 0. Several nodes: run it on each with --nnodes and
its --node-rank, all naming node 0 as --master-addr.
"""
import argparse
import os
import subprocess
import sys
import time


def parse_args(argv):
    p = argparse.ArgumentParser(prog="python -m tapegrad.distributed.run",
                                description="Start several processes of a training script (as torchrun).")
    p.add_argument("--nproc-per-node", "--nproc_per_node", dest="nproc_per_node", type=int, default=1)
    p.add_argument("--nnodes", type=int, default=1)
    p.add_argument("--node-rank", "--node_rank", dest="node_rank", type=int, default=0)
    p.add_argument("--master-addr", "--master_addr", dest="master_addr", default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", dest="master_port", type=int, default=29500)
    p.add_argument("--standalone", action="store_true", help="one node on this host (the defaults already are)")
    p.add_argument("-m", "--module", action="store_true", help="run the script argument as a module (python -m)")
    p.add_argument("--no-python", "--no_python", dest="no_python", action="store_true",
                   help="run the script argument as a program, not with python")
    p.add_argument("script", help="the training script (or module with -m, program with --no-python)")
    p.add_argument("script_args", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    if args.nproc_per_node < 1 or args.nnodes < 1 or not 0 <= args.node_rank < args.nnodes:
        p.error("need --nproc-per-node >= 1, --nnodes >= 1 and 0 <= --node-rank < --nnodes")
    return args


def worker_env(args, local_rank):
    env = dict(os.environ)
    env.update(MASTER_ADDR=args.master_addr, MASTER_PORT=str(args.master_port),
               RANK=str(args.node_rank * args.nproc_per_node + local_rank), LOCAL_RANK=str(local_rank),
               WORLD_SIZE=str(args.nnodes * args.nproc_per_node), LOCAL_WORLD_SIZE=str(args.nproc_per_node),
               GROUP_RANK=str(args.node_rank), ROLE_RANK=str(args.node_rank * args.nproc_per_node + local_rank))
    return env


def command(args):
    if args.no_python:
        return [args.script] + args.script_args
    return [sys.executable, "-u"] + (["-m"] if args.module else []) + [args.script] + args.script_args


def launch(args):
    """Run the workers; the exit code of the first that failed, or 0."""
    procs = [subprocess.Popen(command(args), env=worker_env(args, r)) for r in range(args.nproc_per_node)]
    try:
        while True:
            codes = [p.poll() for p in procs]
            failed = [c for c in codes if c not in (None, 0)]
            if failed or all(c == 0 for c in codes):
                break
            time.sleep(0.05)
    except KeyboardInterrupt:
        failed = [130]
    for p in procs:   # a failed worker leaves the others waiting in a collective: stop them
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            p.kill()
    if failed:
        rank = next((i for i, p in enumerate(procs) if p.returncode == failed[0]), None)
        print(f"tapegrad.distributed.run: worker {rank} failed with exit code {failed[0]}", file=sys.stderr)
        return failed[0] if failed[0] > 0 else 1
    return 0


def main(argv=None):
    sys.exit(launch(parse_args(sys.argv[1:] if argv is None else argv)))


if __name__ == "__main__":
    main()
