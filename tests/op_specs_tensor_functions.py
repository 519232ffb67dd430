"""Specs for the entries behind torch's statistics, products, index writes and view copies (nanmedian, histc,
histogram, addr, addbmm, block_diag, put, index_reduce, unfold, as_strided_scatter, the *_copy functions);
see op_specs.py for the format."""
from op_specs import A, C, D, F, Case, cases

# one row of NaN (x[0, 1]); the values elsewhere drawn from F
NAN_ROW = A([[0.5, float("nan"), -1.25, 2.0], [1.5, -0.75, float("nan"), float("nan")], [0.25, 3.0, -2.0, 1.0]],
            "float64")


def _copy_cases(name, *args):
    # (copies of views of views: tests/test_tensor_functions.py)
    return cases(Case(lambda lib, a: getattr(lib, name)(a, *args), F(3, 4)))


SPECS = {
    # ---- order statistics, counts ------------------------------------------------------------------
    "nanmedian_all": cases(Case(lambda lib, a: lib.nanmedian(a), NAN_ROW),
                           Case(lambda lib, a: a.nanmedian(), F(2, 5)),
                           Case(lambda lib, a: a.nanmedian(), D("int64", 7))),
    "nanmedian_values": cases(Case(lambda lib, a: a.nanmedian(1), NAN_ROW),
                              Case(lambda lib, a: lib.nanmedian(a, 0, keepdim=True), F(4, 2))),
    "nanmedian_indices": cases(Case(lambda lib, a: a.nanmedian(1).indices, NAN_ROW),
                               Case(lambda lib, a: lib.nanmedian(a, 0).indices, D("int32", 5, 2))),
    "histc": cases(Case(lambda lib, a: lib.histc(a, bins=5), F(3, 4), grad=False, fd=False),
                   Case(lambda lib, a: a.histc(4, min=-1, max=1), F(20), grad=False, fd=False)),
    # its node's backward raises (tests/test_no_derivative.py)
    "histogram": cases(Case(lambda lib, a: lib.histogram(a, 4), F(3, 4), grad=False, fd=False),
                       Case(lambda lib, a, b, w: a.histogram(b, weight=w, density=True),
                            A([-1.5, 0.3, 2.0, -0.5, 0.1, 1.25], "float64"), A([-2.0, -0.5, 0.25, 2.0], "float64"),
                            A([0.5, 1.0, 0.25, 2.0, 1.5, 0.75], "float64"), grad=False, fd=False)),
    # ---- products --------------------------------------------------------------------------------------
    "addr": cases(Case(lambda lib, a, b, c: lib.addr(a, b, c), F(3, 4), F(3), F(4)),
                  Case(lambda lib, a, b, c: a.addr(b, c, beta=0.5, alpha=-2), F(4), F(3), F(4)),
                  Case(lambda lib, a, b, c: lib.addr(a, b, c, beta=2), D("int64", 2, 3), D("int64", 2),
                       D("int64", 3))),
    "addbmm": cases(Case(lambda lib, a, b, c: lib.addbmm(a, b, c), F(3, 4), F(2, 3, 5), F(2, 5, 4)),
                    Case(lambda lib, a, b, c: (a * 1).addbmm_(b, c, beta=0.5, alpha=2), F(3, 4), F(2, 3, 5),
                         F(2, 5, 4))),
    "block_diag": cases(Case(lambda lib, a, b, c: lib.block_diag(a, b, c), F(2, 3), F(2), F()),
                        Case(lambda lib, a, b: lib.block_diag(a, b), D("int64", 1, 2), F(2, 2))),
    # ---- writes at indices -------------------------------------------------------------------------------
    "put": cases(Case(lambda lib, a, i, s: lib.put(a, i, s), F(3, 4), A([0, -1, 5]), F(3)),
                 Case(lambda lib, a, i, s: (a * 1).put_(i, s, accumulate=True), F(3, 4), A([[0, 0], [5, 11]]),
                      F(2, 2))),
    "index_reduce": cases(*(Case(lambda lib, a, i, s, r=r, inc=inc: a.index_reduce(0, i, s, r, include_self=inc),
                                 F(3, 2), A([0, 2, 0]), F(3, 2))
                            for r, inc in (("prod", True), ("mean", False), ("amax", True), ("amin", False))),
                          Case(lambda lib, a, i, s: (a * 1).index_reduce_(1, i, s, "amax"), F(2, 4), A([3, 1]),
                               F(2, 2))),
    # ---- views and their copies ------------------------------------------------------------------------
    "unfold_windows": cases(Case(lambda lib, a: a.unfold(1, 2, 1), F(3, 4)),
                            Case(lambda lib, a: a.unfold(0, 2, 2), F(5, 2)),
                    Case(lambda lib, a: a.unfold(0, 1, 1), F())),
    # (PyTorch's gradient for the input is wrong, see tests/test_tensor_functions.py; the source's is compared)
    "as_strided_scatter": cases(Case(lambda lib, s: lib.as_strided_scatter(lib.arange(12.0).to(s.dtype).view(3, 4), s,
                                                                            (2, 2), (4, 2), 3), F(2, 2)),
                                Case(lambda lib, a, s: a.as_strided_scatter(s, (2, 2), (1, 2), 1), F(3, 4), F(2, 2),
                                     grad=False)),
    "view_copy": _copy_cases("view_copy", (2, -1)),
    "t_copy": _copy_cases("t_copy"),
    "transpose_copy": _copy_cases("transpose_copy", 0, 1),
    "permute_copy": _copy_cases("permute_copy", (1, 0)),
    "expand_copy": cases(Case(lambda lib, a: lib.expand_copy(a, (2, 3, 4)), F(3, 4)),
                         Case(lambda lib, a: lib.expand_copy(a[:, :1], [3, -1, 2]), F(3, 4), fd=False)),
    "squeeze_copy": cases(Case(lambda lib, a: lib.squeeze_copy(a), F(3, 1)),
                          Case(lambda lib, a: lib.squeeze_copy(a, (0,)), F(1, 3))),
    "unsqueeze_copy": _copy_cases("unsqueeze_copy", 1),
    "select_copy": _copy_cases("select_copy", 1, 2),
    "slice_copy": _copy_cases("slice_copy", 1, 1, None, 2),
    "diagonal_copy": _copy_cases("diagonal_copy", 1),
    "alias_copy": _copy_cases("alias_copy"),
    "unbind_copy": _copy_cases("unbind_copy", 1),
    "split_copy": cases(Case(lambda lib, a: lib.split_copy(a, 3, 1), F(3, 4)),
                        Case(lambda lib, a: lib.split_with_sizes_copy(a, [1, 2]), F(3, 4))),
    "unfold_copy": _copy_cases("unfold_copy", 1, 2, 1),
    "as_strided_copy": _copy_cases("as_strided_copy", (2, 2), (1, 4)),
    "view_as_real_copy": cases(Case(lambda lib, a: lib.view_as_real_copy(a), C(3))),
    # (PyTorch refuses to record a complex result for it)
    "view_as_complex_copy": cases(Case(lambda lib, a: lib.view_as_complex_copy(a.detach()), F(3, 2), grad=False,
                                       fd=False)),
    "narrow_copy": cases(Case(lambda lib, a: a.narrow_copy(1, 1, 2), F(3, 4)),
                         Case(lambda lib, a: lib.narrow_copy(a, 0, 0, 1), D("int64", 2, 3))),
    "unsafe_split": cases(Case(lambda lib, a: lib.unsafe_split(a, 2, 1), F(3, 4)),
                          Case(lambda lib, a: a.unsafe_split_with_sizes([2, 1]), F(3, 2))),
    # its node's backward raises (tests/test_no_derivative.py)
    "detach_copy": cases(Case(lambda lib, a: lib.detach_copy(a), F(3), grad=False, fd=False)),
}
