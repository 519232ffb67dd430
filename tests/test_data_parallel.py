"""nn.DataParallel: on one device a transparent wrapper (as PyTorch's on CPU); on 8 simulated CPU devices
(a subprocess, tests/data_parallel_worker.py) the batch is split and training equals one device's."""
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest
import torch

import tapegrad as tg

WORKER = pathlib.Path(__file__).with_name("data_parallel_worker.py")


@pytest.fixture(scope="module")
def eight():
    env = dict(os.environ, PYTHONPATH=str(WORKER.parent.parent))
    done = subprocess.run([sys.executable, str(WORKER)], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("name", ["SGD", "Adam", "Adam_compiled"])
def test_training_equals_single_device(eight, name):
    r = eight[name]
    assert eight["device_count"] == 8
    assert r["max_param_diff"] < 1e-5
    np.testing.assert_allclose(*r["losses"], rtol=1e-5)
    # parameters and their grads replicated over the 8 devices; optimizer state follows them
    assert r["param_specs"] == ["P()"] and r["param_devices"] == [8] and r["grad_specs"] == ["P()"]
    assert r["state_devices"] in ([], [8])


def test_batch_is_split_and_gradients_all_reduced(eight):
    assert eight["output_spec"] == "P('batch',)"
    assert eight["all_reduce"]   # XLA inserted the gradient all-reduce into the compiled program


def test_dim_uneven_and_device_ids(eight):
    assert eight["dim1"] < 1e-6 and eight["uneven"] < 1e-6 and eight["input_grad"] < 1e-5
    assert eight["device_ids"] == list(range(8)) and eight["device_ids_subset"] == [0, 1]


def test_state_dict_keys_match_torch(eight):
    ref = torch.nn.DataParallel(torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(),
                                                    torch.nn.Linear(16, 3)))
    assert eight["keys"] == list(ref.state_dict())


def test_one_device_is_transparent_as_torch_on_cpu():
    torch.manual_seed(0)
    ref = torch.nn.DataParallel(torch.nn.Linear(3, 2))
    net = tg.nn.DataParallel(tg.nn.Linear(3, 2))
    net.load_state_dict({k: tg.tensor(v.numpy()) for k, v in ref.state_dict().items()})
    assert repr(net) == repr(ref)
    assert list(net.state_dict()) == list(ref.state_dict()) == ["module.weight", "module.bias"]
    assert net.device_ids == ref.device_ids == []
    assert isinstance(net.module, tg.nn.Linear)
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    out_ref, out = ref(torch.tensor(x)), net(tg.tensor(x))
    np.testing.assert_allclose(out.detach().numpy(), out_ref.detach().numpy(), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    out_ref.sum().backward()
    np.testing.assert_allclose(net.module.weight.grad.numpy(), ref.module.weight.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_exported_where_torch_has_it():
    assert tg.nn.DataParallel is tg.nn.parallel.DataParallel
