"""tapegrad.jit (PyTorch's torch.jit): trace and script as tapegrad.compile, the markers as no-ops.

tapegrad has no TorchScript: Python code is what runs. `trace(fn_or_module, example_inputs)` and
`script(fn_or_module)` return callables whose calls go through `tapegrad.compile` (one XLA program per
input shapes, the module's parameters as inputs). Example inputs may be keyword ones
(`example_kwarg_inputs={"x": x}`), and `trace_module(m, {"forward": ..., "other": ...})` traces each
method named (the result has those methods). `.graph` and `.code` of a traced function or module
are the tapegrad.fx graph recorded from the example inputs (tapegrad's ops, not TorchScript IR);
`.code` of a scripted one is its Python source. `save`/`load` refuse with the ways to do it instead
(`tapegrad.save` of a state_dict, or `tapegrad.export`). `ignore`, `unused`, `export` mark nothing:
everything runs as Python; `is_scripting()` is always False and `is_tracing()` True only while
`trace` runs its example. While it does, `TracerWarning`s come where PyTorch's trace warns: Python values
read from tensors (tapegrad/_tracer_warnings.py), random draws (PyTorch's nondeterministic nodes, with
check_trace) and list outputs (dicts refused, with strict).
"""
import functools
import inspect
import typing

from .._tracer_warnings import TRACING as _tracing, TracerWarning
from ..nn import Module
from .._user_frames import warn_user

__all__ = ["trace", "trace_module", "script", "save", "load", "ignore", "unused", "export", "is_scripting",
           "is_tracing", "annotate", "Final", "ScriptModule", "ScriptFunction", "TracedModule", "TracerWarning"]

Final = typing.Final

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

    def _record(self, root, fn, example_inputs, options=(True, True, 1e-5)):
        """The fx graph of one call of fn (root's forward if fn is None) on the example inputs: a tuple, or a
        dict of keyword inputs (placeholders in fn's parameter order); options: trace's (check_trace, strict,
        check_tolerance)."""
        from .. import random
        from ..fx import GraphModule
        from ..fx._tracer import record
        call, values = _positional(fn if fn is not None else root, example_inputs)
        owner = root if root is not None else Module()
        draws = random.default_generator.draws
        _tracing[0] += 1
        try:
            graph, constants, result = record(owner, call, values)
        finally:
            _tracing[0] -= 1
        _check_trace(random.default_generator.draws - draws, call, values, result, *options)
        gm = GraphModule(owner, graph, getattr(fn, "__name__", type(owner).__name__), constants)
        method = fn.__name__ if root is not None and fn is not None else "forward"   # a traced method keeps its name
        self._graph, self._code = gm.graph, gm.code.replace("def forward(", f"def {method}(", 1)


def _check_trace(draws, call, values, result, check_trace, strict, tolerance=1e-5):
    """PyTorch's warnings after a trace: its trace check (a traced call's outputs against the Python function's)
    and containers at the output (a list warned about, a dict refused, unless strict=False). tapegrad's traced
    callable reruns the Python code, so only random draws can make the two differ: the check then compares the
    example's outputs with a second Python run, as PyTorch compares its trace's."""
    if check_trace and draws:
        named = False   # PyTorch names the nondeterministic nodes once, at the first mismatch
        for i, (ours, again) in enumerate(zip(_tensors(result), _tensors(call(*values)))):
            message = _mismatch(ours, again, tolerance)
            if message is None:
                continue
            if not named:
                named = True
                warn_user("Trace had nondeterministic nodes. Did you forget call .eval() on your model? "
                          "Nodes:\n\trandom draws in the traced call\nThis may cause errors in trace checking. "
                          "To disable trace checking, pass check_trace=False to torch.jit.trace()",
                          TracerWarning)
            warn_user(f"Output nr {i + 1}. of the traced function does not match the corresponding output of the "
                      f"Python function. Detailed error:\n{message}", TracerWarning)
    if not strict:
        return
    found, todo = set(), [result]
    while todo:
        value = todo.pop()
        if isinstance(value, (list, tuple)):
            if isinstance(value, list):
                found.add("list")
            todo.extend(value)
        elif isinstance(value, dict):
            found.add("dict")
            todo.extend(value.values())
    for kind in sorted(found):
        message = (f"Encountering a {kind} at the output of the tracer might cause the trace to be incorrect, this is "
                   "only valid if the container structure does not change based on the module's inputs. Consider "
                   "using a constant container instead (e.g. for `list`, use a `tuple` instead. for `dict`, use a "
                   "`NamedTuple` instead). If you absolutely need this and know the side effects, pass strict=False "
                   "to trace() to allow this behavior.")
        if kind == "dict":
            raise RuntimeError(message)
        warn_user(message, TracerWarning)


def _tensors(value):
    from .._tensor import Tensor
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _tensors(v)]
    return []


def _mismatch(traced, python, tolerance):
    from .. import testing
    atol = 1e-7 if traced.dtype.name == "float64" else 1e-5   # PyTorch's default absolute tolerances
    try:
        testing.assert_close(traced.detach().double(), python.detach().double(), rtol=tolerance, atol=atol,
                             equal_nan=True)
    except AssertionError as e:
        return str(e)
    return None


