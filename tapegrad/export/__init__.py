"""tapegrad.export (after PyTorch's torch.export): a module's forward as a StableHLO program, via jax.export.

`export(model, args)` traces `model(*args)` into one pure JAX function (autograd._tracing) and exports
it with `jax.export` for the shapes and dtypes of `args`. The parameters and buffers are inputs of the
program, as torch.export lifts them (their values at export time travel in `state_dict`), or, with
`bake_parameters=True`, constants inside it. The result is an `ExportedProgram`:

* `.module()` -- a callable running the program on new inputs (same shapes and dtypes, but along the
  dimensions `dynamic_shapes` makes dynamic: `{"x": {0: Dim("batch", min=2, max=64)}}`, or a tuple by
  position; `Dim.AUTO`, `Dim.DYNAMIC`, `Dim.STATIC`; see _dynamic_shapes.py). A call outside the shapes
  fails as PyTorch's guard does (AssertionError "Guard failed: x.size()[0] <= 64");
* `.mlir_module()` -- the StableHLO text; `.serialize()` / `deserialize(data)` -- bytes that JAX (and
  any StableHLO consumer) reads back; `save(ep, f)` / `load(f)` -- a zip of those bytes and the state.

The trace runs with grad mode off and eager ops; code that reads a tensor's value in Python (`.item()`,
an `if` on a tensor) cannot be exported. Export a model in eval mode: in training mode BatchNorm's
running statistics are not written and dropout draws are fixed when the program is traced.
"""
import inspect
import io
import json
import re
import zipfile

import jax
import numpy as np

from . import _dynamic_shapes as _dyn
from ._dynamic_shapes import Dim

__all__ = ["export", "ExportedProgram", "save", "load", "deserialize", "Dim"]


def _tensor_leaf(x):
    from .._tensor import Tensor
    return isinstance(x, Tensor)


class ExportedProgram:
    """A jax.export.Exported of a module's forward, with the parameter values it takes (see the module doc)."""

    def __init__(self, exported, state_names, state_values, out_tree, input_names=None, axes=None):
        self.exported = exported
        self._state_names = list(state_names)
        self._state_values = list(state_values)
        self._out_tree = out_tree
        avals = exported.in_avals[len(self._state_values):]
        self._input_names = list(input_names or (f"arg{i}" for i in range(len(avals))))
        self._axes = axes if axes is not None else _dyn.from_avals(avals)   # per input dimension: static or a symbol

    @property
    def state_dict(self):
        """The parameter and buffer values the program takes as inputs (empty when baked in)."""
        from .._tensor import Tensor
        return {n: Tensor._wrap(v) for n, v in zip(self._state_names, self._state_values)}

    def mlir_module(self):
        """The program as StableHLO text."""
        return self.exported.mlir_module()

    def serialize(self):
        """The program as bytes (jax.export's format); the state travels separately (see save())."""
        _require_flatbuffers()
        return bytes(self.exported.serialize())

    def __call__(self, *args):
        from .._tensor import Tensor
        arrays = [a._value if isinstance(a, Tensor) else a for a in args]
        expected = self.exported.in_avals[len(self._state_values):]
        if len(arrays) != len(expected):
            raise TypeError(f"the exported program takes {len(expected)} inputs, got {len(arrays)}")
        for i, (a, aval) in enumerate(zip(arrays, expected)):
            if len(a.shape) != len(aval.shape) or a.dtype != aval.dtype:
                raise RuntimeError(f"input {i} of the exported program must have shape {list(aval.shape)} and dtype "
                                   f"{aval.dtype}, got {list(a.shape)} and {a.dtype}. Export again with example "
                                   "inputs of the new shape.")
        _dyn.check_call(self._input_names, self._axes, [tuple(a.shape) for a in arrays])
        outs = self.exported.call(list(self._state_values), *arrays)
        leaves = [Tensor._wrap(o) for o in jax.tree_util.tree_leaves(outs)]
        return jax.tree_util.tree_unflatten(self._out_tree, leaves)

    def module(self):
        """A callable module running the program (PyTorch's ExportedProgram.module())."""
        from ..nn import Module
        program = self

        class ExportedModule(Module):
            def forward(self, *args):
                return program(*args)
        return ExportedModule()

    def __str__(self):
        ins = ", ".join(f"{a.dtype}{list(a.shape)}" for a in self.exported.in_avals[len(self._state_values):])
        outs = ", ".join(f"{a.dtype}{list(a.shape)}" for a in self.exported.out_avals)
        return (f"ExportedProgram(inputs=({ins}), outputs=({outs}), parameters={len(self._state_names)}, "
                f"platforms={list(self.exported.platforms)})")

    __repr__ = __str__


