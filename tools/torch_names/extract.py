"""Extract the public PyTorch names used by a set of source repositories; write tools/torch_names/names.json.

    python tools/torch_names/extract.py GITDIR_OR_FOLDER[:SUBDIR,SUBDIR] ...

Each argument is a bare git directory (read at HEAD) or a plain folder, optionally followed by `:` and the
comma-separated folders to read (e.g. `/mirrors/pytorch+tutorials/repo:beginner_source,intermediate_source`).
A git directory named `.../owner+name/repo` is labelled `owner/name`, and so is a plain folder named
`owner+name` (e.g. files saved one by one from a repository too large to clone); files are listed as
`owner/name:path`.

Two kinds of name are collected, with Python's `ast` and the real PyTorch as the judge of what is public:
- module-level names: imports and attribute chains rooted at a torch alias (`import torch.nn as nn`,
  `from torch import optim`, `from torch.utils.data import DataLoader`), resolved to their full dotted path and
  cut at the longest prefix that exists in PyTorch (`F.relu(x).sum` gives `torch.nn.functional.relu`);
- members: `value.name` where the value is not a torch alias and `name` is a public member of `torch.Tensor`,
  `torch.nn.Module` or `torch.optim.Optimizer`. Without types this is a guess, so a member counts only when two
  or more files use it, and names that are also methods of str, list, dict or set (`split`, `sort`, `add`, ...)
  (and a few names listed in _AMBIGUOUS) are left out as too ambiguous.
"""
import argparse
import ast
import inspect
import json
import pathlib
import subprocess
import sys
from collections import defaultdict

OUT = pathlib.Path(__file__).resolve().parent / "names.json"
MEMBER_MIN_FILES = 2
_BUILTIN_METHODS = set(dir(str)) | set(dir(list)) | set(dir(dict)) | set(dir(set))
# Member names that real code mostly reads off other values: argparse/dataclass fields (`args.name`),
# PIL images (`img.resize`), fx tracers (`tracer.trace`).
_AMBIGUOUS = {"name", "resize", "trace"}


def _sources(spec):
    """Yield (label, text) for every .py file named by one command-line argument."""
    where, _, subdirs = spec.partition(":")
    subdirs = [s.strip("/") + "/" for s in subdirs.split(",") if s]
    path = pathlib.Path(where).resolve()
    is_git = (path / "HEAD").is_file() and (path / "objects").is_dir()
    repo = (path.parent.name if is_git and path.name == "repo" else path.name).replace("+", "/", 1)
    if is_git:
        listing = subprocess.run(["git", "--git-dir", str(path), "ls-tree", "-r", "--name-only", "HEAD"],
                                 check=True, capture_output=True, text=True).stdout.split("\n")
        files = [f for f in listing if f.endswith(".py")]
        read = lambda f: subprocess.run(["git", "--git-dir", str(path), "show", f"HEAD:{f}"], check=True,
                                        capture_output=True).stdout.decode("utf-8", "replace")
    else:
        files = sorted(str(p.relative_to(path)) for p in path.rglob("*.py"))
        read = lambda f: (path / f).read_text(encoding="utf-8", errors="replace")
    for f in files:
        if not subdirs or any(f.startswith(s) for s in subdirs):
            yield f"{repo}:{f}", read(f)


def _lookup(dotted):
    """The longest public prefix of `dotted` that exists in PyTorch, with its object, or (None, None)."""
    import importlib
    parts = dotted.split(".")
    obj, found = None, None
    for i in range(1, len(parts) + 1):
        name = ".".join(parts[:i])
        if parts[i - 1].startswith("_"):
            break
        try:
            obj = getattr(obj, parts[i - 1]) if obj is not None else importlib.import_module(name)
        except AttributeError:
            try:
                obj = importlib.import_module(name)
            except Exception:
                break
        except Exception:
            break
        found = (name, obj)
        if inspect.isclass(obj):
            break  # `Enum.MEMBER` or `Class.method` is the class's use; members are collected apart
    return found if found else (None, None)


def _kind(obj):
    if inspect.ismodule(obj):
        return "module"
    if inspect.isclass(obj):
        return "class"
    if callable(obj):
        return "function"
    return "attribute"


def _chain(node):
    """`a.b.c` as ['a', 'b', 'c'], or None when the root is not a plain name."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return [node.id] + parts[::-1]
    return None


class _FileNames(ast.NodeVisitor):
    """Collects, for one file, the torch paths it names and the attribute names it reads off other values."""

    def __init__(self):
        self.aliases, self.paths, self.attrs = {}, set(), set()

    def visit_Import(self, node):
        for a in node.names:
            if a.name == "torch" or a.name.startswith("torch."):
                if a.asname:
                    self.aliases[a.asname] = a.name
                else:
                    self.aliases["torch"] = "torch"
                self.paths.add(a.name)

    def visit_ImportFrom(self, node):
        mod = node.module or ""
        if node.level == 0 and (mod == "torch" or mod.startswith("torch.")):
            for a in node.names:
                if a.name != "*":
                    self.aliases[a.asname or a.name] = f"{mod}.{a.name}"
                    self.paths.add(f"{mod}.{a.name}")

    def visit_Attribute(self, node):
        chain = _chain(node)
        if chain and chain[0] in self.aliases:
            self.paths.add(".".join([self.aliases[chain[0]]] + chain[1:]))
            return  # the whole chain is recorded; its inner attributes are prefixes of it
        self.attrs.add(node.attr)
        self.generic_visit(node)

    def visit_Name(self, node):
        if node.id in self.aliases:
            self.paths.add(self.aliases[node.id])


def _member_tables():
    import torch
    tables = {"Tensor": torch.Tensor, "nn.Module": torch.nn.Module, "optim.Optimizer": torch.optim.Optimizer}
    return {prefix: {n for n in dir(cls) if not n.startswith("_")} for prefix, cls in tables.items()}


def extract(specs):
    names = defaultdict(lambda: {"kind": None, "files": set()})
    members = _member_tables()
    attr_files = defaultdict(set)
    for spec in specs:
        for label, text in _sources(spec):
            try:
                tree = ast.parse(text)
            except SyntaxError:
                continue  # Python 2 files in old examples; nothing to learn from them
            visitor = _FileNames()
            # Aliases first, then uses: a file may use `nn` in a function defined above its imports.
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    visitor.visit_Import(node)
                elif isinstance(node, ast.ImportFrom):
                    visitor.visit_ImportFrom(node)
            visitor.visit(tree)
            for path in visitor.paths:
                name, obj = _lookup(path)
                if name:
                    names[name]["kind"] = _kind(obj)
                    names[name]["files"].add(label)
            for attr in visitor.attrs:
                if attr in _BUILTIN_METHODS or attr in _AMBIGUOUS:
                    continue
                for prefix, table in members.items():
                    if attr in table:
                        attr_files[f"{prefix}.{attr}"].add(label)
    for name, files in attr_files.items():
        if len(files) >= MEMBER_MIN_FILES:
            names[name] = {"kind": "member", "files": files}
    return {n: {"kind": v["kind"], "files": sorted(v["files"])} for n, v in sorted(names.items())}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sources", nargs="+", help="git dir or folder, optionally :subdir,subdir")
    args = parser.parse_args()
    names = extract(args.sources)
    files = sorted({f for v in names.values() for f in v["files"]})
    data = {"repositories": sorted({f.split(":", 1)[0] for f in files}), "file_count": len(files),
            "names": names}
    OUT.write_text(json.dumps(data, indent=1, sort_keys=False) + "\n")
    print(f"{len(names)} names from {len(files)} files -> {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
