"""tapegrad's warnings point at the user's line, as PyTorch's C++ warnings do, whichever wrappers the call went
through (autocast's policy, out=, the argument parser, a module's __call__): tapegrad._user_frames.warn_user.
Each case runs here, in this file, and every warning it raises must name this file. PyTorch's warnings that
tapegrad lacked (below CASES) are compared with PyTorch's: their words, and once per process where PyTorch's are."""
import warnings

import pytest

import tapegrad as tg
from tapegrad import _tensor_layout
from tapegrad.sparse import _coo

F = tg.nn.functional
CASES = {
    "out= resized": lambda: tg.mul(tg.ones(2), tg.ones(2), out=tg.empty(3)),
    "kl_div reduction mean": lambda: F.kl_div(tg.ones(2).log(), tg.ones(2)),
    "mse_loss target size": lambda: F.mse_loss(tg.ones(2, 1), tg.ones(2)),
    "l1_loss target size": lambda: F.l1_loss(tg.ones(2, 1), tg.ones(2)),
    "size_average": lambda: F.mse_loss(tg.ones(2), tg.ones(2), size_average=True),
    "nll_loss reduce": lambda: F.nll_loss(tg.ones(2, 2), tg.tensor([0, 1]), reduce=False),
    "MSELoss module target size": lambda: tg.nn.MSELoss()(tg.ones(2, 1), tg.ones(2)),
    "LSTM dropout with one layer": lambda: tg.nn.LSTM(2, 2, dropout=0.5),
    "meshgrid indexing": lambda: tg.meshgrid(tg.ones(2), tg.ones(2)),
    "chain_matmul": lambda: tg.chain_matmul(tg.ones(2, 2), tg.ones(2, 2)),
    "init of an empty tensor": lambda: tg.nn.init.kaiming_uniform_(tg.ones(0, 3)),
    "grid_sample align_corners": lambda: F.grid_sample(tg.ones(1, 1, 2, 2), tg.zeros(1, 1, 1, 2)),
    "InstanceNorm num_features": lambda: tg.nn.InstanceNorm1d(3)(tg.ones(1, 4, 5)),
    "cuda.amp.autocast": lambda: tg.cuda.amp.autocast(),
    "weight_norm": lambda: tg.nn.utils.weight_norm(tg.nn.Linear(2, 2)),
    "clip_grad_norm": lambda: tg.nn.utils.clip_grad_norm(tg.nn.Linear(2, 2).parameters(), 1.0),
    "std degrees of freedom": lambda: tg.ones(1).std(),
    "dropout2d of a 3-D input": lambda: F.dropout2d(tg.ones(2, 3, 4)),
    "TransformerEncoder nested tensor": lambda: tg.nn.TransformerEncoder(tg.nn.TransformerEncoderLayer(4, 2), 1),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_warning_names_the_users_line(name):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        CASES[name]()
    assert caught, f"{name} warned nothing"
    assert all(w.filename == __file__ for w in caught), [(w.filename, w.lineno, str(w.message)[:60]) for w in caught]


def _messages(lib, code):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        eval(code, {"torch": lib, "F": lib.nn.functional, "nn": lib.nn})
    return [str(w.message).split(" (Triggered internally")[0] for w in caught]


@pytest.mark.parametrize("code", [
    "torch.ones(1).std()", "torch.ones(2).var(correction=2)", "torch.ones(3, 1).std(1)",
    "torch.var_mean(torch.ones(1))", "torch.ones(0).std()", "torch.ones(1).var(correction=0)",
    "torch.ones(3, 1).std(0)", "torch.ones(2).var(correction=1.5)",
    "F.dropout2d(torch.ones(2, 3, 4))", "F.dropout2d(torch.ones(2, 3))", "F.dropout2d(torch.ones(2, 3, 4, 4))",
    "nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2), 1)",
    "nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, batch_first=True), 1)",
    "nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, batch_first=True, norm_first=True), 1)",
    "nn.TransformerEncoder(nn.TransformerEncoderLayer(3, 3, batch_first=True), 1)",
    "nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, batch_first=True, activation=torch.tanh), 1)",
    "nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2, batch_first=True, bias=False), 1)",
    "nn.TransformerEncoder(nn.TransformerEncoderLayer(4, 2), 1, enable_nested_tensor=False)",
])
def test_warnings_tapegrad_lacked_as_torch(torch, code):
    assert _messages(tg, code) == _messages(torch, code)


@pytest.mark.parametrize("code, registry, key", [("torch.ones(2, 2, 2).T", _tensor_layout._warned, "T"),
                                                 ("torch.ones(2, 2).to_sparse_csr()", _coo._warned, "beta")])
def test_warnings_once_per_process_as_torch(torch, code, registry, key):
    registry.discard(key)   # (as in a fresh process)
    first, again = _messages(tg, code), _messages(tg, code)
    theirs = _messages(torch, code) or None   # (PyTorch's may have been given in this process already)
    assert len(first) == 1 and again == []
    assert theirs is None or first == theirs


def test_dropout2d_of_a_3d_input_drops_channels_of_each_sample_as_torch(torch):
    """PyTorch takes a 3-D input as (N, C, L): one noise value per (sample, channel), as dropout1d."""
    outs = []
    for lib in (tg, torch):
        lib.manual_seed(0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outs.append(lib.nn.functional.dropout2d(lib.ones(4, 5, 6)).tolist())
    assert outs[0] == outs[1]
