"""One plot per workload, drawn from a results file: each measure's figure per side (tapegrad, PyTorch eager,
hand-written jax.jit), with the target where it is a ratio to a side.

`python -m benchmarks` writes them as PNGs beside the results file, in `plots/<device>/<workload>.png`
(generated, not kept in git: `notebooks/04_benchmarks.ipynb` draws the committed results inline).
"""
import json
import os

from . import catalog
from .catalog import JX, PT, TG

SIDES = (TG, PT, JX)
COLORS = {TG: "#d95f02", PT: "#7570b3", JX: "#1b9e77"}


def _figure(res):
    from matplotlib.figure import Figure   # (no pyplot: no global backend or figure state)
    measures = [(mid, e) for mid, e in res["measures"].items() if any(
        (e.get("sides", {}).get(s) or {}).get("value") is not None for s in SIDES)]
    fig = Figure(figsize=(6.4, 1.2 + 1.1 * max(1, len(measures))), layout="constrained")
    workload = catalog.BY_ID.get(res["id"])
    targets = {m.id: m.target for m in workload.measures} if workload else {}
    for row, (mid, e) in enumerate(measures):
        ax = fig.add_subplot(len(measures), 1, row + 1)
        sides = [s for s in SIDES if (e["sides"].get(s) or {}).get("value") is not None]
        values = [e["sides"][s]["value"] for s in sides]
        ax.barh(range(len(sides)), values, color=[COLORS[s] for s in sides])
        ax.set_yticks(range(len(sides)), labels=sides)
        ax.invert_yaxis()
        unit = e["sides"][sides[0]].get("unit", "")
        ax.set_xlabel(f"{mid} ({unit})")
        target = targets.get(mid)
        baseline = (e["sides"].get(target.baseline) or {}).get("value") if target else None
        if baseline is not None and target.kind == "ratio":   # (the dashed line: where the target is)
            ax.axvline(baseline * target.max, color="black", linestyle="--", linewidth=1)
        if target is not None:
            ax.set_title(f"target {target.describe()}", fontsize=8, loc="left")
        if e.get("status"):
            ax.set_title(e["status"], fontsize=8, loc="right")
    fig.suptitle(f"{res['id']}: {res.get('title', '')}", fontsize=9)
    return fig


def write_all(results_path, out_dir=None):
    """Draw every workload of the results file `results_path`; returns the folder holding the PNGs."""
    with open(results_path) as f:
        data = json.load(f)
    folder = out_dir or os.path.join(os.path.dirname(results_path), "plots", data["meta"]["device"])
    os.makedirs(folder, exist_ok=True)
    for res in data["workloads"]:
        fig = _figure(res)
        fig.savefig(os.path.join(folder, f"{res['id']}.png"), dpi=100)
    return folder
