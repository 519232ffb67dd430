"""Compares two Outcomes of one program (tapegrad's against torch's) and says how they differ."""
import re

import numpy as np

# (rtol, atol) per dtype; atol is scaled by the largest magnitude in torch's array, since long float32
# chains with cancellation lose absolute, not relative, precision
TOLERANCES = {"float32": (1e-4, 1e-5), "float64": (1e-7, 1e-9)}


def key_phrase(message):
    """The leading words of a PyTorch message, before any shapes, numbers or names: what users search."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    phrase = re.split(r"[0-9\[\(:'\"`]", first, maxsplit=1)[0].strip(" .,")
    return phrase.lower().replace("torch", "tapegrad")


def _same_error_type(ours, theirs):
    """tapegrad raises torch's exception type (a builtin) or a class of the same name."""
    names = {cls.__name__ for cls in type(ours).__mro__}
    return type(theirs).__name__ in names


def _values_differ(a, b, dtype):
    if a.shape != b.shape:
        return f"array shape {a.shape} != {b.shape}"
    if np.array_equal(np.isnan(a), np.isnan(b)) is False:
        return "NaNs in different places"
    rtol, atol = TOLERANCES.get(dtype, (0.0, 0.0))
    finite = np.isfinite(b)
    scale = max(1.0, float(np.max(np.abs(b[finite]))) if finite.any() else 1.0)
    if not np.allclose(a, b, rtol=rtol, atol=atol * scale, equal_nan=True):
        return f"values differ:\n  tapegrad: {a.tolist()}\n  torch:    {b.tolist()}"
    return None


def readout_difference(ours, theirs, with_grad=True, single=False):
    """None where two Readouts agree; else a sentence naming the first difference. single: the program
    computed in float32 somewhere, so its float64 values may carry float32 rounding (x.float()...double())."""
    if theirs.error is not None and "unallocated storage" in theirs.error[1]:
        # PyTorch's efficient zero tensor (a double backward through abs, say) cannot be read at all;
        # tapegrad's is an ordinary tensor of zeros: nothing to compare
        return None
    if (ours.error is None) != (theirs.error is None):
        if ours.error is not None:
            return f"reading it raised in tapegrad only: {ours.error[0].__name__}: {ours.error[1]}"
        return f"reading it raised in torch only: {theirs.error[0].__name__}: {theirs.error[1]}"
    if ours.error is not None:
        return None
    for field in ("dtype", "shape", "requires_grad", "is_leaf"):
        if getattr(ours, field) != getattr(theirs, field):
            return f"{field}: tapegrad {getattr(ours, field)!r}, torch {getattr(theirs, field)!r}"
    problem = _values_differ(ours.value, theirs.value, "float32" if single else theirs.dtype)
    if problem:
        return problem
    if with_grad:
        if (ours.grad is None) != (theirs.grad is None):
            return f".grad is {'None' if ours.grad is None else 'set'} in tapegrad, " \
                   f"{'None' if theirs.grad is None else 'set'} in torch"
        if ours.grad is not None:
            problem = readout_difference(ours.grad, theirs.grad, with_grad=False, single=single)
            if problem:
                return ".grad " + problem
    return None


def error_difference(ours, theirs):
    """None where both raised alike (same step, type, key phrase) or neither raised."""
    if ours is None and theirs is None:
        return None
    if ours is None:
        return f"torch raised at step {theirs[0]} ({type(theirs[1]).__name__}: {theirs[2]}), tapegrad did not"
    if theirs is None:
        return f"tapegrad raised at step {ours[0]} ({type(ours[1]).__name__}: {ours[2]}), torch did not"
    if ours[0] != theirs[0]:
        return f"raised at different steps: tapegrad at {ours[0]} ({type(ours[1]).__name__}: {ours[2]}), " \
               f"torch at {theirs[0]} ({type(theirs[1]).__name__}: {theirs[2]})"
    if not _same_error_type(ours[1], theirs[1]):
        return f"exception type: tapegrad {type(ours[1]).__name__}: {ours[2]}\n" \
               f"                torch {type(theirs[1]).__name__}: {theirs[2]}"
    phrase = key_phrase(theirs[2])
    if phrase and phrase not in ours[2].lower().replace("torch", "tapegrad"):
        return f"message lacks torch's key phrase {phrase!r}:\n  tapegrad: {ours[2]}\n  torch:    {theirs[2]}"
    return None


def differences(ours, theirs):
    """Every way tapegrad's Outcome differs from torch's (an empty list where they agree)."""
    found = []
    single = any(r.dtype == "float32" for r in theirs.tensors.values())
    raised_apart = error_difference(ours.error, theirs.error)
    if raised_apart:
        found.append(raised_apart)
    if len(ours.observed) != len(theirs.observed):
        found.append(f"observed {len(ours.observed)} values in tapegrad, {len(theirs.observed)} in torch")
    for (step, a), (_, b) in zip(ours.observed, theirs.observed):
        problem = readout_difference(a, b, with_grad=False, single=single)
        if problem:
            found.append(f"observe at step {step}: {problem}")
    if set(ours.tensors) != set(theirs.tensors):
        found.append(f"live tensors differ: tapegrad {sorted(ours.tensors)}, torch {sorted(theirs.tensors)}")
    # A backward that raised in both leaves grads apart by design: PyTorch keeps what it accumulated before
    # the failing node, tapegrad commits a backward's grads only when all of it succeeded.
    with_grad = not (ours.failed_backward and theirs.failed_backward and raised_apart is None)
    for name in theirs.tensors:
        if name in ours.tensors:
            problem = readout_difference(ours.tensors[name], theirs.tensors[name], with_grad, single)
            if problem:
                found.append(f"{name}: {problem}")
    return found
