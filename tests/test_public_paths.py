"""Public classes print PyTorch's module paths (print(type(x)) gives <class 'torch.Tensor'> under torch and
<class 'tapegrad.Tensor'> here), those paths import and pickle them, and linalg's named tuples are PyTorch's."""
import importlib
import io
import pickle

import pytest
import torch

import tapegrad as tg
from tapegrad._public_paths import PATHS

CLASSES = [(path, name) for path, names in PATHS.items() for name in names]


@pytest.mark.parametrize("path, name", CLASSES)
def test_class_shows_torch_s_path_and_is_found_there(path, name):
    ours = getattr(importlib.import_module(path), name)
    theirs = getattr(importlib.import_module(path.replace("tapegrad", "torch", 1)), name)
    assert repr(ours).replace("tapegrad", "torch") == repr(theirs)
    assert pickle.loads(pickle.dumps(ours)) is ours


def test_a_whole_model_and_its_optimizer_pickle_by_their_public_paths():
    model = tg.nn.Sequential(tg.nn.BatchNorm1d(2), tg.nn.Flatten(), tg.nn.LSTMCell(2, 2))
    buffer = io.BytesIO()
    tg.save({"model": model, "opt": tg.optim.AdamW(model.parameters())}, buffer)
    buffer.seek(0)
    loaded = tg.load(buffer, weights_only=False)
    assert [type(m) for m in loaded["model"]] == [type(m) for m in model]
    assert type(loaded["opt"]) is tg.optim.AdamW


@pytest.mark.parametrize("call", ["lib.linalg.eigh(A)", "lib.linalg.slogdet(A)", "lib.slogdet(A)", "A.slogdet()",
                                  "lib.linalg.slogdet(A, out=(lib.empty(()), lib.empty(())))",
                                  "lib.linalg.eigh(A, out=(lib.empty(2), lib.empty(2, 2)))"])
def test_linalg_named_tuples_as_torch(call):
    names = []
    for lib in (tg, torch):
        result = eval(call, {"lib": lib, "A": lib.eye(2) + 0.5})
        names.append((type(result).__module__.replace("tapegrad", "torch"), type(result).__name__, len(result),
                      [type(v).__name__ for v in result]))
    assert names[0] == names[1]
