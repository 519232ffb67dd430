"""tapegrad.jit, tapegrad.fx, tapegrad.export and tapegrad.onnx against PyTorch's modules of the same names."""
import io

import numpy as np
import pytest

import tapegrad
from conftest import assert_close, from_torch, require


def _net(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(4, 6)
            self.norm = lib.nn.BatchNorm1d(6)
            self.head = lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Linear(6, 3))
            self.scale = lib.nn.Parameter(lib.ones(3) * 0.5)

        def forward(self, x, y):
            h = self.head(self.norm(self.lin(x)))
            return h * self.scale + y.sum(), lib.tanh(h).mean(dim=1)
    return Net()


def _pair(torch, eval_mode=True):
    """The same network in both libraries (tapegrad's weights copied from PyTorch's), and inputs."""
    torch.manual_seed(0)
    theirs = _net(torch)
    ours = _net(tapegrad)
    ours.load_state_dict({k: from_torch(v) for k, v in theirs.state_dict().items()})
    if eval_mode:
        ours.eval(), theirs.eval()
    x, y = torch.randn(5, 4), torch.randn(3)
    return ours, theirs, (from_torch(x), from_torch(y)), (x, y)


def _close(ours, theirs):
    for a, b in zip(ours, theirs):
        assert_close(a, b)


# ---- fx --------------------------------------------------------------------------------------------

def test_symbolic_trace_graph_and_rerun(torch):
    ours, theirs, args, targs = _pair(torch)
    gm = tapegrad.fx.symbolic_trace(ours, example_inputs=args)
    tgm = torch.fx.symbolic_trace(theirs)
    nodes = list(gm.graph.nodes)
    assert len(gm.graph.nodes) == len(nodes)
    # the same placeholders, leaf modules, parameter reads and output arity as torch.fx
    for op in ("placeholder", "call_module", "get_attr"):
        assert [n.target for n in nodes if n.op == op] == [n.target for n in tgm.graph.nodes if n.op == op], op
    assert nodes[-1].op == "output" and len(nodes[-1].args[0]) == 2
    assert {n.op for n in nodes} == {"placeholder", "call_module", "get_attr", "call_function", "output"}
    assert all(n.name.isidentifier() for n in nodes)
    text = str(gm.graph)
    assert text.startswith("graph():\n    %x : [num_users=1] = placeholder[target=x]")
    assert "call_module[target=lin](args = (%x,), kwargs = {})" in text
    assert "def forward(self, x, y):" in gm.code and "self.lin(x)" in gm.code
    _close(gm(*args), tgm(*targs))
    _close(gm(*args), theirs(*targs))
    # the graph reruns through the tape: gradients reach the shared parameters
    gm(*args)[0].sum().backward()
    theirs(*targs)[0].sum().backward()
    assert_close(ours.lin.weight.grad, theirs.lin.weight.grad)
    assert_close(ours.scale.grad, theirs.scale.grad)


def test_nodes_users_and_graph_edit(torch):
    ours, theirs, args, targs = _pair(torch)
    gm = tapegrad.fx.symbolic_trace(ours, example_inputs=args)
    for node in gm.graph.nodes:
        for inp in node.all_input_nodes:
            assert node in inp.users
    # drop the ReLU inside head: head.0 is a leaf call_module, its users now read its input
    relu = next(n for n in gm.graph.nodes if n.op == "call_module" and n.target == "head.0")
    relu.replace_all_uses_with(relu.args[0])
    gm.graph.erase_node(relu)
    gm.recompile()
    assert "head" not in [n.target for n in gm.graph.nodes if n.op == "call_module"][2:3]
    with torch.no_grad():
        h = theirs.head[1](theirs.norm(theirs.lin(targs[0])))
        expected = (h * theirs.scale + targs[1].sum(), torch.tanh(h).mean(dim=1))
    _close(gm(*args), expected)


