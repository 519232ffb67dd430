"""docs/names.md is current, and no PyTorch name used by real code goes from working to missing.

The page and baseline are written by `python tools/torch_names/coverage.py --write`."""
import importlib.util
import json
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "torch_names" / "coverage.py"


@pytest.fixture(scope="module")
def report():
    spec = importlib.util.spec_from_file_location("torch_names_coverage", TOOL)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    names, rows = tool.collect()
    return tool, names, rows


def test_page_is_current(report):
    tool, names, rows = report
    assert tool.OUT.read_text() == tool.render(names, rows), \
        "docs/names.md is stale: run `python tools/torch_names/coverage.py --write`"


def test_no_name_regresses_to_missing(report):
    tool, _, rows = report
    baseline = set(json.loads(tool.BASELINE.read_text()))
    lost = sorted(name for name, _, status, _ in rows if name in baseline and status == "missing")
    assert not lost, f"these names worked before and are now missing from tapegrad: {lost}"


def test_every_note_names_a_listed_name_and_a_status(report):
    tool, names, _ = report
    notes = json.loads(tool.NOTES.read_text())
    for name, note in notes.items():
        assert name in names["names"], f"notes.json: {name} is not in names.json"
        assert note["status"] in ("differs", "refused") and note["note"], name


def test_stub_detection():
    spec = importlib.util.spec_from_file_location("torch_names_coverage_stub", TOOL)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)

    def stub(x):
        """Docstring."""
        raise NotImplementedError("not in tapegrad yet")

    def real(x):
        if x:
            raise NotImplementedError("only for x")
        return x

    assert tool._stub_reason(stub) == "not in tapegrad yet"
    assert tool._stub_reason(real) is None
    # PyTorch's own abstract method raises too: that is parity, not a refusal.
    assert tool.classify("optim.Optimizer.step", {}) == ("works", "")


def test_extract_resolves_aliases_and_members(tmp_path):
    spec = importlib.util.spec_from_file_location("torch_names_extract", TOOL.parent / "extract.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    code = ("import torch.nn as nn\nimport torch.nn.functional as F\nfrom torch import optim\n"
            "from torch.utils.data import DataLoader as DL\n"
            "def f(x, model, words):\n"
            "    y = F.relu(nn.Linear(2, 2)(x)).sum()\n"
            "    opt = optim.SGD(model.parameters(), lr=0.1)\n"
            "    return x.view(-1).detach(), words.split(), torch.nn.functional.gelu\n")
    for i in range(2):
        (tmp_path / f"f{i}.py").write_text(code)
    names = tool.extract([str(tmp_path)])
    assert names["torch.nn.functional.relu"]["kind"] == "function"
    assert names["torch.nn.Linear"]["kind"] == "class"
    assert names["torch.optim.SGD"]["files"] == [f"{tmp_path.name}:f0.py", f"{tmp_path.name}:f1.py"]
    assert "torch.utils.data.DataLoader" in names
    assert {"Tensor.view", "Tensor.detach", "nn.Module.parameters"} <= set(names)
    assert "Tensor.split" not in names  # also a str method: too ambiguous to count
    assert "torch.nn.functional.gelu" not in names  # `torch` itself was never imported in this file
