"""The state a compiled function can reach, found by walking objects from its roots.

Roots: the call's arguments, the function's closure cells, the globals its code names, its parameters'
default values, its `self`.
From there the walk descends into containers (dict, list, tuple), modules, optimizers, schedulers
and other user objects' attributes, user functions' closures and globals, and each tensor's grad.
It yields, in a deterministic order:

* `key`: one token per visited value -- a tensor's storage shape, dtype, requires_grad, grad
  presence; a Python scalar's type and value; an object's type; a revisit's position. Equal keys
  mean the same structure and the same Python values, so one traced program serves both calls:
  the key *is* the guard (shapes, dtypes, requires_grad, grad None vs tensor, `training`, and every
  Python value the function could branch on).
* `objects`: every visited object by position, so a program traced on one call can be replayed on
  another call's objects (a new grad tensor each step sits at the same position).
* `storages`: every tensor storage reached: the program's state inputs and outputs.
* `lifted`: optimizer learning rates (floats a scheduler changes every step): program inputs, not
  guarded values, so a schedule never recompiles.
* `views`: every view tensor reached (`X[i:i+bs]` passed in). Its recipe (view ops and their static
  arguments) is guarded; its offsets are program inputs, so a new offset never recompiles.

`split` roots (the call's arguments) are walked first and the lengths of every list at that point kept
in `cut`, so `_guard` can walk the arguments alone at the next call and reuse the rest.
"""
import dis
import types
from collections import OrderedDict, defaultdict

import numpy as np

from .._tensor import Tensor

MAX_OBJECTS = 20000   # a walk this large means the function reaches something that is not its state

DICT, LIST, OBJECT, TENSOR = range(4)
_SCALARS = frozenset((bool, int, float, complex, str, bytes, type(None)))
_DICTS = frozenset((dict, OrderedDict, defaultdict))
_EMPTIABLE = _DICTS | {list, set}   # an empty one is a token, not a walked container (see Walk.empties)
_LIBRARIES = ("tapegrad", "jax", "jaxlib", "numpy", "builtins", "functools", "collections", "torch")
_OPAQUE = (type, types.ModuleType, types.BuiltinFunctionType, types.BuiltinMethodType, types.CodeType,
           types.FrameType, types.GeneratorType)
walked_as = {}   # tapegrad classes walked as what they stand for: a compiled function as the function it compiles


_FUNCTION_RULES = ("forward", "setup_context", "backward", "jvp", "vmap")


class TooLarge(Exception):
    """The walk reached more than MAX_OBJECTS objects."""


def _is_library(module):
    # the demo is an application shipped with tapegrad: its functions are user code; so are functions made by
    # exec() with globals of their own (no __name__: their module is None)
    return module is not None and module.split(".", 1)[0] in _LIBRARIES and not module.startswith("tapegrad.demo")


_GLOBAL_NAMES = {}   # code -> its names (bounded: code made by exec would otherwise pile up)


def global_names(code):
    """Names a code object (and the code nested in it: lambdas, comprehensions) reads or writes as globals:
    not every name in `co_names`, which holds attribute names too (`opt.step()` names `step`, which may be
    the compiled function's own global name)."""
    names = _GLOBAL_NAMES.get(code)
    if names is None:
        if len(_GLOBAL_NAMES) > 4096:
            _GLOBAL_NAMES.clear()
        found = [i.argval for i in dis.get_instructions(code) if i.opname in _GLOBAL_OPS]
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                found.extend(global_names(c))
        names = _GLOBAL_NAMES[code] = tuple(dict.fromkeys(found))
    return names


_GLOBAL_OPS = frozenset(("LOAD_GLOBAL", "LOAD_NAME", "LOAD_FROM_DICT_OR_GLOBALS", "STORE_GLOBAL", "DELETE_GLOBAL",
                         "STORE_NAME", "DELETE_NAME"))


_MISSING = object()


def closure_values(fn):
    values = []
    for cell in fn.__closure__ or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:   # an empty cell (a name assigned later)
            values.append(None)
    return values


def function_roots(fn):
    """The values a user function reads besides its arguments: closure cells, named globals, and the
    default values of its parameters (`def step(x, model=model)`)."""
    roots = [fn.__defaults__, fn.__kwdefaults__] + closure_values(fn)
    glob = fn.__globals__
    for name in global_names(fn.__code__):
        value = glob.get(name, _MISSING)
        if value is not _MISSING:
            roots.append(value)
    return roots


