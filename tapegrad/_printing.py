"""PyTorch's tensor repr (torch/_tensor_str.py), reimplemented over NumPy arrays.

The layout logic follows PyTorch's function by function so that output is
identical character for character.  PyTorch formats every element through
Python's float/int formatting of ``Tensor.item()``, which is the exact value
widened to double; we get the same by widening to float64 / complex128 and
formatting the Python numbers ``tolist()`` returns.
"""
import math

import numpy as np

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}

_opts = dict(_PROFILES["default"], sci_mode=None)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None, profile=None,
                     sci_mode=None):
    """Set printing options; same arguments and semantics as torch.set_printoptions."""
    if profile in _PROFILES:
        _opts.update(_PROFILES[profile])
    for name, value in (("precision", precision), ("threshold", threshold),
                        ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if value is not None:
            _opts[name] = value
    # As in PyTorch, sci_mode is always overwritten, so omitting it resets it to automatic.
    _opts["sci_mode"] = sci_mode


def get_printoptions():
    """The current options, as keyword arguments for set_printoptions."""
    return dict(_opts)


class _Formatter:
    """Chooses int / fixed / scientific notation and a common width for a set of values."""

    def __init__(self, values):
        self.floating = values.dtype.kind == "f"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if not self.floating:
            self.max_width = max([1] + [len(str(v)) for v in values.ravel().tolist()])
            return
        finite = values[np.isfinite(values) & (values != 0)]
        if finite.size == 0:
            return
        magnitude = np.abs(finite)
        # Python floats: hi / lo may overflow to inf, silently as in PyTorch.
        lo, hi = float(magnitude.min()), float(magnitude.max())
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if _opts["sci_mode"] is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = _opts["sci_mode"]
        precision = _opts["precision"]
        if self.sci_mode:
            widths = (len(f"{v:.{precision}e}") for v in finite.tolist())
        elif self.int_mode:
            # int-mode floats get a trailing "." to show the dtype is floating.
            widths = (len(f"{v:.0f}") + 1 for v in finite.tolist())
        else:
            widths = (len(f"{v:.{precision}f}") for v in finite.tolist())
        self.max_width = max(self.max_width, max(widths))

    def format(self, value):
        if not self.floating:
            text = f"{value}"
        elif self.sci_mode:
            text = f"{value:{self.max_width}.{_opts['precision']}e}"
        elif self.int_mode:
            text = f"{value:.0f}"
            if not (math.isinf(value) or math.isnan(value)):
                text += "."
        else:
            text = f"{value:.{_opts['precision']}f}"
        return text.rjust(self.max_width)


def _element_str(value, real_fmt, imag_fmt):
    if imag_fmt is None:
        return real_fmt.format(value)
    imag = (imag_fmt.format(value.imag) + "j").lstrip()
    # A leading sign (including that of -0.0) already separates the two parts.
    sep = "" if imag[0] in "+-" else "+"
    return real_fmt.format(value.real) + sep + imag


def _vector_str(values, indent, summarize, real_fmt, imag_fmt):
    element_length = real_fmt.max_width + 2
    if imag_fmt is not None:
        element_length += imag_fmt.max_width + 1
    per_line = max(1, math.floor((_opts["linewidth"] - indent) / element_length))
    edge = _opts["edgeitems"]

    def fmt(vals):
        return [_element_str(v, real_fmt, imag_fmt) for v in vals.tolist()]

    if summarize and not edge:
        data = ["..."]
    elif summarize and len(values) > 2 * edge:
        data = fmt(values[:edge]) + [" ..."] + fmt(values[-edge:])
    else:
        data = fmt(values)
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(values, indent, summarize, real_fmt, imag_fmt):
    if values.ndim == 0:
        return _element_str(values.item(), real_fmt, imag_fmt)
    if values.ndim == 1:
        return _vector_str(values, indent, summarize, real_fmt, imag_fmt)
    edge = _opts["edgeitems"]
    n = len(values)
    if summarize and n > 2 * edge:
        slices = ([_nested_str(values[i], indent + 1, summarize, real_fmt, imag_fmt) for i in range(edge)]
                  + ["..."]
                  + [_nested_str(values[i], indent + 1, summarize, real_fmt, imag_fmt)
                     for i in range(n - edge, n)])
    else:
        slices = [_nested_str(v, indent + 1, summarize, real_fmt, imag_fmt) for v in values]
    return "[" + ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _summarized(values):
    """The elements a summarized print shows, which alone decide the formatting."""
    edge = _opts["edgeitems"]
    if values.ndim == 0:
        return values
    if values.ndim == 1:
        # values[-0:] is everything, so edgeitems=0 keeps the whole vector, as in PyTorch.
        return np.concatenate((values[:edge], values[-edge:])) if len(values) > 2 * edge else values
    if not edge:
        return np.empty([0] * values.ndim, values.dtype)
    rows = list(values[:edge]) + list(values[len(values) - edge:]) if len(values) > 2 * edge else list(values)
    return np.stack([_summarized(row) for row in rows])


def _tensor_str(values, indent):
    summarize = values.size > _opts["threshold"]
    shown = _summarized(values) if summarize else values
    if values.dtype.kind == "c":
        return _nested_str(values, indent, summarize, _Formatter(shown.real), _Formatter(shown.imag))
    return _nested_str(values, indent, summarize, _Formatter(shown), None)


def _add_suffixes(tensor_str, suffixes, indent, force_newline=False):
    parts = [tensor_str]
    # PyTorch's arithmetic, off by two when there is no newline; kept for identical wrapping.
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if force_newline or last_line_len + len(suffix) + 2 > _opts["linewidth"]:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
            force_newline = False
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _widen(values):
    """Exact float64/complex128 copy of floating values (incl. float16, bfloat16); others as is."""
    kind = values.dtype.kind
    if kind == "c":
        return values.astype(np.complex128)
    if kind in "biu":
        return values
    return values.astype(np.float64)


def tensor_repr(values, *, dtype_name, default_float_dtype_name="float32", requires_grad=False,
                grad_fn_name=None, device=None, is_parameter=False, prefix="tensor(", tangent=None):
    """PyTorch's repr of a (dense, strided) tensor holding ``values``; `tangent`: a dual tensor's tangent,
    formatted (forward AD)."""
    values = _widen(np.asarray(values))
    indent = len(prefix)
    suffixes = []
    if device is not None and device != "cpu":
        suffixes.append(f"device='{device}'")
    # Spelled as torch's here so that suffix wrapping is decided on the same lengths as in PyTorch.
    dtype_suffix = f"dtype=torch.{dtype_name}"
    size_suffix = f"size={tuple(values.shape)}"
    if values.size == 0:
        # No elements to infer the dtype from, so anything but the default float dtype is shown.
        if values.ndim != 1:
            suffixes.append(size_suffix)
        if dtype_name != default_float_dtype_name:
            suffixes.append(dtype_suffix)
        tensor_str = "[]"
    else:
        if not _opts["edgeitems"]:
            suffixes.append(size_suffix)
        default_complex = "complex128" if default_float_dtype_name == "float64" else "complex64"
        if dtype_name not in (default_float_dtype_name, default_complex, "int64", "bool"):
            suffixes.append(dtype_suffix)
        tensor_str = _tensor_str(values, indent)
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    if tangent is not None:
        suffixes.append(f"tangent={tangent}")
    text = _add_suffixes(prefix + tensor_str, suffixes, indent).replace("dtype=torch.", "dtype=tapegrad.")
    return "Parameter containing:\n" + text if is_parameter else text


def meta_repr(shape, *, dtype_name, default_float_dtype_name="float32", requires_grad=False, grad_fn_name=None,
              is_parameter=False):
    """PyTorch's repr of a meta tensor: no values, its device and size (and dtype where not the default)."""
    suffixes = ["device='meta'", f"size={shape}"]
    if dtype_name != default_float_dtype_name:
        suffixes.append(f"dtype=torch.{dtype_name}")
    if grad_fn_name is not None:
        suffixes.append(f"grad_fn=<{grad_fn_name}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    text = _add_suffixes("tensor(...", suffixes, len("tensor(")).replace("dtype=torch.", "dtype=tapegrad.")
    return "Parameter containing:\n" + text if is_parameter else text
