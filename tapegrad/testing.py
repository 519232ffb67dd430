"""tapegrad.testing (PyTorch's torch.testing): assert_close, and the deprecated assert_allclose.

The comparison follows PyTorch's: tensors must agree in shape (and dtype, device, stride when checked),
then |actual - expected| <= atol + rtol * |expected| element by element, with per-dtype default
tolerances; numbers, None, booleans, sequences and mappings are compared the same way, item by item.
Values are compared on the host with NumPy, in the tensors' own dtype, so the reported differences are
the numbers PyTorch prints.
"""
import cmath
import collections.abc

import numpy as np
from ._user_frames import warn_user

__all__ = ["assert_close", "assert_allclose"]

# rtol, atol per dtype name; other dtypes (integers, bool) compare exactly
_DTYPE_PRECISIONS = {
    "float16": (0.001, 1e-5), "bfloat16": (0.016, 1e-5), "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7),
}
_NUMBER_DTYPES = {int: "int64", float: "float64", complex: "complex128"}


class _Failure(Exception):
    """A mismatch found while walking the inputs: the error type, its message, the item path."""

    def __init__(self, type_, msg, path=()):
        super().__init__(msg)
        self.type, self.msg, self.path = type_, msg, path

    def to_error(self, msg):
        if isinstance(msg, str):
            return self.type(msg)
        text = self.msg
        if self.path:
            text += f"\n\nThe failure occurred for item {''.join(str([item]) for item in self.path)}"
        return self.type(msg(text) if callable(msg) else text)


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False,
                 check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None):
    """Raise AssertionError unless actual and expected are close (PyTorch's torch.testing.assert_close)."""
    __tracebackhide__ = True
    options = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device,
                   check_dtype=check_dtype, check_stride=check_stride)
    try:
        _compare(actual, expected, (), options)
    except _Failure as failure:
        raise failure.to_error(msg) from None


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan=True, msg=""):
    """Deprecated in PyTorch 1.12: assert_close with looser float tolerances, dtypes not checked."""
    from ._creation import tensor
    from ._tensor import Tensor
    warn_user(
        "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future release. "
        "Please use `torch.testing.assert_close()` instead. You can find detailed upgrade instructions in "
        "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning)
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        precisions = {"float16": (1e-3, 1e-3), "float32": (1e-4, 1e-5), "float64": (1e-5, 1e-8)}
        rtol, atol = _loosest([_dtype_name(actual.dtype), _dtype_name(expected.dtype)], precisions)
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=True,
                 check_dtype=False, check_stride=False, msg=msg or None)


# ---- walking the inputs ----------------------------------------------------------------------------

def _compare(actual, expected, path, options):
    from ._tensor import Tensor
    if actual is None or expected is None:
        if not (actual is None and expected is None):
            raise _Failure(AssertionError, f"None mismatch: {actual} is not {expected}", path)
        return
    if _is_bool(actual) and _is_bool(expected):
        if bool(actual) is not bool(expected):
            raise _Failure(AssertionError, f"Booleans mismatch: {bool(actual)} is not {bool(expected)}", path)
        return
    if _is_number(actual) and _is_number(expected):
        return _compare_numbers(actual, expected, path, options)
    both = (actual, expected)
    if all(isinstance(x, Tensor) for x in both) or all(isinstance(x, np.ndarray) for x in both):
        return _compare_tensors(actual, expected, path, options)
    if all(isinstance(x, collections.abc.Sequence) and not isinstance(x, str) for x in both):
        if len(actual) != len(expected):
            raise _Failure(AssertionError,
                           f"The length of the sequences mismatch: {len(actual)} != {len(expected)}", path)
        for i, (a, e) in enumerate(zip(actual, expected)):
            _compare(a, e, path + (i,), options)
        return
    if all(isinstance(x, collections.abc.Mapping) for x in both):
        if set(actual) != set(expected):
            raise _Failure(AssertionError,
                           f"The keys of the mappings do not match:\n"
                           f"Missing keys in the actual mapping: {sorted(set(expected) - set(actual))}\n"
                           f"Additional keys in the actual mapping: {sorted(set(actual) - set(expected))}", path)
        keys = list(actual)
        try:
            keys = sorted(keys)
        except TypeError:
            pass
        for key in keys:
            _compare(actual[key], expected[key], path + (key,), options)
        return
    raise _Failure(TypeError, f"No comparison pair was able to handle inputs of type {type(actual)} and "
                              f"{type(expected)}.", path)


def _is_bool(x):
    return isinstance(x, (bool, np.bool_))


def _is_number(x):
    return isinstance(x, (int, float, complex, np.number)) and not _is_bool(x)


def _tolerances(dtypes, rtol, atol, path):
    if (rtol is None) != (atol is None):
        raise _Failure(ValueError, f"Both 'rtol' and 'atol' must be either specified or omitted, "
                                   f"but got no {'rtol' if rtol is None else 'atol'}.", path)
    if rtol is not None:
        return rtol, atol
    return _loosest(dtypes, _DTYPE_PRECISIONS)


def _loosest(dtypes, precisions):
    rtols, atols = zip(*[precisions.get(d, (0.0, 0.0)) for d in dtypes])
    return max(rtols), max(atols)


def _dtype_name(dtype):
    return str(dtype).replace("torch.", "").replace("tapegrad.", "")


