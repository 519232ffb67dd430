"""The notebooks run top to bottom, and the only errors they show are the ones they document.

A code cell that demonstrates an error says so in its metadata:

    "metadata": {"tags": ["raises-exception"],          # only if the cell lets the error propagate
                 "expected_errors": [{"ename": "RuntimeError", "evalue": "a phrase of the message"}]}

An error the cell raises must come from a cell tagged `raises-exception` (nbclient fails on any other),
and every error a cell raises or prints ("RuntimeError: ...") must match one of its expected errors:
same exception type, message containing the phrase. Each expected error must appear, so a notebook
cannot document an error that no longer happens.
"""
import pathlib
import re

import pytest

from conftest import require

nbformat = require("nbformat")
nbclient = require("nbclient")

NOTEBOOKS = sorted((pathlib.Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))
PRINTED_ERROR = re.compile(r"^(\w+(?:Error|Exception)): (.*)$", re.M)


def _errors(cell):
    """(type name, message) of every error the cell raised or printed."""
    found = []
    streams = {}   # a print may reach the notebook in several stream outputs (the kernel flushes on a timer)
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            found.append((output["ename"], output["evalue"]))
        elif output.get("output_type") == "stream":
            streams[output.get("name")] = streams.get(output.get("name"), "") + output.get("text", "")
    for text in streams.values():
        found += PRINTED_ERROR.findall(text)
    return found


def _check_cell(number, cell):
    expected = cell.metadata.get("expected_errors", [])
    raised = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    where = f"cell {number}:\n{cell.source}\n"
    if "raises-exception" in cell.metadata.get("tags", []):
        assert raised, where + "is tagged raises-exception but raised nothing"
        assert expected, where + "is tagged raises-exception without metadata.expected_errors naming the error"
    for ename, evalue in _errors(cell):
        assert any(e["ename"] == ename and e["evalue"] in evalue for e in expected), (
            where + f"shows {ename}: {evalue}\nwhich its metadata.expected_errors ({expected}) does not document")
    for e in expected:
        assert any(ename == e["ename"] and e["evalue"] in evalue for ename, evalue in _errors(cell)), (
            where + f"documents {e['ename']}: {e['evalue']!r}, which it no longer shows")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path):
    nb = nbformat.read(path, as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=False,
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    for number, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            _check_cell(number, cell)
    outputs = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    if path.name == "01_gradient_management.ipynb":
        assert "True True" in outputs   # the backward cache cell: at most two compiles, then hits


def test_check_rejects_undocumented_and_wrong_errors():
    # The checker itself: an undocumented printed error, a wrong message, and a missing documented error.
    def cell(text, expected=(), tags=()):
        c = nbformat.v4.new_code_cell("pass", metadata={"tags": list(tags), "expected_errors": list(expected)})
        c.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)] if text else []
        return c
    doc = {"ename": "RuntimeError", "evalue": "leaf Variable"}
    _check_cell(0, cell("RuntimeError: a leaf Variable that requires grad\n", [doc]))
    for bad in (cell("RuntimeError: a leaf Variable\n"), cell("RuntimeError: something else\n", [doc]),
                cell("ValueError: a leaf Variable\n", [doc]), cell("", [doc]), cell("", [doc], ["raises-exception"])):
        with pytest.raises(AssertionError):
            _check_cell(0, bad)
