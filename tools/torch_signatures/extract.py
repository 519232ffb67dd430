"""Writes tapegrad/_torch_signatures.py: the signatures PyTorch's argument parser has for the functions and Tensor
methods it binds -- the overloads its "invalid combination of arguments" error lists, for those with several.

Run with PyTorch installed (tapegrad never imports it): `python tools/torch_signatures/extract.py`.
`--check` fails when the file is out of date. A function with one signature has no listing: its signature is
derived from its aten schema where PyTorch's errors confirm it (single.py).
"""
import pathlib
import pprint
import re
import sys
import warnings

import torch

import tapegrad
from single import derived, verified

OUT = pathlib.Path(__file__).resolve().parents[2] / "tapegrad" / "_torch_signatures.py"
_MARK = "received an invalid combination of arguments - got ("
_PROBE = [object()] * 25   # more arguments than any signature takes: every overload is listed


def _options(fn):
    """(the name PyTorch's errors give fn, the overloads its parser lists, or None for a single signature),
    or None where fn's arguments are not parsed by PyTorch's argument parser."""
    try:
        fn(*_PROBE)
    except TypeError as e:
        text = str(e)
    else:
        return None
    if _MARK not in text:
        single = re.match(r"(\w+)\(\) takes .* positional arguments? but 25 were given$", text)
        return None if single is None else (single.group(1), None)
    named = text.split("() " + _MARK, 1)[0]
    listed = text.split("), but expected ", 1)[1]
    if listed.startswith("one of:\n"):
        return named, tuple(line[3:] for line in listed.split("\n") if line.startswith(" * "))
    return named, (listed,)


def _schema_facts(name, options, method):
    """Per overload, what its aten schema (the one with the same parameter names) says and the listing does
    not: (the parameters that take None without showing `= None`, `int[1]? dim`; the int lists of a fixed
    size, which take a lone int), or None where no schema matches (a signature of Python's binding only)."""
    schemas = []
    for aten in {name, name.rstrip("_")}:
        try:
            schemas += torch._C._jit_get_schemas_for_operator("aten::" + aten)
        except RuntimeError:
            pass
    out = []
    for option in options:
        items = [item for item in option[1:-1].split(", ") if item and item != "*"]
        params = [item.partition(" = ")[0].rpartition(" ")[2] for item in items]
        shown_none = {item.partition(" = ")[0].rpartition(" ")[2] for item in items if item.endswith(" = None")}
        found = None
        for schema in schemas:
            args = {("input" if a.name == "self" else a.name): a for a in schema.arguments
                    if not (method and a.name == "self")}
            if [n for n in args if n != "out"] == [p for p in params if p != "out"]:
                found = (tuple(sorted(n for n, a in args.items()
                                      if str(a.type).startswith("Optional[") and n not in shown_none)),
                         tuple(sorted(n for n, a in args.items() if a.N)))
                break
        out.append(found)
    return tuple(out)


def _builtin(fn):
    return type(fn).__name__ in ("builtin_function_or_method", "method_descriptor")


_KINDS = ("function", "nn", "method", "kernel")


def _callables():
    """(kind, name, PyTorch's callable) for what PyTorch binds in C++: tapegrad's functions ("function": torch.X;
    "nn": torch.nn.functional.X), Tensor methods, and the torch._C._nn kernels nn.functional's Python calls
    ("kernel": interpolate's upsample_*)."""
    for kind, theirs, ours in [("function", torch, tapegrad), ("nn", torch.nn.functional, tapegrad.nn.functional),
                               ("kernel", torch._C._nn, None)]:
        for name in dir(ours if ours is not None else theirs):
            fn = getattr(theirs, name, None)
            if not name.startswith("_") and fn is not None and _builtin(fn):
                yield kind, name, fn
    x = torch.zeros(1)
    for name in dir(tapegrad.Tensor):
        if not name.startswith("_") and _builtin(getattr(torch.Tensor, name, None)) and _builtin(getattr(x, name)):
            yield "method", name, getattr(x, name)


def table():
    overloads, single = {k: {} for k in _KINDS}, {k: {} for k in _KINDS}
    named, facts = {}, {}
    for kind, name, fn in _callables():
        found = _options(fn)
        if found is None:
            continue
        shown, options = found
        if shown != name:
            named[kind, name] = shown
        if options is None:
            derived_single = None if kind == "kernel" else derived(shown, kind == "method")
            if derived_single is not None and verified(fn, shown, *derived_single):
                single[kind][name] = derived_single[0]
                if derived_single[1] != ((), ()):
                    facts[kind, name] = (derived_single[1],)
            continue
        overloads[kind][name] = options
        found_facts = _schema_facts(shown, options, kind == "method")
        if any(f != ((), ()) for f in found_facts):
            facts[kind, name] = found_facts
    return overloads, single, named, facts


def render():
    overloads, single, named, facts = table()
    return (f'"""The signatures PyTorch {torch.__version__.split("+")[0]}\'s argument parser knows for the functions '
            'and Tensor methods it binds\n(generated by tools/torch_signatures/extract.py; do not edit). Read by '
            '_argument_errors on the error path only."""\n\n'
            "# kind (function: torch.X, nn: torch.nn.functional.X, method: Tensor.X, kernel: torch._C._nn.X, which\n"
            "# nn.functional's Python functions call) -> name -> the overloads its errors list\n"
            f"OVERLOADS = {pprint.pformat(overloads, width=116)}\n\n"
            "# kind -> name -> the one signature, derived from its aten schema and checked against PyTorch's errors\n"
            "# (tools/torch_signatures/single.py): such a function's errors name an argument, never list overloads\n"
            f"SINGLE = {pprint.pformat(single, width=118)}\n\n"
            "# (kind, name) -> the name its errors give (an alias names the function it calls)\n"
            f"NAMED = {pprint.pformat(named, width=118)}\n\n"
            "# (kind, name) -> per overload, from its aten schema: (the parameters that take None without a `= None`\n"
            "# default, the int lists of a fixed size, which take a lone int); None: no schema matched, so any\n"
            "# parameter may do either\n"
            f"FACTS = {pprint.pformat(facts, width=118)}\n")


if __name__ == "__main__":
    warnings.simplefilter("ignore")   # (deprecation warnings of the probed functions)
    text = render()
    if "--check" in sys.argv:
        sys.exit(0 if OUT.read_text() == text else "tapegrad/_torch_signatures.py is out of date")
    OUT.write_text(text)
    print(f"wrote {OUT}")
