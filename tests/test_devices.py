"""Devices against PyTorch's CPU build: names, placement of every creation op, Tensor/Module moves, the
default device, optimizer state, load(map_location=), and PyTorch's errors for CUDA without a GPU."""
import sys

import pytest
import torch

import tapegrad as tg
from tapegrad._tensor import Tensor

pytestmark = pytest.mark.skipif(torch.cuda.is_available() or tg.cuda.is_available(),
                                reason="compares with PyTorch's behaviour on a machine without CUDA")

# Every creation op that takes device=, as f(lib, device) (the *_like and new_* ones included).
CREATIONS = {
    "tensor": lambda t, d: t.tensor([1.0, 2.0], device=d),
    "as_tensor": lambda t, d: t.as_tensor([1.0], device=d),
    "scalar_tensor": lambda t, d: t.scalar_tensor(1.0, device=d),
    "zeros": lambda t, d: t.zeros(2, 3, device=d),
    "ones": lambda t, d: t.ones(2, device=d),
    "empty": lambda t, d: t.empty(2, device=d),
    "full": lambda t, d: t.full((2,), 1.5, device=d),
    "arange": lambda t, d: t.arange(3, device=d),
    "linspace": lambda t, d: t.linspace(0, 1, 3, device=d),
    "eye": lambda t, d: t.eye(2, device=d),
    "zeros_like": lambda t, d: t.zeros_like(t.ones(2), device=d),
    "ones_like": lambda t, d: t.ones_like(t.ones(2), device=d),
    "empty_like": lambda t, d: t.empty_like(t.ones(2), device=d),
    "full_like": lambda t, d: t.full_like(t.ones(2), 3, device=d),
    "rand": lambda t, d: t.rand(2, device=d),
    "randn": lambda t, d: t.randn(2, device=d),
    "randint": lambda t, d: t.randint(0, 3, (2,), device=d),
    "randperm": lambda t, d: t.randperm(3, device=d),
    "normal": lambda t, d: t.normal(0.0, 1.0, (2,), device=d),
    "rand_like": lambda t, d: t.rand_like(t.ones(2), device=d),
    "randn_like": lambda t, d: t.randn_like(t.ones(2), device=d),
    "randint_like": lambda t, d: t.randint_like(t.ones(2), 3, device=d),
    "new_tensor": lambda t, d: t.ones(2).new_tensor([1.0], device=d),
    "new_zeros": lambda t, d: t.ones(2).new_zeros(2, device=d),
    "new_ones": lambda t, d: t.ones(2).new_ones(2, device=d),
    "new_full": lambda t, d: t.ones(2).new_full((2,), 1.0, device=d),
    "new_empty": lambda t, d: t.ones(2).new_empty((2,), device=d),
}

MOVES = {
    "to": lambda t: t.ones(2).to("cuda"),
    "to_device": lambda t: t.ones(2).to(t.device("cuda", 0)),
    "to_kw": lambda t: t.ones(2, requires_grad=True).to(device="cuda:0", dtype=t.float64),
    "cuda": lambda t: t.ones(2).cuda(),
    "cuda_index": lambda t: t.ones(2).cuda(1),
    "cuda_device": lambda t: t.ones(2).cuda(t.device("cuda", 1)),
    "to_index": lambda t: t.ones(2).to(0),
    "device_index": lambda t: t.device(0),
    "zeros_index": lambda t: t.zeros(2, device=0),
    "module_cuda": lambda t: t.nn.Linear(2, 2).cuda(),
    "module_to": lambda t: t.nn.Linear(2, 2).to("cuda"),
    "cuda.current_device": lambda t: t.cuda.current_device(),
    "cuda.synchronize": lambda t: t.cuda.synchronize(),
    "cuda.get_device_name": lambda t: t.cuda.get_device_name(),
}


def outcome(f):
    try:
        return f()
    except Exception as e:
        return e


def same_error(a, b):
    assert type(a) is type(b) and isinstance(a, Exception), (a, b)
    assert str(b).split(".")[0].split(":")[0] in str(a), (a, b)


