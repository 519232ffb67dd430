"""Turn a workload's events into its result, and results into JSON and Markdown.

No JAX or PyTorch import at module level: `tools/gen_bench_doc.py` and its test render the tables
from the JSON files alone.
"""
import datetime
import json
import os
import platform
import re

from . import catalog
from .catalog import JX, PT, TG

SIDES = (TG, PT, JX)


# ---- device ---------------------------------------------------------------------------------------------

def _slug(text):
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cpu_cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count()


def device_name():
    """The hardware the figures belong to: the GPU's name, or the CPU model and usable core count."""
    import jax
    d = jax.devices()[0]
    if d.platform != "cpu":
        return _slug(d.device_kind)
    return f"{_slug(cpu_model())}-{cpu_cores()}cores"


def meta(device, quick):
    import jax
    try:
        import torch
        torch_version = torch.__version__
    except ImportError:
        torch_version = None
    import tapegrad
    return {"device": device, "jax_device": str(jax.devices()[0]), "cpu": cpu_model(), "cores": cpu_cores(),
            "platform": platform.platform(), "python": platform.python_version(), "jax": jax.__version__,
            "torch": torch_version, "tapegrad": tapegrad.__version__, "quick": quick,
            "date": datetime.date.today().isoformat()}


# ---- events -> result -------------------------------------------------------------------------------------

def assemble(workload, events):
    """One workload's result: per measure, each side's figure, the ratio and whether the target is met."""
    measures = {m.id: {"sides": {}} for m in workload.measures}
    warmup, info, errors, running = {}, {}, [], {}
    for ev in events:
        kind = ev["ev"]
        if kind == "info":
            info[ev["key"]] = ev["value"]
        elif kind == "error":
            errors.append(ev["error"] + ("\n" + ev["traceback"] if ev.get("traceback") else ""))
        elif kind == "start":
            running[(ev["measure"], ev["side"])] = ev
        elif kind in ("result", "killed"):
            running.pop((ev["measure"], ev["side"]), None)
            res = {k: v for k, v in ev.items() if k not in ("ev", "measure", "side")}
            if kind == "killed":
                res = {"value": None, "completed": ev["done"], "of": ev["of"], "over_budget": True,
                       "note": f"stopped after {ev['elapsed_s']:.0f} s inside a step"}
            name = ev["measure"]
            if name.endswith(" (warm-up)"):
                warmup[ev["side"]] = res
                name = name[:-len(" (warm-up)")]
                if kind == "killed" and name in measures:
                    measures[name]["sides"][ev["side"]] = {**res, "note": "warm-up over budget"}
            elif name in measures:
                measures[name]["sides"][ev["side"]] = res
            else:
                info[f"{name} [{ev['side']}]"] = res
    for m in workload.measures:
        entry = measures[m.id]
        entry.update(verdict(m, entry["sides"]))
    return {"id": workload.id, "title": workload.title, "measures": measures, "warmup": warmup, "info": info,
            "errors": errors}


def verdict(measure, sides):
    """ratio (or difference), met, and a status for the measure."""
    tg = sides.get(TG)
    if tg is None:
        return {"status": "not run", "ratio": None, "met": None}
    if tg.get("over_budget") or tg.get("value") is None:
        return {"status": f"> budget ({tg.get('completed', 0)}/{tg.get('of', '?')} done)", "ratio": None,
                "met": False if measure.target else None}
    t = measure.target
    if t is None:
        return {"status": "reported", "ratio": None, "met": None}
    base = sides.get(t.baseline, {}).get("value")
    if base is None:
        return {"status": f"no {t.baseline} figure", "ratio": None, "met": None}
    ratio = tg["value"] - base if t.kind == "diff" else (tg["value"] / base if base else None)
    met = ratio is not None and ratio <= t.max
    return {"status": "met" if met else "NOT met", "ratio": ratio, "met": met}


# ---- text ---------------------------------------------------------------------------------------------------

def fmt_value(res, side=None):
    if res is None:
        return "-"
    v = res.get("value")
    unit = res.get("unit", "ms")
    if v is None:
        done = f"{res.get('completed', 0)}/{res.get('of', '?')}"
        return f"> budget ({done})"
    text = f"{v:,.1f} MiB" if unit == "MiB" else (f"{v:,.0f} ms" if v >= 100 else f"{v:.3g} ms")
    if side in (TG, JX) and res.get("compiles") is not None and unit == "ms":
        text += f" ({res['compiles']} c)"
    return text


def fmt_ratio(measure, entry):
    t = measure.target
    if entry.get("ratio") is None:
        return "-"
    if t.kind == "diff":
        return f"{entry['ratio']:+,.0f} MiB"
    ratio = entry["ratio"]
    if round(ratio, 2) == t.max and ratio != t.max:   # (0.4003 is not within 0.4: say so)
        return f"{ratio:.4f}×"
    return f"{ratio:.2f}×"


