"""tapegrad.jit (PyTorch's torch.jit): trace and script as tapegrad.compile, the markers as no-ops.

tapegrad has no TorchScript: Python code is what runs. `trace(fn_or_module, example_inputs)` and
`script(fn_or_module)` return callables whose calls go through `tapegrad.compile` (one XLA program per
input shapes, the module's parameters as inputs). `.graph` and `.code` of a traced function or module
are the tapegrad.fx graph recorded from the example inputs (tapegrad's ops, not TorchScript IR);
`.code` of a scripted one is its Python source. `save`/`load` refuse with the ways to do it instead
(`tapegrad.save` of a state_dict, or `tapegrad.export`). `ignore`, `unused`, `export` mark nothing:
everything runs as Python; `is_scripting()` is always False and `is_tracing()` True only while
`trace` runs its example.
"""
import functools
import inspect
import typing

from ..nn import Module

__all__ = ["trace", "trace_module", "script", "save", "load", "ignore", "unused", "export", "is_scripting",
           "is_tracing", "annotate", "Final", "ScriptModule", "ScriptFunction", "TracedModule"]

Final = typing.Final
_tracing = [0]

_SAVE_ERROR = ("tapegrad.jit.save cannot write a TorchScript archive: tapegrad runs Python code, not TorchScript. "
               "Save the weights with tapegrad.save(model.state_dict(), f) and rebuild the module in Python, or "
               "export its forward as a StableHLO program with tapegrad.export.export(model, args) (and "
               "tapegrad.export.save).")
_LOAD_ERROR = ("tapegrad.jit.load cannot read a TorchScript archive: tapegrad runs Python code, not TorchScript. "
               "Load weights with tapegrad.load(f) (a state_dict saved by torch.save or tapegrad.save) into the "
               "module built in Python, or load a program written by tapegrad.export.save with "
               "tapegrad.export.load.")


def save(m, f, _extra_files=None):
    """Refuses: see the module docstring."""
    raise RuntimeError(_SAVE_ERROR)


def load(f, map_location=None, _extra_files=None):
    """Refuses: see the module docstring."""
    raise RuntimeError(_LOAD_ERROR)


def is_scripting():
    """False: tapegrad code always runs as Python."""
    return False


def is_tracing():
    """True while tapegrad.jit.trace runs its example inputs."""
    return _tracing[0] > 0


def annotate(the_type, the_value):
    return the_value


def _marker(fn=None, **_):
    # @ignore, @ignore(drop=True), @unused, @export: the function itself (everything runs as Python)
    return fn if fn is not None and callable(fn) else (lambda f: f)


ignore = unused = export = _marker


def _source(fn):
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):
        return None


class _Scripted:
    """What trace and script return share: calls through tapegrad.compile, graph, code, save."""

    def save(self, f, _extra_files=None):
        raise RuntimeError(_SAVE_ERROR)

    @property
    def graph(self):
        if self._graph is None:
            raise RuntimeError("tapegrad.jit.script keeps no graph (tapegrad runs the Python code); trace with "
                               "example inputs to see one: tapegrad.jit.trace(fn, example_inputs).graph")
        return self._graph

    @property
    def code(self):
        return self._code

    def _record(self, root, fn, example_inputs):
        from .. import fx
        _tracing[0] += 1
        try:
            gm = fx.symbolic_trace(root if root is not None else fn, example_inputs=example_inputs)
        finally:
            _tracing[0] -= 1
        self._graph, self._code = gm.graph, gm.code


class ScriptFunction(_Scripted):
    """A function run through tapegrad.compile."""

    def __init__(self, fn, example_inputs=None):
        from .._compile import compile
        self._fn = fn
        self._compiled = compile(fn)
        self._graph, self._code = None, _source(fn)
        if example_inputs is not None:
            self._record(None, fn, example_inputs)
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)


class ScriptModule(Module, _Scripted):
    """A module whose calls run through tapegrad.compile; it shares the original's submodules, parameters and
    buffers (same objects, same state_dict keys)."""

    def __init__(self, original, example_inputs=None):
        super().__init__()
        from .._compile import compile
        for name, child in original._modules.items():
            self._modules[name] = child
        for name, p in original._parameters.items():
            self._parameters[name] = p
        for name, b in original._buffers.items():
            self._buffers[name] = b
        object.__setattr__(self, "_original", original)
        object.__setattr__(self, "_compiled", compile(original))
        self.training = original.training
        self._graph, self._code = None, _source(type(original).forward)
        if example_inputs is not None:
            self._record(original, None, example_inputs)

    def forward(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def train(self, mode=True):
        self._original.train(mode)
        return super().train(mode)

    @property
    def original_name(self):
        return type(self._original).__name__

    def extra_repr(self):
        return f"original_name={self.original_name}"

    def _get_name(self):
        return self.original_name


class TracedModule(ScriptModule):
    """ScriptModule made by trace: `.graph` and `.code` are those recorded from the example inputs."""


def _as_tuple(example_inputs):
    return example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
          example_kwarg_inputs=None, _store_inputs=True):
    """func (a function or module) run once on example_inputs; returns a callable over tapegrad.compile."""
    if example_inputs is None:
        if example_kwarg_inputs is not None:
            raise NotImplementedError("tapegrad.jit.trace records positional example inputs: pass "
                                      "example_inputs=(x, ...) instead of example_kwarg_inputs.")
        raise RuntimeError("example_kwarg_inputs or example_inputs must be provided: trace runs the function "
                           "once on them, e.g. tapegrad.jit.trace(model, (x,)).")
    inputs = _as_tuple(example_inputs)
    if isinstance(func, Module):
        return TracedModule(func, inputs)
    return ScriptFunction(func, inputs)


def trace_module(mod, inputs, **kwargs):
    """trace of mod's forward with inputs {"forward": example_inputs} (other methods are not traced)."""
    extra = set(inputs) - {"forward"}
    if extra:
        raise NotImplementedError(f"tapegrad.jit.trace_module traces forward only, not {sorted(extra)}: call "
                                  "those methods on the module itself.")
    return trace(mod, inputs["forward"], **kwargs)


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """obj (a function or module) as a callable over tapegrad.compile; `.code` is its Python source."""
    if isinstance(obj, _Scripted):
        return obj
    if isinstance(obj, Module):
        return ScriptModule(obj)
    if callable(obj):
        return ScriptFunction(obj)
    raise RuntimeError(f"tapegrad.jit.script expects a function or an nn.Module, got {type(obj).__name__}.")
