"""The signature of a function PyTorch's parser knows one signature for, derived from its aten schema in the
text its listings use, and kept only where PyTorch's errors for probing calls are the ones tapegrad derives
from it (so a binding whose Python signature differs from its schema is left out)."""
import re

import torch

import tapegrad

from tapegrad._argument_errors import _Overload

_TYPES = {"Tensor": "Tensor", "int": "int", "SymInt": "int", "float": "float", "bool": "bool", "Scalar": "Number",
          "ScalarType": "torch.dtype", "str": "str", "int[]": "tuple of ints", "SymInt[]": "tuple of ints",
          "Tensor[]": "tuple of Tensors", "Layout": "torch.layout", "Device": "torch.device",
          "MemoryFormat": "torch.memory_format", "Generator": "torch.Generator", "float[]": "tuple of floats"}
_PROBE = object()


def _split(text):
    """A schema's arguments, split at the commas outside brackets."""
    out, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += c in "[(" and 1 or c in "])" and -1 or 0
        if c == "," and depth == 0:
            out.append(text[start:i].strip())
            start = i + 1
    out.append(text[start:].strip())
    return [a for a in out if a]


def derived(aten_name, method):
    """(signature text, (parameters that take None without a default, int lists of a fixed size)), or None
    where the schema is not one or has a type the listing text is not known for."""
    try:
        schemas = torch._C._jit_get_schemas_for_operator("aten::" + aten_name)
    except RuntimeError:
        return None
    # (out= overloads write through an alias annotation `(a!)`; named-dimension ones are hidden in Python)
    writes = [s for s in schemas if "!" in str(s) and "Dimname" not in str(s)]
    schemas = [s for s in schemas if "!" not in str(s) and "Dimname" not in str(s)]
    # TorchScript's overloads of numbers beside tensor ones (atan2.int(int a, int b)) are no Python binding's
    on_tensors = [s for s in schemas if any("Tensor" in str(a.type) for a in s.arguments)]
    schemas = on_tensors or schemas
    # Python binds an X.Scalar overload through X.Tensor (a number becomes a wrapped tensor): mul, atan2...
    tensor_overloads = {s.overload_name for s in schemas}
    if "Tensor" in tensor_overloads and "Scalar" in tensor_overloads:
        schemas = [s for s in schemas if s.overload_name != "Scalar"]
    if len(schemas) != 1:
        return None
    text = str(schemas[0])
    items, nullable, sized = [], [], []
    for arg in _split(text[text.index("(") + 1:text.rindex(") ->")]):
        if arg == "*":
            items.append("*")
            continue
        declared, _, default = arg.partition("=")
        kind, name = declared.rsplit(" ", 1)
        optional = kind.endswith("?")
        if re.search(r"\[\d+\]", kind):
            sized.append("input" if name == "self" else name)
        kind = _TYPES.get(re.sub(r"\[\d+\]", "[]", re.sub(r"\([a-z]\)", "", kind.rstrip("?"))))
        if kind is None:
            return None
        if name == "self":
            if method:
                continue
            name = "input"
        if optional and default != "None":
            nullable.append(name)
        items.append(f"{kind} {name}" + (f" = {default}" if default else ""))
        if name == "pin_memory":   # (a factory: its Python binding takes requires_grad, which no schema lists)
            items.append("bool requires_grad = False")
    if not method and writes:   # the function's out= (one tensor, or a tuple of them for several results)
        outs = max(str(w)[:str(w).rindex(") ->")].count("!)") for w in writes)
        items += ([] if "*" in items else ["*"]) + [("Tensor" if outs == 1 else "tuple of Tensors") + " out = None"]
    return "(" + ", ".join(items) + ")", (tuple(sorted(nullable)), tuple(sorted(sized)))


def _ours(values):
    return tuple(tapegrad.zeros(1) if isinstance(v, torch.Tensor) else v for v in values)


def verified(fn, fname, text, facts):
    """Whether PyTorch raises, for calls of fn that probe each parameter, the errors tapegrad derives from
    the signature (and it raises some)."""
    overload = _Overload(text, facts)
    names = [p.name for p in overload.parameters]
    probes = [((), {}), ((_PROBE,), {}), ((_PROBE, _PROBE), {}), ((_PROBE,) * 25, {}), ((), {"bogus": 1})]
    probes += [((), {n: _PROBE}) for n in names] + [((1,), {n: _PROBE}) for n in names[1:]]
    t = torch.zeros(1)
    probes += [((1.5,), {}), ((1, 1.5), {}), ((0, 0, 1.5), {}), ((), {"out": _PROBE}), ((t,), {"out": _PROBE}),
               ((t, 1.5), {}), ((t, _PROBE), {}), ((t, t, _PROBE), {})]
    # every required argument a tensor, and `out`: a schema's out= that the Python binding does not take
    # (torch.diagonal_scatter's) shows only here
    required = sum(not p.optional and not p.keyword_only for p in overload.parameters)
    probes += [((t,) * required, {"out": _PROBE}), ((t,) * required, {"out": t})]
    compared = 0
    for args, kwargs in probes:
        try:
            fn(*args, **kwargs)
            theirs = None
        except TypeError as e:
            theirs = str(e)
        except Exception:
            continue
        args, kwargs = _ours(args), dict(zip(kwargs, _ours(tuple(kwargs.values()))))
        if overload.fits(args, kwargs, fname):
            # (PyTorch fails later, if at all: unpacking an int list, on a value; tapegrad's own check stands)
            if theirs is not None and theirs.startswith(f"{fname}() takes"):
                return False
            continue
        if theirs != overload.first_error(fname, args, kwargs):
            return False
        compared += 1
    return compared >= 2
