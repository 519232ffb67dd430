"""Sparse tensors through tapegrad.save / tapegrad.load in PyTorch's checkpoint format: PyTorch reads
tapegrad's files and tapegrad reads PyTorch's (COO, CSR, CSC, BSR, BSC, coalesced flags kept, requires_grad dropped as
PyTorch drops it)."""
import pytest
import torch

import tapegrad as tg


def _objects(lib):
    return {"coo": lib.sparse_coo_tensor([[1, 0, 1], [0, 0, 2]], [3.0, 4.0, 5.0], (2, 3), requires_grad=True),
            "coalesced": lib.sparse_coo_tensor([[1, 0, 1], [0, 0, 0]], [3.0, 4.0, 5.0], (2, 3),
                                               dtype=lib.float64).coalesce(),
            "hybrid": lib.sparse_coo_tensor([[0, 2]], [[1, 2], [3, 4]], (3, 2)),
            "empty": lib.sparse_coo_tensor(lib.zeros(2, 0, dtype=lib.int64), lib.zeros(0), (2, 3)),
            "csr": lib.tensor([[0.0, 2.0, 0.0], [3.0, 0.0, 4.0]]).to_sparse_csr(),
            "csc": lib.tensor([[0.0, 2.0, 0.0], [3.0, 0.0, 4.0]]).to_sparse_csc(),
            "bsr": lib.tensor([[0.0, 2.0, 0.0, 0.0], [3.0, 0.0, 0.0, 0.0]]).to_sparse_bsr((1, 2)),
            "bsc": lib.tensor([[0.0, 2.0, 0.0, 0.0], [3.0, 0.0, 0.0, 0.0]]).to_sparse_bsc((2, 2)),
            "dense": lib.ones(2)}


@pytest.mark.parametrize("weights_only", [True, False])
def test_sparse_tensors_round_trip_between_libraries(tmp_path, weights_only):
    torch.save(_objects(torch), tmp_path / "torch.pt")
    tg.save(_objects(tg), tmp_path / "tapegrad.pt")
    expected = torch.load(tmp_path / "torch.pt", weights_only=weights_only)
    for loaded in (tg.load(tmp_path / "torch.pt", weights_only=weights_only),
                   torch.load(tmp_path / "tapegrad.pt", weights_only=weights_only),
                   tg.load(tmp_path / "tapegrad.pt", weights_only=weights_only)):
        assert loaded.keys() == expected.keys()
        for key, t in expected.items():
            m = loaded[key]
            assert repr(m).replace("tapegrad.", "torch.") == repr(t), key
            if t.is_sparse:
                assert m.is_coalesced() == t.is_coalesced(), key