def _compare_numbers(actual, expected, path, options):
    if isinstance(actual, np.number):
        actual = actual.item()
    if isinstance(expected, np.number):
        expected = expected.item()
    if options["check_dtype"] and type(actual) is not type(expected):
        raise _Failure(AssertionError, f"The (d)types do not match: {type(actual)} != {type(expected)}.", path)
    dtypes = [_NUMBER_DTYPES[type(x)] for x in (actual, expected)]
    rtol, atol = _tolerances(dtypes, options["rtol"], options["atol"], path)
    if actual == expected:
        return
    if options["equal_nan"] and cmath.isnan(actual) and cmath.isnan(expected):
        return
    abs_diff = abs(actual - expected)
    if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
        return
    raise _Failure(AssertionError, _scalar_message(actual, expected, rtol, atol), path)


def _compare_tensors(actual, expected, path, options):
    from ._tensor import Tensor
    is_tensor = isinstance(actual, Tensor)
    if actual.shape != expected.shape:
        raise _Failure(AssertionError, _attribute("shape", actual.shape, expected.shape), path)
    if is_tensor and options["check_device"] and actual.device != expected.device:
        raise _Failure(AssertionError, _attribute("device", actual.device, expected.device), path)
    if options["check_dtype"] and actual.dtype != expected.dtype:
        raise _Failure(AssertionError, _attribute("dtype", actual.dtype, expected.dtype), path)
    if is_tensor and options["check_stride"] and actual.stride() != expected.stride():
        raise _Failure(AssertionError, _attribute("stride()", actual.stride(), expected.stride()), path)
    rtol, atol = _tolerances([_dtype_name(actual.dtype), _dtype_name(expected.dtype)], options["rtol"],
                             options["atol"], path)
    if actual.dtype != expected.dtype:   # check_dtype=False: compared in the promoted dtype, as PyTorch does
        if is_tensor:
            from ._dtypes import promote_types
            common = promote_types(actual.dtype, expected.dtype)
            actual, expected = actual.to(common), expected.to(common)
        else:
            common = np.promote_types(actual.dtype, expected.dtype)
            actual, expected = actual.astype(common), expected.astype(common)
    a, e = (_host(x) for x in (actual, expected))
    matches = _isclose(a, e, rtol, atol, options["equal_nan"])
    if matches.all():
        return
    if a.ndim == 0:
        raise _Failure(AssertionError, _scalar_message(a.item(), e.item(), rtol, atol), path)
    raise _Failure(AssertionError, _tensor_message(a, e, matches, rtol, atol), path)


def _host(x):
    from ._tensor import Tensor
    return x.detach().cpu().numpy() if isinstance(x, Tensor) else np.asarray(x)


def _isclose(a, e, rtol, atol, equal_nan):
    """PyTorch's isclose: equal (infinities included), or a finite error within atol + rtol * |expected|."""
    if a.dtype.kind in "biu":
        return a == e
    with np.errstate(invalid="ignore", over="ignore"):
        close = a == e
        if equal_nan:
            close |= np.isnan(a) & np.isnan(e)
        error = np.abs(a - e)
        allowed = np.abs(e * e.dtype.type(rtol)) + np.real(e.dtype.type(atol))
        close |= np.isfinite(error) & (error <= allowed)
    return close


def _attribute(name, actual, expected):
    return f"The values for attribute '{name}' do not match: {actual} != {expected}."


# ---- messages --------------------------------------------------------------------------------------

def _mismatch_message(kind, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    equality = rtol == 0 and atol == 0

    def line(name, diff, idx, tol):
        if idx is None:
            text = f"{name.title()} difference: {diff}"
        else:
            text = f"Greatest {name} difference: {diff} at index {idx}"
        return text + ("" if equality else f" (up to {tol} allowed)") + "\n"

    msg = f"{kind} are not {'equal' if equality else 'close'}!\n\n{extra.strip()}\n"
    msg += line("absolute", abs_diff, abs_idx, atol) + line("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_message(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_message("Scalars", f"Expected {expected} but got {actual}.", abs_diff, None, atol,
                             rel_diff, None, rtol)


def _tensor_message(a, e, matches, rtol, atol):
    total = matches.size
    mismatched = total - int(matches.sum())
    extra = f"Mismatched elements: {mismatched} / {total} ({mismatched / total:.1%})"
    shape = matches.shape
    a, e, matches = a.reshape(-1), e.reshape(-1), matches.reshape(-1)
    if a.dtype.kind in "biu":   # integers are compared in int64, so differences do not overflow
        a, e = a.astype(np.int64), e.astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        abs_diff = np.abs(a - e)
        abs_diff[matches] = 0
        # a ratio of integers is a float32 in PyTorch (the default dtype), of floats their own dtype
        rel_diff = (abs_diff / np.abs(e)).astype(np.float32 if abs_diff.dtype.kind == "i" else abs_diff.dtype)
        rel_diff[matches] = 0

    def greatest(values):
        nans = np.flatnonzero(np.isnan(values)) if values.dtype.kind != "i" else ()
        index = int(nans[0]) if len(nans) else int(np.argmax(values))
        value = values[index]
        return (value.item() if values.dtype.kind in "iuf" else float(value)), np.unravel_index(index, shape)

    abs_value, abs_idx = greatest(abs_diff)
    rel_value, rel_idx = greatest(rel_diff)
    return _mismatch_message("Tensor-likes", extra, abs_value, tuple(int(i) for i in abs_idx), atol,
                             rel_value, tuple(int(i) for i in rel_idx), rtol)
