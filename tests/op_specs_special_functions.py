"""Specs for the entries of _ops/special_functions.py (torch.special's own kernels and igamma); see op_specs.py for
the format. One case each, drawn away from the edges (tests/test_boundary_points.py puts them on 0, +-1, NaN, inf);
PyTorch's branch points, integer promotion and the other call forms: tests/test_special_namespace.py.

igamma and zeta are differentiated in their second argument only (PyTorch raises in the first): their first
argument is made from integers, so that it carries no gradient and the finite differences leave it in place."""
from op_specs import A, F, Case, cases


def _fixed(a, like):
    """Integers a as quarters in like's dtype."""
    return (a / 4).to(like.dtype)


def _unary(name, low=-2.0, high=2.0):
    return cases(Case(lambda lib, a: getattr(lib.special, name)(a), F(2, 3, low=low, high=high)))


# Polynomial arguments, in quarters: the endpoints (+-1, and 0, 1 for the shifted ones), inside and outside
# [-1, 1] (PyTorch's kernels read an uninitialised value at a NaN argument for most of them, so the boundary
# points are left to the degree, drawn: negative, fractional (truncated), around PyTorch's switch to the closed
# forms).
POLY_X = [[-6], [-4], [-3], [0], [1], [2], [3], [4], [8]]


def _polynomial(name, high=14):
    return cases(Case(lambda lib, x, n: getattr(lib.special, name)(_fixed(x, n), n), A(POLY_X),
                      F(8, low=-2, high=high)))


SPECS = {
    "special_i0e": _unary("i0e", -10, 10),
    "special_i1": _unary("i1", -10, 10),
    "special_i1e": _unary("i1e", -10, 10),
    "special_ndtri": _unary("ndtri", 0.02, 0.98),
    "special_log_ndtr": _unary("log_ndtr", -6, 6),
    "special_erfcx": _unary("erfcx", -3, 5),
    "special_entr": _unary("entr", 0.1, 3),
    # the Tensor-Tensor, Tensor-Scalar and Scalar-Tensor overloads (their nodes' names: test_grad_fn_names)
    "special_xlog1py": cases(
        Case(lambda lib, a, b: lib.special.xlog1py(a, b), F(2, 3), F(3, low=-0.9, high=3)),
        Case(lambda lib, a: lib.special.xlog1py(a, 2.5) + lib.special.xlog1py(2, a + 1), F(3, low=-0.5, high=2))),
    "special_zeta": cases(
        Case(lambda lib, x, q: lib.special.zeta(_fixed(x, q), q), A([[7, 11, 13], [17, 6, 20]]), F(3, low=0.5, high=3)),
        Case(lambda lib, q: lib.special.zeta(3, q), F(4, low=0.2, high=3), fd=False)),
    "igamma": cases(Case(lambda lib, a, x: lib.special.gammainc(_fixed(a, x), x), A([[2, 5, 9], [14, 1, 3]]),
                         F(3, low=0.1, high=6))),
    "igammac": cases(Case(lambda lib, a, x: _fixed(a, x).igammac(x), A([[2, 5, 9], [14, 1, 3]]),
                          F(3, low=0.1, high=6))),
    # no derivative in PyTorch: the results do not require grad
    "special_bessel_j0": _unary("bessel_j0", -12, 12),
    "special_bessel_j1": _unary("bessel_j1", -12, 12),
    "special_bessel_y0": _unary("bessel_y0", 0.1, 12),
    "special_bessel_y1": _unary("bessel_y1", 0.1, 12),
    "special_modified_bessel_i0": _unary("modified_bessel_i0", -12, 12),
    "special_modified_bessel_i1": _unary("modified_bessel_i1", -12, 12),
    "special_modified_bessel_k0": _unary("modified_bessel_k0", 0.1, 6),
    "special_modified_bessel_k1": _unary("modified_bessel_k1", 0.1, 6),
    "special_scaled_modified_bessel_k0": _unary("scaled_modified_bessel_k0", 0.1, 6),
    "special_scaled_modified_bessel_k1": _unary("scaled_modified_bessel_k1", 0.1, 6),
    "special_spherical_bessel_j0": _unary("spherical_bessel_j0", -8, 8),
    "special_airy_ai": _unary("airy_ai", -6, 9),
    **{f"special_{name}": _polynomial(name) for name in (
        "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
        "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
        "shifted_chebyshev_polynomial_w", "laguerre_polynomial_l", "legendre_polynomial_p")},
    # beyond PyTorch's Hermite limits (degree 128 in float32, 512 in float64) the polynomials are NaN
    "special_hermite_polynomial_h": _polynomial("hermite_polynomial_h", high=600),
    "special_hermite_polynomial_he": _polynomial("hermite_polynomial_he", high=600),
}
