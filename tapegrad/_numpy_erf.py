"""erf and erfc over whole NumPy arrays, in double precision (NumPy has neither).

The rational approximations are Sun's fdlibm ones (s_erf.c, the libm that Python's math.erf comes
from), evaluated over the array by interval. Results are math.erf's to within a few ulp (np.exp is
not libm's exp). Over a large array that costs about 20 ns an element against math.erf's 75 ns through
np.frompyfunc; a small array (fewer than VECTOR_FROM elements) still goes element by element, which
is cheaper than the vector formulas' fixed cost of about 60 us.
"""
import math

import numpy as np

VECTOR_FROM = 1024
_ONE_BY_ONE = {"erf": np.frompyfunc(math.erf, 1, 1), "erfc": np.frompyfunc(math.erfc, 1, 1)}


def seconds(n):
    """About what erf or erfc of n elements costs (for _numpy_rent's choice between NumPy and a compile)."""
    return n * 75e-9 if n < VECTOR_FROM else 60e-6 + n * 20e-9

_ERX = 8.45062911510467529297e-01   # erf(1) rounded to float: the constant the [0.84375, 1.25) fit is around

# erf on [0, 0.84375): x + x * P(x^2) / Q(x^2)
_PP = (1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02,
       -5.77027029648944159157e-03, -2.37630166566501626084e-05)
_QQ = (1.0, 3.97917223959155352819e-01, 6.50222499887672944485e-02, 5.08130628187576562776e-03,
       1.32494738004321644526e-04, -3.96022827877536812320e-06)
# erf on [0.84375, 1.25): erx + P(s) / Q(s), s = |x| - 1
_PA = (-2.36211856075265944077e-03, 4.14856118683748331666e-01, -3.72207876035701323847e-01,
       3.18346619901161753674e-01, -1.10894694282396677476e-01, 3.54783043256182359371e-02,
       -2.16637559486879084300e-03)
_QA = (1.0, 1.06420880400844228286e-01, 5.40397917702171048937e-01, 7.18286544141962662868e-02,
       1.26171219808761642112e-01, 1.36370839120290507362e-02, 1.19844998467991074170e-02)
# erfc on [1.25, 1/0.35): exp(-x^2 - 0.5625 + R(s) / S(s)) / x, s = 1 / x^2
_RA = (-9.86494403484714822705e-03, -6.93858572707181764372e-01, -1.05586262253232909814e+01,
       -6.23753324503260060396e+01, -1.62396669462573470355e+02, -1.84605092906711035994e+02,
       -8.12874355063065934246e+01, -9.81432934416914548592e+00)
_SA = (1.0, 1.96512716674392571292e+01, 1.37657754143519042600e+02, 4.34565877475229228821e+02,
       6.45387271733267880336e+02, 4.29008140027567833386e+02, 1.08635005541779435134e+02,
       6.57024977031928170135e+00, -6.04244152148580987438e-02)
# erfc on [1/0.35, 28)
_RB = (-9.86494292470009928597e-03, -7.99283237680523006574e-01, -1.77579549177547519889e+01,
       -1.60636384855821916062e+02, -6.37566443368389627722e+02, -1.02509513161107724954e+03,
       -4.83519191608651397019e+02)
_SB = (1.0, 3.03380607434824582924e+01, 3.25792512996573918826e+02, 1.53672958608443695994e+03,
       3.19985821950859553908e+03, 2.55305040643316442583e+03, 4.74528541206955367215e+02,
       -2.24409524465858183362e+01)


def _poly(coefficients, x):
    out = np.full_like(x, coefficients[-1])
    for c in coefficients[-2::-1]:
        out *= x
        out += c
    return out


def _small(x):
    """x * P(x^2) / Q(x^2): erf(x) - x on |x| < 0.84375."""
    z = x * x
    return x * (_poly(_PP, z) / _poly(_QQ, z))


def _middle(a):
    """P(s) / Q(s), s = |x| - 1: erf(|x|) - erx on [0.84375, 1.25)."""
    s = a - 1.0
    return _poly(_PA, s) / _poly(_QA, s)


def _tail(a):
    """erfc(a) for a in [1.25, 28)."""
    s = 1.0 / (a * a)
    near = a < 1 / 0.35
    ratio = np.where(near, _poly(_RA, s) / _poly(_SA, s), _poly(_RB, s) / _poly(_SB, s))
    # fdlibm splits a^2 as h^2 - (h - a)(h + a), h being a with its low 32 bits cleared, so that exp's
    # argument keeps its last bits
    h = (a.view(np.uint64) & np.uint64(0xFFFFFFFF00000000)).view(np.float64)
    return np.exp(-h * h - 0.5625) * np.exp((h - a) * (h + a) + ratio) / a


def _by_interval(x, small, middle, tail, beyond):
    """Each element through its interval's formula. The first interval's formula is cheap and holds most
    of GELU's inputs: it runs over the whole array; the others only over the elements beyond it, taken
    out and put back by index (boolean masks cost several times more to index with)."""
    x = np.asarray(x, np.float64)
    with np.errstate(all="ignore"):
        out = small(x)
        rest = np.flatnonzero(~(np.abs(x) < 0.84375))
        if rest.size:
            r = x.take(rest)
            a = np.abs(r)
            picks = [(a < 1.25, middle), ((a >= 1.25) & (a < 28.0), tail), (~(a < 28.0), beyond)]
            values = np.empty_like(r)
            for pick, formula in picks:
                if pick.all():
                    values = formula(r)
                    break
                if pick.any():
                    values[pick] = formula(r[pick])
            if out.ndim:
                out.put(rest, values)
            else:
                out = values.reshape(())
    return out


def _erf_small(x):
    return x + _small(x)


def _erf_middle(x):
    return np.copysign(_ERX + _middle(np.abs(x)), x)


def _erf_tail(x):
    a = np.abs(x)
    return np.copysign(np.where(a < 6.0, 1.0 - _tail(a), 1.0), x)


def _erf_beyond(x):   # (NaN stays NaN)
    return np.where(np.isnan(x), x, np.copysign(1.0, x))


def _erfc_small(x):
    y = _small(x)
    return np.where(x < 0.25, 1.0 - (x + y), 0.5 - (y + (x - 0.5)))


def _erfc_middle(x):
    m = _middle(np.abs(x))
    return np.where(x >= 0, (1.0 - _ERX) - m, 1.0 + (_ERX + m))


def _erfc_tail(x):
    t = _tail(np.abs(x))
    return np.where(x >= 0, t, 2.0 - t)


def _erfc_beyond(x):
    return np.where(np.isnan(x), x, np.where(x >= 0, 0.0, 2.0))


def erf(x):
    x = np.asarray(x, np.float64)
    if x.size < VECTOR_FROM:
        return _ONE_BY_ONE["erf"](x).astype(np.float64)
    return _by_interval(x, _erf_small, _erf_middle, _erf_tail, _erf_beyond)


def erfc(x):
    x = np.asarray(x, np.float64)
    if x.size < VECTOR_FROM:
        return _ONE_BY_ONE["erfc"](x).astype(np.float64)
    return _by_interval(x, _erfc_small, _erfc_middle, _erfc_tail, _erfc_beyond)
