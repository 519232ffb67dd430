"""tapegrad.fx's symbolic tracing (Tracer, Proxy, GraphAppendingTracer, wrap, map_arg, replace_pattern and the
Graph editing API) against torch.fx, on the patterns of PyTorch's fx examples: each program is written once
for a library `lib` and traced by both; graphs (ops, names, targets, arguments) and results are compared."""
import operator

import numpy as np
import pytest

import tapegrad
import tapegrad.fx
from conftest import assert_close, from_torch


def _lowp_sigmoid(x):
    x = x.float()
    x = x.sigmoid()
    return x.double()


def _torch_lowp_sigmoid(x):
    x = x.float()
    x = x.sigmoid()
    return x.double()


tapegrad.fx.wrap(_lowp_sigmoid)


def _wrap_torch():
    import torch.fx
    torch.fx._symbolic_trace._wrapped_fns_to_patch[(id(globals()), "_torch_lowp_sigmoid")] = globals()


# ---- helpers ---------------------------------------------------------------------------------------

def _target(t):
    if isinstance(t, str):
        return t
    module = getattr(t, "__module__", "") or ""
    if module in ("_operator", "operator"):
        return "operator." + t.__name__
    return t.__name__.lstrip("_").replace("torch_", "")


def _norm(value):
    """A node argument with nodes as '%name' and library names spelled alike, for comparison."""
    if hasattr(value, "op") and hasattr(value, "graph") and hasattr(value, "name"):
        return "%" + value.name.replace("torch_", "")
    if isinstance(value, (list, tuple)):
        return type(value)(_norm(v) for v in value)
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    if type(value).__module__.startswith(("torch", "tapegrad")):
        return str(value).replace("tapegrad.", "torch.")
    return value


def _nodes(graph):
    graph = getattr(graph, "graph", graph)
    return [(n.op, n.name.replace("torch_", ""), _target(n.target), _norm(n.args), _norm(n.kwargs))
            for n in graph.nodes]


def _same_graph(ours, theirs):
    assert _nodes(ours) == _nodes(theirs)


def _copy_weights(ours, theirs):
    ours.load_state_dict({k: from_torch(v) for k, v in theirs.state_dict().items()})
    return ours


def _block(lib):
    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = lib.nn.Conv2d(3, 4, 3, padding=1)
            self.bn1 = lib.nn.BatchNorm2d(4)
            self.relu = lib.nn.ReLU()
            self.conv2 = lib.nn.Conv2d(4, 4, 3, padding=1)
            self.bn2 = lib.nn.BatchNorm2d(4)
            self.downsample = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 1), lib.nn.BatchNorm2d(4))
            self.fc = lib.nn.Linear(4 * 5 * 5, 2)
            self.scale = lib.nn.Parameter(lib.ones(2))
            self.register_buffer("shift", lib.zeros(2) + 0.5)

        def forward(self, x):
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            out += self.downsample(x)
            out = self.relu(out)
            out = lib.flatten(out, 1)
            return self.fc(out) * self.scale + self.shift
    return Block()


def _block_pair(torch):
    torch.manual_seed(0)
    theirs = _block(torch).eval()
    ours = _copy_weights(_block(tapegrad), theirs).eval()
    return ours, theirs, torch.randn(2, 3, 5, 5)


# ---- tracing ---------------------------------------------------------------------------------------

def test_symbolic_trace_module_like_torch_fx(torch):
    ours, theirs, x = _block_pair(torch)
    gm, tgm = tapegrad.fx.symbolic_trace(ours), torch.fx.symbolic_trace(theirs)
    _same_graph(gm, tgm)
    assert type(gm).__name__ == "Block" and isinstance(gm, tapegrad.fx.GraphModule)
    assert "def forward(self, x):" in gm.code and "self.downsample" in gm.code
    assert_close(gm(from_torch(x)), tgm(x))
    # gradients reach the shared parameters through the GraphModule
    gm(from_torch(x)).sum().backward()
    tgm(x).sum().backward()
    assert_close(ours.fc.weight.grad, theirs.fc.weight.grad)
    assert_close(ours.scale.grad, theirs.scale.grad)


