"""save/load: bit-exact round trips for every dtype, nested containers, PyTorch .pt files, and refusal of
malicious or truncated files without executing anything."""
import io
import os
import pickle
import zipfile
from collections import OrderedDict

import numpy as np
import pytest
import torch

import tapegrad

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]


def _same_bits(a, b):
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
    x, y = np.asarray(a.detach()._value), np.asarray(b.detach()._value)
    assert x.tobytes() == y.tobytes()


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_is_bit_exact(dtype, tmp_path):
    values = np.random.default_rng(0).standard_normal((3, 4)) * 100
    t = tapegrad.tensor(values).to(getattr(tapegrad, dtype))
    if dtype.startswith("complex"):
        t = tapegrad.tensor(values + 1j * values[::-1]).to(getattr(tapegrad, dtype))
    path = tmp_path / "t.pt"
    tapegrad.save(t, path)
    _same_bits(tapegrad.load(path), t)


def test_nested_structure_round_trip(tmp_path):
    w = tapegrad.randn(2, 3, requires_grad=True)
    p = tapegrad.nn.Parameter(tapegrad.randn(3))
    obj = {"model": OrderedDict([("w", w), ("b", tapegrad.zeros(3))]), "p": p, "alias": w, 0: [1, 2.5, "x", None],
           "t": (True, float("inf"), float("nan"), -0.0, 1 + 2j, 2 ** 70), "dtype": tapegrad.float16,
           "size": tapegrad.Size([2, 3]), (1, "k"): "tuple key", "empty": tapegrad.zeros(0, 2)}
    path = tmp_path / "ckpt.pt"
    tapegrad.save(obj, path)
    out = tapegrad.load(path)
    assert list(out) == list(obj) and isinstance(out["model"], OrderedDict)
    _same_bits(out["model"]["w"], w)
    assert out["alias"] is out["model"]["w"] and out["model"]["w"].requires_grad
    assert isinstance(out["p"], tapegrad.nn.Parameter) and out["p"].requires_grad
    assert out[0] == [1, 2.5, "x", None] and out["dtype"] is tapegrad.float16 and out[(1, "k")] == "tuple key"
    t = out["t"]
    assert t[0] is True and t[1] == float("inf") and t[2] != t[2] and str(t[3]) == "-0.0" and t[4] == 1 + 2j
    assert t[5] == 2 ** 70 and out["size"] == tapegrad.Size([2, 3]) and tuple(out["empty"].shape) == (0, 2)


def test_file_objects_and_optimizer_state_dict():
    p = tapegrad.nn.Parameter(tapegrad.randn(4))
    opt = tapegrad.optim.Adam([p], lr=0.1)
    (p * p).sum().backward()
    opt.step()
    buf = io.BytesIO()
    tapegrad.save(opt.state_dict(), buf)
    buf.seek(0)
    sd = tapegrad.load(buf)
    assert sd["param_groups"][0]["betas"] == (0.9, 0.999) and sd["param_groups"][0]["params"] == [0]
    assert sd["state"][0]["step"].dtype == tapegrad.float32 and sd["state"][0]["step"].item() == 1.0
    fresh = tapegrad.optim.Adam([p], lr=0.1)
    fresh.load_state_dict(sd)
    _same_bits(fresh.state[p]["exp_avg"], opt.state[p]["exp_avg"])


def test_unsupported_object_is_refused_on_save(tmp_path):
    with pytest.raises(TypeError, match="state_dict"):
        tapegrad.save({"f": object()}, tmp_path / "x.pt")


def test_map_location(tmp_path):
    path = tmp_path / "t.pt"
    tapegrad.save({"a": tapegrad.ones(2)}, path)
    assert tapegrad.load(path, map_location="cpu")["a"].device.type == "cpu"
    assert tapegrad.load(path, map_location=lambda t, loc: t * 2)["a"].tolist() == [2.0, 2.0]


# ---- PyTorch checkpoints ----------------------------------------------------------------------------------