class Walk:
    _optimizer = _generator = _function = None   # the classes, imported at the first walk (they import tapegrad.nn)

    def __init__(self, roots, split=None, dynamic=False):
        if Walk._optimizer is None:
            from ..optim.optimizer import Optimizer
            from ..random import Generator
            from ..autograd.function import Function
            Walk._optimizer = Optimizer
            Walk._generator = Generator   # its key and counter are program inputs of their own (see _trace)
            Walk._function = Function
        self.objects = []
        self.index = {}
        self.tokens = []
        self.storages = []
        self.storage_index = {}
        self.containers = []   # (position, kind)
        self.lifted = []       # (position of a param group dict, "lr")
        self.grad_fns = False  # a reached tensor has a grad_fn: the function is part of an outside graph
        self.views = []        # view tensors reached: their values are read from the traced storages
        # Empty containers (a module's dozen hook dicts) are tokens only: cheap to walk. A trace that
        # fills one cannot be replayed (_snapshot), as with any container the function creates.
        self.empties = []
        self.functions = []    # user functions walked (their code and roots are guarded)
        self.sets = []         # non-empty sets (opaque, but an emptied one would be a token of its own)
        self.revisits = []     # positions met again
        self.optimizers = []   # optimizers reached (one whose first step is coming runs eagerly: _function)
        self.shared = []       # storage indices met again (a view or detach of a walked tensor)
        self.opaque = []       # objects met as opaque: their key token is their id
        # compile(dynamic=True): the first dim of the argument tensors is a symbol, not a size (_symbolic)
        self.dynamic = dynamic
        self.symbolic = {}     # storage index -> its first dim's symbol (sizes equal here share one)
        self._sizes = {}       # first-dim size -> symbol
        self._groups = set()
        self.cut = None
        for i, r in enumerate(roots):
            if i == split:
                self.cut = self._lengths()
            self.visit(r)
        if split is not None and self.cut is None:   # nothing past the arguments (a library's function)
            self.cut = self._lengths()
        self.key = tuple(self.tokens)

    def _lengths(self):
        return {name: len(getattr(self, name)) for name in (
            "objects", "tokens", "storages", "containers", "lifted", "views", "empties", "functions", "sets",
            "revisits", "shared")}

    def _new(self, obj):
        pos = len(self.objects)
        if pos >= MAX_OBJECTS:
            raise TooLarge
        self.index[id(obj)] = pos
        self.objects.append(obj)
        return pos

    def visit(self, obj):
        t = type(obj)
        tokens = self.tokens
        if t in _SCALARS:
            tokens.append((t, obj))
            return
        if t in _EMPTIABLE and not obj:
            tokens.append((t, 0))
            self.empties.append(obj)
            return
        if isinstance(obj, np.generic):
            tokens.append((t, obj.item()))
            return
        pos = self.index.get(id(obj))
        if pos is not None:
            tokens.append(("@", pos))
            self.revisits.append(pos)
            return
        pos = self._new(obj)
        if isinstance(obj, Tensor):
            self._tensor(obj, pos)
        elif t in _DICTS:
            tokens.append((t, len(obj)))
            self.containers.append((pos, DICT))
            group = id(obj) in self._groups
            for k, v in obj.items():
                self.visit(k)
                if group and k == "lr" and isinstance(v, (float, np.floating)):
                    tokens.append("lr")   # lifted: an input of the program, not a guarded value
                    self.lifted.append((pos, k))
                else:
                    self.visit(v)
        elif t is list:
            tokens.append((list, len(obj)))
            self.containers.append((pos, LIST))
            for v in obj:
                self.visit(v)
        elif t is tuple or (isinstance(obj, tuple) and hasattr(obj, "_fields")):
            tokens.append((t, len(obj)))
            for v in obj:
                self.visit(v)
        elif isinstance(obj, types.FunctionType):
            tokens.append(("fn", obj.__code__))
            self.functions.append(obj)
            # a library's function is its code, but a closure it makes (a transform's wrapper) is also what it
            # closes over: the function it wraps, its arguments
            for r in function_roots(obj) if not _is_library(obj.__module__) else closure_values(obj):
                self.visit(r)
        elif isinstance(obj, types.MethodType):
            tokens.append(("method", obj.__func__))
            self.visit(obj.__self__)
            self.visit(obj.__func__)
        elif isinstance(obj, type) and issubclass(obj, self._function) and not _is_library(obj.__module__):
            # a user's autograd.Function: the class itself, and what its rules read (a backward's globals)
            tokens.append(("id", id(obj)))
            self.opaque.append(obj)
            for name in _FUNCTION_RULES:
                rule = obj.__dict__.get(name)
                rule = rule.__func__ if isinstance(rule, (staticmethod, classmethod)) else rule
                if isinstance(rule, types.FunctionType):
                    self.visit(rule)
        elif t in walked_as:   # (not its programs: they are not state)
            tokens.append(("as", t))
            self.visit(walked_as[t](obj))
        elif isinstance(obj, _OPAQUE) or isinstance(obj, self._generator) or not hasattr(obj, "__dict__") or (
                _is_library(t.__module__) and t.__module__.split(".", 1)[0] != "tapegrad"):
            tokens.append(("id", id(obj)))   # opaque: the same object, whatever it holds
            self.opaque.append(obj)
            if t is set:
                self.sets.append(obj)
        else:
            tokens.append(("obj", t))
            if isinstance(obj, self._optimizer):
                self._groups.update(id(g) for g in obj.param_groups)
                self.optimizers.append(obj)
            self.containers.append((pos, OBJECT))
            for k, v in obj.__dict__.items():
                tokens.append(k)
                self.visit(v)

    def _tensor(self, t, pos):
        s = t._storage
        si = self.storage_index.get(id(s))
        new = si is None
        if new:
            si = self.storage_index[id(s)] = len(self.storages)
            self.storages.append(s)
        else:
            self.shared.append(si)
        raw = s._raw
        view = t._view
        if t._grad_fn is not None:
            self.grad_fns = True
        shape = raw.shape
        if self.dynamic and new and self.cut is None and view is None and len(shape) and shape[0] > 1:
            # (0 and 1 stay sizes, as PyTorch's dynamic shapes specialise them: 1 broadcasts)
            symbol = self.symbolic[si] = self._sizes.setdefault(shape[0], len(self._sizes))
            shape = (("dim", symbol),) + tuple(shape[1:])
        self.tokens.append((type(t), shape, raw.dtype, si, t._requires_grad, t._grad_fn is not None))
        if view is not None:
            self.views.append(t)
            self.tokens.append(("view", view.steps))
        self.containers.append((pos, TENSOR))
        self.visit(t._grad)
