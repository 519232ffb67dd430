"""Shared instruments: wall-clock timing under a budget, XLA compile counts, resident memory.

A workload function receives a `Harness` and calls its measuring methods; each method emits events
(start, progress, result) through `emit`. Under `python -m benchmarks` a workload usually runs in a
process of its own and the events travel as JSON lines on stdout, so a step that hangs past its budget
can be cut off (by the watchdog below) without losing what was already measured.

Budgets are per (measure, side): a side that runs out stops between steps and reports what it completed;
a single step that overruns by more than the grace period ends the process, and the driver records the
side as over budget with the progress it had reported.
"""
import json
import os
import statistics
import sys
import threading
import time

EVENT_PREFIX = "@@bench "
COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"


def rss_mib():
    """Resident set size of this process, in MiB (Linux)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


class CompileCounter:
    """Counts XLA backend compiles as JAX itself reports them (its monitoring events, not tapegrad's)."""

    def __init__(self):
        self.count = 0
        self.installed = False

    def install(self):
        if self.installed:
            return
        import jax.monitoring

        def on_duration(event, duration_secs, **kwargs):
            if event == COMPILE_EVENT:
                self.count += 1
        jax.monitoring.register_event_duration_secs_listener(on_duration)
        self.installed = True


COMPILES = CompileCounter()


def summarize(samples_ms):
    if len(samples_ms) > 1:
        q = statistics.quantiles(samples_ms, n=4)
    else:
        q = [samples_ms[0]] * 3
    return {"value": statistics.median(samples_ms), "p25": q[0], "p75": q[2], "n": len(samples_ms)}


class OverBudget(Exception):
    """Raised inside a side's loop when its budget is spent; caught by the measuring method."""


class Harness:
    """What a workload function uses to measure: `quick`, `size`, `loop`, `steady`, `value`, `info`."""

    def __init__(self, quick, budget_s, sides, emit, grace_s=None):
        self.quick = quick
        self.budget_s = budget_s
        self.sides = sides                   # the sides this process runs (a fresh process may run one)
        self.emit = emit
        self.grace_s = grace_s if grace_s is not None else max(5.0, 0.5 * budget_s)
        self._current = None                 # (measure, side, started, last progress) for the watchdog
        self._lock = threading.Lock()

    # ---- sizes ------------------------------------------------------------------------------------
    def size(self, full, quick):
        """The full size of a workload, or the small one under --quick."""
        return quick if self.quick else full

    def runs(self, side):
        return side in self.sides

    # ---- events -------------------------------------------------------------------------------------
    def info(self, key, value):
        """A fact about the workload (its sizes, a loss every side should agree on, a compile floor)."""
        self.emit({"ev": "info", "key": key, "value": value})

    def _begin(self, measure, side, of):
        if side != "torch":
            COMPILES.install()
        with self._lock:
            self._current = {"measure": measure, "side": side, "started": time.perf_counter(), "done": 0,
                             "of": of}
        self.emit({"ev": "start", "measure": measure, "side": side, "budget_s": self.budget_s})

    def _progress(self, done):
        with self._lock:
            cur = self._current
            cur["done"] = done
            now = time.perf_counter()
            if now - cur.get("last_emit", 0) > 0.5:
                cur["last_emit"] = now
                self.emit({"ev": "progress", "measure": cur["measure"], "side": cur["side"], "done": done,
                           "of": cur["of"], "elapsed_s": now - cur["started"]})
            return now - cur["started"]

    def _end(self, result):
        with self._lock:
            cur, self._current = self._current, None
        result.update({"ev": "result", "measure": cur["measure"], "side": cur["side"]})
        self.emit(result)
        return result

    # ---- measuring methods ------------------------------------------------------------------------------
    def loop(self, measure, side, step, n, unit="steps", per_step=False, record_steps=False):
        """Run step(i) for i in range(n) once, timed as a whole (or per step: median of the steps).

        For first-sight measures: the first epoch, the first call, 100 steps in total. Stops between
        steps when the budget is spent and reports how many steps it completed.
        """
        if not self.runs(side):
            return None
        self._begin(measure, side, n)
        before = COMPILES.count
        times, step_compiles, over, t_all = [], [], False, time.perf_counter()
        for i in range(n):
            c0, t0 = COMPILES.count, time.perf_counter()
            step(i)
            times.append((time.perf_counter() - t0) * 1e3)
            step_compiles.append(COMPILES.count - c0)
            if self._progress(i + 1) > self.budget_s and i + 1 < n:
                over = True
                break
        if side == "tapegrad":
            _finish_background_compiles()   # a compile still running was started by this measure: charge it
        total = (time.perf_counter() - t_all) * 1e3
        stats = summarize(times) if per_step else {"value": total, "p25": None, "p75": None, "n": 1}
        extra = {"steps_ms": times, "step_compiles": step_compiles} if record_steps else {}
        return self._end({**stats, "unit": "ms", "completed": len(times), "of": n, "unit_of_work": unit,
                          "over_budget": over, "compiles": COMPILES.count - before, **extra})

    def steady(self, measure, contestants, steps_per_round, rounds, warmup=3, self_timed=False):
        """Per-step time once warm: interleaved rounds (A, B, C, A, B, C...) so noise hits every side.

        contestants: {side: step_fn}; each step_fn runs one step and waits for its result. Each side is
        warmed up first (its compiles counted apart): `warmup` steps, and on for tapegrad until a step
        neither compiles nor runs on NumPy (a step that comes back rents NumPy until its rent pays for its
        compile, see tapegrad/_numpy_rent.py). A side whose first `warmup` steps overrun the budget is dropped.
        self_timed: each step_fn returns the seconds of the part it times (work before the clock is set up).
        tapegrad goes last, so the baselines are measured even if it overruns.
        """
        order = sorted(contestants, key=lambda s: s == "tapegrad")
        contestants = {s: contestants[s] for s in order if self.runs(s)}
        warm_compiles, warm_steps, live = {}, {}, {}
        for side, fn in contestants.items():
            self._begin(measure + " (warm-up)", side, warmup)
            before, over, i = COMPILES.count, False, 0
            while True:
                rents, compiled = _numpy_runs(side), COMPILES.count
                fn()
                i += 1
                settled = i >= warmup and _numpy_runs(side) == rents and COMPILES.count == compiled
                if settled:
                    break
                if self._progress(i) > self.budget_s:
                    over = i < warmup
                    break
            warm_compiles[side], warm_steps[side] = COMPILES.count - before, i
            self._end({"value": None, "unit": "ms", "completed": i + 1, "of": warmup, "over_budget": over,
                       "compiles": warm_compiles[side], "warmup": True})
            if not over:
                live[side] = fn
        # every side at the same step before the clock starts, so that the losses they end on are comparable
        # (tapegrad's warm-up runs on until its step settles)
        most = max((warm_steps[s] for s in live), default=0)
        for side, fn in live.items():
            for _ in range(most - warm_steps[side]):
                fn()
            warm_steps[side] = most
        samples = {s: [] for s in live}
        compiles = {s: 0 for s in live}
        last = {}
        started = time.perf_counter()
        for r in range(rounds):
            for side, fn in live.items():
                before = COMPILES.count
                t0 = time.perf_counter()
                parts = [fn() for _ in range(steps_per_round)]
                elapsed = sum(parts) if self_timed else time.perf_counter() - t0
                last[side] = None if self_timed else parts[-1]
                samples[side].append(elapsed / steps_per_round * 1e3)
                compiles[side] += COMPILES.count - before
            if time.perf_counter() - started > self.budget_s * max(1, len(live)):
                break
        out = {}
        for side in contestants:
            self._begin(measure, side, rounds)
            if side in live and samples[side]:
                res = {**summarize(samples[side]), "unit": "ms", "completed": len(samples[side]), "of": rounds,
                       "unit_of_work": f"rounds of {steps_per_round} steps",
                       "over_budget": len(samples[side]) < rounds, "compiles": compiles[side],
                       "warmup_compiles": warm_compiles[side]}
            else:
                res = {"value": None, "unit": "ms", "completed": 0, "of": rounds, "over_budget": True,
                       "compiles": 0, "warmup_compiles": warm_compiles[side], "note": "warm-up over budget"}
            out[side] = self._end(res)
        steps_run = {s: warm_steps[s] + len(samples[s]) * steps_per_round for s in live}
        if last and len(set(steps_run.values())) == 1 and all(isinstance(v, float) for v in last.values()):
            # every side ran the same number of steps from the same start: their losses should agree
            self.info(f"{measure}: last loss per side", last)
        return out

    def first_then_later(self, first_id, later_id, side, unit_step, n_units, repeats, unit):
        """A pass of n_units steps seen for the first time, then the median of `repeats` later passes.
        unit_step(j) runs step j of a pass (j == n_units - 1 is the last, which reads the loss)."""
        first = self.loop(first_id, side, unit_step, n_units, unit=unit)
        if first is None:
            return
        if first["over_budget"]:
            self.skip(later_id, side, "first pass over budget")
            return

        def one_pass(_):
            for j in range(n_units):
                unit_step(j)
        self.loop(later_id, side, one_pass, repeats, unit="passes", per_step=True)

    def skip(self, measure, side, why):
        if self.runs(side):
            self._begin(measure, side, 0)
            self._end({"value": None, "unit": "ms", "completed": 0, "of": 0, "over_budget": True, "note": why})

    def value(self, measure, side, value, unit, **extra):
        """Report a measured quantity that is not a time (memory)."""
        if not self.runs(side):
            return None
        self._begin(measure, side, 1)
        return self._end({"value": value, "unit": unit, "completed": 1, "of": 1, "over_budget": False,
                          "p25": None, "p75": None, "n": 1, **extra})

    # ---- watchdog -----------------------------------------------------------------------------------------
    def start_watchdog(self):
        """End the process when one step overruns its budget by more than the grace period."""
        def watch():
            while True:
                time.sleep(0.25)
                with self._lock:
                    cur = self._current
                    if cur is None:
                        continue
                    elapsed = time.perf_counter() - cur["started"]
                    if elapsed <= self.budget_s + self.grace_s:
                        continue
                    self.emit({"ev": "killed", "measure": cur["measure"], "side": cur["side"],
                               "done": cur["done"], "of": cur["of"], "elapsed_s": elapsed})
                sys.stdout.flush()
                os._exit(3)
        threading.Thread(target=watch, daemon=True).start()


def stdout_emitter(event):
    sys.stdout.write(EVENT_PREFIX + json.dumps(event, default=float) + "\n")
    sys.stdout.flush()


def parse_events(text):
    return [json.loads(line[len(EVENT_PREFIX):]) for line in text.splitlines() if line.startswith(EVENT_PREFIX)]


def _numpy_runs(side):
    """tapegrad's count of kernel and program calls run on NumPy (0 for the other sides)."""
    if side != "tapegrad" or "tapegrad" not in sys.modules:
        return 0
    return sys.modules["tapegrad"].autograd.backward_cache_info()["numpy_runs"]


def _finish_background_compiles():
    background = sys.modules.get("tapegrad._background")
    if background is not None:
        background.drain()


def warm_runtime(sides):
    """Pay the one-time costs of the libraries (JAX's first jit, PyTorch's first op) before any clock runs,
    so no side is charged for a runtime that the other side then reuses. Imports only what the sides use."""
    if "tapegrad" in sides or "jax.jit" in sides:
        import jax
        import jax.numpy as jnp
        jax.jit(lambda a: a * 2 + 1)(jnp.ones(3, jnp.float32)).block_until_ready()
    if "torch" in sides:
        try:
            import torch
            (torch.ones(3) * 2).sum().item()
        except ImportError:
            pass
