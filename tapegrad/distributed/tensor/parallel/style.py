"""Tensor-parallel styles (PyTorch's ParallelStyle classes): how a module's parameters, inputs and outputs
are placed over a DeviceMesh (one placement per mesh dimension: pass a 1-D mesh, or mesh["tp"]).

A style shards the parameters as PyTorch's does (DTensor parameters over jax.sharding) and adds hooks
that place the inputs and outputs. The module's own forward is unchanged: XLA partitions the program from
the arrays' shardings and inserts the collectives that PyTorch's styles issue by hand, so the results
equal the unsharded module's.
"""
from .._dtensor import DTensor, _normalize, distribute_tensor, to_parameter
from ..placement_types import Replicate, Shard

__all__ = ["ParallelStyle", "ColwiseParallel", "RowwiseParallel", "SequenceParallel", "PrepareModuleInput",
           "PrepareModuleOutput"]


class ParallelStyle:
    """Base class: `_apply(module, device_mesh)` parallelizes one module."""

    def _apply(self, module, device_mesh):
        raise NotImplementedError(f"{type(self).__name__} must define _apply(module, device_mesh).")


def _place_param(module, name, mesh, placement):
    p = module._parameters.get(name)
    if p is not None and not isinstance(p, DTensor):
        module.register_parameter(name, to_parameter(distribute_tensor(p.detach(), mesh, [placement]),
                                                     p.requires_grad))


def _to_dtensor(x, mesh, layout, desired):
    """An input placed as `layout` (a plain tensor is taken as such), then moved to `desired`."""
    if layout is None or not hasattr(x, "_peek"):
        return x
    if not isinstance(x, DTensor):
        x = DTensor.from_local(x, mesh, (layout,))
    if desired is not None and x.placements != _normalize(mesh, (desired,), x.ndim)[1]:
        x = x.redistribute(placements=(desired,))
    return x


def _from_dtensor(x, mesh, layout, use_local_output):
    if not hasattr(x, "_peek"):
        return x
    if not isinstance(x, DTensor) or x.placements != _normalize(mesh, (layout,), x.ndim)[1]:
        x = DTensor.from_local(x, mesh, (layout,)) if not isinstance(x, DTensor) else \
            x.redistribute(placements=(layout,))
    return x.to_local() if use_local_output else x


def _one(layouts, default):
    if layouts is None:
        return default
    return layouts[0] if isinstance(layouts, (tuple, list)) else layouts


class _Linear(ParallelStyle):
    def __init__(self, *, input_layouts=None, output_layouts=None, use_local_output=True):
        self.input_layouts = (_one(input_layouts, self._input),)
        self.output_layouts = (_one(output_layouts, self._output),)
        self.use_local_output = use_local_output

    def _apply(self, module, device_mesh):
        from ....nn import Embedding, Linear
        if isinstance(module, Linear):
            weight, bias, desired = self._linear
        elif isinstance(module, Embedding):
            weight, bias, desired = self._embedding
        else:
            raise NotImplementedError(f"{type(self).__name__} currently only support nn.Linear and nn.Embedding!")
        _place_param(module, "weight", device_mesh, weight)
        _place_param(module, "bias", device_mesh, bias)
        layout = self.input_layouts[0]
        module.register_forward_pre_hook(
            lambda m, args: (_to_dtensor(args[0], device_mesh, layout, desired),) + tuple(args[1:]))
        out_layout, local = self.output_layouts[0], self.use_local_output
        module.register_forward_hook(lambda m, args, out: _from_dtensor(out, device_mesh, out_layout, local))
        return module

    def __repr__(self):
        return (f"{type(self).__name__}(input_layouts={self.input_layouts}, output_layouts={self.output_layouts}, "
                f"use_local_output={self.use_local_output})")


class ColwiseParallel(_Linear):
    """Linear: weight and bias split along the output features (dim 0 of the weight); the output is
    Shard(-1). Embedding: weight split along the embedding dim."""
    _input, _output = Replicate(), Shard(-1)
    _linear = (Shard(0), Shard(0), Replicate())
    _embedding = (Shard(1), Replicate(), Replicate())


