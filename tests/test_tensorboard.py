"""tapegrad.utils.tensorboard.SummaryWriter: event files written and read back, as PyTorch's writer's."""
import glob
import os
import re
import sys
import types

import numpy as np
import pytest

import tapegrad
from conftest import require

require("tensorboardX")   # a test dependency: missing, the run fails saying how to install it
from tensorboardX.proto import event_pb2  # noqa: E402
from tapegrad.utils.tensorboard import SummaryWriter  # noqa: E402


def _events(log_dir):
    # TFRecord framing: length (8 bytes), its CRC (4), the record, its CRC (4).
    events = []
    for path in sorted(glob.glob(os.path.join(log_dir, "**", "events.out.tfevents.*"), recursive=True)):
        data = open(path, "rb").read()
        pos = 0
        while pos < len(data):
            n = int.from_bytes(data[pos:pos + 8], "little")
            event = event_pb2.Event()
            event.ParseFromString(data[pos + 12:pos + 12 + n])
            events.append(event)
            pos += 12 + n + 4
    return events


def _summaries(events):
    return [(e.step, v) for e in events for v in e.summary.value]


def test_scalars_and_histograms_are_written_and_readable(tmp_path):
    with SummaryWriter(log_dir=str(tmp_path)) as writer:
        assert writer.log_dir == str(tmp_path)
        for step in range(3):
            writer.add_scalar("loss", tapegrad.tensor(1.5) / (step + 1), step)
        writer.add_scalar("lr", 0.1, tapegrad.tensor(7))
        writer.add_histogram("weights", tapegrad.arange(10, dtype=tapegrad.float32), 2)
        writer.flush()
    values = _summaries(_events(str(tmp_path)))
    loss = [(step, v.simple_value) for step, v in values if v.tag == "loss"]
    assert loss == [(0, 1.5), (1, 0.75), (2, 0.5)]
    assert [(s, v.simple_value) for s, v in values if v.tag == "lr"] == [(7, pytest.approx(0.1))]
    histo = [v.histo for s, v in values if v.tag == "weights"][0]
    assert (histo.min, histo.max, histo.num, histo.sum) == (0.0, 9.0, 10.0, 45.0)


def test_add_scalars_writes_one_run_per_tag(tmp_path):
    writer = SummaryWriter(log_dir=str(tmp_path))
    writer.add_scalars("run", {"a": tapegrad.tensor(1.0), "b": 2.0}, 0)
    writer.close()
    values = _summaries(_events(str(tmp_path)))
    assert sorted(v.simple_value for s, v in values if v.tag == "run") == [1.0, 2.0]


def test_missing_tensorboardx_says_how_to_install(monkeypatch, tmp_path):
    import sys
    monkeypatch.setitem(sys.modules, "tensorboardX", None)
    with pytest.raises(ImportError, match="pip install tensorboardX"):
        SummaryWriter(log_dir=str(tmp_path))


def test_tensors_are_numpy_for_tensorboardx(tmp_path):
    from tapegrad.utils.tensorboard._writer import _numpy
    out = _numpy(tapegrad.ones(2, requires_grad=True) * 2)
    assert isinstance(out, np.ndarray) and out.tolist() == [2.0, 2.0]


# add_graph: tapegrad's GraphDef against the one PyTorch's own add_graph code builds for the same model.

