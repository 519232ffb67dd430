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


# ---- DataLoader with worker processes ----------------------------------------------------------------
import sys  # noqa: E402
import os  # noqa: E402

sys.path.insert(0, os.path.dirname(__file__))
import _mp_datasets as D  # noqa: E402
from tapegrad.utils.data import DataLoader  # noqa: E402


def test_worker_batches_equal_in_process_batches_in_order_across_persistent_epochs():
    loader = DataLoader(D.Squares(), batch_size=3, num_workers=2, persistent_workers=True, prefetch_factor=2,
                        worker_init_fn=D.record_init)
    reference = [b[0].tolist() for b in DataLoader(D.Squares(), batch_size=3)]
    for _ in range(2):
        batches = list(loader)
        assert [b[0].tolist() for b in batches] == reference
        # Batches are handed out round-robin: worker 0 fetches batches 0 and 2, worker 1 batches 1 and 3.
        assert [b[1].tolist()[0] for b in batches] == [0, 1, 0, 1]
        assert [b[2].tolist() for b in batches] == [b[1].tolist() for b in batches]   # worker_init_fn ran
    pool = loader._pool
    assert pool is not None and all(p.is_alive() for p in pool.processes)
    pool.shutdown()
    loader._pool = None


def test_iterable_dataset_split_by_worker_info_and_errors_from_workers():
    got = sorted(x for batch in DataLoader(D.Counting(), batch_size=2, num_workers=2) for x in batch.tolist())
    assert got == list(range(7))
    with pytest.raises(KeyError, match="bad sample 2"):
        list(DataLoader(D.Failing(), batch_size=1, num_workers=1))
    assert tapegrad.utils.data.get_worker_info() is None


def test_worker_only_options_need_workers_as_torch():
    import torch.utils.data as tdata
    for kwargs in (dict(prefetch_factor=2), dict(persistent_workers=True)):
        with pytest.raises(ValueError) as et:
            tdata.DataLoader(list(range(3)), **kwargs)
        with pytest.raises(ValueError) as eg:
            DataLoader(list(range(3)), **kwargs)
        assert str(eg.value) == str(et.value)


def test_spawn_runs_each_rank_and_reraises_a_childs_error(tmp_path, torch):
    import _mp_spawn_targets as targets
    mp.spawn(targets.write_rank, args=(str(tmp_path), "hello"), nprocs=2)
    assert sorted(p.read_text() for p in tmp_path.iterdir()) == ["hello 0", "hello 1"]
    raised = {}
    for lib in (mp, torch.multiprocessing):   # each spawned torch child imports torch: one case only
        with pytest.raises(lib.ProcessRaisedException) as raised[lib]:
            lib.spawn(targets.fail_on_one, nprocs=2)
    ours, theirs = (str(raised[lib].value) for lib in (mp, torch.multiprocessing))
    assert ours.splitlines()[:3] == theirs.splitlines()[:3]   # "-- Process 1 terminated with ..."
    assert "KeyError: 'rank one failed'" in ours
    with pytest.raises(mp.ProcessExitedException, match="process 0 terminated with exit code 3") as info:
        mp.spawn(targets.exit_three, nprocs=2)
    assert info.value.exit_code == 3 and info.value.error_index == 0
