"""Join (tapegrad.distributed.algorithms) against PyTorch's: two ranks with uneven inputs, and a group of one.

tests/_join_worker.py holds the scenarios, written once for either library: DDP training where one rank has
more batches (divide_by_initial_world_size True and False, BatchNorm buffers broadcast from the highest
rank still training, the last joiner's model broadcast at the end), throw_on_early_termination, and two
custom joinables whose hooks log their calls. The same script runs under tapegrad's launcher and under
PyTorch's torchrun (gloo), started when this module's first test starts so that both run alongside the
one-process tests; in a group of one the scenarios run in this process, tapegrad's and PyTorch's side by side.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import tapegrad
import tapegrad.distributed as dist
from _gloo import finish_oracle, free_port
from _join_worker import run_all
from conftest import raised, require
from tapegrad.distributed.algorithms import JoinHook, Joinable
from tapegrad.distributed.algorithms.join import _JoinConfig

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORKER = os.path.join(HERE, "_join_worker.py")


def _launch(launcher, out, lib, extra_env):
    env = dict(os.environ, DIST_LIB=lib, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
               **extra_env)
    os.makedirs(out, exist_ok=True)
    cmd = [sys.executable, "-m", launcher, "--nproc-per-node", "2", "--master-port", str(free_port()), WORKER, out]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


@pytest.fixture(scope="module", autouse=True)
def two_rank_runs(tmp_path_factory):
    """Both launches, started with the module's first test; the two-rank test collects them."""
    base = tmp_path_factory.mktemp("join")
    procs = {"tapegrad": (_launch("tapegrad.distributed.run", str(base / "tapegrad"), "tapegrad",
                                  {"JAX_PLATFORMS": "cpu"}), str(base / "tapegrad")),
             "torch": (_launch("torch.distributed.run", str(base / "torch"), "torch", {"OMP_NUM_THREADS": "1"}),
                       str(base / "torch"))}
    yield procs
    for proc, _ in procs.values():
        if proc.poll() is None:
            os.killpg(proc.pid, 9)   # the launcher and its workers (a rank waiting in a collective never ends)


def _finish(proc, out):
    try:
        text, _ = proc.communicate(timeout=150)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        raise
    assert proc.returncode == 0, text[-4000:]
    return [json.load(open(os.path.join(out, f"rank{r}.json"))) for r in range(2)]


def _assert_runs_match(ours, theirs):
    """Every scenario's record equal (floats to float32 rounding)."""
    for name, ref in theirs.items():
        for key, value in ref.items():
            mine = ours[name][key]
            if key in ("losses", "params", "grads", "buffers"):
                assert len(mine) == len(value), (name, key)
                for a, b in zip(mine, value):
                    assert (a is None) == (b is None), (name, key)
                    if a is not None:
                        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=f"{name} {key}")
            else:
                assert mine == value, (name, key)


# ---- a group of one process ---------------------------------------------------------------------

@pytest.fixture
def groups_of_one(monkeypatch):
    """tapegrad's and PyTorch's default groups, one process each."""
    torch = require("torch")
    import torch.distributed as tdist
    import torch.distributed.algorithms  # noqa: F401
    for k, v in dict(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()), RANK="0", WORLD_SIZE="1").items():
        monkeypatch.setenv(k, v)
    dist.init_process_group("gloo")
    tdist.init_process_group("gloo")
    yield torch
    for lib in (dist, tdist):
        if lib.is_initialized():
            lib.destroy_process_group()


def test_group_of_one_runs_the_scenarios_as_pytorch(groups_of_one):
    _assert_runs_match(run_all(tapegrad, 0), run_all(groups_of_one, 0))


def _joinable_classes(lib):
    algorithms = lib.distributed.algorithms

    class Plain(algorithms.Joinable):
        def __init__(self, group=None, log=None, call_super=True):
            if call_super:
                super().__init__()
            self.group, self.log = group, log

        def join_hook(self, **kwargs):
            return algorithms.JoinHook()

        join_device = property(lambda self: lib.device("cpu"))
        join_process_group = property(lambda self: self.group)

    class Logged(Plain):
        def join_hook(self, **kwargs):
            log = self.log

            class Hook(algorithms.JoinHook):
                def post_hook(self, is_last_joiner):
                    log.append(is_last_joiner)
            return Hook()
    return Plain, Logged


