"""One worker of tests/test_rpc.py: the same RPC script under tapegrad's launcher and under torchrun.

Three workers: "trainer" (rank 0) drives the calls, "ps" (rank 1) and "helper" (rank 2) serve them.
`DIST_LIB=tapegrad` imports tapegrad as torch, otherwise PyTorch; the trainer writes <out>/results.json.
"""
import json
import os
import sys
import threading
import time

import numpy as np

if os.environ.get("DIST_LIB") == "tapegrad":
    import tapegrad as torch
    import tapegrad.distributed.autograd as dist_autograd
    import tapegrad.distributed.rpc as rpc
else:
    import torch
    import torch.distributed.autograd as dist_autograd
    import torch.distributed.nn  # noqa: F401
    import torch.distributed.optim  # noqa: F401
    import torch.distributed.rpc as rpc
DistributedOptimizer = torch.distributed.optim.DistributedOptimizer
RemoteModule = torch.distributed.nn.RemoteModule
Future, wait_all, collect_all = torch.futures.Future, torch.futures.wait_all, torch.futures.collect_all


def array(shape, seed):
    return torch.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=torch.float32)


# ---- what the servers run ------------------------------------------------------------------------

class WorkerError(Exception):
    pass


def fail(kind):
    if kind == "value":
        raise ValueError("bad value 3")
    raise WorkerError("the worker refused")


class Counter:
    def __init__(self, start):
        self.total = start.clone()

    def add(self, t):
        self.total = self.total + t
        return self.total

    def get(self):
        return self.total


class BatchSum:
    """Answers each caller once `size` calls have arrived, with the sum of their tensors."""

    def __init__(self, size):
        self.size, self.lock = size, threading.Lock()
        self.parts, self.future = [], Future()

    @staticmethod
    @rpc.functions.async_execution
    def add(rref, t):
        self = rref.local_value()
        with self.lock:
            self.parts.append(t)
            fut = self.future
            if len(self.parts) == self.size:
                total = sum(self.parts[1:], self.parts[0])
                self.parts, self.future = [], Future()
                fut.set_result(total)
        return fut

    @rpc.functions.async_execution
    def add_scaled(self, t, k):
        return BatchSum.add(rpc.RRef(self), t).then(lambda f: f.value() * k)


SERVER = {}


def server_weight():
    if "w" not in SERVER:
        SERVER["w"] = array((3, 4), 1).requires_grad_()
    return SERVER["w"]


def ps_forward(x):
    return torch.tanh(x @ server_weight())


def ps_grads(context_id):
    return dist_autograd.get_gradients(context_id)[server_weight()]


def mul_on_helper(a, b):
    return a * b


def chain(x):
    """ps: x * w2 goes on to the helper, which multiplies by its own tensor."""
    SERVER["w2"] = torch.tensor([2.0, -1.0, 0.5], requires_grad=True)
    return rpc.rpc_sync("helper", helper_step, args=(x * SERVER["w2"],)) * SERVER["w2"]


def helper_step(h):
    SERVER["w3"] = torch.tensor([1.5, 3.0, -2.0], requires_grad=True)
    return torch.sin(h * SERVER["w3"])


def all_grads(context_id):
    """The parameter-server example's get_dist_gradients: the context's {tensor: grad} dict, sent back."""
    return {k.detach(): v for k, v in dist_autograd.get_gradients(context_id).items()}   # keys sent without autograd


def describe(t):
    return [t.requires_grad, t.is_leaf, t.tolist()]


def grads_of(name, context_id):
    return dist_autograd.get_gradients(context_id)[SERVER[name]]


def sum_of(rref):
    return rref.to_here().sum()


def make_linear(n_in, n_out, seed):
    layer = torch.nn.Linear(n_in, n_out)
    with torch.no_grad():
        layer.weight.copy_(array((n_out, n_in), seed))
        layer.bias.copy_(array((n_out,), seed + 1))
    return layer


class Shard:
    """A pipeline stage (PyTorch's pipeline example): its input arrives as an RRef, fetched here."""

    def __init__(self, n_in, n_out, seed):
        self.lock = threading.Lock()
        self.layer = make_linear(n_in, n_out, seed)

    def forward(self, x_rref):
        x = x_rref.to_here()
        with self.lock:
            return torch.relu(self.layer(x))

    def parameter_rrefs(self):
        return [rpc.RRef(p) for p in self.layer.parameters()]


