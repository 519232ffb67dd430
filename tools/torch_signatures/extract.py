"""Writes tapegrad/_torch_signatures.py: the overloads PyTorch's argument parser lists for each function and
Tensor method that has several, as its "invalid combination of arguments" error prints them.

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


def _callables():
    """(kind, name, PyTorch's callable) for tapegrad's functions and Tensor methods that PyTorch binds in C++."""
    seen = set()
    for theirs, ours in [(torch, tapegrad), (torch.nn.functional, tapegrad.nn.functional)]:
        for name in dir(ours):
            fn = getattr(theirs, name, None)
            if not name.startswith("_") and fn is not None and _builtin(fn) and name not in seen:
                seen.add(name)
                yield "function", name, fn
    for name in dir(torch._C._nn):   # kernels nn.functional's Python functions call (interpolate: upsample_*)
        if not name.startswith("_") and name not in seen and _builtin(getattr(torch._C._nn, name)):
            yield "kernel", name, getattr(torch._C._nn, name)
    x = torch.zeros(1)
    for name in dir(tapegrad.Tensor):
        if not name.startswith("_") and _builtin(getattr(torch.Tensor, name, None)) and _builtin(getattr(x, name)):
            yield "method", name, getattr(x, name)


def table():
    tables = {"functions": {}, "methods": {}, "kernels": {}, "named": {}, "facts": {}, "single_functions": {},
              "single_methods": {}}
    for kind, name, fn in _callables():
        found = _options(fn)
        if found is None:
            continue
        named, options = found
        if kind == "function" and named != name:
            tables["named"][name] = named
        if options is None:
            if kind == "kernel":
                continue
            single = derived(named, kind == "method")
            if single is not None and verified(fn, named, *single):
                tables["single_" + kind + "s"][name] = single[0]
                if single[1] != ((), ()):
                    tables["facts"][kind, name] = (single[1],)
            continue
        tables[kind + "s"][name] = options
        facts = _schema_facts(named, options, kind == "method")
        if any(f != ((), ()) for f in facts):
            tables["facts"][kind, name] = facts
    return tables


def render():
    t = table()
    return (f'"""The overloads PyTorch {torch.__version__.split("+")[0]}\'s argument parser lists for the functions '
            'and Tensor methods that\nhave several (generated by tools/torch_signatures/extract.py; do not edit). '
            'Read by _argument_errors on the\nerror path only."""\n'
            f"FUNCTIONS = {pprint.pformat(t['functions'], width=116)}\n\n"
            f"METHODS = {pprint.pformat(t['methods'], width=118)}\n\n"
            "# torch._C._nn's kernels that nn.functional's Python functions call (their errors, for those calls)\n"
            f"KERNELS = {pprint.pformat(t['kernels'], width=118)}\n\n"
            "# functions and methods with one signature, derived from its aten schema and checked against PyTorch's\n"
            "# errors (tools/torch_signatures/single.py): their errors name the argument, never list overloads\n"
            f"SINGLE_FUNCTIONS = {pprint.pformat(t['single_functions'], width=108)}\n\n"
            f"SINGLE_METHODS = {pprint.pformat(t['single_methods'], width=110)}\n\n"
            "# functions whose errors name the function they alias\n"
            f"NAMED = {pprint.pformat(t['named'], width=118)}\n\n"
            "# per overload, from its aten schema: (the parameters that take None without a `= None` default, the int\n"
            "# lists of a fixed size, which take a lone int); None: no schema matched, any parameter may do either\n"
            f"FACTS = {pprint.pformat(t['facts'], width=118)}\n")


if __name__ == "__main__":
    warnings.simplefilter("ignore")   # (deprecation warnings of the probed functions)
    text = render()
    if "--check" in sys.argv:
        sys.exit(0 if OUT.read_text() == text else "tapegrad/_torch_signatures.py is out of date")
    OUT.write_text(text)
    print(f"wrote {OUT}")
