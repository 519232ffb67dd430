"""distributed.checkpoint (save/load, planners, FileSystemWriter/Reader, state_dict helpers) against PyTorch's
DCP on one process (gloo, world size 1): the same keys, state-dict layouts and loaded values; on 8 simulated
CPU devices (tests/_dist_checkpoint_worker.py) a checkpoint of a fully sharded model loads into a
tensor-parallel one and, here, into a model on one device."""
import json
import os
import pathlib

import numpy as np
import pytest
from conftest import assert_close, from_torch

import tapegrad as tg
import tapegrad.distributed.checkpoint as tg_dcp
from tapegrad.distributed.checkpoint import state_dict as tg_sd

from _background_worker import BackgroundWorker  # noqa: E402
from _gloo import one_process_group  # noqa: E402

WORKER = pathlib.Path(__file__).with_name("_dist_checkpoint_worker.py")


@pytest.fixture(scope="module")
def torch():
    with one_process_group("torch.distributed.checkpoint", "torch.distributed.checkpoint.state_dict") as torch:
        yield torch


def _libs(torch):
    return ((tg, tg_dcp, tg_sd, False), (torch, torch.distributed.checkpoint, torch.distributed.checkpoint.state_dict,
                                         True))


def _model(lib, seed=0):
    lib.manual_seed(seed)
    return lib.nn.Sequential(lib.nn.Linear(3, 5), lib.nn.ReLU(), lib.nn.Linear(5, 2))


def _trained(torch):
    """(tapegrad (model, Adam), torch (model, Adam)) from the same weights, after one step on the same data."""
    out = []
    theirs = _model(torch)
    x = torch.randn(4, 3)
    for lib, side in ((tg, False), (torch, True)):
        m = _model(lib)
        if not side:
            m.load_state_dict({k: from_torch(v) for k, v in theirs.state_dict().items()})
        opt = lib.optim.Adam(m.parameters(), lr=0.1, betas=(0.8, 0.9))
        m(from_torch(x) if not side else x).pow(2).sum().backward()
        opt.step()
        out.append((m, opt))
    return out


def _same(ours, theirs):
    """Nested state dicts equal: keys, plain values, tensors (values and dtypes)."""
    if hasattr(theirs, "full_tensor"):
        theirs = theirs.full_tensor()
    if isinstance(theirs, dict):
        assert list(ours) == list(theirs)
        for k in theirs:
            _same(ours[k], theirs[k])
    elif isinstance(theirs, (list, tuple)):
        assert type(ours) is type(theirs) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)
    elif hasattr(theirs, "dtype") and hasattr(theirs, "shape"):
        assert_close(ours, theirs)
    else:
        assert ours == theirs


def test_save_and_load_model_and_optimizer_as_pytorch(torch, tmp_path):
    runs = []
    for (lib, dcp, sd, side), (m, opt) in zip(_libs(torch), _trained(torch)):
        state = {"model": sd.get_model_state_dict(m), "optim": sd.get_optimizer_state_dict(m, opt),
                 "extra": {"epoch": 3, "betas": (0.5, 0.25), "name": "run"}}
        metadata = dcp.save(state, checkpoint_id=str(tmp_path / lib.__name__))
        fresh = _model(lib, seed=1)
        fresh_opt = lib.optim.Adam(fresh.parameters(), lr=0.5)
        target = {"model": sd.get_model_state_dict(fresh), "optim": sd.get_optimizer_state_dict(fresh, fresh_opt),
                  "extra": {"epoch": 0, "betas": None, "name": ""}}
        empty = sd.get_optimizer_state_dict(fresh, fresh_opt)   # a fresh optimizer's state: PyTorch's step 1, zeros
        dcp.load(target, checkpoint_id=str(tmp_path / lib.__name__))
        sd.set_model_state_dict(fresh, target["model"])
        sd.set_optimizer_state_dict(fresh, fresh_opt, target["optim"])
        runs.append(dict(state=state, target=target, keys=sorted(metadata.state_dict_metadata), empty=empty,
                         after=(sd.get_model_state_dict(fresh), sd.get_optimizer_state_dict(fresh, fresh_opt)),
                         model=fresh, opt=fresh_opt, lib=lib))
    ours, theirs = runs
    assert ours["keys"] == theirs["keys"]
    for key in ("state", "target", "empty"):
        _same(ours[key], theirs[key])
    _same(ours["after"], theirs["after"])
    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    for run in runs:   # training continues alike
        run["model"](run["lib"].tensor(x)).pow(2).sum().backward()
        run["opt"].step()
    for a, b in zip(ours["model"].parameters(), theirs["model"].parameters()):
        assert_close(a, b)


def test_stateful_app_state_as_pytorch(torch, tmp_path):
    """PyTorch's recipe: an AppState object whose state_dict()/load_state_dict() use get_/set_state_dict."""
    results = []
    for (lib, dcp, sd, side), (m, opt) in zip(_libs(torch), _trained(torch)):
        class AppState:
            def __init__(self, model, optimizer):
                self.model, self.optimizer = model, optimizer

            def state_dict(self):
                model_sd, optim_sd = sd.get_state_dict(self.model, self.optimizer)
                return {"model": model_sd, "optim": optim_sd}

            def load_state_dict(self, state_dict):
                sd.set_state_dict(self.model, self.optimizer, model_state_dict=state_dict["model"],
                                  optim_state_dict=state_dict["optim"])
        path = str(tmp_path / lib.__name__)
        dcp.save({"app": AppState(m, opt)}, checkpoint_id=path)
        fresh = _model(lib, seed=2)
        fresh_opt = lib.optim.Adam(fresh.parameters(), lr=0.5)
        dcp.load({"app": AppState(fresh, fresh_opt)}, checkpoint_id=path)
        results.append(sd.get_state_dict(fresh, fresh_opt))
    _same(*results)


