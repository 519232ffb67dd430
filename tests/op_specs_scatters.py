"""Specs for select_scatter, slice_scatter, diagonal_scatter (tapegrad/_ops/shape.py) and renorm
(tapegrad/_ops/reduction.py); see op_specs.py for the format."""
from op_specs import D, F, Case, cases

SPECS = {
    "select_scatter": cases(Case(lambda lib, a, b: lib.select_scatter(a, b, 0, 1), F(3, 4), F(4)),
                            Case(lambda lib, a, b: a.select_scatter(b, -1, -2), F(2, 3, 4), F(2, 3)),
                            Case(lambda lib, a, b: lib.select_scatter(a, b, 1, 0), D("int64", 2, 3), D("int32", 2))),
    "slice_scatter": cases(Case(lambda lib, a, b: lib.slice_scatter(a, b, 1, 1, 3), F(3, 4), F(3, 2)),
                           Case(lambda lib, a, b: a.slice_scatter(b, start=-2, end=100), F(4, 2), F(2, 2)),
                           Case(lambda lib, a, b: lib.slice_scatter(a, b, dim=-1, step=2), F(2, 5), F(2, 3))),
    "diagonal_scatter": cases(Case(lambda lib, a, b: lib.diagonal_scatter(a, b), F(3, 4), F(3)),
                              Case(lambda lib, a, b: a.diagonal_scatter(b, 1), F(3, 4), F(3)),
                              Case(lambda lib, a, b: lib.diagonal_scatter(a, b, -1, 2, 0), F(3, 2, 2), F(2, 1))),
    "renorm": cases(Case(lambda lib, a: lib.renorm(a, 2, 0, 1.5), F(3, 4)),
                    Case(lambda lib, a: a.renorm(1, 1, 2.0), F(3, 4)),
                    Case(lambda lib, a: lib.renorm(a, 3, -1, 0.8), F(2, 3, 2)),
                    # a slice under maxnorm is left as it is, a zero one too
                    Case(lambda lib, a: lib.renorm(a * lib.tensor([[0.0], [0.1], [1.0]], dtype=a.dtype), 2, 0, 0.5),
                         F(3, 4)),
                    Case(lambda lib, a: (a * 1).renorm_(float("inf"), 0, 1.0), F(3, 4))),
}
