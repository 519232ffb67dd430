"""tapegrad's modules import in one direction: no module-level import cycle, and no module binding
another module's globals after import (`_dispatch.Tensor = Tensor`), read off the source with `ast`.
Also: the low-level modules import first, alone, in a fresh interpreter."""
import ast
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tapegrad")

def _modules():
    """Module name -> file, for every .py file of the package."""
    mods = {}
    for folder, _, files in os.walk(ROOT):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(folder, f)
                name = "tapegrad" + path[len(ROOT):-3].replace(os.sep, ".")
                mods[name[:-len(".__init__")] if name.endswith(".__init__") else name] = path
    return mods


MODULES = _modules()
TREES = {m: ast.parse(open(p).read(), p) for m, p in MODULES.items()}


def _module_level(body):
    """The statements run at import: the module's body, with the bodies of module-level if/try/with."""
    for node in body:
        yield node
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            yield from _module_level(node.body)
            yield from _module_level(getattr(node, "orelse", []))
            yield from _module_level(getattr(node, "finalbody", []))
            for handler in getattr(node, "handlers", []):
                yield from _module_level(handler.body)


def _lazy_table(package):
    """A package's PEP 562 table (`_LAZY = {name: submodule}`): `from package import name` imports it."""
    for node in TREES[package].body:
        if isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["_LAZY"]:
            return {k: f"{package}.{v}" for k, v in ast.literal_eval(node.value).items()}
    return {}


def _from_base(module, node):
    """The module a `from ... import` statement imports from, as an absolute name."""
    if not node.level:
        return node.module
    package = module if MODULES[module].endswith("__init__.py") else module.rsplit(".", 1)[0]
    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
    return base + ("." + node.module if node.module else "")


def _imported(module, node):
    """The modules an import statement runs (before the implied parent packages)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = _from_base(module, node)
    lazy = _lazy_table(base) if base in MODULES else {}
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else lazy.get(a.name, base) for a in node.names]


def import_graph():
    """Module -> the tapegrad modules its module-level statements import, with the parent packages an
    import of a submodule runs first."""
    edges = {}
    for m in MODULES:
        deps = set()
        for node in _module_level(TREES[m].body):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for d in _imported(m, node):
                    while d not in MODULES and "." in d:
                        d = d.rsplit(".", 1)[0]
                    if d in MODULES and d != m:
                        # `import tapegrad.a.b` runs tapegrad.a first (the packages above m have run already)
                        parts = d.split(".")
                        deps.add(d)
                        deps.update(p for p in (".".join(parts[:i]) for i in range(2, len(parts)))
                                    if p in MODULES and p != m and not m.startswith(p + "."))
        edges[m] = deps
    return edges


def cycles(edges):
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            w = next(children, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = set()
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.add(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def _describe(component, edges):
    return "\n".join(f"  {m} -> {', '.join(sorted(edges[m] & component))}" for m in sorted(component))


def test_the_scan_sees_a_cycle():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(edges) == [{"a", "b", "c"}]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_scan_follows_lazy_names_and_parent_packages():
    edges = import_graph()
    # tapegrad.autograd.__init__'s PEP 562 table: `from tapegrad.autograd import Function` imports .function
    assert "tapegrad.autograd.function" in _lazy_table("tapegrad.autograd").values()
    # importing tapegrad.autograd._node runs the package tapegrad.autograd first
    assert {"tapegrad.autograd", "tapegrad.autograd._node"} <= edges["tapegrad._tensor"]


def test_no_module_level_import_cycle():
    edges = import_graph()
    found = cycles(edges)
    assert not found, "module-level import cycles (an import inside a function, or moving the shared " \
        "piece to a lower module, breaks one):\n" + "\n\n".join(_describe(c, edges) for c in found)


def _module_names(module):
    """Local name -> the tapegrad module an import in `module` binds it to."""
    names = {}
    for node in ast.walk(TREES[module]):
        if isinstance(node, ast.Import):
            for a in node.names:
                names[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                names[a.asname or a.name] = f"{_from_base(module, node)}.{a.name}"
    return {k: v for k, v in names.items() if v in MODULES}


def test_no_module_binds_another_modules_globals():
    writes = []
    for m in MODULES:
        modules = _module_names(m)
        for node in _module_level(TREES[m].body):
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else []
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) \
                    and ast.unparse(node.value.func) == "setattr" and node.value.args:
                targets = [ast.Attribute(node.value.args[0], "?", ast.Store())]
            for target in targets:
                for t in ast.walk(target):
                    if not isinstance(t, ast.Attribute) or not isinstance(t.ctx, ast.Store):
                        continue
                    owner = ast.unparse(t.value)   # `_dispatch` in `_dispatch.Tensor = Tensor`
                    head = owner.split(".")[0]
                    if head in modules and modules[head] + owner[len(head):] in MODULES:
                        writes.append(f"{MODULES[m]}:{node.lineno}: {ast.unparse(node)}")
    assert not writes, "a module binds another module's global at import (import the name where it is " \
        "used instead):\n" + "\n".join(writes)


def _run_each(codes):
    """Run each snippet in its own fresh interpreter, side by side; fail naming the ones that failed."""
    env = {**os.environ, "PYTHONPATH": os.path.dirname(ROOT)}
    runs = {name: subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True) for name, code in codes.items()}
    failed = {name: run.communicate()[0][-3000:] for name, run in runs.items()}
    failed = {name: out for name, out in failed.items() if runs[name].returncode}
    assert not failed, "\n\n".join(f"{name}:\n{out}" for name, out in failed.items())


def test_imports_first_in_a_fresh_interpreter():
    then = "; import tapegrad; tapegrad.autograd.grad; tapegrad.autograd.Function; tapegrad.nn.Linear"
    _run_each({"tapegrad.autograd.graph": "import tapegrad.autograd.graph\n" + AUTOGRAD_NAMES,
               "tapegrad._dispatch": "import tapegrad._dispatch" + then, "tapegrad.nn": "import tapegrad.nn" + then})


def test_the_core_imports_without_the_top_level_package():
    # tapegrad/__init__.py imports nearly everything, hiding what a core module needs: put an empty
    # package in its place so only the module's own imports run
    _run_each({m: "import sys, types\n"
                  f"package = types.ModuleType('tapegrad'); package.__path__ = [{ROOT!r}]\n"
                  "sys.modules['tapegrad'] = package\n"
                  f"import {m}\n"
                  "assert 'tapegrad.nn' not in sys.modules\n"
               for m in ("tapegrad.autograd.graph", "tapegrad._dispatch", "tapegrad.autograd._engine, tapegrad._views")})


# tapegrad.autograd's public names, each loaded by its first use (run by the test above)
AUTOGRAD_NAMES = """
import tapegrad.autograd as A
from tapegrad.autograd import grad, backward, Function, once_differentiable, forward_ad, functional
from tapegrad.autograd.function import FunctionCtx
from tapegrad.autograd.graph import saved_tensors_hooks
assert A.grad is grad and A.Function.__name__ == "Function" and A.forward_ad is forward_ad
assert callable(A.gradcheck) and callable(A.gradgradcheck)   # the functions, not the module of that name
assert A.graph.saved_tensors_hooks is saved_tensors_hooks and A.functional.jacobian
assert {"backward", "grad", "Function", "functional", "forward_ad", "graph", "no_grad"} <= set(dir(A))
assert not hasattr(A, "no_such_name")
import tapegrad
x = tapegrad.tensor([1.0, 2.0], requires_grad=True)
assert grad((x * x).sum(), x)[0].tolist() == [2.0, 4.0]
"""
