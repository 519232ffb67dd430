"""Specs for histogramdd, segment_reduce and binomial (_ops/histogramdd.py, _ops/segment_reduce.py,
_ops/random_binomial.py); see op_specs.py for the format. More cases, errors and the nodes whose backward raises:
tests/test_numeric_functions.py."""
from op_specs import A, F, Case, cases, _bounded


def _edges(lib, x):
    return [lib.tensor([-2.0, 0.0, 2.0], dtype=x.dtype), lib.tensor([-2.0, -1.0, 0.5, 2.0], dtype=x.dtype)]


SPECS = {
    # PyTorch's histogramdd nodes raise in backward: the cases count detached points
    "histogramdd": cases(Case(lambda lib, x: lib.histogramdd(x.detach(), [3, 4]).hist, F(20, 2)),
                         Case(lambda lib, x, w: lib.histogramdd(x.detach(), 2, range=[-2.0, 2.0, -1.0, 1.0],
                                                                weight=w.detach(), density=True).hist,
                              F(3, 5, 2), F(3, 5, low=0.0, high=1.0)),
                         Case(lambda lib, x: lib.histogramdd(x.detach(), _edges(lib, x)).hist, F(30, 2))),
    "histogramdd_bin_edges": cases(Case(lambda lib, x: lib.histogramdd(x.detach(), [3, 4, 1]).bin_edges, F(8, 3))),
    # ties of max and min pass PyTorch's gradient, not max's derivative: the draws have none
    "segment_reduce": cases(Case(lambda lib, x, n: lib.segment_reduce(x, "sum", lengths=n), F(6, 2), A([2, 0, 3, 1])),
                            Case(lambda lib, x, n: lib.segment_reduce(x, "mean", lengths=n, initial=0.5), F(6),
                                 A([2, 0, 3, 1])),
                            Case(lambda lib, x, n: lib.segment_reduce(x, "max", lengths=n, axis=1), F(2, 5, 3),
                                 A([[2, 3], [4, 1]])),
                            Case(lambda lib, x, o: lib.segment_reduce(x, "min", offsets=o), F(6), A([0, 2, 5, 6])),
                            Case(lambda lib, x, n: lib.segment_reduce(x, "prod", lengths=n, initial=2.0), F(6),
                                 A([3, 0, 3]))),
    # the node raises in backward; the draws are PyTorch's from the same seed (tests/test_numeric_functions.py)
    "binomial": cases(Case(lambda lib, c, p: _bounded(lib.binomial(c.detach(), p.detach()), lib, 0, 60),
                           F(40, low=0.0, high=60.0), F(40, low=0.0, high=1.0), compare=False)),
}
