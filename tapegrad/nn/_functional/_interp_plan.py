"""Where each output of F.interpolate reads its input, and with which weights: one axis at a time.

An axis plan is (taps, backward taps). Taps are (indices, weights): K taps, each an index and a weight
per output position (weights None for nearest). Backward taps are those PyTorch's backward kernel uses
where they differ from its forward's (else None): its kernels do not always agree. The kernel
(`_ops.nn.interpolate`) sums weight * input[index] over the taps, last axis first, as PyTorch's CPU
kernels do. Everything here is computed on the host in PyTorch's own arithmetic:
its `opmath` type (float32 for float32 inputs, float64 for float64), its coordinate formulas
(ATen/native/UpSample.h), the float32 `floorf` it rounds with, and bicubic's A = -0.75. Antialiasing
follows PyTorch's separable kernel (PIL's filters: triangle, Keys' cubic with a = -0.5, Lanczos-3).
"""
import numpy as np


def _floorf(v):
    # C's floorf: the value is rounded to float32 first, whatever type it had
    return np.floor(np.asarray(v, np.float64).astype(np.float32)).astype(np.int64)


def _area_scale(n_in, n_out, align_corners, scale, ft):
    if align_corners:
        return ft(n_in - 1) / ft(n_out - 1) if n_out > 1 else ft(0)
    return _scale_value(n_in, n_out, scale, ft)


def _scale_value(n_in, n_out, scale, ft):
    return ft(1.0 / scale) if scale is not None and scale > 0 else ft(n_in) / ft(n_out)


def _source_index(s, n_out, align_corners, cubic, ft):
    dst = np.arange(n_out).astype(ft)
    if align_corners:
        return s * dst
    src = s * (dst + ft(0.5)) - ft(0.5)
    return src if cubic else np.where(src < 0, ft(0), src).astype(ft)


def _guard(real, n_in, ft):
    index = np.minimum(_floorf(real), n_in - 1)
    lam = np.minimum(np.maximum(real - index.astype(ft), ft(0)), ft(1)).astype(ft)
    return index, lam


def _nearest_idx(n_in, n_out, scale, exact):
    """ATen's nearest_idx / nearest_exact_idx: float32 scale; nearest copies at equal sizes, halves at double."""
    i = np.arange(n_out)
    s = _scale_value(n_in, n_out, scale, np.float32)
    if exact:
        src = _floorf((i + 0.5) * np.float64(s))
    elif n_out == n_in:
        src = i
    elif n_out == 2 * n_in:
        src = i >> 1
    else:
        src = _floorf(i.astype(np.float32) * s)
    return np.minimum(src, n_in - 1)


def nearest(n_in, n_out, scale, exact, two_d, ft):
    """PyTorch's 2-d nearest forward and every nearest backward use nearest_idx; the 1-d and 3-d forwards
    use the generic kernel (opmath scale, no shortcuts), so there the gradient may go elsewhere than the
    value came from (scale_factor=1.1 on 7 elements: forward reads 0, 0, 1, ..., backward is the identity)."""
    routed = _nearest_idx(n_in, n_out, scale, exact)
    if two_d:
        return ((routed,), None), None
    s = _area_scale(n_in, n_out, False, scale, ft)
    if exact:
        src = _floorf(_source_index(s, n_out, False, False, ft).astype(np.float64) + 0.5)
    else:
        src = _floorf(s * np.arange(n_out).astype(ft))
    src = np.minimum(src, n_in - 1)
    return ((src,), None), None if np.array_equal(src, routed) else ((routed,), None)


def linear(n_in, n_out, scale, align_corners, ft):
    if n_out == n_in:
        i = np.arange(n_out)
        return ((i, i), (np.ones(n_out, ft), np.zeros(n_out, ft))), None
    s = _area_scale(n_in, n_out, align_corners, scale, ft)
    i0, lam = _guard(_source_index(s, n_out, align_corners, False, ft), n_in, ft)
    i1 = i0 + (i0 < n_in - 1)
    return ((i0, i1), ((ft(1) - lam).astype(ft), lam)), None