def test_trace_a_function_recorded_or_symbolic(torch):
    def make(lib):
        def f(a, b):
            c = a @ b.t()
            return lib.nn.functional.softmax(c, dim=-1)[:, 1:] * 2.0
        return f
    f = make(tapegrad)
    a, b = torch.randn(3, 4), torch.randn(5, 4)
    expected = torch.softmax(a @ b.t(), dim=-1)[:, 1:] * 2.0
    gm = tapegrad.fx.symbolic_trace(f, example_inputs=(from_torch(a), from_torch(b)))
    names = [n.target.__name__ for n in gm.graph.nodes if n.op == "call_function"]
    assert "softmax" in names and "mul" in names
    assert_close(gm(from_torch(a), from_torch(b)), expected)
    # without example inputs the trace is symbolic, as torch.fx's: the same nodes as PyTorch's graph
    symbolic = tapegrad.fx.symbolic_trace(f)
    theirs = torch.fx.symbolic_trace(make(torch))
    assert [(n.op, n.name) for n in symbolic.graph.nodes] == [(n.op, n.name) for n in theirs.graph.nodes]
    assert_close(symbolic(from_torch(a), from_torch(b)), expected)
    with pytest.raises(ValueError, match="concrete_args is for symbolic tracing"):
        tapegrad.fx.symbolic_trace(f, concrete_args={"a": 1}, example_inputs=(from_torch(a), from_torch(b)))


# ---- jit -------------------------------------------------------------------------------------------

def test_jit_trace_module(torch):
    ours, theirs, args, targs = _pair(torch)
    traced = tapegrad.jit.trace(ours, args)
    ttraced = torch.jit.trace(theirs, targs)
    assert isinstance(traced, tapegrad.jit.ScriptModule) and isinstance(traced, tapegrad.nn.Module)
    assert list(traced.state_dict()) == list(ttraced.state_dict())
    assert all(p is q for p, q in zip(traced.parameters(), ours.parameters()))
    for _ in range(2):   # the second call runs the compiled program
        _close(traced(*args), ttraced(*targs))
    assert "def forward(self, x, y):" in traced.code
    assert [n.target for n in traced.graph.nodes if n.op == "call_module"] == ["lin", "norm", "head.0", "head.1"]
    traced.train()
    assert ours.training and ours.lin.training


def test_jit_script_trace_function_and_markers(torch):
    calls = []

    def f(x):
        calls.append(tapegrad.jit.is_tracing())
        return x.sin() * 2 + 1

    x = torch.randn(4)
    traced = tapegrad.jit.trace(f, from_torch(x))
    assert calls == [True]
    assert_close(traced(from_torch(x)), torch.jit.trace(lambda v: v.sin() * 2 + 1, x)(x))
    assert "tapegrad.ops.sin" in traced.code and "sin" in str(traced.graph)
    scripted = tapegrad.jit.script(f)
    assert_close(scripted(from_torch(x)), x.sin() * 2 + 1)
    assert "def f(x):" in scripted.code
    with pytest.raises(RuntimeError, match=r"tapegrad.jit.trace\(fn, example_inputs\).graph"):
        scripted.graph
    module = tapegrad.jit.script(tapegrad.nn.Linear(3, 2))
    assert module(tapegrad.ones(1, 3)).shape == (1, 2) and "def forward" in module.code

    for lib in (tapegrad, torch):
        @lib.jit.ignore
        def helper(v):
            return v + 1

        @lib.jit.unused
        def unused(v):
            return v

        @lib.jit.ignore(drop=True)
        def dropped(v):
            return v * 3
        assert helper(1) == 2 and unused(5) == 5 and dropped(2) == 6
        assert lib.jit.is_scripting() is False and lib.jit.is_tracing() is False
        assert lib.jit.annotate(int, 3) == 3