def _torch_graph():
    """torch.utils.tensorboard._pytorch_graph.graph, with the tensorboard protos it imports taken from
    tensorboardX (the same messages); RunMetadata and StepStats, absent there, are plain records."""
    import torch.utils
    from tensorboardX.proto import attr_value_pb2, graph_pb2, node_def_pb2, tensor_shape_pb2, versions_pb2

    class Record:
        def __init__(self, **fields):
            self.__dict__.update(fields)
    protos = {"graph_pb2": graph_pb2, "versions_pb2": versions_pb2, "node_def_pb2": node_def_pb2,
              "attr_value_pb2": attr_value_pb2, "tensor_shape_pb2": tensor_shape_pb2}
    for name in ("config_pb2", "step_stats_pb2"):
        protos[name] = types.SimpleNamespace(RunMetadata=Record, StepStats=Record, DeviceStepStats=Record)
    stubs = {f"tensorboard.compat.proto.{k}": v for k, v in protos.items()}
    saved = {k: sys.modules.get(k) for k in stubs}
    sys.modules.update(stubs)
    try:
        folder = os.path.join(os.path.dirname(torch.utils.__file__), "tensorboard")
        proto_graph = {}
        exec(compile(open(os.path.join(folder, "_proto_graph.py")).read(), "_proto_graph.py", "exec"), proto_graph)
        source = open(os.path.join(folder, "_pytorch_graph.py")).read()
        assert "from ._proto_graph import node_proto" in source
        source = source.replace("from ._proto_graph import node_proto", "")
        namespace = {"node_proto": proto_graph["node_proto"]}
        exec(compile(source, "_pytorch_graph.py", "exec"), namespace)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k)
            else:
                sys.modules[k] = v
    return namespace["graph"]


def _models(nn):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)
            self.body = nn.Sequential(nn.Linear(3, 3), nn.ReLU())

        def forward(self, x):
            return self.body(self.fc(x)) * 2

    class Two(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x, y):
            return self.fc(x) + y

    class Pair(nn.Module):
        def __init__(self):
            super().__init__()
            self.act = nn.Tanh()

        def forward(self, x, unused):
            return self.act(x), x.sum()

    class ListOut(nn.Module):
        def forward(self, x):
            return [x.relu(), x.exp()]

    class DictOut(nn.Module):
        def forward(self, x):
            return {"a": x.relu(), "b": x}

    return {"sequential": (lambda: nn.Sequential(nn.Linear(4, 3), nn.ReLU()), [(2, 4)]),
            "nested": (Net, [(2, 4)]), "two_inputs": (Two, [(2, 4), (2, 3)]), "tuple_out": (Pair, [(2, 4), (2, 4)]),
            "list_out": (ListOut, [(2, 4)]), "dict_out": (DictOut, [(3,)])}


def _both(case, strict=True):
    import torch
    from tapegrad.utils.tensorboard._graph import graph_def
    make_t, shapes = _models(torch.nn)[case]
    make_g = _models(tapegrad.nn)[case][0]
    args_t = tuple(torch.randn(*s) for s in shapes)
    expected, _ = _torch_graph()(make_t(), args_t, use_strict_trace=strict)
    got, _ = graph_def(make_g(), tuple(tapegrad.tensor(a.numpy()) for a in args_t), strict=strict)
    return expected, got


def _scope(name):
    return name.rsplit("/", 1)[0]


def _plain(name):
    return re.sub(r"\.\d+$", "", name)   # jit's ".1" suffix that keeps a reused Python name unique


def _shape(node):
    shapes = node.attr["_output_shapes"].list.shape if "_output_shapes" in node.attr else []
    return [[d.size for d in s.dim] for s in shapes]


def _kinds(nodes):
    """(scope, kind) of each aten op node; PyTorch's one aten::linear is tapegrad's aten::t and aten::addmm."""
    out = []
    for n in nodes:
        if n.op.startswith("aten::"):
            out += [(_scope(n.name), k) for k in (["aten::t", "aten::addmm"] if n.op == "aten::linear" else [n.op])]
    return sorted(out)


def _readers(graph, name):
    """(scope, kind) of the nodes that read the node `name`."""
    return {(_scope(n.name), "aten::addmm" if n.op == "aten::linear" else n.op)
            for n in graph.node if any(_plain(i) == _plain(name) for i in n.input)}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")   # torch.jit.trace, which PyTorch's add_graph calls