@pytest.mark.parametrize("name", CREATIONS)
def test_creation_device_kwarg(name):
    f = CREATIONS[name]
    same_error(outcome(lambda: f(tg, "cuda")), outcome(lambda: f(torch, "cuda")))
    for d in ("cpu", torch.device("cpu")):
        assert str(f(tg, tg.device(str(d)) if not isinstance(d, str) else d).device) == str(f(torch, d).device)
    assert f(tg, None).device == tg.device("cpu")


@pytest.mark.parametrize("name", MOVES)
def test_cuda_without_gpu_raises_as_torch(name):
    same_error(outcome(lambda: MOVES[name](tg)), outcome(lambda: MOVES[name](torch)))


def test_device_objects():
    for spec in [("cuda",), ("cuda:1",), ("cpu",), ("cuda", 1), ("cpu", 0)]:
        a, b = tg.device(*spec), torch.device(*spec)
        assert (repr(a), str(a), a.type, a.index) == (repr(b), str(b), b.type, b.index)
    assert (tg.device("cpu") == "cpu") == (torch.device("cpu") == "cpu")
    assert tg.device("cuda:0") == tg.device("cuda", 0) and tg.device("cpu") != tg.device("cuda")
    for lib in (tg, torch):
        with pytest.raises(RuntimeError) as raised:
            lib.device("foo")
        assert str(raised.value).startswith("Expected one of cpu, cuda, ipu, xpu")
    assert str(pytest.raises(RuntimeError, tg.device, "foo").value) == \
        str(pytest.raises(RuntimeError, torch.device, "foo").value)
    # JAX's names for the same devices are accepted as well
    assert tg.device("gpu").type == "gpu" and tg.device("tpu").type == "tpu"


@pytest.mark.parametrize("call", [
    lambda L: L.device("float32"), lambda L: L.device("cpu:x"), lambda L: L.device("cpu:-1"),
    lambda L: L.device("cuda:01"), lambda L: L.device("cpu:0", 1), lambda L: L.device("cpu", -1),
    lambda L: L.randn(2).to("float32"), lambda L: L.zeros(2, device="cpu:-1"), lambda L: L.device("cpux")])
def test_device_strings_parse_as_torch(call):
    """c10::Device's grammar: a string that is not a type and an optional index is an invalid device string; an
    unknown type lists the known ones; an index given twice or negative is refused."""
    same_error(outcome(lambda: call(tg)), outcome(lambda: call(torch)))


@pytest.mark.parametrize("kind", ["mps", "xla", "hip", "xpu", "mps:1"])   # (meta: test_meta_device)
def test_every_pytorch_device_type_names_a_device(kind):
    # a device object is a name, as PyTorch's: code that only names one (a fallback chain, a comparison) runs;
    # placing a tensor there fails with the reason and what to use instead
    a, b = tg.device(kind), torch.device(kind)
    assert (repr(a), str(a), a.type, a.index) == (repr(b), str(b), b.type, b.index)
    assert (a == tg.device("cpu")) is False
    for place in (lambda: tg.ones(2).to(kind), lambda: tg.zeros(2, device=kind)):
        with pytest.raises(RuntimeError, match=f"not linked with support for {a.type} devices.*'cpu', 'cuda'"):
            place()


def test_the_usual_device_line_runs():
    for lib in (tg, torch):
        device = "cuda" if lib.cuda.is_available() else "cpu"
        model = lib.nn.Linear(3, 2).to(device)
        x = lib.randn(4, 3, device=device)
        assert str(model(x).device) == "cpu" and str(model.weight.device) == "cpu"


def test_tensor_moves_on_cpu():
    x = tg.ones(2, requires_grad=True)
    for y in (x.to("cpu"), x.cpu(), x.to(tg.device("cpu")), x.to(x)):
        assert y is x
    y = x.to("cpu", tg.float64)
    assert y.dtype == tg.float64 and y.device == tg.device("cpu") and not x.is_cuda and x.is_cpu
    assert x.get_device() == torch.ones(2).get_device() == -1
    assert x.to("cpu", copy=True) is not x