def _two_methods(lib):
    class M(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = lib.nn.Linear(3, 2)

        def forward(self, x, y=None):
            return self.lin(x) + (0 if y is None else y)

        def scaled(self, x, s):
            return self.lin(x) * s
    return M()


def test_jit_trace_with_keyword_inputs_and_trace_module_methods(torch):
    torch.manual_seed(0)
    theirs = _two_methods(torch)
    ours = _two_methods(tapegrad)
    ours.load_state_dict({k: from_torch(v) for k, v in theirs.state_dict().items()})
    x, y, s = torch.randn(4, 3), torch.randn(4, 2), torch.tensor(2.0)
    ox, oy, os_ = from_torch(x), from_torch(y), from_torch(s)
    ttraced = torch.jit.trace(theirs, example_kwarg_inputs={"y": y, "x": x})
    traced = tapegrad.jit.trace(ours, example_kwarg_inputs={"y": oy, "x": ox})
    assert isinstance(traced, tapegrad.jit.TracedModule)
    assert "def forward(self, x, y):" in traced.code   # the parameters in forward's order, as PyTorch's
    assert_close(traced(ox, oy), ttraced(x, y))
    assert_close(traced(x=ox, y=oy), ttraced(x=x, y=y))

    def f(a, b):
        return a * 2 + b
    tf = torch.jit.trace(f, example_kwarg_inputs={"a": x, "b": x + 1})
    of = tapegrad.jit.trace(f, example_kwarg_inputs={"a": ox, "b": ox + 1})
    assert "def forward(self, a, b):" in of.code
    assert_close(of(a=ox, b=ox), tf(a=x, b=x))
    for lib, m, v in ((tapegrad, ours, ox), (torch, theirs, x)):
        with pytest.raises(RuntimeError, match="example_kwarg_inputs should be a dict"):
            lib.jit.trace(m, example_kwarg_inputs=(v,))
        with pytest.raises(NameError, match="'z' is not in forward\\(\\) method's arguments"):
            lib.jit.trace(m, example_kwarg_inputs={"x": v, "z": v})

    # trace_module: each named method traced on its inputs; the module has those methods (forward only if named)
    inputs = {"forward": (x,), "scaled": (x, s)}
    ttm = torch.jit.trace_module(theirs, inputs)
    tm = tapegrad.jit.trace_module(ours, {"forward": (ox,), "scaled": (ox, os_)})
    for _ in range(2):
        assert_close(tm.scaled(ox, os_ * 3), ttm.scaled(x, s * 3))
        assert_close(tm(ox), ttm(x))
    assert "def scaled(self, x, s):" in tm.scaled.code and "def forward(self, x):" in tm.code
    assert [n.op for n in tm.scaled.graph.nodes] == ["placeholder", "placeholder", "call_module", "call_function",
                                                     "output"]
    ttm = torch.jit.trace_module(theirs, {"scaled": (x, s)})
    tm = tapegrad.jit.trace_module(ours, {"scaled": (ox, os_)})
    assert not hasattr(tm, "forward") and not hasattr(ttm, "forward")
    with pytest.raises(AttributeError, match="has no attribute 'forward'"):
        tm(ox)
    kw = tapegrad.jit.trace_module(ours, {"forward": {"x": ox, "y": oy}}, example_inputs_is_kwarg=True)
    assert_close(kw(ox, oy), torch.jit.trace_module(theirs, {"forward": {"x": x, "y": y}},
                                                    example_inputs_is_kwarg=True)(x, y))
    # a list of example inputs is the inputs; a module's other method is traced with trace_module only
    assert_close(tapegrad.jit.trace(f, [ox, ox])(ox, ox), torch.jit.trace(f, [x, x + 1])(x, x))
    for lib, m, v in ((tapegrad, ours, ox), (torch, theirs, x)):
        with pytest.raises(AttributeError, match="trace doesn't support compiling individual module's functions"):
            lib.jit.trace(m.scaled, (v, v))
        with pytest.raises(AttributeError, match="expected a dictionary of \\(method_name, input\\) pairs"):
            lib.jit.trace_module(m, [v])
        with pytest.raises(AttributeError, match="'M' object has no attribute 'nope'"):
            lib.jit.trace_module(m, {"nope": (v,)})


def test_jit_save_and_load_refuse():
    model = tapegrad.jit.trace(tapegrad.nn.Linear(2, 2), tapegrad.ones(1, 2))
    for action in (lambda: tapegrad.jit.save(model, io.BytesIO()), lambda: model.save("m.pt"),
                   lambda: tapegrad.jit.load("m.pt")):
        with pytest.raises(RuntimeError, match="TorchScript") as info:
            action()
        assert "tapegrad.save" in str(info.value) or "tapegrad.load" in str(info.value)
        assert "tapegrad.export" in str(info.value)
    with pytest.raises(RuntimeError, match="example_inputs must be provided"):
        tapegrad.jit.trace(tapegrad.nn.Linear(2, 2))


# ---- export and onnx -------------------------------------------------------------------------------

@pytest.mark.parametrize("bake", [False, True])
def test_export_reruns_as_the_module(torch, bake):
    ours, theirs, args, targs = _pair(torch)
    ep = tapegrad.export.export(ours, args, bake_parameters=bake)
    text = ep.mlir_module()
    assert "func.func public @main" in text and "stablehlo." in text
    assert list(ep.state_dict) == ([] if bake else [k for k in ours.state_dict()])
    expected = theirs(*targs)
    _close(ep.module()(*args), expected)
    # new values, same shapes: the program is rerun, not replayed
    x2, y2 = torch.randn(5, 4), torch.randn(3)
    _close(ep.module()(from_torch(x2), from_torch(y2)), theirs(x2, y2))
    # another size: PyTorch's guard on a static dimension (checked against PyTorch in the dynamic-shapes test)
    with pytest.raises(AssertionError, match=r"^Guard failed: x.size\(\)\[0\] == 5$"):
        ep.module()(tapegrad.ones(2, 4), args[1])
    with pytest.raises(RuntimeError, match=r"must have shape \[5, 4\] and dtype float32"):
        ep.module()(tapegrad.ones(5, 4, 1), args[1])


def test_export_serialize_save_load(torch):
    require("flatbuffers")
    ours, theirs, args, targs = _pair(torch)
    ep = tapegrad.export.export(ours, args)
    again = tapegrad.export.deserialize(ep.serialize(), ep.state_dict, outputs="tuple")
    _close(again.module()(*args), theirs(*targs))
    buffer = io.BytesIO()
    tapegrad.export.save(ep, buffer)
    buffer.seek(0)
    loaded = tapegrad.export.load(buffer)
    _close(loaded.module()(*args), theirs(*targs))
    half = tapegrad.nn.Linear(3, 2).to(tapegrad.bfloat16)
    x = tapegrad.ones(1, 3, dtype=tapegrad.bfloat16)
    buffer = io.BytesIO()
    tapegrad.export.save(tapegrad.export.export(half, (x,)), buffer)
    buffer.seek(0)
    out = tapegrad.export.load(buffer).module()(x)
    assert out.dtype is tapegrad.bfloat16
    np.testing.assert_array_equal(out.float().detach().numpy(), half(x).float().detach().numpy())


def test_export_refuses_python_reads_and_onnx(torch):
    class Branchy(tapegrad.nn.Module):
        def forward(self, x):
            return x * 2 if x.sum().item() > 0 else x
    with pytest.raises(RuntimeError, match="cannot read tensor values in Python"):
        tapegrad.export.export(Branchy(), (tapegrad.ones(2),))
    with pytest.raises(RuntimeError, match=r"tapegrad.export.export\(model, args\)") as info:
        tapegrad.onnx.export(tapegrad.nn.Linear(2, 2), (tapegrad.ones(1, 2),), "model.onnx")
    assert isinstance(info.value, tapegrad.onnx.OnnxExporterError)