def test_methods_attributes_operators_and_unpacking(torch):
    def make(lib):
        def f(x, y, n: int = 2):
            a, b = x.chunk(2, dim=1)
            h = x.view(x.shape[0], -1) @ y.t()
            z = (-a + 1.5) * b / 2 - (a ** 2) % 3
            return lib.cat([z, h[:, :2]], dim=1).sum(dim=0) + x.size(1) + n, x.dtype
        return f
    gm, tgm = tapegrad.fx.symbolic_trace(make(tapegrad)), torch.fx.symbolic_trace(make(torch))
    _same_graph(gm, tgm)
    x, y = torch.randn(3, 4), torch.randn(5, 4)
    out, dtype = gm(from_torch(x), from_torch(y))
    expected, tdtype = tgm(x, y)
    assert_close(out, expected)
    assert str(dtype).replace("tapegrad", "torch") == str(tdtype)


def test_control_flow_and_len_raise_as_in_torch_fx(torch):
    def branch(lib):
        def f(x):
            if x.sum() > 0:
                return x
            return -x
        return f

    def length(lib):
        def f(x):
            return x * len(x)
        return f

    def loop(lib):
        def f(x):
            return [v for v in x]
        return f
    for make in (branch, length, loop):
        with pytest.raises(Exception) as theirs:
            torch.fx.symbolic_trace(make(torch))
        with pytest.raises(Exception) as ours:
            tapegrad.fx.symbolic_trace(make(tapegrad))
        assert type(ours.value).__name__ == type(theirs.value).__name__
        assert str(ours.value).split(".")[0] == str(theirs.value).split(".")[0]


def test_custom_tracers(torch):
    """PyTorch's fx/custom_tracer.py and module_tracer.py: is_leaf_module, create_node, call_module,
    create_proxy overridden in Tracer subclasses."""
    def tracers(lib):
        class LowerReluTracer(lib.fx.Tracer):
            def is_leaf_module(self, m, qualname):
                if isinstance(m, lib.nn.ReLU):
                    return False
                return super().is_leaf_module(m, qualname)

        class TaggingTracer(lib.fx.Tracer):
            def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
                n = super().create_node(kind, target, args, kwargs, name)
                n.tag = "foo"
                return n

        class ModulePathTracer(lib.fx.Tracer):
            current_module_qualified_name = ""

            def __init__(self):
                super().__init__()
                self.node_to_originating_module = {}

            def call_module(self, m, forward, args, kwargs):
                old = self.current_module_qualified_name
                try:
                    self.current_module_qualified_name = self.path_of_module(m)
                    return super().call_module(m, forward, args, kwargs)
                finally:
                    self.current_module_qualified_name = old

            def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None, *rest):
                proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr)
                self.node_to_originating_module[proxy.node] = self.current_module_qualified_name
                return proxy
        return LowerReluTracer, TaggingTracer, ModulePathTracer

    ours, theirs, x = _block_pair(torch)
    for our_cls, their_cls in zip(tracers(tapegrad), tracers(torch)):
        our_tracer, their_tracer = our_cls(), their_cls()
        graph, tgraph = our_tracer.trace(ours), their_tracer.trace(theirs)
        _same_graph(graph, tgraph)
        assert_close(tapegrad.fx.GraphModule(ours, graph)(from_torch(x)), torch.fx.GraphModule(theirs, tgraph)(x))
        if our_cls.__name__ == "TaggingTracer":
            assert all(n.tag == "foo" for n in graph.nodes)
        if our_cls.__name__ == "ModulePathTracer":
            assert [(n.name, our_tracer.node_to_originating_module.get(n)) for n in graph.nodes] == \
                [(n.name, their_tracer.node_to_originating_module.get(n)) for n in tgraph.nodes]
    assert any(n.op == "call_function" and n.target is tapegrad.nn.functional.relu
               for n in tracers(tapegrad)[0]().trace(ours).nodes)


