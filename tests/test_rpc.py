"""tapegrad.distributed.rpc / autograd / optim / nn and tapegrad.futures against PyTorch.

tests/_rpc_worker.py runs three workers (trainer, ps, helper) over loopback: calls, RRefs and their
proxies, errors and timeouts, distributed autograd across two and three workers, a model-parallel
training with RemoteModule and DistributedOptimizer, and @async_execution batching. The same script
under torchrun with PyTorch's RPC (TensorPipe) is the oracle; the gradients and the training are also
checked against plain PyTorch autograd in this process.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tapegrad
from _gloo import finish_oracle, free_port
from conftest import require

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORKER = os.path.join(HERE, "_rpc_worker.py")


# ---- futures, in one process ------------------------------------------------------------------------

def _future_story(futures):
    """The same Future calls in either library; what each returns or raises."""
    Future, out = futures.Future, {}
    f = Future()
    out["done_before"] = f.done()
    f.set_result(3)
    try:
        f.set_result(4)
    except RuntimeError as e:
        out["twice"] = str(e)
    chained = f.then(lambda fut: fut.value() + 1)
    out["then"] = [chained.wait(), chained.done(), f.value()]
    g = Future()
    failing = g.then(lambda fut: 1 / 0)
    g.set_result(1)
    try:
        failing.wait()
    except Exception as e:
        out["callback_error"] = [type(e).__name__, str(e).splitlines()[0]]
    e = Future()
    e.set_exception(ValueError("boom"))
    for name, call in (("wait", e.wait), ("value", e.value)):
        try:
            call()
        except ValueError as exc:
            out["exception_" + name] = str(exc)
    out["exception_done"] = e.done()
    try:
        Future().set_exception("x")
    except AssertionError as exc:
        out["not_exception"] = str(exc)
    seen = []
    k = Future()
    k.add_done_callback(lambda fut: seen.append(fut.value()))
    k.set_result(9)
    k.add_done_callback(lambda fut: seen.append("at once"))
    out["callbacks"] = seen
    out["collect_all"] = [x.wait() for x in futures.collect_all([f, chained]).wait()]
    out["wait_all"] = futures.wait_all([f, chained])
    for name, fn in (("wait_all_error", lambda: futures.wait_all([f, e])),
                     ("collect_all_error", lambda: futures.collect_all([f, e]).wait())):
        try:
            fn()
        except ValueError as exc:
            out[name] = str(exc)
    return out


def test_futures_match_torch():
    torch = require("torch")
    import torch.futures
    assert _future_story(tapegrad.futures) == _future_story(torch.futures)


def test_calls_before_init_rpc_raise_as_torch():
    rpc, dist_autograd = tapegrad.distributed.rpc, tapegrad.distributed.autograd
    for call in (lambda: rpc.rpc_sync("w", tapegrad.add, (1, 2)), rpc.get_worker_info, rpc.shutdown):
        with pytest.raises(RuntimeError, match="RPC has not been initialized"):
            call()
    with pytest.raises(RuntimeError, match="Need to initialize distributed autograd"):
        with dist_autograd.context():
            pass
    with pytest.raises(RuntimeError, match="Could not find autograd context with id: 5"):
        dist_autograd.get_gradients(5)
    with pytest.raises(ValueError, match="Could not parse remote_device"):
        tapegrad.distributed.nn.RemoteModule("worker1", tapegrad.nn.Linear, (2, 2))


def test_one_worker_calls_itself():
    """world_size 1 in this process: calls, RRefs and distributed autograd over the loopback to itself."""
    torch = require("torch")
    rpc, dist_autograd = tapegrad.distributed.rpc, tapegrad.distributed.autograd
    options = rpc.TensorPipeRpcBackendOptions(init_method=f"tcp://127.0.0.1:{free_port()}", num_worker_threads=4)
    rpc.init_rpc("solo", rank=0, world_size=1, rpc_backend_options=options)
    try:
        with pytest.raises(RuntimeError, match="RPC is already initialized"):
            rpc.init_rpc("again", rank=0, world_size=1, rpc_backend_options=options)
        assert rpc.rpc_sync("solo", tapegrad.add, args=(tapegrad.ones(2), 1)).tolist() == [2.0, 2.0]
        rref = rpc.remote(0, tapegrad.mul, args=(tapegrad.ones(2), 3))
        assert rref.is_owner() and rref.to_here().tolist() == [3.0, 3.0] and rref.local_value().tolist() == [3.0, 3.0]
        w = tapegrad.tensor([1.0, -2.0, 3.0], requires_grad=True)
        with dist_autograd.context() as cid:
            y = rpc.rpc_sync(rpc.get_worker_info(), tapegrad.sin, args=(w * w,))
            dist_autograd.backward(cid, [(y * w).sum()])
            got = dist_autograd.get_gradients(cid)[w]
            y = rpc.rpc_sync("solo", tapegrad.sin, args=(w * w,))   # a second pass adds to the context
            dist_autograd.backward(cid, [(y * w).sum()])
            twice = dist_autograd.get_gradients(cid)[w]
        assert w.grad is None
        ref = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
        (torch.sin(ref * ref) * ref).sum().backward()
        np.testing.assert_allclose(got.numpy(), ref.grad.numpy(), rtol=1e-6)
        np.testing.assert_allclose(twice.numpy(), 2 * ref.grad.numpy(), rtol=1e-6)
    finally:
        rpc.shutdown()
    with pytest.raises(RuntimeError, match="RPC has not been initialized"):
        rpc.shutdown()


# ---- three workers, against torchrun with PyTorch's RPC -----------------------------------------

def _launch(launcher, out, lib):
    env = dict(os.environ, DIST_LIB=lib, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMP_NUM_THREADS="1", JAX_PLATFORMS="cpu")
    cmd = [sys.executable, "-m", launcher, "--nproc-per-node", "3", "--master-port", str(free_port()), WORKER, out]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def _finish(proc, out):
    try:
        text, _ = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)   # the launcher and its workers
        raise
    assert proc.returncode == 0, text[-4000:]
    with open(os.path.join(out, "results.json")) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One launch per library, side by side."""
    require("torch")
    ours_dir, theirs_dir = str(tmp_path_factory.mktemp("tapegrad")), str(tmp_path_factory.mktemp("torch"))
    ours = _launch("tapegrad.distributed.run", ours_dir, "tapegrad")
    theirs = _launch("torch.distributed.run", theirs_dir, "torch")
    try:
        return _finish(ours, ours_dir), finish_oracle(_finish, theirs, theirs_dir,
                                                      lambda d: _launch("torch.distributed.run", d, "torch"))
    finally:
        for proc in (ours, theirs):
            if proc.poll() is None:
                os.killpg(proc.pid, 9)