def slow(seconds):
    time.sleep(seconds)
    return seconds


# ---- what the trainer checks ---------------------------------------------------------------------

def basics():
    out = {}
    x = torch.arange(4, dtype=torch.float32)
    out["rpc_sync"] = rpc.rpc_sync("ps", torch.add, args=(x, 3)).tolist()
    out["no_context"] = rpc.rpc_sync("ps", describe, args=(torch.ones(2, requires_grad=True),))
    out["library_function"] = rpc.rpc_sync("helper", torch.tanh, args=(x,)).tolist()
    out["kwargs"] = rpc.rpc_sync("ps", torch.sum, args=(x,), kwargs={"dim": 0}).item()
    fut = rpc.rpc_async("helper", torch.mul, args=(x, 2)).then(lambda f: f.value() + 1)
    out["then"] = fut.wait().tolist()
    futs = [rpc.rpc_async(name, torch.add, args=(x, i)) for i, name in enumerate(["ps", "helper", "trainer"])]
    out["wait_all"] = [t.tolist() for t in wait_all(futs)]
    out["collect_all"] = [f.value().tolist() for f in collect_all(futs).wait()]
    out["worker_info"] = [str(rpc.get_worker_info()), str(rpc.get_worker_info("helper")),
                          rpc.get_worker_info("ps").id, rpc.get_worker_info().name]
    rref = rpc.remote("ps", torch.add, args=(x, 10))
    out["remote"] = [rref.to_here().tolist(), rref.owner_name(), str(rref.owner()), rref.is_owner()]
    out["rref_as_argument"] = rpc.rpc_sync("helper", sum_of, args=(rref,)).item()
    local = rpc.RRef(x * 5)
    out["local_rref"] = [local.is_owner(), local.local_value().tolist(), rpc.rpc_sync("ps", sum_of, args=(local,)).item()]
    counter = rpc.remote("ps", Counter, args=(torch.ones(2),))
    counter.rpc_sync().add(torch.tensor([1.0, 2.0]))
    counter.rpc_async().add(torch.tensor([10.0, 20.0])).wait()
    out["proxies"] = [counter.remote().get().to_here().tolist(), counter.rpc_sync().get().tolist()]
    return out


def errors():
    out = {}
    for kind in ("value", "custom"):
        try:
            rpc.rpc_sync("ps", fail, args=(kind,))
        except Exception as e:
            out[kind] = [type(e).__name__, str(e).splitlines()[:2]]
    fut = rpc.rpc_async("helper", fail, args=("value",))
    try:
        fut.wait()
    except ValueError as e:
        out["async"] = str(e).splitlines()[1]
    try:
        rpc.rpc_sync("nobody", torch.add, args=(1, 2))
    except RuntimeError as e:
        out["unknown"] = "could not find destination name nobody" in str(e)
    try:
        rpc.rpc_sync("helper", slow, args=(1.0,), timeout=0.2)
    except RuntimeError as e:
        out["timeout"] = "RPC ran for more than set timeout" in str(e)
    bad = rpc.remote("ps", fail, args=("value",))
    try:
        bad.to_here()
    except ValueError as e:
        out["remote_error"] = "bad value 3" in str(e)
    return out


def distributed_autograd():
    out = {}
    x = array((2, 3), 7).requires_grad_()
    with dist_autograd.context() as cid:
        y = rpc.rpc_sync("ps", ps_forward, args=(x,))
        out["recv"] = [y.requires_grad, y.is_leaf]
        loss = (y * y).sum() + x.sum()
        dist_autograd.backward(cid, [loss], retain_graph=True)
        out["x_grad"] = dist_autograd.get_gradients(cid)[x].tolist()
        out["w_grad"] = rpc.rpc_sync("ps", ps_grads, args=(cid,)).tolist()
        dist_autograd.backward(cid, [loss * 2])   # accumulated in the context
        out["x_grad_twice"] = dist_autograd.get_gradients(cid)[x].tolist()
        out["w_grad_twice"] = rpc.rpc_sync("ps", ps_grads, args=(cid,)).tolist()
        out["dot_grad"] = x.grad is None
        out["grads_dict"] = [[k.tolist(), v.tolist()] for k, v in rpc.rpc_sync("ps", all_grads, args=(cid,)).items()]
        try:
            dist_autograd.backward(cid, [y])
        except RuntimeError as e:
            out["not_scalar"] = "all roots need to be scalar" in str(e)
    try:
        dist_autograd.get_gradients(cid)
    except RuntimeError as e:
        out["released"] = f"Could not find autograd context with id: {cid}" in str(e)
    v = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    with dist_autograd.context() as cid:   # trainer -> ps -> helper and back
        z = rpc.rpc_sync("ps", chain, args=(v * v,))
        dist_autograd.backward(cid, [(z * z).sum()])
        out["chain"] = [dist_autograd.get_gradients(cid)[v].tolist(),
                        rpc.rpc_sync("ps", grads_of, args=("w2", cid)).tolist(),
                        rpc.rpc_sync("helper", grads_of, args=("w3", cid)).tolist()]
    return out


