"""tapegrad.distributed against torch.distributed: the same two-rank script under both launchers.

tests/_distributed_worker.py runs collectives and a small DDP training (DistributedSampler shares,
rank 0's weights broadcast, a no_sync micro-batch step) on two processes over loopback, each with four
simulated CPU devices; the same script under PyTorch's torchrun (gloo) is the oracle, and a one-process
full-batch PyTorch training is the reference the averaged gradients must reproduce.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tapegrad
from _gloo import finish_oracle, free_port
from conftest import require, raised
import tapegrad.distributed as dist
from tapegrad.nn.parallel import DistributedDataParallel
from tapegrad.utils.data import DistributedSampler

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORKER = os.path.join(HERE, "_distributed_worker.py")


def _launch(launcher, out, lib, extra_env=None):
    env = dict(os.environ, DIST_LIB=lib, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               **(extra_env or {}))
    cmd = [sys.executable, "-m", launcher, "--nproc-per-node", "2", "--master-port", str(free_port()), WORKER, out]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def _finish(proc, out):
    try:
        text, _ = proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)   # the launcher and its workers (a rank waiting in a collective never ends)
        raise
    assert proc.returncode == 0, text[-4000:]
    return [json.load(open(os.path.join(out, f"rank{r}.json"))) for r in range(2)]


def test_two_ranks_match_torchrun(tmp_path):
    """One launch per library (side by side), checked three ways: one test, so a parallel run launches once."""
    ours_dir, theirs_dir = str(tmp_path / "tapegrad"), str(tmp_path / "torch")
    os.makedirs(ours_dir)
    os.makedirs(theirs_dir)
    ours = _launch("tapegrad.distributed.run", ours_dir, "tapegrad",
                   {"XLA_FLAGS": "--xla_force_host_platform_device_count=4", "JAX_PLATFORMS": "cpu"})
    theirs = _launch("torch.distributed.run", theirs_dir, "torch", {"OMP_NUM_THREADS": "1"})
    try:
        runs = _finish(ours, ours_dir), finish_oracle(
            _finish, theirs, theirs_dir, lambda d: _launch("torch.distributed.run", d, "torch", {"OMP_NUM_THREADS": "1"}))
    finally:
        for proc in (ours, theirs):
            if proc.poll() is None:
                os.killpg(proc.pid, 9)
    check_collectives_match_torch(runs)
    check_ddp_training_matches_torch_ddp(runs)
    check_ddp_training_matches_full_batch_in_one_process(runs)


def _plain(value):
    """JSON results with dtype names spelled alike."""
    if isinstance(value, str):
        return value.replace("tapegrad.", "torch.")
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def check_collectives_match_torch(runs):
    ours, theirs = runs
    for mine, ref in zip(ours, theirs):
        mine, ref = _plain(mine), _plain(ref)
        for key in ref:
            if key != "train":
                assert mine[key] == ref[key], key


def check_ddp_training_matches_torch_ddp(runs):
    ours, theirs = runs
    for mine, ref in zip(ours, theirs):
        mine, ref = mine["train"], ref["train"]
        assert mine["indices"] == ref["indices"]
        assert mine["state_keys"] == ref["state_keys"]
        np.testing.assert_allclose(mine["losses"], ref["losses"], rtol=1e-5, atol=1e-6)
        for key in ("params", "grads"):
            for a, b in zip(mine[key], ref[key]):
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert ours[0]["train"]["params"] == ours[1]["train"]["params"]   # replicas stay identical
    for mine in ours:   # each process's replica and gradients span its four devices (its batch split among them)
        assert mine["train"]["spread"] == {"params": [4] * 4, "grads": [4] * 4}


def check_ddp_training_matches_full_batch_in_one_process(runs):
    """Averaged gradients of the two ranks' batches are the full batch's: PyTorch in one process, same steps."""
    torch = require("torch")
    ours, _ = runs
    rng = np.random.default_rng(0)
    x, y = torch.tensor(rng.standard_normal((32, 5)), dtype=torch.float32), torch.tensor(
        rng.standard_normal((32, 3)), dtype=torch.float32)
    model = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    init = np.random.default_rng(100)   # rank 0's weights, which DDP broadcasts
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(init.standard_normal(tuple(p.shape)), dtype=torch.float32))
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    shares = [r["train"]["indices"] for r in ours]
    for batch in ([*shares[0][:8], *shares[1][:8]], [*shares[0][8:], *shares[1][8:]], shares[0] + shares[1]):
        opt.zero_grad()   # each rank's k-th batch together; then both batches of both ranks (the no_sync step)
        torch.nn.functional.mse_loss(model(x[batch]), y[batch]).backward()
        opt.step()
    for a, b in zip(ours[0]["train"]["params"], model.parameters()):
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_launcher_sets_env_and_forwards_exit_code(tmp_path):
    script = tmp_path / "w.py"
    script.write_text("import os, sys\n"
                      "keys = ['RANK', 'LOCAL_RANK', 'WORLD_SIZE', 'LOCAL_WORLD_SIZE', 'MASTER_ADDR', 'MASTER_PORT']\n"
                      "os.write(1, (' '.join(os.environ[k] for k in keys) + '\\n').encode())   # one write: no interleaving\n"
                      f"done = {str(tmp_path / 'rank0-done')!r}\n"
                      "if os.environ['RANK'] == '0':\n"
                      "    open(done, 'w').close()\n"
                      "else:   # fails once rank 0 has finished (a failure stops the other workers)\n"
                      "    import time\n"
                      "    while not os.path.exists(done): time.sleep(0.02)\n"
                      "    time.sleep(0.2); sys.exit(3)\n")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "tapegrad.distributed.run", "--nproc-per-node", "2", "--master-addr",
                        "127.0.0.1", "--master-port", "29999", str(script)], env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 3
    assert sorted(p.stdout.split("\n")[:2]) == ["0 0 2 2 127.0.0.1 29999", "1 1 2 2 127.0.0.1 29999"]
    assert "worker 1 failed with exit code 3" in p.stderr


# ---- one process: the group, errors, DDP and samplers, against PyTorch ----------------------------------



@pytest.fixture
def env_group(monkeypatch):
    for k, v in dict(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), RANK="0", WORLD_SIZE="1").items():
        monkeypatch.setenv(k, v)
    yield
    for lib in (dist, require("torch.distributed")):
        if lib.is_initialized():
            lib.destroy_process_group()


def test_uninitialized_errors_match_torch():
    tdist = require("torch.distributed")
    assert not dist.is_initialized() and dist.is_available()
    for name in ("get_rank", "get_world_size", "get_backend", "barrier"):
        ours, theirs = raised(getattr(dist, name)), raised(getattr(tdist, name))
        assert ours[0] is theirs[0] and ours[1].startswith(theirs[1]), name
    ours = raised(lambda: DistributedDataParallel(tapegrad.nn.Linear(2, 2)))
    assert ours[0] is ValueError and "Default process group has not been initialized" in ours[1]


def test_missing_env_variable_matches_torch(monkeypatch):
    tdist = require("torch.distributed")
    for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(k, raising=False)
    ours, theirs = raised(lambda: dist.init_process_group("gloo")), raised(lambda: tdist.init_process_group("gloo"))
    assert ours[0] is theirs[0] is ValueError and ours[1].startswith(theirs[1].replace("torch.", "torch."))


def test_group_of_one(env_group):
    tdist = require("torch.distributed")
    dist.init_process_group("gloo")
    tdist.init_process_group("gloo")
    assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (
        tdist.get_rank(), tdist.get_world_size(), tdist.get_backend())
    ours, theirs = raised(lambda: dist.init_process_group("gloo")), raised(lambda: tdist.init_process_group("gloo"))
    assert ours[0] is theirs[0] and ours[1].startswith(theirs[1])
    t = tapegrad.arange(3.0)
    assert dist.all_reduce(t, op=dist.ReduceOp.AVG) is None and t.tolist() == [0.0, 1.0, 2.0]
    assert dist.all_reduce(t, async_op=True).wait()
    ours = raised(lambda: dist.all_reduce(t, op=dist.ReduceOp.BAND))
    theirs = raised(lambda: tdist.all_reduce(require("torch").arange(3.0), op=tdist.ReduceOp.BAND))
    assert ours[0] is theirs[0] and ours[1].startswith(theirs[1]), (ours, theirs)
    assert repr(dist.ReduceOp.SUM) == repr(tdist.ReduceOp.SUM)
    dist.destroy_process_group()
    assert not dist.is_initialized()


def _mlp(lib, unused=False):
    class WithUnused(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
            self.extra = lib.nn.Linear(2, 2)   # never called

        def forward(self, x):
            return self.body(x)

    m = WithUnused() if unused else lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.ReLU(), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for i, p in enumerate(m.parameters()):
            p.copy_(lib.linspace(-1, 1, p.numel()).reshape(p.shape) * (i + 1) / 3)
    return m


def test_ddp_of_one_process_is_plain_training(env_group):
    dist.init_process_group("gloo")
    model, plain = _mlp(tapegrad), _mlp(tapegrad)
    ddp = DistributedDataParallel(model)
    assert ddp.module is model and list(ddp.state_dict()) == ["module." + k for k in plain.state_dict()]
    x = tapegrad.linspace(-2, 2, 12).reshape(4, 3)
    for m in (ddp, plain):
        opt = tapegrad.optim.SGD(m.parameters(), lr=0.1)
        for _ in range(3):
            opt.zero_grad()
            m(x).square().mean().backward()
            opt.step()
    # The second model's steps meet structures the first one made: they may run compiled where the first
    # ran on NumPy (the same arithmetic, float32 rounding a few ulps apart).
    for a, b in zip(model.parameters(), plain.parameters()):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-8)


def test_ddp_unused_parameter_error_matches_torch(env_group):
    torch = require("torch")
    import torch.distributed as tdist
    dist.init_process_group("gloo")
    tdist.init_process_group("gloo")
    errors = []
    for lib, ddp_cls in ((tapegrad, DistributedDataParallel), (torch, torch.nn.parallel.DistributedDataParallel)):
        ddp = ddp_cls(_mlp(lib, unused=True))
        x = lib.ones(2, 3)
        ddp(x).sum().backward()
        errors.append(raised(lambda: ddp(x)))
        found = ddp_cls(_mlp(lib, unused=True), find_unused_parameters=True)
        for _ in range(2):
            found(x).sum().backward()
        assert found.module.extra.weight.grad is None
    assert errors[0][0] is errors[1][0] is RuntimeError
    assert errors[0][1].startswith(errors[1][1].split(" You can enable")[0])


def test_ddp_refuses_several_device_ids(env_group):
    dist.init_process_group("gloo")
    with pytest.raises(ValueError, match="device_ids can only be None or contain a single element"):
        DistributedDataParallel(tapegrad.nn.Linear(2, 2), device_ids=[0, 1])


@pytest.mark.parametrize("size", [1, 7, 10, 16, 33])
@pytest.mark.parametrize("replicas", [1, 2, 3, 4])
@pytest.mark.parametrize("drop_last", [False, True])
def test_distributed_sampler_matches_torch(size, replicas, drop_last, monkeypatch):
    torch = require("torch")
    from torch.utils.data import DistributedSampler as TorchSampler
    data = list(range(size))
    for rank in range(replicas):
        for shuffle in (False, True):
            ours = DistributedSampler(data, num_replicas=replicas, rank=rank, shuffle=shuffle, seed=5,
                                      drop_last=drop_last)
            theirs = TorchSampler(data, num_replicas=replicas, rank=rank, shuffle=shuffle, seed=5,
                                  drop_last=drop_last)
            # Shuffled orders come from each library's generator (different streams): PyTorch's sampler is
            # given tapegrad's permutation, so what is compared is the assignment of the order to ranks.
            monkeypatch.setattr(torch, "randperm", lambda n, generator: torch.tensor(
                tapegrad.randperm(n, generator=tapegrad.Generator().manual_seed(generator.initial_seed())).tolist()))
            for epoch in (0, 3):
                ours.set_epoch(epoch)
                theirs.set_epoch(epoch)
                assert list(ours) == list(theirs) and len(ours) == len(theirs)


def test_distributed_sampler_shuffles_per_epoch_and_checks_rank():
    s = DistributedSampler(list(range(50)), num_replicas=2, rank=0)
    first = list(s)
    s.set_epoch(1)
    assert list(s) != first and sorted(set(first) | set(DistributedSampler(list(range(50)), 2, 1))) == list(range(50))
    torch = require("torch")
    from torch.utils.data import DistributedSampler as TorchSampler
    ours, theirs = raised(lambda: DistributedSampler([1], 2, 2)), raised(lambda: TorchSampler([1], 2, 2))
    assert ours == theirs


def test_joining_a_group_after_devices_are_in_use_says_how_to_fix(monkeypatch):
    for k, v in dict(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), RANK="0", WORLD_SIZE="2").items():
        monkeypatch.setenv(k, v)
    tapegrad.ones(1).tolist()   # JAX's devices are in use in this process
    with pytest.raises(RuntimeError, match="init_process_group must be called before any tensor is created"):
        dist.init_process_group("gloo")
    assert not dist.is_initialized()


def test_fully_shard_trains_as_pytorch_with_a_quarter_per_device():
    """Parameters, gradients and Adam's state split along dim 0 over four devices; the training is PyTorch's."""
    torch = require("torch")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), JAX_PLATFORMS="cpu")
    p = subprocess.run([sys.executable, os.path.join(HERE, "_fsdp_worker.py")], env=env, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-4000:]
    ours = json.loads(p.stdout.strip().splitlines()[-1])
    rng = np.random.default_rng(0)
    x, y = (torch.tensor(rng.standard_normal(s), dtype=torch.float32) for s in ((12, 6), (12, 4)))
    model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
    with torch.no_grad():
        for q in model.parameters():
            q.copy_(torch.tensor(rng.standard_normal(tuple(q.shape)) * 0.5, dtype=torch.float32))
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    np.testing.assert_allclose(ours["losses"], losses, rtol=1e-5)
    for a, b in zip(ours["params"], model.parameters()):
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert set(ours["param_specs"] + ours["state_specs"]) == {"P('shard',)"}   # every row count divides by 4
    assert all("'shard'" in spec for spec in ours["grad_specs"])   # gradients too (XLA picks the axis)
    total = sum(q.numel() * q.element_size() for q in model.parameters())
    steps = sum(s["step"].numel() * s["step"].element_size() for s in opt.state.values())   # scalars, replicated
    assert ours["before"] == {"cpu:0": total}
    assert ours["after"] == {f"cpu:{i}": 2 * total // 4 for i in range(4)}   # parameters and gradients, a quarter
    assert ours["with_optimizer"] == {f"cpu:{i}": 4 * total // 4 + steps for i in range(4)}   # + Adam's moments
