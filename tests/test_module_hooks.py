"""Module backward hooks and tensor post-accumulate hooks against PyTorch."""
import numpy as np
import pytest

import tapegrad
from conftest import assert_close, both


def _net(lib):
    lib.manual_seed(0)
    net = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
    rng = np.random.default_rng(0)
    with lib.no_grad():
        for p in net.parameters():
            p.copy_(lib.tensor(rng.normal(size=tuple(p.shape)), dtype=lib.float32))
    return net


def test_full_backward_hooks_see_and_replace_gradients(torch):
    def build(lib):
        net = _net(lib)
        seen = []

        def pre(module, grad_output):
            seen.append(("pre", type(module).__name__, [tuple(g.shape) for g in grad_output]))
            return (grad_output[0] * 2,)

        def hook(module, grad_input, grad_output):
            seen.append(("hook", [None if g is None else g.clone() for g in grad_input], grad_output[0].clone()))
            return tuple(None if g is None else g * 0.5 for g in grad_input)
        net[2].register_full_backward_pre_hook(pre)
        handle = net[0].register_full_backward_hook(hook)
        x = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), dtype=lib.float32, requires_grad=True)
        out = net(x)
        out.sum().backward()
        first = [x.grad.clone()] + [p.grad.clone() for p in net.parameters()]
        handle.remove()
        x.grad = None
        net(lib.ones(2, 3)).sum().backward()   # input without grad: hook removed, pre-hook still doubles
        return first, seen, out.grad_fn.name(), [p.grad for p in net.parameters()]
    (ours, seen, name, later), (theirs, tseen, tname, tlater) = both(build)
    for a, b in zip(ours + later, theirs + tlater):
        assert_close(a, b)
    assert name == tname
    assert [s[0] for s in seen] == [s[0] for s in tseen]
    assert seen[0] == tseen[0]
    assert_close(seen[1][1][0], tseen[1][1][0])
    assert_close(seen[1][2], tseen[1][2])


def test_hook_when_no_input_requires_grad(torch):
    def build(lib):
        net = _net(lib)
        calls = []
        net[0].register_full_backward_hook(lambda m, gi, go: calls.append((gi, tuple(go[0].shape))))
        net(lib.ones(2, 3)).sum().backward()
        return calls
    ours, theirs = both(build)
    assert ours == theirs


def test_post_accumulate_grad_hook(torch):
    def build(lib):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        seen = []
        w.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.clone()))
        (w * 3).sum().backward()
        (w * w).sum().backward()
        try:
            (w * 2).register_post_accumulate_grad_hook(lambda p: None)
        except RuntimeError as e:
            seen.append(str(e))
        return seen
    ours, theirs = both(build)
    assert_close(ours[0], theirs[0])
    assert_close(ours[1], theirs[1])
    assert ours[2] == theirs[2]


def test_hook_changing_the_size_raises(torch):
    def build(lib):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        y.register_hook(lambda g: g[:2])
        try:
            y.sum().backward()
        except RuntimeError as e:
            return str(e)
    ours, theirs = both(build)
    assert ours == theirs


def test_saved_tensor_attributes_of_common_nodes(torch):
    def build(lib):
        x = lib.tensor([0.5, 2.0], requires_grad=True)
        w = lib.tensor([3.0, -1.0], requires_grad=True)
        found = []
        for y, names in [(x * w, ["self", "other"]), (x / w, ["self", "other"]), (x.exp(), ["result"]),
                         (x.sin(), ["self"]), (x ** 3, ["self"]), (x.tanh(), ["result"])]:
            found += [(y.grad_fn.name(), n, getattr(y.grad_fn, "_saved_" + n).tolist()) for n in names]
        m = lib.ones(2, 3, requires_grad=True)
        for y, names in [(m.sum(0), ["dim", "keepdim"]), (m.mean(1, keepdim=True), ["dim", "keepdim"]),
                         (m.transpose(0, 1), ["dim0", "dim1"]), (m.softmax(1), ["dim"])]:
            found += [(y.grad_fn.name(), n, getattr(y.grad_fn, "_saved_" + n)) for n in names]
        return found
    ours, theirs = both(build)
    assert ours == theirs


def test_saved_tensors_hooks_pack_and_unpack(torch):
    def build(lib):
        x = lib.tensor([0.5, 2.0, -1.0], requires_grad=True)
        w = lib.tensor([3.0, -1.0, 0.25], requires_grad=True)
        packed = []

        def pack(t):
            packed.append(tuple(t.shape))
            return t * 2   # unpack must undo what pack did

        def unpack(p):
            return p / 2
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = (x * w).sin() * x
        y.sum().backward()
        with lib.autograd.graph.save_on_cpu():
            z = (x * w).cos()
        z.sum().backward()
        return x.grad, w.grad, len(packed)
    (gx, gw, n), (tx, tw, tn) = both(build)
    assert_close(gx, tx)
    assert_close(gw, tw)
    assert n == tn


@pytest.mark.parametrize("build", ["linear", "relu", "sequential", "two_outputs"])
def test_deprecated_backward_hook_sees_the_last_node_as_torch(build, torch):
    """register_backward_hook (deprecated): the hook goes on the grad_fn of the output's first tensor and sees
    that node's gradients (addmm's three for a Linear), with PyTorch's FutureWarning where they cannot be the
    module's; mixing it with a full hook is refused."""
    import warnings
    seen = []
    for lib in (tapegrad, torch):
        lib.manual_seed(0)
        nn = lib.nn
        model = {"linear": lambda: nn.Linear(2, 1), "relu": lambda: nn.ReLU(),
                 "sequential": lambda: nn.Sequential(nn.Linear(2, 2), nn.Tanh()),
                 "two_outputs": lambda: nn.GRU(2, 2)}[build]()
        log = []
        model.register_backward_hook(lambda m, gi, go, log=log: log.append(
            ([None if g is None else tuple(g.shape) for g in gi], [None if g is None else tuple(g.shape) for g in go])))
        x = lib.ones(3, 2, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = model(x * 1)
        first = out[0] if isinstance(out, tuple) else out
        first.sum().backward()
        try:
            model.register_full_backward_hook(lambda *a: None)
            mixed = None
        except RuntimeError as e:
            mixed = str(e)
        seen.append((log, sorted(str(w.message) for w in caught if w.category is FutureWarning), mixed))
    assert seen[0] == seen[1]
