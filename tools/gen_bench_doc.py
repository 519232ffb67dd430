"""Regenerate the benchmark tables in docs/benchmarks.md from benchmarks/catalog.py and benchmarks/results.

    python tools/gen_bench_doc.py          # rewrite the generated blocks (and results/<device>.md)
    python tools/gen_bench_doc.py --check  # exit 1 if anything is out of date

Only the text between `<!-- BEGIN GENERATED: name -->` and `<!-- END GENERATED: name -->` is rewritten;
every figure in the page comes from a results file, none is typed by hand.
"""
import argparse
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
RESULTS = ROOT / "benchmarks" / "results"
BLOCK = re.compile(r"(<!-- BEGIN GENERATED: (\w+) -->\n)(.*?)(<!-- END GENERATED: \2 -->)", re.S)

sys.path.insert(0, str(ROOT))
from benchmarks import catalog, report  # noqa: E402  (light modules: no JAX or PyTorch import)

SIDE_NAMES = {catalog.TG: "tapegrad", catalog.PT: "PyTorch eager", catalog.JX: "jax.jit"}


def workloads_block():
    lines = []
    for w in catalog.WORKLOADS:
        where = "a fresh process per side" if w.process_per_side else "one process, all sides"
        lines += [f"### `{w.id}`: {w.title}", "",
                  f"From {w.source}; {where}; budget {w.budget_s:g} s per side and measure "
                  f"({w.quick_budget_s:g} s under `--quick`).", ""]
        lines += [f"- **{SIDE_NAMES[s]}**: {text}" for s, text in w.sides.items()]
        for m in w.measures:
            target = m.target.describe() if m.target else "reported, no target"
            lines.append(f"- measure *{m.title}*: {target}" + (f" ({m.note})" if m.note else ""))
        lines.append("")
    return "\n".join(lines)


def load_results():
    """Full-run results files, by device (quick-mode files are not figures to publish)."""
    out = []
    for path in sorted(RESULTS.glob("*.json")):
        data = json.loads(path.read_text())
        if not data["meta"].get("quick"):
            out.append((path, data))
    return out


def results_block():
    results = load_results()
    if not results:
        return ("No results are committed yet. `python -m benchmarks` writes "
                "`benchmarks/results/<device>.json`; then `python tools/gen_bench_doc.py` fills this section.\n")
    parts = []
    for _, data in results:
        parts += [f"### {data['meta']['device']}", "", report.device_markdown(data), ""]
    return "\n".join(parts)


GENERATORS = {"workloads": workloads_block, "results": results_block}


def render(text):
    def fill(match):
        body = GENERATORS[match.group(2)]()
        return match.group(1) + body.rstrip("\n") + "\n" + match.group(4)
    return BLOCK.sub(fill, text)


def expected_files():
    """{path: content} of every generated file."""
    files = {DOC: render(DOC.read_text())}
    for path, data in load_results():
        files[path.with_suffix(".md")] = report.device_page(data)
    return files


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    stale = []
    args = ap.parse_args()
    for path, content in expected_files().items():
        if not path.exists() or path.read_text() != content:
            stale.append(path)
            if not args.check:
                path.write_text(content)
    for path in stale:
        print(("out of date: " if args.check else "rewrote ") + str(path.relative_to(ROOT)))
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
