"""The GraphDef that SummaryWriter.add_graph writes: one real call of the model, op by op, by module scope.

PyTorch traces the model with torch.jit.trace and names every value by the scope of the module call that
made it ("Net/Sequential[body]/Linear[0]/..."). Here the model runs once on the example inputs while an
observer of `_dispatch.apply` records each op-table entry it calls and `Module.__call__` keeps the stack of
module scopes. The nodes are PyTorch's: "input/<arg>" and "output/output.<i>" IO nodes, a "prim::GetAttr"
node per parameter or buffer read, a "prim::Constant" per non-tensor argument, and one node per op result
with its kind ("aten::<op>"; "tapegrad::<op>" for op-table entries that no aten operator matches) and shape.

Where it differs from PyTorch's: a layer shows the ops tapegrad records for it (Linear: aten::t and
aten::addmm, not aten::linear; Conv2d, BatchNorm, pooling: tapegrad::conv, ::batch_norm_eval, ::max_pool;
Flatten: aten::view; in-place ops as their out-of-place op; eval-mode Dropout: nothing), so scalar arguments
differ too (tuples are one constant, not a ListConstruct of ints; no add alpha). Values are numbered, not named
after Python variables ("input/input", not "input/input.1"); GetAttr nodes have no input (PyTorch's names a
module value that is not a node). List outputs are not warned about; ops with side effects only are dropped.
"""
import contextlib

from ... import _dispatch

# Op-table entries that are an aten operator under another name.
_ATEN_NAMES = {
    "add_scalar": "add", "add_scaled": "add", "sub_scalar": "sub", "sub_scaled": "sub", "mul_scalar": "mul",
    "div_scalar": "div", "div_floor": "div", "div_trunc": "div", "to_dtype": "to", "logsigmoid": "log_sigmoid",
    "ldl_factor": "linalg_ldl_factor_ex", "ldl_solve": "linalg_ldl_solve",
    "inv": "linalg_inv", "pinv": "linalg_pinv", "solve": "linalg_solve", "eigh": "linalg_eigh",
    "eigvalsh": "linalg_eigvalsh", "svdvals": "linalg_svdvals", "vector_norm": "linalg_vector_norm",
    "solve_triangular": "linalg_solve_triangular", "svdvals_uv": "linalg_svd", "normal_tensor": "normal",
    "safe_softmax": "_safe_softmax", "sparse_addmv": "addmv", "pow_scalar": "pow", "pow_bool_exponent": "pow",
    "histogramdd_bin_edges": "_histogramdd_bin_edges",
    "remainder_scalar_self": "remainder", "neg_view": "_neg_view", "nanmedian_all": "nanmedian",
    "unfold_windows": "unfold", "fft_r2c": "_fft_r2c", "fft_c2c": "_fft_c2c", "fft_c2r": "_fft_c2r",
    "eig": "linalg_eig", "eigvals": "linalg_eigvals", "lstsq": "linalg_lstsq", "lu_factor": "linalg_lu_factor",
    "householder_product": "linalg_householder_product", "lu": "linalg_lu",
}
# Op-table entries with no aten operator of their own (tests check this list against torch.ops.aten).
_TAPEGRAD_ONLY = frozenset("""
    adaptive_avg_pool adaptive_max_pool adaptive_max_pool_with_indices affine_grid attention avg_pool
    batch_norm_eval batch_norm_train bernoulli_fill conv conv_transpose copy_slices cummax_indices
    cummax_values cummin_indices cummin_values dense_sparse_mm fractional_max_pool_indices
    fractional_max_pool_with_indices grid_sample_2d grid_sample_3d index_alias index_unsqueeze
    interpolate interpolate_fixed_point kthvalue_indices lu_permutation kthvalue_values max_all max_pool
    max_pool_indices max_pool_with_indices max_unpool max_values median_all median_indices median_values
    min_all min_values mode_indices mode_values nanmedian_indices nanmedian_values reshape_alias
    reshape_copy rnn scatter_value sort_values sparse_add sparse_mm sparse_route sparse_segment_sum
    sparse_sparse_mm sparse_values standard_gamma topk_indices topk_values trilinear unique unique_take
    varlen_attention view_dtype view_replay
""".split())


def op_kind(name):
    if name in _TAPEGRAD_ONLY:
        return f"tapegrad::{name}"
    return f"aten::{_ATEN_NAMES.get(name, name)}"