@pytest.mark.parametrize("case", ["sequential", "nested", "two_inputs", "tuple_out", "list_out", "dict_out"])
def test_add_graph_matches_pytorch_graphdef(case):
    expected, got = _both(case, strict=case != "dict_out")
    assert got.versions.producer == expected.versions.producer == 22
    io_t = [(_plain(n.name) if n.name.startswith("input/") else n.name, n.op, _shape(n))
            for n in expected.node if n.op == "IO Node"]
    io_g = [(n.name, n.op, _shape(n)) for n in got.node if n.op == "IO Node"]
    assert io_g == io_t
    ops_t = [n for n in expected.node if n.op != "IO Node"]
    ops_g = [n for n in got.node if n.op != "IO Node"]
    assert {_scope(n.name) for n in ops_g} == {_scope(n.name) for n in ops_t}
    assert _kinds(ops_g) == _kinds(ops_t)
    assert sorted(_plain(n.name) for n in ops_g if n.op == "prim::GetAttr") == \
        sorted(_plain(n.name) for n in ops_t if n.op == "prim::GetAttr")
    assert sorted(n.attr["attr"].s for n in ops_g if n.op == "prim::GetAttr") == \
        sorted(n.attr["attr"].s for n in ops_t if n.op == "prim::GetAttr")
    for n in ops_g:
        if n.op.startswith("aten::"):
            assert n.attr["attr"].s == b"{}" and _shape(n)
    # edges: who reads each input, and what the output reads
    for n in expected.node:
        if n.name.startswith("input/"):
            assert _readers(got, _plain(n.name)) == _readers(expected, n.name)
    (out_t,), (out_g,) = [n for n in expected.node if n.name.startswith("output/")], \
        [n for n in got.node if n.name.startswith("output/")]
    nodes_t, nodes_g = {n.name: n for n in expected.node}, {n.name: n for n in got.node}
    source_t, source_g = nodes_t[out_t.input[0]], nodes_g[out_g.input[0]]
    assert (_scope(source_g.name), source_g.op) == (_scope(source_t.name), source_t.op)

    def tensor_inputs(node, nodes):   # scalar arguments (PyTorch's add's alpha) are prim::Constant nodes
        return [(_scope(i), "aten::addmm" if nodes[i].op == "aten::linear" else nodes[i].op)
                for i in node.input if nodes[i].op != "prim::Constant"]
    assert tensor_inputs(source_g, nodes_g) == tensor_inputs(source_t, nodes_t)

    def constants(node, nodes):   # a dict's keys, in place among its values
        return [nodes[i].attr["attr"].s if nodes[i].op == "prim::Constant" else None for i in node.input]
    if source_t.op.endswith("Construct"):
        assert constants(source_g, nodes_g) == constants(source_t, nodes_t)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_add_graph_refuses_a_dict_output_when_strict_as_pytorch(capsys, tmp_path):
    import torch
    with pytest.raises(RuntimeError) as expected:
        _torch_graph()(_models(torch.nn)["dict_out"][0](), (torch.ones(3),))
    printed_t = capsys.readouterr().out
    writer = SummaryWriter(log_dir=str(tmp_path))
    with pytest.raises(RuntimeError) as got:
        writer.add_graph(_models(tapegrad.nn)["dict_out"][0](), tapegrad.ones(3))
    writer.close()
    assert str(got.value) == str(expected.value) and "strict=False" in str(got.value)
    assert capsys.readouterr().out == printed_t