def _positional(fn, example_inputs):
    """(a function taking the example inputs positionally, with their names as its signature, the inputs)."""
    signature = inspect.signature(fn.forward if isinstance(fn, Module) else fn)
    if isinstance(example_inputs, dict):
        names = [n for n in signature.parameters if n in example_inputs]
        for key in example_inputs:
            if key not in signature.parameters:
                raise NameError(f"'{key}' is not in forward() method's arguments, valid arguments name are "
                                f"[{','.join(signature.parameters)}]")

        def call(*values):
            return fn(**dict(zip(names, values)))
        values = tuple(example_inputs[n] for n in names)
        parameters = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names]
        call.__signature__ = inspect.Signature(parameters)
        return call, values

    def call(*values):
        return fn(*values)
    call.__signature__ = signature
    return call, example_inputs


class ScriptFunction(_Scripted):
    """A function (or a module's method) run through tapegrad.compile."""

    def __init__(self, fn, example_inputs=None, owner=None, options=(True, True, 1e-5)):
        from .._compile import compile
        self._fn = fn
        self._compiled = compile(fn)
        self._graph, self._code = None, _source(fn)
        if example_inputs is not None:
            self._record(owner, fn, example_inputs, options)
        functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)


class ScriptModule(Module, _Scripted):
    """A module whose calls run through tapegrad.compile; it shares the original's submodules, parameters and
    buffers (same objects, same state_dict keys). Traced, it has the methods traced (trace_module): forward
    only if it was one of them, each other one a ScriptFunction attribute."""

    def __init__(self, original, example_inputs=None, methods=None, options=(True, True, 1e-5)):
        super().__init__()
        from .._compile import compile
        for name, child in original._modules.items():
            self._modules[name] = child
        for name, p in original._parameters.items():
            self._parameters[name] = p
        for name, b in original._buffers.items():
            self._buffers[name] = b
        object.__setattr__(self, "_original", original)
        self.training = original.training
        methods = {"forward": example_inputs} if methods is None else methods
        object.__setattr__(self, "_compiled", compile(original) if "forward" in methods else None)
        self._graph, self._code = None, _source(type(original).forward)
        if methods.get("forward") is not None:
            self._record(original, None, methods["forward"], options)
        for name, inputs in methods.items():
            if name != "forward":
                object.__setattr__(self, name, ScriptFunction(getattr(original, name), inputs, owner=original,
                                                              options=options))

    @property
    def forward(self):
        if self._compiled is None:   # trace_module without "forward": as PyTorch's module, it has none
            raise AttributeError(f"'{type(self).__name__}' object has no attribute 'forward'")
        return self._compiled

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
    """PyTorch's make_tuple: one tensor (or dict) is one input, another iterable its inputs."""
    from .._tensor import Tensor
    if isinstance(example_inputs, (Tensor, dict)):
        return (example_inputs,)
    return example_inputs if isinstance(example_inputs, tuple) else tuple(example_inputs)


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
          strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
          example_kwarg_inputs=None, _store_inputs=True):
    """func (a function or module) run once on example_inputs, or on example_kwarg_inputs (a dict of keyword
    inputs); returns a callable over tapegrad.compile."""
    if example_inputs is None:
        if example_kwarg_inputs is None:
            raise RuntimeError("example_kwarg_inputs or example_inputs must be provided: trace runs the function "
                               "once on them, e.g. tapegrad.jit.trace(model, (x,)).")
        if not isinstance(example_kwarg_inputs, dict):
            raise RuntimeError("example_kwarg_inputs should be a dict, e.g. {'x': x}")
    module = func if isinstance(func, Module) else getattr(func, "__self__", None)
    if isinstance(module, Module) and (func is module or func.__name__ == "forward"):
        inputs = example_inputs if example_inputs is not None else example_kwarg_inputs
        return trace_module(module, {"forward": inputs}, check_trace=check_trace, strict=strict,
                            check_tolerance=check_tolerance,
                            example_inputs_is_kwarg=isinstance(example_kwarg_inputs, dict))
    if isinstance(module, Module):
        raise AttributeError("trace doesn't support compiling individual module's functions.\nPlease use "
                             f"trace_module: tapegrad.jit.trace_module(model, {{{func.__name__!r}: example_inputs}}).")
    options = (check_trace, strict, check_tolerance)
    if isinstance(example_kwarg_inputs, dict):
        return ScriptFunction(func, example_kwarg_inputs, options=options)
    return ScriptFunction(func, _as_tuple(example_inputs), options=options)


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None, check_tolerance=1e-5,
                 strict=True, _force_outplace=False, _module_class=None, _compilation_unit=None,
                 example_inputs_is_kwarg=False, _store_inputs=True):
    """mod with each method named in `inputs` ({"forward": example_inputs, "other": ...}) traced on its example
    inputs (dicts of keyword inputs with example_inputs_is_kwarg=True); the result has those methods."""
    if not isinstance(mod, Module):
        raise AttributeError("expected tapegrad.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    methods = {}
    for name, example in inputs.items():
        getattr(mod, name)   # AttributeError for a method mod lacks, as PyTorch
        methods[name] = example if isinstance(example, dict) and example_inputs_is_kwarg else _as_tuple(example)
    return TracedModule(mod, methods=methods, options=(check_trace, strict, check_tolerance))


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """obj (a function or module) as a callable over tapegrad.compile; `.code` is its Python source."""
    if isinstance(obj, _Scripted):
        return obj
    if isinstance(obj, Module):
        return ScriptModule(obj)
    if callable(obj):
        return ScriptFunction(obj)
    raise RuntimeError(f"tapegrad.jit.script expects a function or an nn.Module, got {type(obj).__name__}.")