def training():
    """Model parallel: a RemoteModule on ps, a local layer here, DistributedOptimizer over both."""
    remote = RemoteModule("ps/cpu", make_linear, args=(4, 3, 20))
    local = make_linear(3, 2, 30)
    params = remote.remote_parameters() + [rpc.RRef(p) for p in local.parameters()]
    opt = DistributedOptimizer(torch.optim.SGD, params, lr=0.1, momentum=0.9)
    x, y = array((5, 4), 40), array((5, 2), 41)
    losses = []
    for _ in range(3):
        with dist_autograd.context() as cid:
            loss = torch.nn.functional.mse_loss(local(torch.tanh(remote(x))), y)
            dist_autograd.backward(cid, [loss], retain_graph=True)
            opt.step(cid)
            losses.append(loss.item())
    halves = [remote.forward_async(x[:2]), remote.forward_async(x[2:])]
    return {"losses": losses, "remote_params": [p.to_here().tolist() for p in remote.remote_parameters()],
            "local_params": [p.tolist() for p in local.parameters()],
            "local_grads_untouched": [p.grad is not None for p in local.parameters()],
            "forward_async": [t.tolist() for t in wait_all(halves)]}


def pipeline():
    """Two stages on ps and helper, micro-batches passed as RRefs; autograd through to_here()."""
    p1 = rpc.remote("ps", Shard, args=(4, 6, 50))
    p2 = rpc.remote("helper", Shard, args=(6, 2, 60))
    params = p1.remote().parameter_rrefs().to_here() + p2.remote().parameter_rrefs().to_here()
    opt = DistributedOptimizer(torch.optim.SGD, params, lr=0.05)
    x, y = array((6, 4), 70), array((6, 2), 71)
    losses = []
    for _ in range(2):
        with dist_autograd.context() as cid:
            outs = [p2.rpc_async().forward(p1.remote().forward(rpc.RRef(xs))) for xs in x.split(3)]
            loss = torch.nn.functional.mse_loss(torch.cat(wait_all(outs)), y)
            dist_autograd.backward(cid, [loss], retain_graph=True)
            opt.step(cid)
            losses.append(loss.item())
    return {"losses": losses, "params": [p.to_here().tolist() for p in params]}


def async_execution():
    batch = rpc.remote("ps", BatchSum, args=(2,))
    futs = [rpc.rpc_async("ps", BatchSum.add, args=(batch, torch.full((2,), float(i + 1)))) for i in range(2)]
    batched = [t.tolist() for t in wait_all(futs)]   # before the next pair, which must not join this batch
    scaled = [batch.rpc_async().add_scaled(torch.full((2,), 10.0 * (i + 1)), 3) for i in range(2)]
    return {"batched": batched, "proxy": [t.tolist() for t in wait_all(scaled)]}


def main():
    rank = int(os.environ["RANK"])
    name = ["trainer", "ps", "helper"][rank]
    options = rpc.TensorPipeRpcBackendOptions(num_worker_threads=8, rpc_timeout=60)
    rpc.init_rpc(name, rank=rank, world_size=int(os.environ["WORLD_SIZE"]), rpc_backend_options=options)
    if rank == 0:
        results = {"autograd": distributed_autograd(), "training": training(), "pipeline": pipeline(),
                   "basics": basics(), "async": async_execution(), "errors": errors()}
        with open(os.path.join(sys.argv[1], "results.json"), "w") as f:
            json.dump(results, f)
    rpc.shutdown()


if __name__ == "__main__":
    main()