def test_add_graph_writes_graph_and_run_metadata_events(tmp_path):
    model = tapegrad.nn.Sequential(tapegrad.nn.Linear(4, 3), tapegrad.nn.ReLU())
    with SummaryWriter(log_dir=str(tmp_path)) as writer:
        writer.add_graph(model, tapegrad.randn(2, 4))
    from tensorboardX.proto import graph_pb2
    events = _events(str(tmp_path))
    graphs = [e.graph_def for e in events if e.graph_def]
    assert len(graphs) == 1
    graph = graph_pb2.GraphDef()
    graph.ParseFromString(graphs[0])
    names = [n.name for n in graph.node]
    assert names[:2] == ["input/input", "output/output.1"] and "Sequential/Linear[0]/weight/weight" in names
    assert [n.op for n in graph.node if n.op.startswith("aten::")] == ["aten::t", "aten::addmm", "aten::relu"]
    (meta,) = [e.tagged_run_metadata for e in events if e.HasField("tagged_run_metadata")]
    # RunMetadata{step_stats: StepStats{dev_stats: [DeviceStepStats{device: "/device:CPU:0"}]}}, PyTorch's
    assert meta.tag == "profiler" and meta.run_metadata == b"\n\x11\n\x0f\n\r/device:CPU:0"
    assert model.training   # traced in eval mode, as PyTorch, then put back


def test_add_graph_verbose_prints_the_nodes_and_dead_ops_are_dropped(capsys, tmp_path):
    class Dead(tapegrad.nn.Module):
        def forward(self, x):
            assert tapegrad.jit.is_tracing()   # as torch.jit.is_tracing() in PyTorch's add_graph
            x.exp()   # unused: the trace keeps only what the output reads
            return x.relu()
    writer = SummaryWriter(log_dir=str(tmp_path))
    writer.add_graph(Dead(), (tapegrad.ones(3),), verbose=True)
    writer.close()
    printed = capsys.readouterr().out
    assert "Dead/" in printed and "aten::relu" in printed and "aten::exp" not in printed
    assert not tapegrad.jit.is_tracing()


def test_op_kinds_name_aten_operators():
    import torch
    from tapegrad._ops._registry import OPS
    from tapegrad.utils.tensorboard._graph import _TAPEGRAD_ONLY, op_kind
    for name in OPS:
        kind = op_kind(name)
        if kind.startswith("aten::"):
            assert hasattr(torch.ops.aten, kind[6:]), name
        else:
            assert kind == f"tapegrad::{name}" and not hasattr(torch.ops.aten, name), name
    assert _TAPEGRAD_ONLY <= set(OPS)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_add_graph_reads_parameters_and_buffers_by_scope_as_pytorch():
    import torch
    from tapegrad.utils.tensorboard._graph import graph_def

    def cnn(nn):   # no Dropout: in eval mode PyTorch's trace keeps an aten::dropout that tapegrad never runs
        return nn.Sequential(nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten())
    expected, _ = _torch_graph()(cnn(torch.nn), (torch.ones(1, 2, 6, 6),))
    model = cnn(tapegrad.nn)
    model.train()
    got, _ = graph_def(model, tapegrad.ones(1, 2, 6, 6))
    assert model.training

    def read(graph):
        return sorted((_plain(n.name), n.attr["attr"].s) for n in graph.node if n.op == "prim::GetAttr")
    assert read(got) == read(expected)   # eval mode: BatchNorm reads its running stats
    assert {_scope(n.name) for n in got.node} == {_scope(n.name) for n in expected.node}
    assert [_shape(n) for n in got.node if n.name.startswith("output/")] == \
        [_shape(n) for n in expected.node if n.name.startswith("output/")]


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_add_graph_writes_a_captured_tensor_as_a_constant_as_pytorch():
    import torch
    from tapegrad.utils.tensorboard._graph import graph_def

    def scaled(nn, lib):
        scale = lib.tensor([1.0, 2.0])

        class Scaled(nn.Module):
            def forward(self, x):
                return x * scale
        return Scaled()
    expected, _ = _torch_graph()(scaled(torch.nn, torch), (torch.ones(2),))
    got, _ = graph_def(scaled(tapegrad.nn, tapegrad), tapegrad.ones(2))

    def layout(graph):
        by_name = {n.name: n for n in graph.node}
        return [(n.op, _scope(n.name), n.attr["attr"].s, _shape(n),
                 [(by_name[i].op, _plain(i) if i.startswith("input/") else None) for i in n.input]) for n in graph.node]
    assert layout(got) == layout(expected)