class _Node:
    __slots__ = ("name", "op", "inputs", "shape", "attr")

    def __init__(self, name, op, inputs=(), shape=None, attr=""):
        self.name, self.op, self.inputs, self.shape, self.attr = name, op, list(inputs), shape, attr


class _Recorder:
    def __init__(self, model):
        self.root = type(model).__name__
        self.scopes = [self.root]
        self.module_names = {id(m): name for name, m in model.named_modules() if name}
        self.by_value = {}                 # id(value held) -> node name
        self.keep = []                     # values matched, alive while recording (their ids stay theirs)
        self.owners = {}                   # id(value) of a parameter or buffer -> (owner scope, attribute name)
        for prefix, module in model.named_modules():
            scope = self.module_scope(model, prefix)
            for attr, t in list(module.named_parameters(recurse=False)) + list(module.named_buffers(recurse=False)):
                self.owners.setdefault(id(t._peek()), (scope, attr))
                self.keep.append(t._peek())
        self.nodes = []
        self.count = 0

    def module_scope(self, model, qualified):
        scope, module = self.root, model
        for part in qualified.split(".") if qualified else ():
            module = getattr(module, part)
            scope += f"/{type(module).__name__}[{part}]"
        return scope

    def fresh(self, scope):
        self.count += 1
        return f"{scope}/{self.count}"

    def bind(self, tensor, name):
        value = tensor._peek()
        self.by_value[id(value)] = name
        self.keep.append(value)

    def input_name(self, value):
        from ..._tensor import Tensor
        if not isinstance(value, Tensor):
            return self.constant(value)
        name = self.by_value.get(id(value._peek()))
        if name is not None:
            return name
        owner = self.owners.get(id(value._peek()))
        if owner is not None:
            scope, attr = owner
            name = f"{scope}/{attr}/{attr}"
            self.nodes.append(_Node(name, "prim::GetAttr", attr=_attributes(name=attr)))
        else:                              # a tensor made outside the call (a global, a captured constant)
            name = self.fresh(self.scopes[-1])
            self.nodes.append(_Node(name, "prim::Constant", shape=tuple(value.shape),
                                    attr=_attributes(value=value.detach())))
        self.bind(value, name)
        return name

    def constant(self, value):
        name = self.fresh(self.scopes[-1])
        if isinstance(value, bool):   # TorchScript keeps a bool constant as an int
            value = int(value)
        attr = "{}" if value is None else _attributes(value=value)
        self.nodes.append(_Node(name, "prim::Constant", attr=attr))
        return name

    # observer of _dispatch.apply
    def __call__(self, op, static, sig, args, result):
        inputs = [self.input_name(a) for a in args] + [self.input_name(v) for v in dict(static).values()]
        for out in _tensors(result):
            name = self.fresh(self.scopes[-1])
            self.nodes.append(_Node(name, op_kind(op.name), inputs, tuple(out.shape), "{}"))
            self.bind(out, name)

    @contextlib.contextmanager
    def scoped_calls(self):
        from ...nn import Module
        original = Module.__call__
        recorder = self

        def call(module, *args, **kwargs):
            name = recorder.module_names.get(id(module))
            if name is None:
                return original(module, *args, **kwargs)
            recorder.scopes.append(f"{recorder.scopes[-1]}/{type(module).__name__}[{name.rsplit('.', 1)[-1]}]")
            try:
                return original(module, *args, **kwargs)
            finally:
                recorder.scopes.pop()
        Module.__call__ = call
        try:
            yield
        finally:
            Module.__call__ = original


def _attributes(**attributes):
    """A node's attributes as PyTorch writes them: the dict's str with its quotes as spaces."""
    return str(attributes).replace("'", " ")


def _tensors(value):
    from ..._tensor import Tensor
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def _output_node(recorder, value, strict):
    """The node an output reads: a tensor's own, or a TupleConstruct/ListConstruct/DictConstruct of them."""
    from ..._tensor import Tensor
    if isinstance(value, Tensor):
        return recorder.input_name(value), tuple(value.shape)
    if strict and isinstance(value, dict):
        raise RuntimeError(
            "Encountering a dict at the output of the tracer might cause the trace to be incorrect, this is only "
            "valid if the container structure does not change based on the module's inputs. Consider using a "
            "constant container instead (e.g. for `list`, use a `tuple` instead. for `dict`, use a `NamedTuple` "
            "instead). If you absolutely need this and know the side effects, pass strict=False to trace() to "
            "allow this behavior.")
    kind = "prim::DictConstruct" if isinstance(value, dict) else \
        "prim::ListConstruct" if isinstance(value, list) else "prim::TupleConstruct"
    inputs = []
    for key, item in value.items() if isinstance(value, dict) else enumerate(value):
        if isinstance(value, dict):
            inputs.append(recorder.constant(key))
        inputs.append(_output_node(recorder, item, strict)[0])
    name = recorder.fresh(recorder.root)
    recorder.nodes.append(_Node(name, kind, inputs, attr="{}"))
    return name, None


