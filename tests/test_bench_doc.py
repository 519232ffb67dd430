"""The benchmark figures in the docs are generated, current, and never typed by hand.

Runs no benchmark: it compares the committed docs with what tools/gen_bench_doc.py renders from the
committed benchmarks/results/*.json and benchmarks/catalog.py.
"""
import importlib.util
import json
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _load_generator():
    spec = importlib.util.spec_from_file_location("gen_bench_doc", ROOT / "tools" / "gen_bench_doc.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = _load_generator()

# A ratio (1.61×, 2x), a duration (0.057 s, 66 s, 3.7 ms, 10 µs) or a memory size (450 MB, 4.1 GB, 263 MiB).
FIGURE = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s?(?:×|x(?![\w])|ms\b|µs\b|us\b|ns\b|s\b|MiB\b|MB\b|GiB\b|GB\b)")


def _outside_generated(text):
    return gen.BLOCK.sub(lambda m: m.group(1) + m.group(4), text)


def _hand_written_pages():
    return [ROOT / "README.md", ROOT / "tapegrad" / "README.md"] + sorted((ROOT / "docs").glob("**/*.md"))


@pytest.mark.parametrize("path", sorted(gen.expected_files()), ids=lambda p: str(p.relative_to(ROOT)))
def test_generated_file_is_current(path):
    expected = gen.expected_files()[path]
    assert path.exists(), f"{path.relative_to(ROOT)} is missing: run python tools/gen_bench_doc.py"
    assert path.read_text() == expected, \
        f"{path.relative_to(ROOT)} is out of date: run python tools/gen_bench_doc.py"


def test_doc_has_both_generated_blocks():
    names = [m.group(2) for m in gen.BLOCK.finditer(gen.DOC.read_text())]
    assert sorted(names) == sorted(gen.GENERATORS)


def test_doc_lists_every_workload_and_target():
    text = gen.DOC.read_text()
    from benchmarks import catalog
    for w in catalog.WORKLOADS:
        assert f"### `{w.id}`" in text
        for m in w.measures:
            if m.target:
                assert m.target.describe() in text


def test_results_files_name_every_workload_of_the_catalog():
    from benchmarks import catalog
    for path, data in gen.load_results():
        for res in data["workloads"]:
            assert res["id"] in catalog.BY_ID, f"{path.name}: unknown workload {res['id']}"
            assert set(res["measures"]) == {m.id for m in catalog.BY_ID[res["id"]].measures}


@pytest.mark.parametrize("path", _hand_written_pages(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_figure_typed_by_hand(path):
    text = _outside_generated(path.read_text())
    found = [(text.count("\n", 0, m.start()) + 1, m.group(0)) for m in FIGURE.finditer(text)]
    assert not found, (f"{path.relative_to(ROOT)}: figures outside generated blocks (line, text): {found}; "
                       "put measured figures in benchmarks/results and let tools/gen_bench_doc.py write them")


def test_figure_pattern_catches_what_it_must():
    for text in ("1.61×", "reads 2x faster", "0.057 s", "takes 66 s", "3.7 ms", "10 µs/op", "+450 MB",
                 "4.1 GB", "263 MiB", "1,168×"):
        assert FIGURE.search(text), text
    for text in ("784-256-256-10", "2 CPU cores", "x2", "matrix 2x2", "`-n 2`", "float32", "issue 9 §7"):
        assert not FIGURE.search(text), text


def test_generator_renders_a_results_file(tmp_path, monkeypatch):
    """A results file in the current format renders to a table row per measure."""
    from benchmarks import catalog, report
    w = catalog.BY_ID["mlp_sgd"]
    side = {"value": 2.0, "unit": "ms", "p25": 1.9, "p75": 2.1, "n": 3, "completed": 3, "of": 3,
            "over_budget": False, "compiles": 0}
    res = report.assemble(w, [{"ev": "result", "measure": "steady", "side": s, **side}
                              for s in ("torch", "jax.jit")]
                          + [{"ev": "result", "measure": "steady", "side": "tapegrad", **side, "value": 3.0}])
    assert res["measures"]["steady"]["ratio"] == pytest.approx(1.5)
    assert res["measures"]["steady"]["met"] is False
    data = {"meta": {"device": "test-cpu", "jax_device": "cpu:0", "cpu": "test", "cores": 2, "python": "3",
                     "jax": "0", "torch": "0", "tapegrad": "0", "date": "today", "quick": False},
            "workloads": [res]}
    (tmp_path / "test-cpu.json").write_text(json.dumps(data))
    monkeypatch.setattr(gen, "RESULTS", tmp_path)
    block = gen.results_block()
    assert "### test-cpu" in block and "| `mlp_sgd` | per step, warm | 3 ms (0 c) | 2 ms | 2 ms (0 c) | 1.50× |" \
        in block