def format_workload(res):
    w = catalog.BY_ID[res["id"]]
    lines = []
    for m in w.measures:
        e = res["measures"][m.id]
        figures = " | ".join(f"{s} {fmt_value(e['sides'].get(s), s)}" for s in SIDES if s in e["sides"])
        target = m.target.describe() if m.target else "reported"
        ratio = f"{fmt_ratio(m, e)} " if e.get("ratio") is not None else ""
        lines.append(f"{w.id}/{m.id}: {figures} || {ratio}(target {target}: {e['status']})")
    for err in res["errors"]:
        lines.append(f"{w.id}: ERROR {err.splitlines()[0]}")
    return "\n".join(lines)


def table(results):
    """The results as one Markdown table: a row per measure, the sides side by side."""
    lines = ["| workload | measure | tapegrad | PyTorch eager | jax.jit | tapegrad ratio | target | status |",
             "|---|---|---|---|---|---|---|---|"]
    for res in results:
        w = catalog.BY_ID.get(res["id"])
        if w is None:
            continue
        for m in w.measures:
            e = res["measures"].get(m.id, {"sides": {}, "status": "not run"})
            cells = [fmt_value(e["sides"].get(s), s) if s in w.sides else "" for s in SIDES]
            target = m.target.describe() if m.target else "reported"
            lines.append(f"| `{w.id}` | {m.title} | " + " | ".join(cells) +
                         f" | {fmt_ratio(m, e)} | {target} | {e.get('status', '-')} |")
    return "\n".join(lines)


def notes(results):
    """Facts the workloads reported (compile floor, agreement of the sides' losses) and errors."""
    lines = []
    for res in results:
        for key, value in res.get("info", {}).items():
            if isinstance(value, float):
                value = f"{value:.4g}"
            elif isinstance(value, dict) and "value" in value:
                value = fmt_value(value)
            elif isinstance(value, dict):
                value = ", ".join(f"{k} {v:.5g}" if isinstance(v, float) else f"{k} {v}" for k, v in value.items())
            lines.append(f"- `{res['id']}` {key}: {value}")
        for err in res.get("errors", []):
            lines.append(f"- `{res['id']}` error: {err.splitlines()[0]}")
    return "\n".join(lines)


def misses(results):
    """Why each missed target is missed (catalog.WHY_MISSED), under the figures that say by how much."""
    lines = []
    for res in results:
        w = catalog.BY_ID.get(res["id"])
        if w is None:
            continue
        for m in w.measures:
            e = res["measures"].get(m.id, {})
            if e.get("met") is False and e.get("ratio") is not None:
                why = catalog.WHY_MISSED.get((w.id, m.id), "not yet analysed")
                lines.append(f"- `{w.id}` {m.id}: {fmt_ratio(m, e)} against {m.target.describe()}: {why}")
    return "\n".join(lines)


def device_markdown(data):
    m = data["meta"]
    head = (f"Device `{m['device']}` ({m['cpu']}, {m['cores']} usable cores; JAX device `{m['jax_device']}`), "
            f"Python {m['python']}, jax {m['jax']}, torch {m['torch']}, tapegrad {m['tapegrad']}, {m['date']}"
            + (" — quick mode: small sizes, not for comparison" if m.get("quick") else "") + ".")
    parts = [head, "", "Times in ms (steady rows: median per step; others: the whole measure); "
             "`(N c)`: XLA compiles during the measure, counted from JAX's own compile events.", "",
             table(data["workloads"])]
    missed = misses(data["workloads"])
    if missed:
        parts += ["", "Why the missed targets are missed:", "", missed]
    extra = notes(data["workloads"])
    if extra:
        parts += ["", extra]
    return "\n".join(parts)


def device_page(data):
    """benchmarks/results/<device>.md: the same table as the JSON beside it."""
    return f"# tapegrad benchmarks on {data['meta']['device']}\n\n" + device_markdown(data) + "\n"


def write(results, out_dir, device, quick, merge):
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"{device}.json")
    data = {"meta": meta(device, quick), "workloads": results}
    if merge and os.path.exists(path):
        with open(path) as f:
            old = json.load(f)
        fresh = {r["id"] for r in results}
        keep = [r for r in old.get("workloads", []) if r["id"] not in fresh]
        order = [w.id for w in catalog.WORKLOADS]
        data["workloads"] = sorted(keep + results, key=lambda r: order.index(r["id"]) if r["id"] in order else 99)
    with open(path, "w") as f:
        json.dump(data, f, indent=1, default=float)
        f.write("\n")
    with open(path[:-5] + ".md", "w") as f:
        f.write(device_page(data))
    return path
