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


class _RaisesWhenPickled:
    def __reduce__(self):
        raise RuntimeError("cannot pickle this")


def test_failing_save_leaves_the_existing_file_intact(tmp_path):
    path = tmp_path / "ckpt.pt"
    tapegrad.save({"w": tapegrad.arange(3.0)}, path)
    with pytest.raises(RuntimeError, match="cannot pickle this"):
        tapegrad.save({"w": tapegrad.zeros(3), "bad": _RaisesWhenPickled()}, path)
    assert tapegrad.load(path)["w"].tolist() == [0.0, 1.0, 2.0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt.pt"]   # no temporary file left behind
    buf = io.BytesIO(b"keep")
    buf.seek(4)
    with pytest.raises(RuntimeError, match="cannot pickle this"):
        tapegrad.save(_RaisesWhenPickled(), buf)
    assert buf.getvalue() == b"keep"


@pytest.mark.parametrize("where", ["missing/x.pt", "."])
def test_save_to_a_missing_directory_or_a_directory_raises_as_torch(where, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    errors = []
    for lib in (tapegrad, torch):
        with pytest.raises(Exception) as raised:
            lib.save({"a": 1}, where)
        errors.append(raised.value)
    assert type(errors[0]) is type(errors[1]) is RuntimeError
    if where != ".":   # (PyTorch's text for a directory is its C++ assertion's)
        assert str(errors[1]) in str(errors[0])
    assert sorted(p.name for p in tmp_path.iterdir()) == []   # (nothing written, no temporary file left)


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


# ---- both ways with PyTorch ----------------------------------------------------------------------------------

def _torch_dtype_tensors():
    values = np.random.default_rng(1).standard_normal((2, 3)) * 50
    out = {}
    for name in DTYPES:
        data = torch.tensor(values + 1j * values[::-1]) if name.startswith("complex") else torch.tensor(values)
        out[name] = data.to(getattr(torch, name))
    return out


def _same_as_torch(ours, theirs):
    assert ours.dtype == getattr(tapegrad, str(theirs.dtype).split(".")[1])
    assert tuple(ours.shape) == tuple(theirs.shape) and ours.stride() == theirs.stride()
    their_bytes = theirs.detach().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
    assert np.asarray(ours.detach()._value).tobytes() == their_bytes


def test_every_dtype_both_ways_with_torch(tmp_path):
    theirs = _torch_dtype_tensors()
    torch.save(theirs, tmp_path / "torch.pt")
    ours = tapegrad.load(tmp_path / "torch.pt")
    for name in DTYPES:
        _same_as_torch(ours[name], theirs[name])
    tapegrad.save(ours, tmp_path / "tapegrad.pt")
    back = torch.load(tmp_path / "tapegrad.pt", weights_only=True)
    for name in DTYPES:
        assert back[name].dtype == theirs[name].dtype and torch.equal(back[name], theirs[name])


def test_torch_reads_tapegrad_views_sharing_one_storage_and_expanded_tensors(tmp_path):
    base = tapegrad.arange(12.0).reshape(3, 4)
    obj = {"base": base, "t": base.t()[1:], "row": base[1], "wide": tapegrad.arange(3.0).expand(1000, 3),
           "p": tapegrad.nn.Parameter(tapegrad.ones(2)), "leaf": tapegrad.zeros(2, requires_grad=True)}
    path = tmp_path / "views.pt"
    tapegrad.save(obj, path)
    assert path.stat().st_size < 4096   # the expanded tensor is saved as its 3-element storage
    out = torch.load(path, weights_only=True)
    reference = torch.arange(12.0).reshape(3, 4)
    for key, expected in {"base": reference, "t": reference.t()[1:], "row": reference[1],
                          "wide": torch.arange(3.0).expand(1000, 3)}.items():
        assert torch.equal(out[key], expected) and out[key].stride() == expected.stride()
        assert out[key].storage_offset() == expected.storage_offset()
    ptr = out["base"].untyped_storage().data_ptr()
    assert out["t"].untyped_storage().data_ptr() == ptr and out["row"].untyped_storage().data_ptr() == ptr
    assert out["wide"].untyped_storage().nbytes() == 12
    assert isinstance(out["p"], torch.nn.Parameter) and out["leaf"].requires_grad
    again = tapegrad.load(path)
    again["base"].add_(1)   # one storage after load as well: a write through one is seen by the others
    assert again["t"].tolist() == (reference + 1).t()[1:].tolist() and again["row"].tolist() == [5, 6, 7, 8]
    assert again["t"].stride() == (1, 4) and again["wide"].stride() == (0, 1) and again["t"]._base is None


def test_storage_shared_by_torch_tensors_stays_shared():
    full = torch.arange(6.0)
    buf = io.BytesIO()
    torch.save({"head": full[:3], "tail": full[3:], "full": full}, buf)
    buf.seek(0)
    out = tapegrad.load(buf)
    out["tail"].mul_(10)
    assert out["full"].tolist() == [0, 1, 2, 30, 40, 50] and out["tail"].storage_offset() == 3


def test_optimizer_and_nested_state_both_ways():
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    model(torch.randn(4, 3)).sum().backward()
    opt.step()
    nested = {"model": model.state_dict(), "optim": opt.state_dict(), "history": [(1, 0.5), {"k": [None, "s"]}],
              "steps": OrderedDict(a=torch.tensor(3)), "raw": b"\x00\xff", "c": 2 - 1j, "tags": {"x"}}
    buf = io.BytesIO()
    torch.save(nested, buf)
    buf.seek(0)
    ours = tapegrad.load(buf)
    assert ours["history"] == [(1, 0.5), {"k": [None, "s"]}] and ours["raw"] == b"\x00\xff" and ours["c"] == 2 - 1j
    assert isinstance(ours["steps"], OrderedDict) and ours["tags"] == {"x"}
    back_buf = io.BytesIO()
    tapegrad.save(ours, back_buf)
    back_buf.seek(0)
    back = torch.load(back_buf, weights_only=True)
    fresh = torch.optim.Adam(torch.nn.Linear(3, 2).parameters(), lr=0.01)
    fresh.load_state_dict(back["optim"])
    for key, value in opt.state_dict()["state"][0].items():
        assert torch.equal(fresh.state_dict()["state"][0][key], value)
    assert back["optim"]["param_groups"] == opt.state_dict()["param_groups"]
    for key, value in model.state_dict().items():
        assert torch.equal(back["model"][key], value)
    assert isinstance(back["model"], OrderedDict) and back["history"] == nested["history"]
    assert back["raw"] == nested["raw"] and back["tags"] == {"x"} and torch.equal(back["steps"]["a"], torch.tensor(3))


# ---- whole modules, weights_only and safe globals ------------------------------------------------------------

class Scale:
    def __init__(self, factor):
        self.factor = factor


def test_whole_module_needs_weights_only_false(tmp_path):
    model = tapegrad.nn.Sequential(tapegrad.nn.Linear(3, 2), tapegrad.nn.ReLU())
    path = tmp_path / "model.pt"
    tapegrad.save(model, path)
    with pytest.raises(pickle.UnpicklingError, match="(?s)Weights only load failed.*Unsupported global: GLOBAL "
                       "tapegrad.nn.modules.container.Sequential was not an allowed global by default"):
        tapegrad.load(path)
    loaded = tapegrad.load(path, weights_only=False)
    assert type(loaded) is tapegrad.nn.Sequential and isinstance(loaded[0].weight, tapegrad.nn.Parameter)
    x = tapegrad.randn(4, 3)
    assert loaded(x).tolist() == model(x).tolist()


def test_safe_globals(tmp_path):
    path = tmp_path / "obj.pt"
    tapegrad.save({"scale": Scale(2.0), "w": tapegrad.ones(2)}, path)
    with pytest.raises(pickle.UnpicklingError, match="Unsupported global: GLOBAL test_serialization.Scale"):
        tapegrad.load(path)
    with tapegrad.serialization.safe_globals([Scale]):
        assert tapegrad.load(path)["scale"].factor == 2.0
        assert tapegrad.serialization.get_safe_globals() == [Scale]
    assert tapegrad.serialization.get_safe_globals() == []
    tapegrad.serialization.add_safe_globals([(Scale, "test_serialization.Scale")])
    try:
        assert tapegrad.load(path)["scale"].factor == 2.0
    finally:
        tapegrad.serialization.clear_safe_globals()
    with pytest.raises(pickle.UnpicklingError, match="Weights only load failed"):
        tapegrad.load(path)


# ---- memory-mapped loads and earlier tapegrad files -----------------------------------------------------------

def test_mmap_load(tmp_path):
    path = tmp_path / "m.pt"
    torch.save({"w": torch.arange(6.0).reshape(2, 3), "i": torch.arange(4)}, path)
    out = tapegrad.load(path, mmap=True)
    assert out["w"].tolist() == [[0, 1, 2], [3, 4, 5]] and out["i"].dtype == tapegrad.int64
    out["w"].add_(1)   # the mapped data is read-only; an in-place op makes a new value, the file is untouched
    assert torch.load(path)["w"].tolist() == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(ValueError, match="file path in order to use the mmap argument"):
        tapegrad.load(io.BytesIO(path.read_bytes()), mmap=True)


def test_earlier_tapegrad_npz_files_still_load(tmp_path):
    import json
    structure = {"format": "tapegrad.npz/1", "root": {"dict": [
        ["w", {"tensor": "t0", "dtype": "bfloat16", "requires_grad": False, "parameter": True, "device": "cpu"}],
        ["n", {"int": "7"}]]}}
    bits = np.array([0x3F80, 0x4000], np.uint16)   # bfloat16 1.0 and 2.0
    np.savez(tmp_path / "old.pt", t0=bits, __tapegrad_structure__=np.frombuffer(json.dumps(structure).encode(),
                                                                                   np.uint8))
    out = tapegrad.load(tmp_path / "old.pt.npz")
    assert isinstance(out["w"], tapegrad.nn.Parameter) and out["w"].float().tolist() == [1.0, 2.0]
    assert out["n"] == 7
