"""Primitives that JAX lowers as a JAX function of other primitives (`mlir.lower_fun`), for the NumPy tier.

igamma, igammac, igamma_grad_a, regularized_incomplete_beta, bessel_i0e and qr have no XLA op of their own:
JAX lowers each to a function of lax primitives (series and continued fractions in while loops, Chebyshev
sums; geqrf and householder_product for qr).
The NumPy tier inlines that same function's jaxpr, traced once per input avals, in place of the equation, so a
new shape of `special.gammainc`, `igammac`, the Gamma distribution's cdf or `i0e` runs without an XLA compile
(about 0.4 s for the incomplete gamma's, on 2 cores) and computes what XLA computes, step for step.
"""
import functools

import jax

try:  # private but long-stable: the functions JAX's lowering rules call
    from jax._src.lax import special as _special
    FUNCTIONS = {
        "igamma": _special._up_and_broadcast(_special.igamma_impl),
        "igammac": _special._up_and_broadcast(_special.igammac_impl),
        "igamma_grad_a": _special._up_and_broadcast(_special.igamma_grad_a_impl),
        "regularized_incomplete_beta": _special._up_and_broadcast(_special.regularized_incomplete_beta_impl),
        "bessel_i0e": _special.bessel_i0e_impl,
    }
    from jax._src.lax import linalg as _linalg
    FUNCTIONS["qr"] = _linalg._qr_lowering   # (geqrf or geqp3, then householder_product)
except (ImportError, AttributeError):  # pragma: no cover
    FUNCTIONS = {}


@functools.lru_cache(maxsize=256)
def jaxpr(name, params, avals):
    """The closed jaxpr of primitive `name`'s lowering function with `params` (sorted (name, value) pairs) on
    inputs of `avals` ((shape, dtype) pairs)."""
    fn = functools.partial(FUNCTIONS[name], **dict(params))
    return jax.make_jaxpr(fn)(*[jax.ShapeDtypeStruct(shape, dtype) for shape, dtype in avals])