def export(model, args, kwargs=None, *, dynamic_shapes=None, strict=False, preserve_module_call_signature=(),
           bake_parameters=False):
    """model(*args, **kwargs) as an ExportedProgram for the shapes and dtypes of args, or, along the
    dimensions dynamic_shapes marks (Dim("batch", min=, max=), Dim.AUTO, Dim.DYNAMIC), for every size in
    range (see the module doc)."""
    from .._tensor import Tensor
    from ..autograd._tracing import TRACER_ERRORS, swapped, tracing
    from ..nn import Module
    if not isinstance(args, tuple):
        raise ValueError(f"Expecting `args` to be a tuple of example positional inputs, got {type(args)}")
    kwargs = dict(kwargs or {})
    if not all(isinstance(a, Tensor) for a in args):
        raise TypeError("tapegrad.export takes tensor positional inputs; bind other arguments with kwargs "
                        "(they are constants of the program).")
    named = []
    if isinstance(model, Module) and not bake_parameters:
        seen = set()
        for name, t in list(model.named_parameters()) + list(model.named_buffers()):
            if id(t) not in seen:
                seen.add(id(t))
                named.append((name, t))
        order = {k: i for i, k in enumerate(model.state_dict())}   # the state_dict's order
        named.sort(key=lambda item: order.get(item[0], len(order)))
    tensors = [t for _, t in named]
    out_tree = []

    def pure(state, *xs):
        with tracing(), swapped(tensors, state):
            out = model(*(Tensor._wrap(x) for x in xs), **kwargs)
        leaves, tree = jax.tree_util.tree_flatten(out, is_leaf=_tensor_leaf)
        if not all(isinstance(x, Tensor) for x in leaves):
            raise TypeError("tapegrad.export: the model must return tensors (in tuples, lists or dicts).")
        out_tree.append(tree)
        return [x._value for x in leaves]
    state_values = [t.detach()._value for t in tensors]
    names = _input_names(model, len(args))

    def attempt(axes):
        shapes = _dyn.symbolic_shapes(axes)
        try:
            return jax.export.export(jax.jit(pure))(
                [jax.ShapeDtypeStruct(v.shape, v.dtype) for v in state_values],
                *(jax.ShapeDtypeStruct(shape, a.dtype.np) for shape, a in zip(shapes, args)))
        except TRACER_ERRORS as e:
            raise RuntimeError("tapegrad.export traces the forward: it cannot read tensor values in Python (.item(), "
                               ".tolist(), bool() or a data-dependent if). Compute with tensor ops instead "
                               "(torch.where).") from e
    exported, axes = _export_dynamic(attempt, _dyn.axes(dynamic_shapes, names, args), names)
    return ExportedProgram(exported, [n for n, _ in named], state_values, out_tree[-1], names, axes)


def _input_names(model, count):
    """The names of the first `count` positional parameters of model's forward (dynamic_shapes' keys)."""
    from ..nn import Module
    try:
        params = inspect.signature(model.forward if isinstance(model, Module) else model).parameters.values()
    except (TypeError, ValueError):
        params = []
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][:count]
    return names + [f"args_{i}" for i in range(len(names), count)]


