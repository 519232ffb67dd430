"""uint8 F.interpolate (bilinear, bicubic, lanczos; antialiased or not): one axis's taps as PyTorch's
separable kernel computes them (ATen/native/cpu/UpSampleKernel.cpp, `_compute_index_ranges_int16_weights`).

The weights are worked out in double, PIL's way: a first input index and a count per output, the filter
(triangle; cubic with a = -0.75, or Keys' a = -0.5 when antialiased; Lanczos-3) at each input, and
without antialiasing the weights of taps that fall outside the input added to the edge tap. They are then
scaled by 2**precision, the largest precision that keeps the largest weight under 2**15, and rounded half
away from zero to int16. The kernel (`_ops.nn.interpolate_fixed_point`) sums weight * pixel in int32 from
2**(precision - 1), shifts right by precision and clamps to [0, 255]; the next axis reads those bytes.
"""
import numpy as np

from . import _interp_plan as P

_SIZES = {"bilinear": 2, "bicubic": 4, "lanczos": 6}


def _cubic(a):
    def cubic(x):
        x = np.abs(x)
        return np.where(x < 1, P._cubic1(x, a), np.where(x < 2, P._cubic2(x, a), 0.0))
    return cubic


def _filter(mode, antialias):
    if mode == "bilinear":
        return lambda x: P._triangle(x, np.float64)
    if mode == "bicubic":   # PIL's a = -0.5 when antialiased, OpenCV's -0.75 (as the float kernel) when not
        return _cubic(-0.5 if antialias else -0.75)
    return lambda x: P._lanczos3(x, np.float64)


def _antialiased(n_in, n_out, scale, size, filt):
    """Index range and weights of PyTorch's `_compute_indices_min_size_weights_aa`, in double."""
    support = (size * 0.5) * scale if scale >= 1.0 else size * 0.5
    k = int(np.ceil(support)) * 2 + 1
    center = scale * (np.arange(n_out) + 0.5)
    invscale = 1.0 / scale if scale >= 1.0 else 1.0
    xmin = np.maximum((center - support + 0.5).astype(np.int64), 0)
    xsize = np.clip(np.minimum((center + support + 0.5).astype(np.int64), n_in) - xmin, 0, k)
    j = np.arange(k)[:, None]
    w = np.where(j < xsize, filt(((j + xmin).astype(np.float64) - center + 0.5) * invscale), 0.0)
    total = np.zeros(n_out)
    for row in w:   # summed in order, as PyTorch does
        total = total + row
    normal = total != 0
    w = np.where(normal, w / np.where(normal, total, 1.0), w)
    wt_max = float(np.where(normal & (j < xsize), w, 0.0).max(initial=0.0))
    return xmin, xsize, w, wt_max


def _plain(n_in, n_out, scale, align_corners, size, filt):
    """PyTorch's `_compute_indices_min_size_weights`: the float kernel's taps, those outside the input
    folded onto the edge; the largest weight is the largest running sum along the way."""
    real = P._source_index(np.float64(scale), n_out, align_corners, size > 2, np.float64)
    index, lam = P._guard(real, n_in, np.float64)
    support = size // 2
    first = index - support + 1
    xmin = np.maximum(first, 0)
    xsize = np.clip(np.minimum(index + support + 1, n_in) - xmin, 0, size)
    w = np.zeros((size, n_out))
    rows, slot, wt_max = np.arange(n_out), np.zeros(n_out, np.int64), 0.0
    for j in range(size):
        slot = np.where(first + j <= 0, 0, np.where(first + j >= n_in - 1, xsize - 1, slot))
        w[slot, rows] += filt(np.float64(j + 1 - support) - lam)
        wt_max = max(wt_max, float(w[slot, rows].max()))
        slot = slot + 1
    return xmin, xsize, w, wt_max


def axis(n_in, n_out, scale, align_corners, mode, antialias):
    """(indices, int16 weights, precision) for one axis, each K taps by n_out, or None where the size
    stays (PyTorch skips that axis)."""
    if n_in == n_out:
        return None
    size, filt = _SIZES[mode], _filter(mode, antialias)
    s = float(P._area_scale(n_in, n_out, align_corners, scale, np.float64))
    if antialias:
        xmin, xsize, w, wt_max = _antialiased(n_in, n_out, s, size, filt)
    else:
        xmin, xsize, w, wt_max = _plain(n_in, n_out, s, align_corners, size, filt)
    precision = 0
    while precision < 22 and int(0.5 + wt_max * (1 << (precision + 1))) < (1 << 15):
        precision += 1
    v = w * (1 << precision)
    fixed = np.trunc(np.where(v < 0, v - 0.5, v + 0.5)).astype(np.int64).astype(np.int16)
    j = np.arange(w.shape[0])[:, None]
    fixed = np.where(j < xsize, fixed, 0)   # PyTorch reads only the first xsize taps
    indices = np.minimum(xmin + j, n_in - 1)
    return (tuple(tuple(int(i) for i in row) for row in indices),
            tuple(tuple(int(v) for v in row) for row in fixed), precision)