def record_nodes(model, args, strict=True):
    """Run model(*args) once in eval mode; returns the nodes PyTorch's GraphDef lists, in its order."""
    from ... import jit
    from ...fx._tracer import placeholder_names
    from ..._tensor import Tensor
    recorder = _Recorder(model)
    inputs = []
    for name, x in zip(placeholder_names(model.forward, len(args)), args):
        if isinstance(x, Tensor):
            inputs.append(_Node(f"input/{name}", "IO Node", shape=tuple(x.shape)))
            recorder.bind(x, inputs[-1].name)
    training = model.training
    model.train(False)
    _dispatch.OBSERVERS.append(recorder)
    jit._tracing[0] += 1   # jit.is_tracing() is True in the call, as under PyTorch's torch.jit.trace
    try:
        with recorder.scoped_calls():
            result = model(*args)
    finally:
        jit._tracing[0] -= 1
        _dispatch.OBSERVERS.remove(recorder)
        model.train(training)
    source, shape = _output_node(recorder, result, strict)    # a traced graph returns one value
    outputs = [_Node("output/output.1", "IO Node", [source], (1,) if shape is None else shape)]  # PyTorch's [1]
    live = _reached(outputs, recorder.nodes)   # PyTorch's trace drops what the output does not read
    return [n for n in inputs if n.name in live] + outputs + [n for n in recorder.nodes if n.name in live]


def _reached(outputs, nodes):
    by_name = {}
    for node in nodes:
        by_name.setdefault(node.name, []).append(node)
    live, todo = set(), [name for node in outputs for name in node.inputs]
    while todo:
        name = todo.pop()
        if name not in live:
            live.add(name)
            todo.extend(i for node in by_name.get(name, ()) for i in node.inputs)
    return live


def graph_def(model, args, verbose=False, strict=True):
    """(GraphDef, serialized RunMetadata) as PyTorch's add_graph writes them."""
    from tensorboardX.proto.attr_value_pb2 import AttrValue
    from tensorboardX.proto.graph_pb2 import GraphDef
    from tensorboardX.proto.node_def_pb2 import NodeDef
    from tensorboardX.proto.tensor_shape_pb2 import TensorShapeProto
    from tensorboardX.proto.versions_pb2 import VersionDef
    from ..._tensor import Tensor
    args = (args,) if isinstance(args, Tensor) else tuple(args) if isinstance(args, (tuple, list)) else (args,)
    try:
        nodes = record_nodes(model, args, strict)
    except RuntimeError as e:   # as PyTorch's add_graph
        print(e)
        print("Error occurs, No graph saved")
        raise
    if verbose:
        for node in nodes:
            print(f"{node.name} = {node.op}({', '.join(node.inputs)})" + (f" : {list(node.shape)}" if node.shape
                                                                            is not None else ""))
    protos = []
    for node in nodes:
        attr = {"attr": AttrValue(s=node.attr.encode())}
        if node.shape is not None:
            shape = TensorShapeProto(dim=[TensorShapeProto.Dim(size=d) for d in node.shape])
            attr["_output_shapes"] = AttrValue(list=AttrValue.ListValue(shape=[shape]))
        protos.append(NodeDef(name=node.name, op=node.op, input=node.inputs, attr=attr))
    return GraphDef(node=protos, versions=VersionDef(producer=22)), _RUN_METADATA


def _field(number, payload):
    """One length-delimited protobuf field (the RunMetadata protos are not part of tensorboardX)."""
    return bytes([number << 3 | 2, len(payload)]) + payload


# RunMetadata(step_stats=StepStats(dev_stats=[DeviceStepStats(device="/device:CPU:0")])), serialized
_RUN_METADATA = _field(1, _field(1, _field(1, b"/device:CPU:0")))