def _cubic1(x, a):
    return ((a + 2) * x - (a + 3)) * x * x + 1


def _cubic2(x, a):
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a


def cubic(n_in, n_out, scale, align_corners, ft):
    s = _area_scale(n_in, n_out, align_corners, scale, ft)
    index, t = _guard(_source_index(s, n_out, align_corners, True, ft), n_in, ft)
    a, one = ft(-0.75), ft(1)
    weights = (_cubic2(t + one, a), _cubic1(t, a), _cubic1(one - t, a), _cubic2((one - t) + one, a))
    indices = tuple(np.clip(index + j - 1, 0, n_in - 1) for j in range(4))
    return (indices, tuple(w.astype(ft) for w in weights)), None


def _triangle(x, ft):
    x = np.abs(x)
    return np.where(x < 1, ft(1) - x, ft(0)).astype(ft)


def _keys_cubic(x, ft):
    x, a = np.abs(x), ft(-0.5)
    return np.where(x < 1, _cubic1(x, a), np.where(x < 2, _cubic2(x, a), ft(0))).astype(ft)


def _sinc(x, ft):
    safe = np.where(x == 0, ft(1), x * ft(np.pi)).astype(ft)
    return np.where(x == 0, ft(1), np.sin(safe) / safe).astype(ft)


def _lanczos3(x, ft):
    # PyTorch's sinc(x) * sinc(x / 3.0): the second factor is computed in double (x / 3.0 is a double)
    x = np.abs(x)
    w = _sinc(x, ft).astype(np.float64) * _sinc(x.astype(np.float64) / 3.0, np.float64)
    return np.where(x < 3, w, 0).astype(ft)


_FILTERS = {2: _triangle, 4: _keys_cubic, 6: _lanczos3}


def antialiased(n_in, n_out, scale, align_corners, taps, ft):
    """PyTorch's _upsample_{bilinear,bicubic}2d_aa weights: the filter stretched by the scale when
    downsampling, cut to the input, normalised to sum 1. The forward skips an axis whose size stays; the
    backward does not."""
    taps = _antialiased_taps(n_in, n_out, scale, align_corners, taps, ft)
    return (((np.arange(n_out),), None), taps) if n_in == n_out else (taps, None)


def _antialiased_taps(n_in, n_out, scale, align_corners, taps, ft):
    s = _area_scale(n_in, n_out, align_corners, scale, ft)
    support = ft((taps * 0.5) * np.float64(s)) if s >= 1 else ft(taps * 0.5)
    width = int(np.ceil(support)) * 2 + 1
    center = (s * (np.arange(n_out) + 0.5)).astype(ft)
    invscale = ft(1.0 / np.float64(s)) if s >= 1 else ft(1)
    xmin = np.maximum((center - support).astype(np.float64) + 0.5, 0).astype(np.int64)
    xsize = np.clip(np.minimum(((center + support).astype(np.float64) + 0.5).astype(np.int64), n_in) - xmin,
                    0, width)
    j = np.arange(width)[:, None]
    x = ((((j + xmin).astype(ft) - center).astype(np.float64) + 0.5) * np.float64(invscale)).astype(ft)
    w = _FILTERS[taps](x, ft)
    w = np.where(j < xsize, w, ft(0)).astype(ft)
    total = np.zeros(n_out, ft)
    for k in range(width):   # PyTorch sums the taps in order, in opmath
        total = (total + w[k]).astype(ft)
    w = np.where(total != 0, w / np.where(total != 0, total, ft(1)), w).astype(ft)
    return tuple(np.minimum(xmin + k, n_in - 1) for k in range(width)), tuple(w)


def as_static(axis):
    """An axis plan as nested tuples (hashable statics; float32 weights stay exact as Python floats)."""
    def taps(indices, weights):
        return (tuple(tuple(int(v) for v in i) for i in indices),
                None if weights is None else tuple(tuple(float(v) for v in w) for w in weights))
    forward, backward = axis
    return taps(*forward), None if backward is None else taps(*backward)