def test_default_device():
    assert tg.get_default_device() == tg.device("cpu") and str(torch.get_default_device()) == "cpu"
    try:
        tg.set_default_device("cuda")
        torch.set_default_device("cuda")
        same_error(outcome(lambda: tg.zeros(2)), outcome(lambda: torch.zeros(2)))
    finally:
        tg.set_default_device(None)
        torch.set_default_device(None)
    tg.set_default_device("cpu")
    assert tg.zeros(2).device == tg.device("cpu")
    tg.set_default_device(None)
    with tg.device("cuda"):
        same_error(outcome(lambda: tg.ones(1)), outcome(lambda: torch.ones(1, device="cuda")))
    assert tg.ones(1).device == tg.device("cpu") and tg.get_default_device() == tg.device("cpu")


def test_module_moves_keep_parameters_and_optimizer_state():
    m = tg.nn.Linear(3, 2)
    w = m.weight
    opt = tg.optim.Adam(m.parameters())
    m(tg.randn(4, 3)).sum().backward()
    opt.step()
    assert m.to("cpu") is m and m.cpu() is m and m.weight is w
    assert {str(v.device) for s in opt.state.values() for v in s.values()} == {"cpu"}


def test_load_map_location(tmp_path):
    path = tmp_path / "t.pt"
    tg.save({"w": tg.ones(2)}, path)
    torch.save({"w": torch.ones(2)}, tmp_path / "r.pt")
    same_error(outcome(lambda: tg.load(path, map_location="cuda")),
               outcome(lambda: torch.load(tmp_path / "r.pt", map_location="cuda")))
    for loc in ("cpu", tg.device("cpu"), {"cpu": "cpu"}, lambda storage, location: storage):
        out = tg.load(path, map_location=loc)
        assert out["w"].device == tg.device("cpu") and out["w"].tolist() == [1.0, 1.0]


@pytest.fixture
def fake_cuda(monkeypatch):
    """Tensors marked as on cuda:0 (this machine has no GPU): the dispatch check only reads .device."""
    marked = set()
    real = Tensor.device

    def device(self):
        return tg.device("cuda", 0) if id(self) in marked else real.fget(self)
    monkeypatch.setattr(Tensor, "device", property(device))
    flag = sys.modules["tapegrad.device"].MIXED_DEVICES
    flag[0] = True
    yield marked
    flag[0] = False


def test_mixed_devices_raise(fake_cuda):
    a, b = tg.ones(2), tg.ones(2)
    fake_cuda.add(id(a))
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but found at "
                                           "least two devices, cpu and cuda:0!"):
        a + b
    with pytest.raises(RuntimeError, match="same device"):
        tg.matmul(b, a)
    # a 0-dim CPU tensor is a scalar and may join a tensor on any device, as in PyTorch
    assert (a * tg.tensor(2.0)).tolist() == [2.0, 2.0]
    assert (b + b).tolist() == [2.0, 2.0]


def test_using_a_gpu_by_its_id_switches_the_mixed_device_check_on(monkeypatch):
    """The dispatch check is off until a tensor goes to an accelerator; naming the GPU by its JAX id
    (the common single-GPU case) must switch it on too."""
    import sys
    import jax
    from tapegrad import cuda
    device_module = sys.modules["tapegrad.device"]   # (tapegrad.device is the class)

    class FakeGpu:
        id, platform = 0, "gpu"
    monkeypatch.setattr(cuda, "_require_gpu", lambda: None)
    monkeypatch.setattr(jax, "local_devices", lambda backend=None: [FakeGpu()])
    monkeypatch.setattr(device_module, "MIXED_DEVICES", [False])
    assert isinstance(device_module.to_jax_device("cuda"), FakeGpu)
    assert device_module.MIXED_DEVICES[0]
