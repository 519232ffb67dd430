"""Specs for the elementwise ops of _functional/_special.py (logaddexp ... i0); see op_specs.py for the format."""
from op_specs import A, D, F, Case, _binary, cases

POS = dict(low=0.2, high=2.0)

SPECS = {
    # (a float32 operand: finite differences in float32 are too coarse to check its gradient)
    "logaddexp": _binary("logaddexp") + cases(Case(lambda lib, a, b: lib.logaddexp(a, b), F(3), D("float32", 3),
                                                    fd=False)),
    "logaddexp2": _binary("logaddexp2"),
    "heaviside": cases(Case(lambda lib, a, b: lib.heaviside(a, b), A([0.0, -1.5, 2.0, 0.0], "float64"),
                            A([0.5], "float64"), grad=False, fd=False),
                       Case(lambda lib, a, b: a.heaviside(b), D("int64", 6), D("int64", 6)),
                       Case(lambda lib, a, b: lib.heaviside(a, b), D("bool", 4), D("bool", 4))),
    "gcd": cases(Case(lambda lib, a, b: lib.gcd(a, b), A([0, -4, 6, 12, 7]), A([0, 6, -9, 8, 0])),
                 Case(lambda lib, a, b: a.gcd(b), D("int32", 2, 3), D("int64", 3))),
    "lcm": cases(Case(lambda lib, a, b: lib.lcm(a, b), A([0, -4, 6, 12, 7]), A([0, 6, -9, 8, 0])),
                 Case(lambda lib, a, b: a.lcm(b), D("int16", 2, 3), D("int16", 3))),
    "ldexp": cases(Case(lambda lib, a, b: lib.ldexp(a, b), F(2, 3), F(3)),
                   # an integer exponent: PyTorch's derivative 2 ** other is an integer power, 0 where other < 0
                   Case(lambda lib, a, b: a.ldexp(b), F(4), D("int64", 4), fd=False),
                   Case(lambda lib, a, b: lib.ldexp(a, b), D("int64", 3), D("int32", 3))),
    # the gradient passes to input as it is, none to other (finite differences agree: a step of one ulp)
    "nextafter": cases(Case(lambda lib, a, b: lib.nextafter(a, b), F(2, 3), F(3)),
                       Case(lambda lib, a, b: a.nextafter(b) * 1, F(4), F(4))),
    # the mantissa's gradient is grad / 2 ** exponent: finite differences hold away from powers of 2
    "frexp": cases(Case(lambda lib, a: lib.frexp(a)[0], A([0.3, -1.7, 3.1, 12.5], "float64")),
                   Case(lambda lib, a: lib.frexp(a).mantissa, A([0.0, -0.0, 1.0], "float64"), fd=False),
                   Case(lambda lib, a: a.frexp().exponent, F(2, 3), grad=False)),
    "polygamma": cases(Case(lambda lib, a: lib.polygamma(0, a), F(2, 3, **POS)),
                       Case(lambda lib, a: lib.polygamma(2, a), F(3, **POS), rtol=1e-3),
                       Case(lambda lib, a: a.polygamma(1), F(4, **POS)),
                       Case(lambda lib, a: lib.polygamma(1, a), D("int64", 3, low=1, high=5), grad=False,
                            rtol=1e-5)),
    "polygamma_": cases(Case(lambda lib, a: (a * 1).polygamma_(1), F(2, 3, **POS))),
    "mvlgamma": cases(Case(lambda lib, a: lib.mvlgamma(a, 3), F(2, 3, low=1.2, high=4.0)),
                      Case(lambda lib, a: a.mvlgamma(p=1), F(4, **POS)),
                      Case(lambda lib, a: lib.mvlgamma(a, 2), D("int64", 3, low=1, high=5), grad=False,
                           rtol=1e-6)),
    "i0": cases(Case(lambda lib, a: lib.i0(a), F(2, 3)), Case(lambda lib, a: a.i0(), A([0.0, 1.0, -3.0], "float64")),
                Case(lambda lib, a: lib.i0(a), D("int64", 3), grad=False)),
}
