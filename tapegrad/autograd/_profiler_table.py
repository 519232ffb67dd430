"""key_averages() rows and their table, as PyTorch's profiler prints them (see autograd.profiler)."""


# ---- the table --------------------------------------------------------------------------------

class _Average:
    """One row of key_averages(); times in microseconds, as PyTorch's FunctionEventAvg."""

    def __init__(self, key, input_shapes):
        self.key = key
        self.input_shapes = [list(s) for s in input_shapes]
        self.count = 0
        self.compiles = 0
        self.compile_time_total = 0.0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0

    def add(self, event):
        self.count += 1
        self.compiles += event.compiles
        self.compile_time_total += event.compile_seconds * 1e6
        self.cpu_time_total += event.duration / 1e3
        self.self_cpu_time_total += event.self_duration / 1e3

    @property
    def cpu_time(self):
        return self.cpu_time_total / max(self.count, 1)

    def __getattr__(self, name):
        # each call waits for its result: the wall time is the device's as well
        if name in _DEVICE_KEYS:
            return getattr(self, _DEVICE_KEYS[name])
        raise AttributeError(f"'FunctionEventAvg' object has no attribute {name!r}")

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} count={self.count} compiles={self.compiles} "
                f"cpu_time_total={_format_time(self.cpu_time_total)}>")


_SORT_KEYS = ("cpu_time_total", "self_cpu_time_total", "cpu_time", "count", "compiles", "compile_time_total",
              "device_time_total", "self_device_time_total", "cuda_time_total", "self_cuda_time_total")
_DEVICE_KEYS = {"device_time_total": "cpu_time_total", "cuda_time_total": "cpu_time_total",
                "self_device_time_total": "self_cpu_time_total", "self_cuda_time_total": "self_cpu_time_total",
                "device_time": "cpu_time", "cuda_time": "cpu_time"}


class _Averages(list):
    def __init__(self, rows, shapes=False):
        super().__init__(rows)
        self._shapes = shapes

    @property
    def self_cpu_time_total(self):
        return sum(r.self_cpu_time_total for r in self)

    def table(self, sort_by=None, row_limit=100, max_name_column_width=55, max_shapes_column_width=80,
              header=None, top_level_events_only=False, **_):
        rows = list(self)
        if sort_by is not None:
            attr = _DEVICE_KEYS.get(sort_by, sort_by)
            if attr not in _SORT_KEYS:
                raise AttributeError(f"'FunctionEventAvg' object has no attribute {sort_by!r}: sort_by takes one "
                                     f"of {', '.join(_SORT_KEYS)}")
            rows.sort(key=lambda r: getattr(r, attr), reverse=True)
        if row_limit is not None and row_limit > 0:
            rows = rows[:row_limit]
        return _format_table(rows, self.self_cpu_time_total, max_name_column_width,
                             max_shapes_column_width if self._shapes else 0, header)

    def __str__(self):
        return self.table()


_COLUMNS = ("Calls", "Compiles", "Compile time", "Run time (total)", "Run time (avg)", "Self CPU %")


def _format_time(us):
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _clip(text, width):
    return text if len(text) <= width else text[:width - 3] + "..."


def _format_table(rows, self_total, name_width, shapes_width, header):
    cells = [[_clip(r.key, name_width), str(r.count), str(r.compiles), _format_time(r.compile_time_total),
              _format_time(r.cpu_time_total), _format_time(r.cpu_time),
              f"{100 * r.self_cpu_time_total / self_total if self_total else 0.0:.2f}%"]
             + ([_clip(str(r.input_shapes), shapes_width)] if shapes_width else []) for r in rows]
    titles = ["Name", *_COLUMNS] + (["Input Shapes"] if shapes_width else [])
    widths = [max([len(t)] + [len(c[i]) for c in cells]) for i, t in enumerate(titles)]
    rule = "  ".join("-" * w for w in widths)
    lines = [header] if header else []
    lines += [rule, "  ".join(t.rjust(w) if i else t.ljust(w) for i, (t, w) in enumerate(zip(titles, widths))),
              rule]
    lines += ["  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths)))
              for row in cells]
    lines += [rule, f"Self CPU time total: {_format_time(self_total)}", ""]
    return "\n".join(lines)
