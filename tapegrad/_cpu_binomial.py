"""PyTorch's CPU binomial sampler, value by value from a CpuStream (_cpu_generator): the draws torch.binomial
makes for one seed.

ATen samples each (count, prob) pair with one uniform double at a time from the generator: below a mean of 10
by inversion (summing geometric waiting times), from 10 by Hormann's transformed rejection (BTRS, with
TensorFlow's Stirling tails); a prob above 1/2 samples the failures instead. Its arithmetic mixes the tensor's
precision (count and prob stay float for a float tensor) with doubles; `f` rounds to the former where it does.
"""
import math

import numpy as np

from ._cpu_generator import _Reader

# log(k!) - (the Stirling approximation of it), for k < 10
_TAILS = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509, 0.0166446911898211,
          0.0138761288230707, 0.0118967099458917, 0.0104112652619720, 0.00925546218271273, 0.00833056343336287)


def binomial(stream, counts, probs, dtype):
    """Draws for the pairs of the 1-D arrays counts and probs, in order, as values of dtype (float32/float64)."""
    f = (lambda x: float(np.float32(x))) if np.dtype(dtype) == np.float32 else float
    with _Reader(stream, 4 * len(counts)) as r:
        out = [_one(r, f(c), f(p), f) for c, p in zip(counts.tolist(), probs.tolist())]
    return np.asarray(out, dtype)


def _one(r, count, prob, f):
    if count <= 0.0 or prob <= 0.0:
        return 0.0
    if prob >= 1.0:
        return count
    if not math.isfinite(count) or math.isnan(prob):   # (PyTorch returns NaN for a NaN prob, never for these)
        return math.nan
    if prob <= 0.5:
        return _btrs(r, count, prob, f) if f(count * prob) >= 10.0 else _inversion(r, count, prob, f)
    q = f(1.0 - prob)
    return f(count - (_btrs(r, count, q, f) if f(count * q) >= 10.0 else _inversion(r, count, q, f)))


def _log(x):
    return math.log(x) if x > 0 else -math.inf if x == 0 else math.nan


def _inversion(r, count, prob, f):
    """The number of successes before the geometric waiting times sum past count."""
    logprob = float(np.log1p(np.asarray(-prob, np.float32 if f is not float else np.float64)))
    if logprob == 0:   # (a prob too small to move log1p: no success ever)
        return 0.0
    total, k = 0.0, 0.0
    while True:
        geom = _log(r.double()) / logprob
        total += math.ceil(geom) if math.isfinite(geom) else geom
        if total > count:
            return k
        k += 1


def _tail(k):
    if k < len(_TAILS):
        return _TAILS[int(k)]
    kp1sq = (k + 1) * (k + 1)
    return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)


def _btrs(r, count, prob, f):
    stddev = f(math.sqrt(f(f(count * prob) * f(1 - prob))))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = f(count * prob) + 0.5
    v_r = 0.92 - 4.2 / b
    ratio = f(prob / f(1 - prob))
    alpha = (2.83 + 5.1 / b) * stddev
    m = math.floor(f(f(count + 1) * prob))
    while True:
        u = r.double() - 0.5
        v = r.double()
        us = 0.5 - abs(u)
        if us == 0:   # (C++'s k is then -inf: rejected)
            continue
        k = f(math.floor((2 * a / us + b) * u + c))
        if k < 0 or k > count:
            continue
        if us >= 0.07 and v <= v_r:
            return k
        v = _log(v * alpha / (a / (us * us) + b))
        rest = f(f(count - k) + 1)
        bound = ((m + 0.5) * math.log((m + 1) / (ratio * (count - m + 1)))
                 + f(count + 1) * math.log((count - m + 1) / rest)
                 + (k + 0.5) * math.log(ratio * rest / f(k + 1))
                 + _tail(m) + _tail(count - m) - _tail(k) - _tail(f(count - k)))
        if v <= bound:
            return k