class RowwiseParallel(_Linear):
    """Linear: weight split along the input features (dim 1), bias replicated; input Shard(-1), output
    Replicate (the partial sums are added inside the program). Embedding: weight split along the rows."""
    _input, _output = Shard(-1), Replicate()
    _linear = (Shard(1), Replicate(), Shard(-1))
    _embedding = (Shard(0), Replicate(), Replicate())


class SequenceParallel(ParallelStyle):
    """Norm and dropout layers run on inputs split along the sequence dimension; parameters replicated."""

    def __init__(self, *, sequence_dim=1, use_local_output=False):
        self.sequence_dim = sequence_dim
        self.use_local_output = use_local_output

    def _apply(self, module, device_mesh):
        for name in list(module._parameters):
            _place_param(module, name, device_mesh, Replicate())
        layout = Shard(self.sequence_dim)
        module.register_forward_pre_hook(
            lambda m, args: (_to_dtensor(args[0], device_mesh, layout, None),) + tuple(args[1:]))
        local = self.use_local_output
        module.register_forward_hook(lambda m, args, out: _from_dtensor(out, device_mesh, layout, local))
        return module


class PrepareModuleInput(ParallelStyle):
    """Place a module's inputs: each positional input (or keyword input) given a layout is taken as that
    placement and moved to its desired one; None leaves the input alone."""

    def __init__(self, *, input_layouts=None, desired_input_layouts=None, input_kwarg_layouts=None,
                 desired_input_kwarg_layouts=None, use_local_output=False):
        self.input_layouts = _tuple(input_layouts)
        self.desired_input_layouts = _tuple(desired_input_layouts)
        if self.input_layouts is not None and len(self.input_layouts) != len(self.desired_input_layouts or ()):
            raise AssertionError("input_layouts and desired_input_layouts should have same length!")
        self.input_kwarg_layouts = input_kwarg_layouts or {}
        self.desired_input_kwarg_layouts = desired_input_kwarg_layouts or {}
        if set(self.input_kwarg_layouts) != set(self.desired_input_kwarg_layouts):
            raise AssertionError("input_kwarg_layouts and desired_input_kwarg_layouts should have same keys!")
        self.use_local_output = use_local_output

    def _prepare(self, x, mesh, layout, desired):
        x = _to_dtensor(x, mesh, layout, desired)
        return x.to_local() if self.use_local_output and isinstance(x, DTensor) else x

    def _hook(self, mesh):
        def hook(module, args, kwargs):
            if self.input_layouts is not None:
                if len(args) != len(self.input_layouts):
                    raise ValueError("module inputs and input_layouts should have same length!")
                args = tuple(self._prepare(a, mesh, layout, desired)
                             for a, layout, desired in zip(args, self.input_layouts, self.desired_input_layouts))
            kwargs = {k: self._prepare(v, mesh, self.input_kwarg_layouts.get(k),
                                       self.desired_input_kwarg_layouts.get(k)) for k, v in kwargs.items()}
            return args, kwargs
        return hook

    def _apply(self, module, device_mesh):
        module.register_forward_pre_hook(self._hook(device_mesh), with_kwargs=True)
        return module


class PrepareModuleOutput(ParallelStyle):
    """Place a module's outputs: each output is taken as its layout and moved to the desired one."""

    def __init__(self, *, output_layouts, desired_output_layouts, use_local_output=True):
        self.output_layouts = _tuple(output_layouts)
        self.desired_output_layouts = _tuple(desired_output_layouts)
        if len(self.output_layouts) != len(self.desired_output_layouts):
            raise AssertionError("output_layouts and desired_output_layouts should have same length!")
        self.use_local_output = use_local_output

    def _apply(self, module, device_mesh):
        def hook(m, args, outputs):
            single = not isinstance(outputs, tuple)
            outs = (outputs,) if single else outputs
            if len(outs) != len(self.output_layouts):
                raise ValueError("module outputs and output_layouts should have same length!")
            outs = tuple(o if layout is None else _from_dtensor(_to_dtensor(o, device_mesh, layout, desired),
                                                                device_mesh, desired, self.use_local_output)
                         for o, layout, desired in zip(outs, self.output_layouts, self.desired_output_layouts))
            return outs[0] if single else outs
        module.register_forward_hook(hook)
        return module


def _tuple(layouts):
    if layouts is None:
        return None
    return tuple(layouts) if isinstance(layouts, (tuple, list)) else (layouts,)