def _assert_close(mine, ref, path=""):
    if isinstance(ref, dict):
        assert sorted(mine) == sorted(ref), path
        for key in ref:
            _assert_close(mine[key], ref[key], f"{path}.{key}")
    elif isinstance(ref, list) and _numeric(ref):
        np.testing.assert_allclose(np.array(mine, dtype=np.float64), np.array(ref, dtype=np.float64), rtol=1e-5,
                                   atol=1e-6, err_msg=path)
    elif isinstance(ref, list):   # mixed entries, or tensors of several shapes
        assert isinstance(mine, list) and len(mine) == len(ref), path
        for i, (a, b) in enumerate(zip(mine, ref)):
            _assert_close(a, b, f"{path}[{i}]")
    elif isinstance(ref, float):
        np.testing.assert_allclose(mine, ref, rtol=1e-5, atol=1e-6, err_msg=path)
    else:
        assert mine == ref, path


def _numeric(value):
    """A list that is one float array (no strings or bools, a regular shape)."""
    try:
        return np.array(value).dtype.kind in "if"
    except ValueError:
        return False


def test_calls_rrefs_and_proxies_match_torch(runs):
    ours, theirs = runs
    _assert_close(ours["basics"], theirs["basics"])


def test_errors_match_torch(runs):
    ours, theirs = runs
    mine, ref = dict(ours["errors"]), dict(theirs["errors"])
    # PyTorch rebuilds a user-defined exception class as RuntimeError; tapegrad keeps the class
    assert mine.pop("custom") == ["WorkerError", ref.pop("custom")[1]]
    assert mine == ref
    assert ref["value"][0] == "ValueError" and all(ref[k] is True for k in ("unknown", "timeout", "remote_error"))


