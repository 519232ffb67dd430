"""NumPy rules for lax's lgamma and digamma (log-probabilities of the Gamma, Beta, Dirichlet and Poisson
distributions, mvlgamma, polygamma's first order).

Both follow XLA's own definition: Lanczos' approximation (g = 7, nine coefficients) for x >= 1/2 and
the reflection formula below it, with XLA's values at the poles and at infinities. They are evaluated in
double precision, so a float32 result is the correctly rounded value of that approximation (XLA's own
float32 evaluation is within a few ulp of it), and a float64 one is within a few ulp of XLA's.
"""
import math

import numpy as np

RULES = {}
ELEMENT_SECONDS = 150e-9   # what one element costs (a dozen double-precision array passes): for _numpy_rent

_G = 7.0
_BASE = 0.99999999999980993227684700473478
_COEFFICIENTS = (676.520368121885098567009190444019, -1259.13921672240287047156078755283,
                 771.3234287776530788486528258894, -176.61502916214059906584551354,
                 12.507343278686904814458936853, -0.13857109526572011689554707,
                 9.984369578019570859563e-6, 1.50563273514931155834e-7)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _float(fn):
    def run(x):
        x = np.asarray(x)
        if x.dtype.kind != "f":
            raise ValueError(f"{fn.__name__} of {x.dtype}")   # (the kernel compiles)
        with np.errstate(all="ignore"):
            return fn(x.astype(np.float64)).astype(x.dtype)
    return lambda params: run


def _lanczos_z(x):
    reflect = x < 0.5
    return reflect, np.where(reflect, -x, x - 1)


@_float
def _lgamma(x):
    reflect, z = _lanczos_z(x)
    total = np.full(x.shape, _BASE)
    for i, c in enumerate(_COEFFICIENTS):
        total = total + c / (z + (i + 1))
    t = z + (_G + 0.5)
    log_t = math.log(_G + 0.5) + np.log1p(z / (_G + 0.5))
    log_y = _LOG_SQRT_2PI + (z + 0.5 - t / log_t) * log_t + np.log(total)
    # below 1/2: log|Gamma(x)| = log(pi) - log|sin(pi x)| - log|Gamma(1 - x)|, sin taken of the
    # fractional part folded into [0, 1/2] (exact for large |x|, where pi * x would lose it)
    frac = np.abs(x) - np.floor(np.abs(x))
    frac = np.where(frac > 0.5, 1 - frac, frac)
    denominator = np.log(np.sin(np.pi * frac))
    reflection = np.where(np.isfinite(denominator), math.log(math.pi) - denominator - log_y, -denominator)
    out = np.where(reflect, reflection, log_y)
    return np.where(np.isinf(x), np.inf, out)


@_float
def _digamma(x):
    reflect, z = _lanczos_z(x)
    num, den = np.zeros(x.shape), np.full(x.shape, _BASE)
    for i, c in enumerate(_COEFFICIENTS):
        term = z + (i + 1)
        num = num - c / (term * term)
        den = den + c / term
    t = z + (_G + 0.5)
    log_t = math.log(_G + 0.5) + np.log1p(z / (_G + 0.5))
    y = log_t + num / den - _G / t
    # below 1/2: digamma(x) = digamma(1 - x) - pi / tan(pi x), the angle reduced to [-pi/2, pi/2]
    reduced = x + np.abs(np.floor(x + 0.5))
    reflection = y - np.pi * np.cos(np.pi * reduced) / np.sin(np.pi * reduced)
    out = np.where(reflect, reflection, y)
    return np.where((x <= 0) & (x == np.floor(x)), np.nan, out)


RULES["lgamma"] = _lgamma
RULES["digamma"] = _digamma
