"""Join scenarios of tests/test_join.py, written once for either library (`lib` is tapegrad or torch).

Run as a script (one rank of tapegrad's launcher or of torchrun; `DIST_LIB=tapegrad` picks tapegrad) it writes
<out>/rank<r>.json; tests/test_join.py also calls `run_all` in one process, in a group of one.
"""
import importlib
import json
import os
import sys

import numpy as np


def _model(lib, rank):
    """A small net with a BatchNorm (buffers DDP broadcasts); each rank starts from its own weights."""
    model = lib.nn.Sequential(lib.nn.Linear(4, 6), lib.nn.BatchNorm1d(6), lib.nn.Tanh(), lib.nn.Linear(6, 2))
    init = np.random.default_rng(100 + rank)
    with lib.no_grad():
        for p in model.parameters():
            p.copy_(lib.tensor(init.standard_normal(tuple(p.shape)), dtype=lib.float32))
    return model


def _batches(lib, rank, n):
    rng = np.random.default_rng(10 + rank)
    return [(lib.tensor(rng.standard_normal((6, 4)), dtype=lib.float32),
             lib.tensor(rng.standard_normal((6, 2)), dtype=lib.float32)) for _ in range(n)]


def ddp_uneven(lib, rank, counts, **join_kwargs):
    """DDP training where rank r has counts[r] batches, under ddp.join(...)."""
    ddp = lib.nn.parallel.DistributedDataParallel(_model(lib, rank))
    opt = lib.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    losses = []
    with ddp.join(**join_kwargs):
        for x, y in _batches(lib, rank, counts[rank]):
            opt.zero_grad()
            loss = lib.nn.functional.mse_loss(ddp(x), y)
            loss.backward()
            opt.step()
            losses.append(loss.item())
    module = ddp.module
    return {"losses": losses, "params": [p.tolist() for p in module.parameters()],
            "grads": [p.grad.tolist() for p in module.parameters()],
            "buffers": [b.tolist() for b in module.buffers()], "authoritative": ddp._authoritative_rank}


def ddp_accumulate(lib, rank, counts):
    """find_unused_parameters and no_sync under Join: a step every second batch, the first one's gradients kept
    local, so the joined rank learns each iteration whether a gradient collective follows."""
    class WithUnused(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.body, self.extra = _model(lib, rank), lib.nn.Linear(2, 2)   # extra is never called
            with lib.no_grad():
                self.extra.weight.fill_(0.5)
                self.extra.bias.fill_(-0.5)

        def forward(self, x):
            return self.body(x)

    ddp = lib.nn.parallel.DistributedDataParallel(WithUnused(), find_unused_parameters=True)
    opt = lib.optim.SGD(ddp.parameters(), lr=0.1)
    with ddp.join():
        for i, (x, y) in enumerate(_batches(lib, rank, counts[rank])):
            if i % 2 == 0:
                with ddp.no_sync():
                    lib.nn.functional.mse_loss(ddp(x), y).backward()
            else:
                lib.nn.functional.mse_loss(ddp(x), y).backward()
                opt.step()
                opt.zero_grad()
    module = ddp.module
    return {"params": [p.tolist() for p in module.parameters()],
            "grads": [None if p.grad is None else p.grad.tolist() for p in module.parameters()],
            "buffers": [b.tolist() for b in module.buffers()]}


def ddp_eval_forward(lib, rank, counts):
    """tapegrad only: a forward without grad under Join tells the joined rank that no gradient sync follows
    (PyTorch's joined ranks would wait for one)."""
    ddp = lib.nn.parallel.DistributedDataParallel(_model(lib, rank))
    opt = lib.optim.SGD(ddp.parameters(), lr=0.1)
    with ddp.join():
        for x, y in _batches(lib, rank, counts[rank]):
            opt.zero_grad()
            lib.nn.functional.mse_loss(ddp(x), y).backward()
            opt.step()
            with lib.no_grad():
                ddp(x)
    return {"params": [p.tolist() for p in ddp.module.parameters()]}


def ddp_throw(lib, rank, counts):
    """throw_on_early_termination: every rank raises once one has run out (the joined one with its own text)."""
    ddp = lib.nn.parallel.DistributedDataParallel(_model(lib, rank))
    steps = 0
    try:
        with ddp.join(throw_on_early_termination=True):
            for x, y in _batches(lib, rank, counts[rank]):
                lib.nn.functional.mse_loss(ddp(x), y).backward()
                steps += 1
    except RuntimeError as e:
        return {"steps": steps, "error": str(e)}
    return {"steps": steps, "error": None}


def custom_joinables(lib, rank, counts):
    """Two joinables whose hooks log their calls; each iteration's all-reduce counts the ranks still going."""
    algorithms = importlib.import_module(lib.__name__ + ".distributed.algorithms")
    Join, Joinable, JoinHook = algorithms.Join, algorithms.Joinable, algorithms.JoinHook
    dist = lib.distributed
    log = []

    class Hook(JoinHook):
        def __init__(self, name, kwargs):
            self.name = name
            log.append([name, "hook", sorted(kwargs.items())])

        def main_hook(self):
            log.append([self.name, "main"])
            if self.name == "b":
                dist.all_reduce(lib.zeros(1))   # shadows b's all-reduce of a 1

        def post_hook(self, is_last_joiner):
            log.append([self.name, "post", is_last_joiner])

    class Counter(Joinable):
        def __init__(self, name):
            super().__init__()
            self.name = name

        def step(self):
            work = Join.notify_join_context(self)
            if work is not None:
                work.wait()
                log.append([self.name, "not joined", work.result()[0].item()])
            if self.name == "b":   # one all-reduce per iteration, made by the last joinable
                going = lib.ones(1)
                dist.all_reduce(going)
                log.append([self.name, "going", going.item()])

        def join_hook(self, **kwargs):
            return Hook(self.name, kwargs)

        join_device = property(lambda self: lib.device("cpu"))
        join_process_group = property(lambda self: dist.group.WORLD)

    a, b = Counter("a"), Counter("b")
    configs = [list(j._join_config) for j in (a, b)]
    with Join([a, b], mode="record"):
        configs += [list(j._join_config) for j in (a, b)]
        for _ in range(counts[rank]):
            a.step()
            b.step()
    return {"log": log, "configs": configs}


def run_all(lib, rank):
    return {"even_divisor": ddp_uneven(lib, rank, (4, 2)),
            "effective_divisor": ddp_uneven(lib, rank, (2, 3), divide_by_initial_world_size=False),
            "throw": ddp_throw(lib, rank, (1, 3)),
            "custom": custom_joinables(lib, rank, (2, 4)),
            "accumulate": ddp_accumulate(lib, rank, (1, 4))}


def main():
    if os.environ.get("DIST_LIB") == "tapegrad":
        import tapegrad as lib
    else:
        import torch as lib
        import torch.distributed.algorithms  # noqa: F401
    lib.distributed.init_process_group("gloo")
    rank = lib.distributed.get_rank()
    result = run_all(lib, rank)
    if lib.__name__ == "tapegrad":
        result["eval_forward"] = ddp_eval_forward(lib, rank, (1, 3))
    with open(os.path.join(sys.argv[1], f"rank{rank}.json"), "w") as f:
        json.dump(result, f)
    lib.distributed.barrier()   # no rank tears its connections down while another still uses them
    lib.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
