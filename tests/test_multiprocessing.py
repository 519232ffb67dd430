"""tapegrad.multiprocessing: the standard module's API; tensors cross a spawned process by pickling."""
import multiprocessing
import pickle

import numpy as np
import pytest
import torch.multiprocessing as tmp

import tapegrad
import tapegrad.multiprocessing as mp


def test_reexports_the_standard_module_like_torch():
    for name in ("get_context", "Process", "Queue", "Pool", "cpu_count", "set_start_method", "get_start_method"):
        assert getattr(mp, name) is getattr(multiprocessing, name) and hasattr(tmp, name)
    assert mp.get_sharing_strategy() in tmp.get_all_sharing_strategies()
    with pytest.raises(ValueError, match="file_system"):
        mp.set_sharing_strategy("file_descriptor")


def test_tensors_pickle_with_values_dtype_and_grad_flag():
    x = tapegrad.arange(6, dtype=tapegrad.float64).reshape(2, 3) * 2
    for t in (x, x[:, 1:], tapegrad.nn.Parameter(tapegrad.ones(2))):
        back = pickle.loads(pickle.dumps(t))
        assert back.dtype == t.dtype and back.shape == t.shape and back.requires_grad == t.requires_grad
        np.testing.assert_array_equal(back.detach().numpy(), t.detach().numpy())


def _double(queue_in, queue_out):
    queue_out.put(queue_in.get() * 2)


def test_tensor_crosses_a_spawned_process():
    ctx = mp.get_context("spawn")
    queue_in, queue_out = ctx.Queue(), ctx.Queue()
    proc = ctx.Process(target=_double, args=(queue_in, queue_out))
    proc.start()
    queue_in.put(tapegrad.tensor([1.0, 2.5]))
    result = queue_out.get(timeout=60)
    proc.join(timeout=60)
    assert proc.exitcode == 0
    assert isinstance(result, tapegrad.Tensor) and result.tolist() == [2.0, 5.0]
