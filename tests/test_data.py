"""tapegrad.utils.data against torch.utils.data: batching, collation, samplers, splits."""
import collections

import numpy as np
import pytest
import torch

import tapegrad
from tapegrad.utils import data as tdata

X = np.arange(40.0).reshape(10, 4)
Y = np.arange(10)


def _np(obj):
    if isinstance(obj, (torch.Tensor, tapegrad.Tensor)):
        return (str(obj.dtype).split(".")[-1], obj.numpy().tolist())
    if isinstance(obj, dict):
        return {k: _np(v) for k, v in obj.items()}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return (type(obj).__name__,) + tuple(_np(v) for v in obj)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_np(v) for v in obj)
    return obj


def _batches(lib, **kwargs):
    ds = lib.utils.data.TensorDataset(lib.tensor(X), lib.tensor(Y))
    return [_np(b) for b in lib.utils.data.DataLoader(ds, **kwargs)]


@pytest.mark.parametrize("kwargs", [dict(), dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                    dict(batch_size=None), dict(batch_size=4, collate_fn=lambda b: len(b))])
def test_sequential_batches_match_torch(kwargs):
    assert _batches(tapegrad, **kwargs) == _batches(torch, **kwargs)


def test_len_matches_torch():
    for kwargs in [dict(batch_size=3), dict(batch_size=3, drop_last=True), dict(batch_size=5)]:
        ds_g = tdata.TensorDataset(tapegrad.tensor(X))
        ds_t = torch.utils.data.TensorDataset(torch.tensor(X))
        assert len(tdata.DataLoader(ds_g, **kwargs)) == len(torch.utils.data.DataLoader(ds_t, **kwargs))


def test_shuffle_is_a_permutation_and_reproducible_with_generator():
    def order(seed):
        ds = tdata.TensorDataset(tapegrad.tensor(Y))
        loader = tdata.DataLoader(ds, batch_size=4, shuffle=True, generator=tapegrad.Generator().manual_seed(seed))
        return [v for (b,) in loader for v in b.tolist()]
    a, b, c = order(1), order(1), order(2)
    assert sorted(a) == list(range(10)) and a == b and a != c
    tapegrad.manual_seed(3)
    first = [v for (b,) in tdata.DataLoader(tdata.TensorDataset(tapegrad.tensor(Y)), batch_size=10, shuffle=True)
             for v in b.tolist()]
    tapegrad.manual_seed(3)
    again = [v for (b,) in tdata.DataLoader(tdata.TensorDataset(tapegrad.tensor(Y)), batch_size=10, shuffle=True)
             for v in b.tolist()]
    assert first == again


class _Dicts:
    def __init__(self, lib):
        self.lib = lib

    def __len__(self):
        return 5

    def __getitem__(self, i):
        Point = collections.namedtuple("Point", "x y")
        return {"idx": i, "value": float(i) / 2, "name": f"s{i}", "flag": i % 2 == 0,
                "arr": np.full(2, i, dtype=np.float32), "t": self.lib.tensor([i, i + 1]),
                "pair": (i, [i * 1.5, "a"]), "point": Point(i, self.lib.tensor(float(i)))}


def test_default_collate_matches_torch():
    got = [_np(b) for b in tdata.DataLoader(_Dicts(tapegrad), batch_size=2)]
    want = [_np(b) for b in torch.utils.data.DataLoader(_Dicts(torch), batch_size=2)]
    assert got == want


def test_default_collate_errors_match_torch():
    for batch in ([object(), object()], [[1, 2], [3]]):
        with pytest.raises(Exception) as want:
            torch.utils.data.default_collate(batch)
        with pytest.raises(type(want.value), match=str(want.value)[:40]):
            tdata.default_collate(batch)


def test_random_split_and_subset():
    ds = tdata.TensorDataset(tapegrad.tensor(Y))
    parts = tdata.random_split(ds, [0.5, 0.3, 0.2], generator=tapegrad.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [5, 3, 2]
    seen = sorted(int(p[i][0]) for p in parts for i in range(len(p)))
    assert seen == list(range(10))
    with pytest.raises(ValueError, match="Sum of input lengths"):
        tdata.random_split(ds, [3, 3])
    sub = tdata.Subset(ds, [7, 2])
    assert [b[0].tolist() for b in tdata.DataLoader(sub, batch_size=2)] == [[7, 2]]


def test_iterable_dataset_and_concat():
    class Stream(tdata.IterableDataset):
        def __iter__(self):
            return iter(range(7))

    class TStream(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(7))
    got = [_np(b) for b in tdata.DataLoader(Stream(), batch_size=3)]
    want = [_np(b) for b in torch.utils.data.DataLoader(TStream(), batch_size=3)]
    assert got == want
    cat = tdata.TensorDataset(tapegrad.tensor(Y)) + tdata.TensorDataset(tapegrad.tensor(Y * 10))
    assert len(cat) == 20 and cat[12][0].item() == 20 and cat[-1][0].item() == 90


def test_loader_argument_errors_match_torch():
    ds_g, ds_t = tdata.TensorDataset(tapegrad.tensor(Y)), torch.utils.data.TensorDataset(torch.tensor(Y))
    for kwargs in [dict(sampler=[0, 1], shuffle=True), dict(batch_sampler=[[0]], batch_size=2),
                   dict(batch_size=None, drop_last=True), dict(batch_size=0)]:
        with pytest.raises(Exception) as want:
            torch.utils.data.DataLoader(ds_t, **kwargs)
        with pytest.raises(type(want.value), match=str(want.value)[:30]):
            tdata.DataLoader(ds_g, **kwargs)