def test_wrap_and_inlining_with_proxies(torch):
    """PyTorch's fx/primitive_library.py: a wrapped function is a call_function leaf; Proxies over its
    node's arguments inline it, after tracing or from a Tracer's create_node."""
    _wrap_torch()

    def make(lib, fn):
        class Foo(lib.nn.Module):   # the wrapped names are read as globals, as wrap patches them
            def forward(self, x, y):
                if lib is tapegrad:
                    return _lowp_sigmoid(x) + _lowp_sigmoid(y)
                return _torch_lowp_sigmoid(x) + _torch_lowp_sigmoid(y)
        return Foo()
    gm = tapegrad.fx.symbolic_trace(make(tapegrad, _lowp_sigmoid))
    tgm = torch.fx.symbolic_trace(make(torch, _torch_lowp_sigmoid))
    _same_graph(gm, tgm)
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"][0] is _lowp_sigmoid
    assert "__lowp_sigmoid(x)" in gm.code.replace("test_fx_tracer_", "_")

    def inline(lib, module, fn):
        for n in list(module.graph.nodes):
            if n.op == "call_function" and n.target is fn:
                tracer = lib.fx.proxy.GraphAppendingTracer(n.graph)
                with n.graph.inserting_before(n):
                    args = lib.fx.node.map_arg(n.args, lambda a: lib.fx.Proxy(a, tracer))
                    kwargs = lib.fx.node.map_arg(n.kwargs, lambda a: lib.fx.Proxy(a, tracer))
                    out = n.target(*args, **kwargs)
                    n.replace_all_uses_with(out.node)
                    n.graph.erase_node(n)
        module.graph.lint()
        module.recompile()
    inline(tapegrad, gm, _lowp_sigmoid)
    inline(torch, tgm, _torch_lowp_sigmoid)
    _same_graph(gm, tgm)
    x, y = torch.randn(3), torch.randn(3)
    assert_close(gm(from_torch(x), from_torch(y)), tgm(x, y))

    def inlining_tracer(lib, fn):
        class InliningTracer(lib.fx.Tracer):
            def create_node(self, kind, target, args, kwargs, name=None, type_expr=None):
                if kind == "call_function" and target is fn:
                    tracer = lib.fx.proxy.GraphAppendingTracer(self.graph)
                    proxy_args = lib.fx.node.map_arg(args, lambda a: lib.fx.Proxy(a, tracer))
                    return fn(*proxy_args).node
                return super().create_node(kind, target, args, kwargs, name, type_expr)
        return InliningTracer()
    graph = inlining_tracer(tapegrad, _lowp_sigmoid).trace(make(tapegrad, _lowp_sigmoid))
    tgraph = inlining_tracer(torch, _torch_lowp_sigmoid).trace(make(torch, _torch_lowp_sigmoid))
    _same_graph(graph, tgraph)


def test_graph_built_with_proxies(torch):
    """PyTorch's fx/proxy_based_graph_creation.py and wrap_output_dynamically.py."""
    def build(lib):
        graph = lib.fx.Graph()
        tracer = lib.fx.proxy.GraphAppendingTracer(graph)
        x = lib.fx.Proxy(graph.placeholder("x"), tracer)
        y = lib.fx.Proxy(graph.placeholder("y"), tracer)
        b = lib.tanh(lib.cat([x, y]))
        c = lib.neg(b)
        lib.add(b, c)   # appended, unused
        graph.output(c.node)
        return lib.fx.GraphModule(lib.nn.Module(), graph)
    mod, tmod = build(tapegrad), build(torch)
    _same_graph(mod, tmod)
    x, y = torch.randn(2, 3), torch.randn(1, 3)
    assert_close(mod(from_torch(x), from_torch(y)), tmod(x, y))
    assert mod.graph.eliminate_dead_code() and tmod.graph.eliminate_dead_code()
    _same_graph(mod, tmod)

    def wrap_output(lib):
        class M(lib.nn.Module):
            def forward(self, x, y):
                return lib.cat([x, y])
        traced = lib.fx.symbolic_trace(M())
        output = next(n for n in reversed(traced.graph.nodes) if n.op == "output")
        wrap_node = output.all_input_nodes[0]
        activation = lib.fx.symbolic_trace(lib.nn.LeakyReLU())
        with traced.graph.inserting_after(wrap_node):
            output.args = (activation(lib.fx.Proxy(wrap_node)).node,)
        traced.recompile()
        return traced
    traced, ttraced = wrap_output(tapegrad), wrap_output(torch)
    _same_graph(traced, ttraced)
    assert_close(traced(from_torch(x), from_torch(y)), ttraced(x, y))


