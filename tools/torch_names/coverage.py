"""Check every name in tools/torch_names/names.json against tapegrad; write docs/names.md.

    python tools/torch_names/coverage.py --write   # rewrite docs/names.md, extend baseline.json
    python tools/torch_names/coverage.py           # print the summary only

A name's status:
- works: `tapegrad.<name>` (or the member on tapegrad.Tensor / nn.Module / optim.Optimizer) resolves and is not
  a stub;
- differs: it works, with a difference documented in notes.json;
- refused: it resolves, but its body only raises NotImplementedError (the reason is the message), or it is
  listed in notes.json with "refused";
- missing: it does not resolve.
baseline.json holds the names that once worked; tests/test_name_coverage.py fails if one goes missing.
"""
import argparse
import ast
import importlib
import inspect
import json
import pathlib
import sys
import textwrap

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
NAMES = HERE / "names.json"
NOTES = HERE / "notes.json"
BASELINE = HERE / "baseline.json"
OUT = ROOT / "docs" / "names.md"
# Sources read only in part, and how (said on the page so that its figures are read for what they are).
_PARTIAL = ("pytorch/tutorials is read in part: 67 of the roughly 250 Python files of its beginner_source and "
            "intermediate_source folders (the main tutorials first), their code lines (imports, torch calls, member "
            "calls) transcribed file by file, because the repository is too large to fetch whole; a member used by "
            "one tutorial file and one other source may be missing from the list.")
_MEMBER_OWNERS = {"Tensor": "Tensor", "nn.Module": "nn.Module", "optim.Optimizer": "optim.Optimizer"}


def _resolve(dotted):
    """The object at `dotted` (a path under tapegrad), importing submodules as needed; raise LookupError."""
    parts = dotted.split(".")
    obj = importlib.import_module(parts[0])
    for i, part in enumerate(parts[1:], start=1):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            try:
                obj = importlib.import_module(".".join(parts[:i + 1]))
            except ImportError:
                raise LookupError(dotted) from None
        if inspect.ismodule(obj) and not _inside(obj, parts[0]):
            raise LookupError(dotted)
    return obj


def _inside(module, package):
    """An editable install's import hook can find a submodule in another checkout of the package: such a
    module is not part of the package being checked."""
    roots = [str(pathlib.Path(p).resolve()) for p in sys.modules[package].__path__]
    where = str(pathlib.Path(getattr(module, "__file__", None) or "").resolve())
    return any(where.startswith(root + "/") for root in roots)


def _tapegrad_path(name):
    """'torch.nn.Linear' -> 'tapegrad.nn.Linear'; 'nn.Module.train' -> 'tapegrad.nn.Module.train'."""
    if name == "torch" or name.startswith("torch."):
        return "tapegrad" + name[len("torch"):]
    return "tapegrad." + name


def _torch_path(name):
    return name if name.startswith("torch") else "torch." + name


def _stub_reason(obj):
    """The message of a function whose body only raises NotImplementedError, '' if it has none, else None."""
    if isinstance(obj, property):
        obj = obj.fget
    if inspect.isclass(obj):
        obj = obj.__dict__.get("__init__")
    obj = inspect.unwrap(obj) if callable(obj) else None
    if not (inspect.isfunction(obj) or inspect.ismethod(obj)):
        return None
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(obj)))
    except (OSError, TypeError, SyntaxError):
        return None
    body = tree.body[0].body if tree.body and hasattr(tree.body[0], "body") else []
    if body and isinstance(body[0], ast.Expr) and isinstance(getattr(body[0], "value", None), ast.Constant):
        body = body[1:]  # docstring
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return None
    exc = body[0].exc
    func = exc.func if isinstance(exc, ast.Call) else exc
    if not (isinstance(func, ast.Name) and func.id == "NotImplementedError"):
        return None
    if isinstance(exc, ast.Call) and exc.args:
        arg = exc.args[0]
        return arg.value if isinstance(arg, ast.Constant) else ast.unparse(arg)
    return ""


def _torch_is_stub_too(name):
    """PyTorch's abstract methods (Optimizer.step, Module.forward) raise there too; that is parity."""
    try:
        return _stub_reason(_resolve(_torch_path(name))) is not None
    except Exception:
        return False


def classify(name, notes):
    note = notes.get(name)
    if note and note["status"] == "refused":
        return "refused", note["note"]
    try:
        obj = _resolve(_tapegrad_path(name))
    except LookupError:
        return "missing", ""
    reason = _stub_reason(obj)
    if reason is not None and not _torch_is_stub_too(name):
        return "refused", reason or "raises NotImplementedError"
    if note:
        return note["status"], note["note"]
    return "works", ""


def collect():
    sys.path.insert(0, str(ROOT))
    names = json.loads(NAMES.read_text())
    notes = json.loads(NOTES.read_text()) if NOTES.exists() else {}
    rows = []
    for name, info in names["names"].items():
        status, note = classify(name, notes)
        rows.append((name, len(info["files"]), status, note))
    rows.sort(key=lambda r: (-r[1], r[0]))
    return names, rows


_ORDER = ("works", "differs", "refused", "missing")


def render(names, rows):
    total = len(rows)
    weight = sum(r[1] for r in rows)
    lines = ["# PyTorch names used by real code, and what tapegrad does with them", "",
             "Regenerate with `python tools/torch_names/coverage.py --write` (the names come from "
             "`tools/torch_names/names.json`, written by `tools/torch_names/extract.py` from the sources listed "
             "below); `tests/test_name_coverage.py` fails when this page is stale. Do not edit by hand.", "",
             f"Sources: {names['file_count']} Python files of " + ", ".join(names["repositories"]) + ". "
             "A name is a module-level PyTorch name written in the code (aliases resolved), or a member of "
             "`Tensor`, `nn.Module` or `optim.Optimizer` read off a value in two or more files (a guess without "
             "types: a member name shared by Tensor and Module is listed under both). " + _PARTIAL, "",
             "Status: **works** (resolves in tapegrad and is not a stub), **differs** (works, with the difference "
             "noted), **refused** (exists but raises NotImplementedError, or is refused by design; the reason "
             "is noted), **missing** (does not resolve).", "",
             "| status | names | % of names | % weighted by files using them |", "|---|---|---|---|"]
    for status in _ORDER:
        sel = [r for r in rows if r[2] == status]
        w = sum(r[1] for r in sel)
        lines.append(f"| {status} | {len(sel)} | {100 * len(sel) / total:.1f}% | {100 * w / weight:.1f}% |")
    lines += [f"| all | {total} | 100% | 100% |", "",
              "| name | files | status | note |", "|---|---|---|---|"]
    for name, files, status, note in rows:
        note = " ".join(str(note).split()).replace("|", "\\|")
        lines.append(f"| `{name}` | {files} | {status} | {note} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write", action="store_true", help="rewrite docs/names.md and extend baseline.json")
    parser.add_argument("--missing", type=int, default=0, help="print the N most used missing names")
    args = parser.parse_args()
    names, rows = collect()
    for status in _ORDER:
        print(f"{status}: {sum(r[2] == status for r in rows)}")
    for name, files, status, _ in [r for r in rows if r[2] == "missing"][:args.missing]:
        print(f"  {files:3d}  {name}")
    if args.write:
        OUT.write_text(render(names, rows))
        old = set(json.loads(BASELINE.read_text())) if BASELINE.exists() else set()
        BASELINE.write_text(json.dumps(sorted(old | {r[0] for r in rows if r[2] in ("works", "differs")}),
                                       indent=0) + "\n")
        print(f"wrote {OUT.relative_to(ROOT)} and {BASELINE.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
