"""Measurement: replicated timings of one statement, printed as PyTorch prints them."""
import dataclasses
import math
import textwrap

import numpy as np

_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25


@dataclasses.dataclass(frozen=True)
class TaskSpec:
    """What a Timer measures (PyTorch's TaskSpec, without globals)."""
    stmt: str
    setup: str
    global_setup: str = ""
    label: str = None
    sub_label: str = None
    description: str = None
    env: str = None
    num_threads: int = 1

    @property
    def title(self):
        if self.label is not None:
            return self.label + (f": {self.sub_label}" if self.sub_label else "")
        if "\n" not in self.stmt:
            return self.stmt + (f": {self.sub_label}" if self.sub_label else "")
        return f"stmt:{f' ({self.sub_label})' if self.sub_label else ''}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self):
        if self.setup == "pass" or not self.setup:
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self):
        sections = [self.title, self.description or "", self.setup_str()]
        return "\n".join(f"{s}\n" if "\n" in s else s for s in sections if s)


_TASKSPEC_FIELDS = tuple(f.name for f in dataclasses.fields(TaskSpec))


def select_unit(t):
    """The unit that shows `t` seconds as a number of order one (PyTorch's choice)."""
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(int(math.log10(t) // 3), "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


@dataclasses.dataclass(repr=False)
class Measurement:
    """Times of `number_per_run` runs each (raw_times, seconds); statistics are per run."""
    number_per_run: int
    raw_times: list
    task_spec: TaskSpec
    metadata: dict = None

    def __getattr__(self, name):
        if name in _TASKSPEC_FIELDS:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    @property
    def times(self):
        return [t / self.number_per_run for t in self.raw_times]

    def _quantile(self, q):
        # Linear interpolation, as torch.quantile.
        return float(np.quantile(np.asarray(self.times, dtype=np.float64), q))

    @property
    def median(self):
        return self._quantile(0.5)

    @property
    def mean(self):
        return float(np.mean(np.asarray(self.times, dtype=np.float64)))

    @property
    def iqr(self):
        return self._quantile(0.75) - self._quantile(0.25)

    @property
    def title(self):
        return self.task_spec.title

    @property
    def has_warnings(self):
        return bool(self._warnings())

    def meets_confidence(self, threshold=_IQR_WARN_THRESHOLD):
        return self.iqr / self.median < threshold

    def _warnings(self):
        if self.meets_confidence(_IQR_WARN_THRESHOLD):
            return ()
        why = ("This suggests significant environmental influence."
               if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD) else "This could indicate system fluctuation.")
        return (f"  WARNING: Interquartile range is {self.iqr / self.median * 100:.1f}% "
                f"of the median measurement.\n           {why}",)

    def __repr__(self):
        n = len(self.raw_times)
        median, p25, p75 = self.median, self._quantile(0.25), self._quantile(0.75)
        unit, scale = select_unit(median)
        lines = [object.__repr__(self).replace(f"{__name__}.", "torch.utils.benchmark.utils.common."),
                 self.task_spec.summarize(),
                 f"  {'Median: ' if n > 1 else ''}{median / scale:.2f} {unit}"]
        if n >= 4:
            lines.append(f"  IQR:    {(p75 - p25) / scale:.2f} {unit} ({p25 / scale:.2f} to {p75 / scale:.2f})")
        lines.append(f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs "
                     f"{'per measurement,' if n > 1 else ','} {self.num_threads} "
                     f"thread{'s' if self.num_threads > 1 else ''}")
        lines.extend(self._warnings())
        return "\n".join(l for l in "\n".join(lines).strip().splitlines())
