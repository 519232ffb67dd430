"""The window arguments of max and average pooling read as PyTorch reads them: first every argument's type (its
argument parser's TypeError: a float kernel size is refused, never truncated), then each kernel's own check of
how many values a window argument holds, in that kernel's words."""
from ..._arg_types import as_bool, int_lists

_COUNT = {2: "two", 3: "three"}


def _length_error(fname, nd, name, size):
    """The kernel's error for a window argument of the wrong length."""
    if fname in ("avg_pool1d", "max_pool1d_with_indices"):
        return f"{fname[:10]}() argument '{name}' should contain one int (got {size})"
    if nd == 1:
        what = {"kernel_size": "an int, list of ints or tuple of ints", "stride": "None, an int, list of ints, or "
                "tuple of ints", "padding": "an int, list of ints, or tuple of ints",
                "dilation": "an int, list of ints or tuple of ints"}[name]
        return f"max_pool1d() {name} must be {what} of size 1 but got size {size}"
    kind, count = fname[:10], _COUNT[nd]
    if kind == "avg_pool3d":
        return {"kernel_size": f"{kind}: kernel_size must be a single int, or a tuple of {count} ints",
                "stride": f"{kind}: stride must be omitted, a single int, or a tuple of {count} ints",
                "padding": f"{kind}: padding must be a single int, or a tuple of {count} ints"}[name]
    return {"kernel_size": f"{kind}: kernel_size must either be a single int, or a tuple of {count} ints",
            "stride": f"{kind}: stride must either be omitted, a single int, or a tuple of {count} ints",
            "padding": f"{kind}: padding must either be a single int, or a tuple of {count} ints",
            "dilation": f"{kind}: dilation must be either a single int, or a tuple of {count} ints"}[name]


def window(fname, nd, kernel_size, stride, padding, dilation=None, flags=()):
    """(kernel, stride, padding, dilation) as nd-tuples of ints, a missing stride being the kernel's.
    flags: (name, value, position) of the kernel's bool arguments (position None: PyTorch's message for one
    passed by keyword), checked with the others. The window arguments' messages are those of arguments
    passed by position (as F.max_pool2d passes them; avg_pool2d's kernel size usually is)."""
    maximum = fname.startswith("max")
    given = {"kernel_size": kernel_size, "stride": () if stride is None else stride, "padding": padding}
    if maximum:
        given["dilation"] = dilation
    parsed = dict(zip(given, int_lists(fname, [(name, value, position)
                                             for position, (name, value) in enumerate(given.items(), 2)])))
    for name, value, position in flags:
        as_bool(value, name, fname, position)
    out = {}
    for name, values in parsed.items():
        if len(values) == 1:
            values = values * nd
        elif len(values) != nd and not (name == "stride" and not values):
            raise RuntimeError(_length_error(fname, nd, name, len(values)))
        out[name] = values
    stride = out["stride"] or out["kernel_size"]
    return out["kernel_size"], stride, out["padding"], out.get("dilation", (1,) * nd)
