"""NumPy rules for lax's reductions over axes (sums, extrema, all/any, argmax/argmin) and its cumulative
scans (cumsum, cumprod, cummax, cummin). Registered into _numpy_rules' table."""
import numpy as np

RULES = {}


def _reduction(fn):
    def make(params):
        axes = tuple(params["axes"])
        return lambda x: fn(x, axis=axes)
    return make


for _name, _fn in {"reduce_sum": np.sum, "reduce_max": np.max, "reduce_min": np.min, "reduce_prod": np.prod,
                   "reduce_and": np.all, "reduce_or": np.any}.items():
    RULES[_name] = _reduction(_fn)


def _arg(fn):
    def make(params):
        (axis,) = params["axes"]
        dtype = np.dtype(params["index_dtype"])
        return lambda x: fn(x, axis=axis).astype(dtype)
    return make


RULES["argmax"], RULES["argmin"] = _arg(np.argmax), _arg(np.argmin)


def _cumulative(ufunc):
    def make(params):
        axis, reverse = params["axis"], params["reverse"]

        def run(x):
            if reverse:
                return np.flip(ufunc.accumulate(np.flip(x, axis), axis=axis), axis)
            return ufunc.accumulate(x, axis=axis)
        return run
    return make


for _name, _uf in {"cumsum": np.add, "cumprod": np.multiply, "cummax": np.maximum,
                   "cummin": np.minimum}.items():
    RULES[_name] = _cumulative(_uf)
