"""`python -m benchmarks` shows a progress bar and writes, beside the results file, one plot per workload."""
import glob
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks import plots  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("results", sorted(glob.glob(os.path.join(ROOT, "benchmarks", "results", "*.json"))),
                         ids=os.path.basename)
def test_a_plot_per_workload_of_each_results_file(results, tmp_path):
    folder = plots.write_all(results, str(tmp_path))
    with open(results) as f:
        ids = [w["id"] for w in json.load(f)["workloads"]]
    assert sorted(os.listdir(folder)) == sorted(f"{i}.png" for i in ids)
    for i in ids:
        with open(os.path.join(folder, f"{i}.png"), "rb") as f:
            assert f.read(8) == PNG


def test_a_run_shows_its_progress_and_writes_results_and_plots(tmp_path):
    p = subprocess.run([sys.executable, "-m", "benchmarks", "--quick", "--only", "chain_bwd", "--out", str(tmp_path)],
                       cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "benchmarks: 100%" in p.stderr and "1/1" in p.stderr   # tqdm's bar, on stderr
    assert "chain_bwd/steady: tapegrad" in p.stdout
    (results,) = glob.glob(str(tmp_path / "*.json"))
    assert os.path.exists(results[:-5] + ".md")
    device = os.path.basename(results)[:-5]
    with open(tmp_path / "plots" / device / "chain_bwd.png", "rb") as f:
        assert f.read(8) == PNG