def _export_dynamic(attempt, axes, names):
    """(exported program, the axes it has). A trace that fails on a symbolic dimension is retried with the hint
    dims of equal example size as one symbol (PyTorch infers such equalities), then with the Dim.AUTO dims the
    errors name made static one by one (all of them when an error names none). If none traces, the static
    program tells a genuine error (raised) from dims the code needs fixed (PyTorch's UserError)."""
    from ..autograd._tracing import TRACER_ERRORS
    static = [[_dyn.Axis(a.size) for a in row] for row in axes]
    candidate, tried, error = axes, [], None   # error: the last trace's, on the fewest symbols
    while candidate not in tried:
        tried.append(candidate)
        try:
            return attempt(candidate), candidate
        except Exception as e:   # a JAX shape error on a symbolic dimension: a size the code needs
            if candidate == static or isinstance(e.__cause__, TRACER_ERRORS):
                raise
            error = e
            # the AUTO dim the error names last ("s0xs1 and 4x3": s1) becomes static, one per retry
            named = [(m.start(), a.symbol) for row in candidate for a in row if a.kind == "AUTO"
                     for m in re.finditer(rf"{a.symbol}(?!\d)", str(e))]
            grouped = _dyn.group_equal_hints(candidate)
            candidate = grouped if grouped not in tried else _dyn.without_auto(
                candidate, {max(named)[1]} if named else None)
    exported = attempt(static)   # raises the code's own error, if it has one at the example shapes
    dynamic = list(dict.fromkeys(a.symbol if a.kind == "named" else f"L['{name}'].size()[{d}]"
                                 for name, row in zip(names, axes) for d, a in enumerate(row)
                                 if a.symbol is not None and a.kind != "AUTO"))
    if not dynamic:
        return exported, static
    from .._dynamo.exc import UserError
    reason = str(error).split("\n")[0].rstrip(".")
    raise UserError(f"Constraints violated ({', '.join(dynamic)})! The forward could not be traced with "
                    f"{', '.join(dynamic)} dynamic: {reason}. If the code needs a fixed size there, mark the dimension "
                    "Dim.STATIC (or Dim.AUTO, which falls back to static); if two dimensions must be equal, give "
                    "them one Dim.") from None


def _require_flatbuffers():
    try:
        import flatbuffers  # noqa: F401
    except ImportError:
        raise ImportError("Serializing an exported program needs the flatbuffers package (jax.export's format): "
                          "pip install flatbuffers (or tapegrad[export]).") from None


_OUTPUTS = {"tensor": lambda n: jax.tree_util.tree_structure(0),
            "tuple": lambda n: jax.tree_util.tree_structure((0,) * n),
            "list": lambda n: jax.tree_util.tree_structure([0] * n)}


def _output_kind(tree):
    return next((k for k, make in _OUTPUTS.items() if make(tree.num_leaves) == tree), "list")


def deserialize(data, state_dict=None, outputs="list", input_names=None, axes=None):
    """An ExportedProgram from serialize()'s bytes, given the state it takes (in state_dict order) and how its
    outputs are returned ("tensor", "tuple" or "list"). Dynamic dimensions are read off the program (their
    bounds then checked by JAX) unless save()'s input names and axes are given."""
    _require_flatbuffers()
    exported = jax.export.deserialize(bytearray(data))
    names = list(state_dict or {})
    values = [state_dict[n]._value for n in names]
    return ExportedProgram(exported, names, values, _OUTPUTS[outputs](len(exported.out_avals)), input_names, axes)


def save(ep, f):
    """Write ep to a file (path or binary file object): program bytes, state arrays and their names."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        z.writestr("program.bin", ep.serialize())
        arrays = [np.asarray(v) for v in ep._state_values]
        z.writestr("state.json", json.dumps({
            "names": ep._state_names, "dtypes": [str(a.dtype) for a in arrays], "shapes": [a.shape for a in arrays],
            "outputs": _output_kind(ep._out_tree), "inputs": ep._input_names, "axes": _dyn.to_json(ep._axes)}))
        for i, a in enumerate(arrays):
            z.writestr(f"state/{i}.bin", np.ascontiguousarray(a).tobytes())
    data = buffer.getvalue()
    if isinstance(f, (str, bytes)) or hasattr(f, "__fspath__"):
        with open(f, "wb") as out:
            out.write(data)
    else:
        f.write(data)


def load(f):
    """The ExportedProgram written by save(). Outputs come back as a tensor or a tuple when the model returned
    one, else as a flat list of tensors."""
    from .._tensor import Tensor
    data = open(f, "rb").read() if isinstance(f, (str, bytes)) or hasattr(f, "__fspath__") else f.read()
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        meta = json.loads(z.read("state.json"))
        state = {}
        for i, (name, dtype, shape) in enumerate(zip(meta["names"], meta["dtypes"], meta["shapes"])):
            array = np.frombuffer(z.read(f"state/{i}.bin"), dtype=jax.numpy.dtype(dtype)).reshape(shape)
            state[name] = Tensor._wrap(jax.numpy.asarray(array))
        axes = _dyn.from_json(meta["axes"]) if "axes" in meta else None
        return deserialize(z.read("program.bin"), state, meta["outputs"], meta.get("inputs"), axes)