def test_replace_ops_and_inserting_points(torch):
    """PyTorch's fx/replace_op.py: the three spellings of an addition found by target, replaced after insertion."""
    def make(lib):
        class M(lib.nn.Module):
            def forward(self, x, y):
                return x + y, lib.add(x, y), x.add(y)
        traced = lib.fx.symbolic_trace(M())
        for n in traced.graph.nodes:
            if any(n.target == p for p in (operator.add, lib.add, "add")):
                with traced.graph.inserting_after(n):
                    new_node = traced.graph.call_function(lib.bitwise_and, n.args, n.kwargs)
                    n.replace_all_uses_with(new_node)
                traced.graph.erase_node(n)
        traced.recompile()
        return traced
    traced, ttraced = make(tapegrad), make(torch)
    _same_graph(traced, ttraced)
    x, y = torch.tensor([1, 6, 3]), torch.tensor([3, 5, 9])
    for a, b in zip(traced(from_torch(x), from_torch(y)), ttraced(x, y)):
        np.testing.assert_array_equal(a.numpy(), b.numpy())

    def order(lib):
        g = lib.fx.Graph()
        x = g.placeholder("x")
        y = g.call_function(lib.relu, (x,))
        g.output(y)
        with g.inserting_after(x):   # each new node goes right after x: they read in reverse
            a = g.call_function(lib.neg, (x,))
            g.call_function(lib.sin, (a,))
        with g.inserting_before(y):
            c = g.call_function(lib.cos, (x,))
            g.call_function(lib.tan, (c,))
        return g
    g, tg = order(tapegrad), order(torch)
    _same_graph(g, tg)
    with pytest.raises(RuntimeError) as ours:
        g.lint()
    with pytest.raises(RuntimeError) as theirs:
        tg.lint()
    assert str(ours.value).split("\n")[0] == str(theirs.value).split("\n")[0]


def test_replace_pattern(torch):
    """PyTorch's fx/subgraph_rewriter_basic_use.py."""
    def make(lib):
        class M(lib.nn.Module):
            def forward(self, x, w1, w2):
                m1 = lib.cat([lib.neg(w1), w2]).sum()
                m2 = lib.cat([lib.neg(w1), w2]).sum()
                kept = lib.neg(w2)   # read below: a match on it would lose this value
                return x + lib.max(m1) + lib.max(m2) + lib.cat([kept, w1]).sum() + kept.sum()

        def pattern(a1, a2):
            return lib.cat([lib.neg(a1), a2]).sum()

        def replacement(w1, w2):
            return lib.stack([w1, w2])
        traced = lib.fx.symbolic_trace(M())
        matches = lib.fx.replace_pattern(traced, pattern, replacement)
        return traced, matches
    (traced, matches), (ttraced, tmatches) = make(tapegrad), make(torch)
    assert len(matches) == len(tmatches) == 2
    assert [m.anchor.name for m in matches] == [m.anchor.name for m in tmatches]
    _same_graph(traced, ttraced)
    x, w1, w2 = torch.randn(3), torch.randn(3), torch.randn(3)
    assert_close(traced(from_torch(x), from_torch(w1), from_torch(w2)), ttraced(x, w1, w2))


