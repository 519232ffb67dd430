"""tapegrad.export with dynamic_shapes (Dim, Dim.AUTO/DYNAMIC/STATIC) against torch.export: the program runs at
other sizes along the dynamic dimensions, calls that break a bound or a static size fail with PyTorch's guard."""
import io

import numpy as np
import pytest

import tapegrad
from conftest import assert_close, from_torch, require


def _small(lib):
    class Small(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(4, 3)

        def forward(self, x, y):
            return lib.relu(self.lin(x)).flatten(1) * 2 + y.sum()
    return Small()


def _error(fn):
    try:
        fn()
    except Exception as e:   # noqa: BLE001 -- the type and message are what is compared
        return type(e), str(e).split("\n")[0]
    return None


def test_export_dim_and_hints_like_torch(torch):
    from torch.export import Dim as TDim
    Dim = tapegrad.export.Dim
    for kwargs in ({}, {"min": 2, "max": 64}, {"min": 3}, {"min": 0, "max": 8}, {"min": 1}, {"max": 5}):
        ours, theirs = Dim("batch", **kwargs), TDim("batch", **kwargs)
        assert (repr(ours), ours.__name__, ours.min, str(ours.max)) == (repr(theirs), theirs.__name__, theirs.min,
                                                                        str(theirs.max))
    for name in ("AUTO", "DYNAMIC", "STATIC"):
        assert repr(getattr(Dim, name)) == repr(getattr(TDim, name))
        assert repr(getattr(Dim, name)(min=3, max=9)) == repr(getattr(TDim, name)(min=3, max=9))
    for make in (lambda D: D("b", min=5, max=3), lambda D: D("not a name"), lambda D: D.AUTO(min=4, max=2)):
        assert _error(lambda: make(Dim)) == _error(lambda: make(TDim))


def test_export_dynamic_shapes_run_at_other_sizes_with_torch_guards(torch):
    from torch.export import Dim as TDim
    Dim = tapegrad.export.Dim
    torch.manual_seed(0)
    theirs = _small(torch)
    ours = _small(tapegrad)
    ours.load_state_dict({k: from_torch(v) for k, v in theirs.state_dict().items()})
    x, y = torch.randn(5, 4), torch.randn(3)
    specs = [lambda D: {"x": {0: D("batch", min=3, max=64)}, "y": None},   # by name
             lambda D: ({0: D("batch", min=3, max=64)}, None),            # by position
             lambda D: ([D("batch", min=3, max=64), D.STATIC], [4 - 1])]  # per dimension, a static int
    for spec, sizes in zip(specs, ((3, 64), (9,), (9,))):
        ep = tapegrad.export.export(ours, (from_torch(x), from_torch(y)), dynamic_shapes=spec(Dim))
        for n in sizes:
            x2 = torch.randn(n, 4)
            assert_close(ep.module()(from_torch(x2), from_torch(y)), theirs(x2, y))
    tep = torch.export.export(theirs, (x, y), dynamic_shapes=specs[0](TDim))
    for bad in [(torch.randn(2, 4), y), (torch.randn(65, 4), y), (torch.randn(7, 5), y), (torch.randn(7, 4),
                                                                                          torch.randn(4))]:
        ours_error = _error(lambda: ep.module()(*(from_torch(t) for t in bad)))
        assert ours_error == _error(lambda: tep.module()(*bad)) and ours_error[0] is AssertionError, ours_error

    # one Dim on two inputs is one size
    def pair(lib):
        class Pair(lib.nn.Module):
            def forward(self, a, b):
                return a * b
        return Pair()
    d, td = Dim("d"), TDim("d")
    a, b = torch.randn(5), torch.randn(5)
    ep = tapegrad.export.export(pair(tapegrad), (from_torch(a), from_torch(b)), dynamic_shapes=({0: d}, {0: d}))
    tep = torch.export.export(pair(torch), (a, b), dynamic_shapes=({0: td}, {0: td}))
    assert_close(ep.module()(from_torch(torch.ones(8)), from_torch(torch.ones(8) * 2)), torch.ones(8) * 2)
    ours_error = _error(lambda: ep.module()(tapegrad.ones(7), tapegrad.ones(6)))
    assert ours_error == _error(lambda: tep.module()(torch.ones(7), torch.ones(6)))


def test_export_dynamic_shapes_errors_and_auto(torch):
    from torch.export import Dim as TDim
    Dim = tapegrad.export.Dim
    ours, theirs = _small(tapegrad), _small(torch)
    ours.load_state_dict({k: from_torch(v) for k, v in theirs.state_dict().items()})
    x, y = torch.randn(5, 4), torch.randn(3)
    args = (from_torch(x), from_torch(y))
    for spec in (lambda D: {"x": {0: D("b")}}, lambda D: ({0: D("b")},), lambda D: {"x": {0: "b"}, "y": None},
                 lambda D: {"x": {0: 6}, "y": None}, lambda D: {"x": {0: D("b", min=6)}, "y": None}):
        ours_error = _error(lambda: tapegrad.export.export(ours, args, dynamic_shapes=spec(Dim)))
        theirs_error = _error(lambda: torch.export.export(theirs, (x, y), dynamic_shapes=spec(TDim)))
        assert issubclass(ours_error[0], RuntimeError) and issubclass(theirs_error[0], RuntimeError)
        assert ours_error[1] == theirs_error[1]

    # code that needs a fixed size: a named Dim is refused, Dim.AUTO falls back to a static dimension
    class Fixed(tapegrad.nn.Module):
        def forward(self, x):
            return x.reshape(5, -1)[1:]
    with pytest.raises(RuntimeError, match=r"^Constraints violated \(b\)!"):
        tapegrad.export.export(Fixed(), (args[0],), dynamic_shapes={"x": {0: Dim("b")}})
    with pytest.raises(RuntimeError, match=r"^Constraints violated \(L\['x'\].size\(\)\[0\]\)!"):
        tapegrad.export.export(Fixed(), (args[0],), dynamic_shapes={"x": {0: Dim.DYNAMIC}})
    ep = tapegrad.export.export(Fixed(), (args[0],), dynamic_shapes={"x": {0: Dim.AUTO}})
    assert_close(ep.module()(args[0]), x.reshape(5, -1)[1:])
    with pytest.raises(AssertionError, match=r"Guard failed: x.size\(\)\[0\] == 5"):
        ep.module()(tapegrad.ones(6, 4))
    # where the code allows it, AUTO and DYNAMIC dims are dynamic (equal sizes inferred, as PyTorch)
    ep = tapegrad.export.export(ours, args, dynamic_shapes=((Dim.AUTO, Dim.AUTO), (Dim.DYNAMIC,)))
    assert_close(ep.module()(from_torch(x[:2]), from_torch(y)), theirs(x[:2], y))


def test_export_dynamic_program_saved_and_loaded(torch):
    require("flatbuffers")
    Dim = tapegrad.export.Dim
    ours = _small(tapegrad)
    args = (tapegrad.randn(5, 4), tapegrad.randn(3))
    ep = tapegrad.export.export(ours, args, dynamic_shapes={"x": {0: Dim("batch", min=3, max=16)}, "y": None})
    buffer = io.BytesIO()
    tapegrad.export.save(ep, buffer)
    buffer.seek(0)
    loaded = tapegrad.export.load(buffer)
    x = tapegrad.randn(11, 4)
    # (float32 through two evaluation orders: a last-bit difference of an O(1) term, relative to a small result)
    np.testing.assert_allclose(loaded.module()(x, args[1]).detach().numpy(), ours(x, args[1]).detach().numpy(),
                               rtol=1e-6, atol=1e-6)
    with pytest.raises(AssertionError, match=r"Guard failed: x.size\(\)\[0\] <= 16"):
        loaded.module()(tapegrad.randn(17, 4), args[1])


def test_export_dynamic_batch_through_views_and_indexing(torch):
    """Shapes read in Python (x.shape[0] in view, -1, flatten, `:` slices) stay symbolic along a dynamic dim."""
    def make(lib):
        class Net(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = lib.nn.Conv2d(2, 3, 3, padding=1)

            def forward(self, x):
                h = self.conv(x)
                return h.view(h.shape[0], -1)[:, :5] + h.reshape(x.shape[0], -1, 4)[:, 0].sum(1, True)
        return Net()
    torch.manual_seed(0)
    theirs = make(torch)
    ours = make(tapegrad)
    ours.load_state_dict({k: from_torch(v) for k, v in theirs.state_dict().items()})
    ep = tapegrad.export.export(ours, (tapegrad.randn(4, 2, 4, 4),),
                                dynamic_shapes={"x": {0: tapegrad.export.Dim("batch")}})
    for n in (1, 6):
        x = torch.randn(n, 2, 4, 4)
        assert_close(ep.module()(from_torch(x)), theirs(x), rtol=1e-5, atol=1e-5)


def test_export_derived_dims_like_torch(torch):
    """d + 1, 2*d + 1: a size that follows a Dim's (names, bounds, guards and arithmetic errors as PyTorch's)."""
    from torch.export import Dim as TDim
    Dim = tapegrad.export.Dim
    d, td = Dim("d", min=3, max=20), TDim("d", min=3, max=20)
    for make in (lambda v: v + 1, lambda v: 2 * v + 1, lambda v: v - 1, lambda v: (v + 1) * 2):
        ours, theirs = make(d), make(td)
        assert (repr(ours), ours.__name__, ours.min, ours.max) == (repr(theirs), theirs.__name__, theirs.min,
                                                                   theirs.max)
    for make in (lambda v: v + 1.5, lambda v: 1 - v, lambda v: v * -2):
        assert _error(lambda: make(d)) == _error(lambda: make(td))

    def make(lib):
        class Shift(lib.nn.Module):
            def forward(self, x, y):
                return x[1:] * y
        return Shift()
    x, y = torch.randn(6), torch.randn(5)
    ep = tapegrad.export.export(make(tapegrad), (from_torch(x), from_torch(y)),
                                dynamic_shapes={"x": {0: d + 1}, "y": {0: d}})
    tep = torch.export.export(make(torch), (x, y), dynamic_shapes={"x": {0: td + 1}, "y": {0: td}})
    x2, y2 = torch.randn(12), torch.randn(11)
    assert_close(ep.module()(from_torch(x2), from_torch(y2)), x2[1:] * y2)
    for a, b in ((9, 7), (3, 2), (30, 29)):
        ours_error = _error(lambda: ep.module()(tapegrad.ones(a), tapegrad.ones(b)))
        assert ours_error == _error(lambda: tep.module()(torch.ones(a), torch.ones(b))), (a, b)