def test_distributed_autograd_matches_torch(runs):
    ours, theirs = runs
    _assert_close(ours["autograd"], theirs["autograd"])


def test_distributed_autograd_matches_one_process_autograd(runs):
    torch = require("torch")
    ours, _ = runs
    x, w = _array(torch, (2, 3), 7).requires_grad_(), _array(torch, (3, 4), 1).requires_grad_()
    y = torch.tanh(x @ w)
    ((y * y).sum() + x.sum()).backward()
    got = ours["autograd"]
    np.testing.assert_allclose(got["x_grad"], x.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["w_grad"], w.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["w_grad_twice"], 3 * w.grad.numpy(), rtol=1e-5, atol=1e-6)
    v = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    w2 = torch.tensor([2.0, -1.0, 0.5], requires_grad=True)
    w3 = torch.tensor([1.5, 3.0, -2.0], requires_grad=True)
    z = torch.sin(v * v * w2 * w3) * w2
    (z * z).sum().backward()
    for mine, ref in zip(got["chain"], (v.grad, w2.grad, w3.grad)):
        np.testing.assert_allclose(mine, ref.numpy(), rtol=1e-5, atol=1e-6)


def test_remote_module_and_distributed_optimizer_match_torch(runs):
    ours, theirs = runs
    _assert_close(ours["training"], theirs["training"])
    assert ours["training"]["local_grads_untouched"] == [False, False]


def _array(torch, shape, seed):
    return torch.tensor(np.random.default_rng(seed).standard_normal(shape), dtype=torch.float32)


def _linear(torch, n_in, n_out, seed):
    """tests/_rpc_worker.py's make_linear, in plain PyTorch."""
    layer = torch.nn.Linear(n_in, n_out)
    with torch.no_grad():
        layer.weight.copy_(_array(torch, (n_out, n_in), seed))
        layer.bias.copy_(_array(torch, (n_out,), seed + 1))
    return layer


def test_model_parallel_training_matches_one_process(runs):
    torch = require("torch")
    ours, _ = runs
    first, second = _linear(torch, 4, 3, 20), _linear(torch, 3, 2, 30)
    opt = torch.optim.SGD(list(first.parameters()) + list(second.parameters()), lr=0.1, momentum=0.9)
    x, y = _array(torch, (5, 4), 40), _array(torch, (5, 2), 41)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(second(torch.tanh(first(x))), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    got = ours["training"]
    np.testing.assert_allclose(got["losses"], losses, rtol=1e-5)
    for mine, ref in zip(got["remote_params"] + got["local_params"], list(first.parameters()) + list(second.parameters())):
        np.testing.assert_allclose(mine, ref.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_pipeline_through_rrefs_matches_torch(runs):
    torch = require("torch")
    ours, theirs = runs
    _assert_close(ours["pipeline"], theirs["pipeline"])
    first, second = _linear(torch, 4, 6, 50), _linear(torch, 6, 2, 60)
    opt = torch.optim.SGD(list(first.parameters()) + list(second.parameters()), lr=0.05)
    x, y = _array(torch, (6, 4), 70), _array(torch, (6, 2), 71)
    losses = []
    for _ in range(2):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(torch.relu(second(torch.relu(first(x)))), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    np.testing.assert_allclose(ours["pipeline"]["losses"], losses, rtol=1e-5)
    for mine, ref in zip(ours["pipeline"]["params"], list(first.parameters()) + list(second.parameters())):
        np.testing.assert_allclose(mine, ref.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_async_execution_matches_torch(runs):
    ours, theirs = runs
    assert ours["async"] == theirs["async"] == {"batched": [[3.0, 3.0]] * 2, "proxy": [[90.0, 90.0]] * 2}
