"""PyTorch's default process group in this one process (gloo, world size 1): the oracle of the tests of
tapegrad.distributed's single-process API (DTensor, FSDP, distributed checkpoints)."""
import contextlib
import importlib
import os
import socket

from conftest import require


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def oracle_aborted(error):
    """Whether a torchrun launch failed because PyTorch's own gloo ranks aborted as they exited ("terminate
    called without an active exception", SIGABRT, exit code -6): the oracle crashed, not tapegrad."""
    text = str(error)
    return "SIGABRT" in text or "exitcode: -6" in text


def finish_oracle(finish, proc, out, relaunch):
    """finish(proc, out) for PyTorch's torchrun launch; if its ranks aborted as they exited, relaunch(out2)
    once into a fresh directory and finish that (a second crash fails)."""
    try:
        return finish(proc, out)
    except AssertionError as e:
        if not oracle_aborted(e):
            raise
    again = out.rstrip("/") + "-again"
    os.makedirs(again, exist_ok=True)
    return finish(relaunch(again), again)


@contextlib.contextmanager
def one_process_group(*modules):
    """torch, with `modules` (torch.distributed.* names) imported and a one-process group running."""
    torch = require("torch")
    import torch.distributed as dist
    for name in modules:
        importlib.import_module(name)
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), RANK="0", WORLD_SIZE="1")
    dist.init_process_group("gloo")
    try:
        yield torch
    finally:
        dist.destroy_process_group()