@pytest.mark.filterwarnings("ignore:`(save|load)_state_dict` is deprecated")
def test_old_names_writer_reader_and_planners(torch, tmp_path):
    results = []
    for lib, dcp, sd, side in _libs(torch):
        from importlib import import_module
        planner = import_module(dcp.__name__ + ".default_planner")
        path = tmp_path / lib.__name__
        values = {"w": lib.arange(6.).reshape(2, 3), "h": lib.tensor([1.5, -2.0], dtype=lib.bfloat16),
                  "i": lib.tensor(7), "b": lib.tensor([True, False])}
        with pytest.warns(FutureWarning, match="`save_state_dict` is deprecated"):
            dcp.save_state_dict(values, dcp.FileSystemWriter(path), planner=planner.DefaultSavePlanner())
        target = {k: lib.zeros_like(v) for k, v in values.items()}
        target["extra"] = lib.zeros(2)
        dcp.load_state_dict(target, dcp.FileSystemReader(path),
                            planner=planner.DefaultLoadPlanner(allow_partial_load=True))
        results.append(target)
        for k, v in values.items():
            assert bool((target[k] == v).all())
    _same(*results)
    assert sorted(os.listdir(tmp_path / "tapegrad")) == [".metadata", "__0_0.npz"]


def test_load_errors_as_pytorch(torch, tmp_path):
    tg_dcp.save({"w": tg.zeros(3, 2)}, checkpoint_id=str(tmp_path))
    with pytest.raises(RuntimeError, match=r"Missing key in checkpoint state_dict: v\."):
        tg_dcp.load({"w": tg.zeros(3, 2), "v": tg.zeros(1)}, checkpoint_id=str(tmp_path))
    with pytest.raises(ValueError, match=r"Size mismatch between saved torch.Size\(\[3, 2\]\) and current: "
                                         r"torch.Size\(\[4, 2\]\) for w"):
        try:
            tg_dcp.load({"w": tg.zeros(4, 2)}, checkpoint_id=str(tmp_path))
        except ValueError as e:   # the message names the library as PyTorch's names torch
            raise ValueError(str(e).replace("tapegrad", "torch")) from None
    with pytest.raises(RuntimeError, match="`checkpoint_id` must be specified"):
        tg_dcp.save({"w": tg.zeros(1)})
    with pytest.raises(TypeError, match="cannot save a value of type object"):
        tg_dcp.save({"w": object()}, checkpoint_id=str(tmp_path / "bad"))
    options = tg_sd.StateDictOptions()
    assert repr(options).replace("tapegrad", "torch") == repr(torch.distributed.checkpoint.state_dict.StateDictOptions())


@pytest.fixture(scope="module", autouse=True)
def _worker(tmp_path_factory):
    """The 8-device run, started with the module's first test so that it runs alongside the others."""
    path = tmp_path_factory.mktemp("checkpoint")
    worker = BackgroundWorker(WORKER, path)
    yield path, worker
    worker.stop()


@pytest.fixture(scope="module")
def eight(_worker):
    path, worker = _worker
    return path, worker.result()


def test_eight_devices_checkpoint_loads_into_another_sharding(eight):
    path, r = eight
    assert r["saved_specs"] == ["P('shard',)"] * 4
    assert r["loaded_specs"] == ["P('tp', None)", "P('tp',)", "P(None, 'tp')", "P()"]   # kept its own sharding
    assert r["model_diff"] == 0 and r["state_diff"] == 0 and r["next_diff"] < 1e-6
    chunks = json.loads((path / ".metadata").read_text())["entries"]["model.0.weight"]["tensor"]["chunks"]
    assert len(chunks) == 8 and sorted(c["offsets"][0] for c in chunks) == list(range(0, 16, 2))  # one per shard
    # the same directory loads here, on one device
    model = tg.nn.Sequential(tg.nn.Linear(8, 16), tg.nn.ReLU(), tg.nn.Linear(16, 8))
    state = {"model": tg_sd.get_model_state_dict(model)}
    tg_dcp.load(state, checkpoint_id=str(path))
    for name, value in r["params"].items():
        np.testing.assert_array_equal(model.state_dict()[name].numpy(), np.array(value, np.float32))


@pytest.mark.filterwarnings("ignore:Getting submodules only")   # PyTorch's deprecation of `submodules`
def test_state_dict_options_as_pytorch(torch):
    keys = []
    for lib, dcp, sd, side in _libs(torch):
        m = _model(lib)
        m[2].weight.requires_grad_(False)
        options = sd.StateDictOptions(full_state_dict=True, cpu_offload=True, ignore_frozen_params=True)
        full = sd.get_model_state_dict(m, options=options)
        sub = sd.get_model_state_dict(m, submodules={m[2]},
                                      options=sd.StateDictOptions(keep_submodule_prefixes=False))
        keys.append((list(full), list(sub)))
        for k, v in full.items():
            assert bool((v == m.state_dict()[k]).all())
    assert keys[0] == keys[1]
