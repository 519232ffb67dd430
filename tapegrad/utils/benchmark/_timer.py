"""Timer: PyTorch's torch.utils.benchmark.Timer, with honest timings over tapegrad's deferred work.

tapegrad records ops and computes them when a value is needed, and JAX dispatches asynchronously, so a
loop of `y = x @ x` alone would time only the recording (and compute the last `y` alone). Each run
therefore ends by computing and waiting for every tapegrad tensor the statement can reach (the names
it binds and the globals, modules' parameters and buffers, tensors in lists, tuples and dicts), inside
the timed region: a run costs what it costs when its results are read. Work whose result no name
reaches (`f(x)` with its result dropped) is never computed, so it is not timed: bind the result.
"""
import textwrap
import time

import jax

from ._measurement import Measurement, TaskSpec

_TEMPLATE = """
def inner(_it, _timer, _sync):
{setup}
    _t0 = _timer()
    for _i in _it:
{stmt}
        _sync(locals())
    return _timer() - _t0
"""


def _tensors(value, depth=0):
    from ..._tensor import Tensor
    from ...nn import Module
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, Module):
        yield from value.parameters()
        yield from value.buffers()
    elif depth < 2 and isinstance(value, (list, tuple)):
        for v in value:
            yield from _tensors(v, depth + 1)
    elif depth < 2 and isinstance(value, dict):
        for v in value.values():
            yield from _tensors(v, depth + 1)


def synchronize(*namespaces):
    """Compute every pending tapegrad tensor reachable from the namespaces and wait for it."""
    for namespace in namespaces:
        for value in list(namespace.values()):
            for t in _tensors(value):
                jax.block_until_ready(t._value)


class Timer:
    """Time `stmt` (a string of Python) after `setup`, in `globals` (PyTorch's signature)."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=time.perf_counter, globals=None,
                 label=None, sub_label=None, description=None, env=None, num_threads=1, language="python"):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language not in ("python", "py"):
            raise ValueError(f"Invalid language `{language}`: tapegrad's Timer runs Python statements only.")
        self._globals = dict(globals or {})
        self._timer = timer
        stmt, setup = textwrap.dedent(stmt).strip() or "pass", textwrap.dedent(setup).strip() or "pass"
        self._task_spec = TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup, label=label,
                                   sub_label=sub_label, description=description, env=env, num_threads=num_threads)
        source = _TEMPLATE.format(setup=textwrap.indent(setup, " " * 4), stmt=textwrap.indent(stmt, " " * 8))
        namespace = {}
        exec(compile(source, "<timeit-src>", "exec"), self._globals, namespace)
        self._inner = namespace["inner"]

    def _sync(self, local_names):
        synchronize(local_names, self._globals)

    def _timeit(self, number):
        return self._inner(range(number), self._timer, self._sync)

    def timeit(self, number=1000000):
        """Run `stmt` `number` times after one warm-up run; one Measurement of that block."""
        self._timeit(number=max(int(number // 100), 2))   # warm-up (compiles the programs), as PyTorch
        return Measurement(number_per_run=number, raw_times=[self._timeit(number=number)],
                           task_spec=self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _estimate_block_size(self, min_run_time):
        overhead = sorted(self._timeit(0) for _ in range(5))[2]
        number = 1
        while True:
            taken = self._timeit(number)
            if (overhead / taken <= 1e-4 and taken >= min_run_time / 1000) or taken > min_run_time:
                return number
            if number * 10 > 2147483647:
                return number
            number *= 10

    def _measurement_loop(self, number, stop, min_run_time, max_run_time=None, callback=None):
        total, can_stop, times = 0.0, False, []
        while total < min_run_time or not can_stop:
            spent = self._timeit(number)
            times.append(spent)
            total += spent
            if callback:
                callback(number, spent)
            can_stop = stop(times)
            if max_run_time and total > max_run_time:
                break
        return times

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of runs sized so the timer's overhead is negligible, for at least `min_run_time` s."""
        number = self._estimate_block_size(min_run_time)
        times = self._measurement_loop(number, lambda times: True, min_run_time, callback=callback)
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None):
        """Blocks until the interquartile range is under `threshold` of the median (or `max_run_time`)."""
        number = self._estimate_block_size(min_run_time=0.05)

        def stop(times):
            return len(times) > 3 and Measurement(number, times, self._task_spec).meets_confidence(threshold)
        times = self._measurement_loop(number, stop, min_run_time, max_run_time, callback=callback)
        return Measurement(number_per_run=number, raw_times=times, task_spec=self._task_spec)