def test_reads_torch_save_files(tmp_path):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    model(torch.randn(5, 3)).sum().backward()
    opt.step()
    base = torch.arange(12.0).reshape(3, 4)
    obj = {"model": model.state_dict(), "optim": opt.state_dict(), "param": model[0].weight,
           "view": base.t()[1:], "half": torch.randn(3).to(torch.bfloat16), "long": torch.arange(5),
           "shared": (base, base), "epoch": 3, "name": "run", "size": torch.Size([2])}
    path = tmp_path / "torch.pt"
    torch.save(obj, path)
    out = tapegrad.load(path)
    for key, value in obj["model"].items():
        np.testing.assert_array_equal(out["model"][key].numpy(), value.numpy())
    assert isinstance(out["model"], OrderedDict)
    assert isinstance(out["param"], tapegrad.nn.Parameter) and out["param"].requires_grad
    np.testing.assert_array_equal(out["view"].numpy(), obj["view"].numpy())
    assert out["half"].dtype == tapegrad.bfloat16
    np.testing.assert_array_equal(out["half"].float().numpy(), obj["half"].float().numpy())
    assert out["long"].dtype == tapegrad.int64 and out["epoch"] == 3 and out["name"] == "run"
    assert out["size"] == tapegrad.Size([2])
    st = out["optim"]["state"][0]
    assert st["step"].dtype == tapegrad.float32 and st["step"].item() == 1.0
    np.testing.assert_array_equal(st["exp_avg"].numpy(), obj["optim"]["state"][0]["exp_avg"].numpy())


class _Evil:
    def __reduce__(self):
        return (os.system, ("touch PWNED_BY_PICKLE",))


def _torch_zip_with_pickle(path, payload):
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("archive/data.pkl", payload)
        z.writestr("archive/byteorder", "little")
        z.writestr("archive/version", "3\n")


def test_malicious_pickle_in_torch_zip_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _torch_zip_with_pickle(tmp_path / "evil.pt", pickle.dumps({"x": _Evil()}, protocol=2))
    with pytest.raises(pickle.UnpicklingError, match="(?s)Weights only load failed.*Unsupported global: GLOBAL posix.system"):
        tapegrad.load(tmp_path / "evil.pt")
    assert not (tmp_path / "PWNED_BY_PICKLE").exists()


def test_plain_pickle_file_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "evil.pt").write_bytes(pickle.dumps(_Evil()))
    with pytest.raises(RuntimeError, match="never unpickles"):
        tapegrad.load(tmp_path / "evil.pt")
    assert not (tmp_path / "PWNED_BY_PICKLE").exists()


def test_not_a_checkpoint(tmp_path):
    (tmp_path / "x.pt").write_bytes(b"hello world")
    with pytest.raises(RuntimeError, match="not a tapegrad or PyTorch checkpoint"):
        tapegrad.load(tmp_path / "x.pt")


@pytest.mark.parametrize("writer", ["tapegrad", "torch"])
def test_truncated_files_are_refused(tmp_path, writer):
    path = tmp_path / "full.pt"
    if writer == "torch":
        torch.save({"w": torch.randn(64, 64), "b": torch.zeros(64)}, path)
    else:
        tapegrad.save({"w": tapegrad.randn(64, 64), "b": tapegrad.zeros(64)}, path)
    data = path.read_bytes()
    for cut in (10, len(data) // 3, len(data) // 2, len(data) - 30):
        bad = tmp_path / f"cut{cut}.pt"
        bad.write_bytes(data[:cut])
        with pytest.raises((RuntimeError, ValueError), match="truncated|corrupted"):
            tapegrad.load(bad)


def test_out_of_bounds_storage_geometry_is_refused(tmp_path):
    path = tmp_path / "t.pt"
    torch.save(torch.zeros(4), path)
    with zipfile.ZipFile(path) as z:
        entries = {n: z.read(n) for n in z.namelist()}
    pkl = next(n for n in entries if n.endswith("data.pkl"))
    # Claim 100 elements from a 4-element storage: must be refused, not read past the buffer.
    entries[pkl] = entries[pkl].replace(b"K\x04\x85", b"Kd\x85", 1)
    with zipfile.ZipFile(path, "w") as z:
        for n, d in entries.items():
            z.writestr(n, d)
    with pytest.raises(RuntimeError, match="malformed"):
        tapegrad.load(path)