def test_invert_and_inline_module_call(torch):
    """PyTorch's fx/invert.py (a new graph walked from an old one) and fx/inline_function.py."""
    def invert(lib, fn):
        mapping = {lib.sin: lib.arcsin, lib.exp: lib.log, lib.tan: lib.arctan}
        mapping.update({v: k for k, v in list(mapping.items())})
        fx_model = lib.fx.symbolic_trace(fn)
        new_graph, env = lib.fx.Graph(), {}
        for node in reversed(fx_model.graph.nodes):
            if node.op == "call_function":
                env[node.args[0].name] = new_graph.call_function(mapping[node.target], (env[node.name],))
            elif node.op == "output":
                env[node.args[0].name] = new_graph.placeholder(node.name)
            elif node.op == "placeholder":
                new_graph.output(env[node.name])
        new_graph.lint()
        return lib.fx.GraphModule(fx_model, new_graph)
    ours = invert(tapegrad, lambda x: tapegrad.exp(tapegrad.tan(x)))
    theirs = invert(torch, lambda x: torch.exp(torch.tan(x)))
    x = torch.arange(5.) + 1
    assert_close(ours(from_torch(x)), theirs(x))
    assert [n.op for n in ours.graph.nodes] == [n.op for n in theirs.graph.nodes]

    def inline(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.relu = lib.nn.ReLU()

            def forward(self, x):
                return self.relu(x) + 1.0
        m = lib.fx.symbolic_trace(M())
        tracer = lib.fx.proxy.GraphAppendingTracer(m.graph)
        for node in m.graph.nodes:
            if (node.op, node.target) == ("call_module", "relu"):
                with m.graph.inserting_before(node):
                    args = lib.fx.node.map_arg(node.args, lambda n: lib.fx.Proxy(n, tracer))
                    node.replace_all_uses_with(m.relu(*args).node)
                    m.graph.erase_node(node)
        m.recompile()
        return m
    m, tm = inline(tapegrad), inline(torch)
    _same_graph(m, tm)
    assert_close(m(from_torch(x - 3)), tm(x - 3))


def test_profiler_ranges_in_a_traced_graph(torch):
    """PyTorch's fx/profiling_tracer.py: record_function ranges kept as torch.ops.profiler calls."""
    lib = tapegrad

    class Foo(lib.nn.Module):
        def forward(self, x):
            with lib.profiler.record_function("foo"):
                return lib.relu(x)

    class ProfilerTracer(lib.fx.Tracer):
        def trace(self, root, concrete_args=None):
            cls = lib.autograd.profiler.record_function
            enter, exit_ = cls.__enter__, cls.__exit__
            tracer = self

            def fake_enter(_self):
                _self._fx_profiler_ctx = tracer.create_proxy("call_function", lib.ops.profiler._record_function_enter,
                                                             (_self.name,), {})
                return _self._fx_profiler_ctx

            def fake_exit(_self, *exc):
                lib.ops.profiler._record_function_exit(_self._fx_profiler_ctx)
            cls.__enter__, cls.__exit__ = fake_enter, fake_exit
            try:
                return super().trace(root, concrete_args)
            finally:
                cls.__enter__, cls.__exit__ = enter, exit_

    pt = ProfilerTracer()
    traced = lib.fx.GraphModule(pt.root if pt.root is not None else None, pt.trace(Foo()))
    assert [n.op for n in traced.graph.nodes].count("call_function") == 3
    assert not traced.graph.eliminate_dead_code()   # the exit has no users, and stays
    x = tapegrad.randn(5, 3)
    with lib.autograd.profiler.profile() as prof:
        out = traced(x)
        out.sum().item()
    assert "foo" in prof.key_averages().table()
    assert_close(out, torch.relu(torch.from_numpy(x.numpy())))


def test_node_api_and_print_tabular(torch, capsys):
    ours, theirs, _ = _block_pair(torch)
    gm, tgm = tapegrad.fx.symbolic_trace(ours), torch.fx.symbolic_trace(theirs)
    for n, tn in zip(gm.graph.nodes, tgm.graph.nodes):
        assert [u.name for u in n.users] == [u.name for u in tn.users]
        assert [a.name for a in n.all_input_nodes] == [a.name for a in tn.all_input_nodes]
        assert (n.next.name if n.next is not None else None) == (
            tn.next.name if tn.next.op != "root" else None)
    assert str(gm.graph).startswith("graph():\n    %x : [num_users=2] = placeholder[target=x]")
    gm.graph.print_tabular()
    table = capsys.readouterr().out.splitlines()
    assert table[0].split() == ["opcode", "name", "target", "args", "kwargs"]
    assert table[2].split()[:3] == ["placeholder", "x", "x"] and len(table) == len(gm.graph.nodes) + 2
    assert tapegrad.fx.node.Target is not None
    assert tapegrad.fx.node.map_arg((1, [gm.graph.nodes.__iter__().__next__()]), lambda n: n.name) == (1, ["x"])


def test_interpreter_subclass(torch):
    """The fx profiling tutorial's pattern: an Interpreter whose run_node notes each node it runs."""
    def interpreter(lib):
        class Noting(lib.fx.Interpreter):
            def __init__(self, module):
                super().__init__(module)
                self.ran = []

            def run_node(self, n):
                out = super().run_node(n)
                self.ran.append((n.op, n.name))
                return out

            def call_function(self, target, args, kwargs):
                if target is operator.mul:   # swap an op while interpreting
                    return operator.sub(*args)
                return super().call_function(target, args, kwargs)
        return Noting
    ours, theirs, x = _block_pair(torch)
    gm, tgm = tapegrad.fx.symbolic_trace(ours), torch.fx.symbolic_trace(theirs)
    our_run, their_run = interpreter(tapegrad)(gm), interpreter(torch)(tgm)
    assert_close(our_run.run(from_torch(x)), their_run.run(x))
    assert our_run.ran == their_run.ran
    with pytest.raises(RuntimeError) as ours_error:
        interpreter(tapegrad)(gm).run()
    with pytest.raises(RuntimeError) as theirs_error:
        interpreter(torch)(tgm).run()
    assert str(ours_error.value).split("\n")[0] == str(theirs_error.value).split("\n")[0]


def test_concrete_args_specialize_with_a_check(torch):
    def make(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(3, 3)

            def forward(self, x, flag=True, y=None, *, scale=2.0):
                h = self.lin(x) + lib.ones(3)
                h = lib.relu(h) if flag else h
                h = h if y is None else h + y
                return h * scale, lib.nn.functional.dropout(h, p=0.1, training=False)
        return M()
    torch.manual_seed(0)
    theirs = make(torch)
    ours = _copy_weights(make(tapegrad), theirs)
    x = torch.randn(2, 3)
    for concrete in ({"flag": False, "y": None}, {"flag": True}):
        gm = tapegrad.fx.symbolic_trace(ours, concrete_args=concrete)
        tgm = torch.fx.symbolic_trace(theirs, concrete_args=concrete)
        _same_graph(gm, tgm)
        flag = concrete["flag"]
        y = None if "y" in concrete else torch.randn(3)
        for a, b in zip(gm(from_torch(x), flag, None if y is None else from_torch(y)), tgm(x, flag, y)):
            assert_close(a, b)
        assert not gm.graph.eliminate_dead_code()
    with pytest.raises(AssertionError, match="flag has been specialized to have value True but got another value"):
        gm(from_torch(x), False)


def test_conv_bn_fuser_tutorial_pattern(torch):
    """PyTorch's "Building a Convolution/Batch Norm fuser in FX" tutorial, written once for either library."""
    import copy

    def fuse(lib, model):
        def fuse_conv_bn_eval(conv, bn):
            fused = copy.deepcopy(conv)
            scale = bn.weight * lib.rsqrt(bn.running_var + bn.eps)
            bias = fused.bias if fused.bias is not None else lib.zeros_like(bn.running_mean)
            fused.weight = lib.nn.Parameter(fused.weight * scale.reshape([-1] + [1] * (fused.weight.ndim - 1)))
            fused.bias = lib.nn.Parameter((bias - bn.running_mean) * scale + bn.bias)
            return fused
        fx_model = lib.fx.symbolic_trace(copy.deepcopy(model))
        modules = dict(fx_model.named_modules())
        for node in fx_model.graph.nodes:
            if node.op != "call_module" or not isinstance(modules[node.target], lib.nn.BatchNorm2d):
                continue
            conv_node = node.args[0]
            if conv_node.op != "call_module" or not isinstance(modules[conv_node.target], lib.nn.Conv2d) \
                    or len(conv_node.users) > 1:
                continue
            fused = fuse_conv_bn_eval(modules[conv_node.target], modules[node.target])
            *parent, name = conv_node.target.rsplit(".", 1)
            setattr(modules[parent[0] if parent else ""], name, fused)
            node.replace_all_uses_with(conv_node)
            fx_model.graph.erase_node(node)
        fx_model.graph.lint()
        fx_model.recompile()
        return fx_model

    ours, theirs, x = _block_pair(torch)
    with torch.no_grad():
        for m in theirs.modules():   # running statistics that differ from the defaults
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-1, 1)
                m.running_var.uniform_(0.5, 2)
    _copy_weights(ours, theirs)
    fused, tfused = fuse(tapegrad, ours), fuse(torch, theirs)
    _same_graph(fused, tfused)
    modules = dict(fused.named_modules())
    assert not any(isinstance(modules[n.target], tapegrad.nn.BatchNorm2d) for n in fused.graph.nodes
                   if n.op == "call_module")
    with torch.no_grad():
        expected = theirs(x)
    np.testing.assert_allclose(fused(from_torch(x)).detach().numpy(), expected.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(tfused(x).detach().numpy(), expected.numpy(), rtol=1e-4, atol=1e-5)


def test_real_tensor_operators_with_proxy_operands(torch):
    """A buffer or a constant on the left of an operator, as PyTorch's __torch_function__ records it."""
    def make(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("b", lib.ones(3) * 2)
                self.register_buffer("pe", lib.arange(30.).reshape(10, 3))

            def forward(self, x):
                y = self.b + x
                z = lib.ones(3) * y
                return (2 - z @ self.b)[:, None] + self.pe[:4] + (self.b > x)
        return M()
    gm, tgm = tapegrad.fx.symbolic_trace(make(tapegrad)), torch.fx.symbolic_trace(make(torch))
    _same_graph(gm, tgm)
    x = torch.randn(4, 3)
    assert_close(gm(from_torch(x)), tgm(x))


def _signature_and_bindings(code):
    """The generated forward's def line and its `name = parameter` lines (PyTorch's drop their `; x = None`)."""
    lines = [line.split(";")[0] for line in code.splitlines()]
    return [line for line in lines if line.startswith("def ") or " = " in line and line.split(" = ")[1].isidentifier()]


def test_varargs_and_kwargs_forwards_trace_as_torch_fx(torch):
    """*args and **kwargs are one placeholder each (target "*args", named _args), read by getitem nodes; keyword-only
    parameters become positional; the generated forward keeps the signature and runs as PyTorch's."""
    def make(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(3, 3)

            def forward(self, x, *args, **kwargs):
                return self.lin(x) + args[0] * kwargs["scale"]
        return M()

    def f(input, *args, y=3):
        return input * y + args[1]

    def g(*args):
        return args[0] - args[1]

    torch.manual_seed(0)
    theirs = make(torch)
    ours = _copy_weights(make(tapegrad), theirs)
    x, a, b = torch.randn(2, 3), torch.randn(3), torch.randn(3)
    cases = [(ours, theirs, lambda gm, cv: gm(cv(x), cv(a), scale=2.0)),
             (f, f, lambda gm, cv: gm(cv(x), cv(a), 4, cv(b))),
             (g, g, lambda gm, cv: gm(cv(x), cv(b), cv(a)))]
    for root, troot, call in cases:
        gm, tgm = tapegrad.fx.symbolic_trace(root), torch.fx.symbolic_trace(troot)
        _same_graph(gm, tgm)
        assert [(n.name, n.target) for n in gm.graph.nodes if n.op == "placeholder"] == \
            [(n.name, n.target) for n in tgm.graph.nodes if n.op == "placeholder"]
        assert _signature_and_bindings(gm.code) == _signature_and_bindings(tgm.code)
        assert_close(call(gm, from_torch), call(tgm, lambda t: t))
    # a Graph built by hand names a starred placeholder as torch.fx does
    for lib in (tapegrad, torch):
        graph = lib.fx.Graph()
        graph.output(graph.placeholder("*args"))
        assert [(n.name, n.target) for n in graph.nodes][0] == ("_args", "*args")


def test_varargs_misuse_and_concrete_args_as_torch_fx(torch):
    def uses_len(x, *args):
        return x + len(args)

    def iterates(x, *args):
        for a in args:
            x = x + a
        return x
    for fn, error in ((uses_len, RuntimeError), (iterates, tapegrad.fx.proxy.TraceError)):
        with pytest.raises(error) as ours:
            tapegrad.fx.symbolic_trace(fn)
        with pytest.raises(Exception) as theirs:
            torch.fx.symbolic_trace(fn)
        assert type(theirs.value).__name__ == type(ours.value).__name__
        assert str(ours.value).split(".")[0] == str(theirs.value).split(".")[0].replace("torch.", "tapegrad.")

    def make(lib):
        class M(lib.nn.Module):
            def forward(self, *args):
                return args[0] * len(args) + args[1]
        return M()
    # a tuple of concrete args for forward(self, *args): one input_<i> placeholder per entry, args a real tuple
    gm = tapegrad.fx.symbolic_trace(make(tapegrad), concrete_args=(tapegrad.fx.PH, tapegrad.fx.PH))
    tgm = torch.fx.symbolic_trace(make(torch), concrete_args=(torch.fx.PH, torch.fx.PH))
    _same_graph(gm, tgm)
    x, y = torch.randn(3), torch.randn(3)
    assert_close(gm(from_torch(x), from_torch(y)), tgm(x, y))

    def f(x, y, *args):
        return x + y + args[0]
    gm = tapegrad.fx.symbolic_trace(f, concrete_args=(tapegrad.fx.PH, 2))
    tgm = torch.fx.symbolic_trace(f, concrete_args=(torch.fx.PH, 2))
    _same_graph(gm, tgm)
    assert_close(gm(from_torch(x), 2, from_torch(y)), tgm(x, 2, y))
    for lib in (tapegrad, torch):
        with pytest.raises(RuntimeError, match="Tracing expected 2 arguments but got 1 concrete arguments"):
            lib.fx.symbolic_trace(f, concrete_args=(lib.fx.PH,))