def test_join_checks_and_errors_as_pytorch(groups_of_one):
    torch = groups_of_one
    results = []
    for lib in (tapegrad, torch):
        algorithms = lib.distributed.algorithms
        Plain, Logged = _joinable_classes(lib)
        log = []
        record = {
            "no joinables": raised(lambda: algorithms.Join([]), fold=True),
            "abstract": raised(lambda: algorithms.Joinable(), fold=True)[0],
            "two groups": raised(lambda: algorithms.Join([Plain("other"), Plain(None)]), fold=True),
            "not constructed": raised(lambda: algorithms.Join.notify_join_context(Plain(call_super=False)),
                                      fold=True)[0],
            "outside Join": algorithms.Join.notify_join_context(Plain()),
            "default config": list(Plain()._join_config),
        }
        with algorithms.Join([Logged(log=log)], enable=False):
            pass
        record["disabled"] = list(log)
        def fails():
            with algorithms.Join([Logged(log=log)]):
                raise KeyError("inside")
        record["exception in the block"] = raised(fails, fold=True), list(log)
        with algorithms.Join([Logged(log=log)]):
            pass
        record["one process joins last"] = list(log)
        second = Plain()
        algorithms.Join([Plain(), second])
        record["second joinable"] = algorithms.Join.notify_join_context(second)
        results.append(record)
    ours, theirs = results
    assert ours == theirs
    assert ours["one process joins last"] == [True]


def test_join_config_and_hook_base_as_pytorch(groups_of_one):
    from torch.distributed.algorithms.join import _JoinConfig as TorchJoinConfig
    assert _JoinConfig._fields == TorchJoinConfig._fields
    assert _JoinConfig.construct_disabled_join_config() == tuple(TorchJoinConfig.construct_disabled_join_config())
    assert JoinHook().main_hook() is None and JoinHook().post_hook(True) is None
    assert Joinable.__abstractmethods__ == groups_of_one.distributed.algorithms.Joinable.__abstractmethods__


def test_ddp_is_a_joinable_as_pytorch(groups_of_one):
    torch = groups_of_one
    ddps = [lib.nn.parallel.DistributedDataParallel(lib.nn.Linear(2, 2)) for lib in (tapegrad, torch)]
    ours, theirs = ddps
    assert isinstance(ours, Joinable) and isinstance(theirs, torch.distributed.algorithms.Joinable)
    assert str(ours.join_device) == str(theirs.join_device)
    assert list(ours._join_config) == list(theirs._join_config)
    for ddp in ddps:
        join = ddp.join(divide_by_initial_world_size=False, throw_on_early_termination=True)
        assert ddp._divide_by_initial_world_size is False
        assert list(ddp._join_config) == [True, True, True]
        assert type(join).__name__ == "Join"
    hooks = raised(lambda: type(ours.join_hook())(tapegrad.nn.Linear(2, 2), True))
    theirs_hook = raised(lambda: type(theirs.join_hook())(torch.nn.Linear(2, 2), True))
    assert hooks[0] is theirs_hook[0] is AssertionError and hooks[1].startswith(theirs_hook[1])


# ---- two processes (last: the launches started with the first test) -------------------------------

def test_two_ranks_with_uneven_inputs_match_torchrun(two_rank_runs):
    (ours_proc, ours_dir), (theirs_proc, theirs_dir) = two_rank_runs["tapegrad"], two_rank_runs["torch"]
    ours = _finish(ours_proc, ours_dir)
    theirs = finish_oracle(_finish, theirs_proc, theirs_dir,
                           lambda d: _launch("torch.distributed.run", d, "torch", {"OMP_NUM_THREADS": "1"}))
    for mine, ref in zip(ours, theirs):
        _assert_runs_match(mine, ref)
    for name in ("even_divisor", "effective_divisor", "accumulate"):   # the replicas end equal: the last joiner's
        assert ours[0][name]["params"] == ours[1][name]["params"]
        assert ours[0][name]["buffers"] == ours[1][name]["buffers"]
    assert ours[0]["accumulate"]["grads"][-1] is None   # the unused parameter: no gradient on any rank
    assert ours[0]["eval_forward"]["params"] == ours[1]["eval_forward"]["params"]   # no hang, replicas equal
    # the rank with fewer batches joined first; PyTorch says so on each rank
    assert ours[0]["throw"]["error"] == "Rank 0 exhausted all inputs."
    assert ours[1]["throw"]["error"].startswith("Detected at least one rank that exhausted inputs.")
    assert [entry for entry in ours[0]["custom"]["log"] if entry[1] in ("main", "post")] == [
        ["a", "main"], ["b", "main"], ["a", "main"], ["b", "main"], ["a", "post", False], ["b", "post", False]]
