"""NumPy rules for lax's windowed primitives: reduce_window_{sum,max,min} (pooling) and
select_and_scatter_add (max pooling's gradient), with `tap_rows`, which the convolution rule shares.

Each runs tap by tap over the window: for one tap, every output reads at most one input element, found
by `tap_rows` per dimension (padding and base dilation make holes, which hold the reduction's identity in
XLA's definition, and are simply skipped here).
"""
import numpy as np

RULES = {}


def tap_rows(size, out, stride, offset, dilation):
    """Along one dimension, for one window tap: (the outputs that read an input element, those elements),
    as two slices (they step evenly), or None when no output does. Output o reads position
    o*stride + offset of the padded, dilated input (offset: the tap's place in the dilated window less the
    low padding); a position is an element when it falls on the dilation's grid within the input."""
    p = np.arange(out) * stride + offset
    real = np.flatnonzero((p >= 0) & (p % dilation == 0) & (p // dilation < size))
    if not len(real):
        return None
    read = p[real] // dilation
    step_out = int(real[1] - real[0]) if len(real) > 1 else 1
    step_in = int(read[1] - read[0]) if len(read) > 1 else 1
    return (slice(int(real[0]), int(real[-1]) + 1, step_out),
            slice(int(read[0]), int(read[-1]) + 1, step_in))


def out_size(size, dilation, low, high, window, window_dilation, stride):
    dilated = (size - 1) * dilation + 1 if size else 0
    span = (window - 1) * window_dilation + 1
    return max(0, (dilated + low + high - span) // stride + 1)


def _taps(shape, params, base_dilation, window_dilation):
    """(output shape, {tap: (output index, input index)}) for the taps that read any input element."""
    window, strides, padding = params["window_dimensions"], params["window_strides"], params["padding"]
    outs = tuple(out_size(s, bd, lo, hi, w, wd, st) for s, bd, (lo, hi), w, wd, st
                 in zip(shape, base_dilation, padding, window, window_dilation, strides))
    taps = {}
    for tap in np.ndindex(*window):
        rows = [tap_rows(s, o, st, t * wd - lo, bd) for s, o, st, t, wd, (lo, _), bd
                in zip(shape, outs, strides, tap, window_dilation, padding, base_dilation)]
        if all(r is not None for r in rows):
            taps[tap] = (tuple(r[0] for r in rows), tuple(r[1] for r in rows))
    return outs, taps


def _identity(kind, dtype):
    if kind == "sum":
        return np.zeros((), dtype)
    if dtype.kind == "f":
        return np.array(-np.inf if kind == "max" else np.inf, dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.array(info.min if kind == "max" else info.max, dtype)
    if dtype.kind == "b":
        return np.array(kind == "min", dtype)
    raise ValueError(f"reduce_window_{kind} of {dtype}")   # (complex: the kernel compiles)


def _reduce_window(kind, ufunc):
    def make(params):
        base, dil = tuple(params["base_dilation"]), tuple(params["window_dilation"])
        plans = {}   # input shape -> _taps

        def run(x):
            x = np.asarray(x)
            plan = plans.get(x.shape)
            if plan is None:
                plan = plans[x.shape] = _taps(x.shape, params, base, dil)
            outs, taps = plan
            out = np.full(outs, _identity(kind, x.dtype), x.dtype)
            for written, read in taps.values():
                view = out[written]
                ufunc(view, x[read], out=view)
            return out
        return run
    return make


RULES["reduce_window_sum"] = _reduce_window("sum", np.add)
RULES["reduce_window_max"] = _reduce_window("max", np.maximum)
RULES["reduce_window_min"] = _reduce_window("min", np.minimum)

_SELECT = {"ge": (np.greater_equal, "max"), "le": (np.less_equal, "min")}


def _select_and_scatter_add(params):
    select = _SELECT.get(getattr(params["select_prim"], "name", None))
    if select is None:
        raise ValueError(f"select_and_scatter_add selecting by {params['select_prim']}")
    keep, identity = select
    ones = (1,) * len(params["window_dimensions"])
    plans = {}   # operand shape -> (_taps, each element's flat index)

    def run(source, operand):
        # XLA:CPU pads the operand with the selection's identity (-inf for ge): a padding element is a
        # candidate like any other, and what it selects is dropped
        source, operand = np.asarray(source), np.asarray(operand)
        plan = plans.get(operand.shape)
        if plan is None:
            plan = plans[operand.shape] = (_taps(operand.shape, params, ones, ones),
                                           np.arange(operand.size).reshape(operand.shape))
        (outs, taps), flat = plan
        pad_value = _identity(identity, operand.dtype)
        best = chosen = None   # each window's selected value, and its flat index (-1: padding)
        for tap in np.ndindex(*params["window_dimensions"]):   # (row-major, as XLA's window)
            tap = taps.get(tap)
            value, index = np.full(outs, pad_value, operand.dtype), np.full(outs, -1, np.int64)
            if tap is not None:
                written, read = tap
                value[written], index[written] = operand[read], flat[read]
            if best is None:   # the window's first element
                best, chosen = value, index
                continue
            replace = ~keep(best, value)   # as XLA: a later element replaces unless select(selected, it)
            best, chosen = np.where(replace, value, best), np.where(replace, index, chosen)
        out = np.zeros(operand.size, source.dtype)
        if chosen is not None:
            picked = chosen >= 0
            np.add.at(out, chosen[picked], source[picked])
        return out.reshape(operand.shape)
    return run


RULES["select_and_scatter_add"] = _select_and_scatter_add
