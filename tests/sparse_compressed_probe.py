"""The ops a user might call on a 2-D sparse tensor (CSR, CSC, BSR, BSC, COO), and whether PyTorch runs each one.

Run as a script (`python tests/sparse_compressed_probe.py`) to print, for every case and layout, whether PyTorch
succeeds and what tapegrad does (ok, or the exception type); tests/test_sparse_compressed_ops.py sweeps CASES and
asserts tapegrad raises no NotImplementedError wherever PyTorch succeeds."""
import numpy as np

LAYOUTS = ("csr", "csc", "bsr", "bsc", "coo")
_DENSE = np.array([[1., 0., 2., 0.], [0., 0., 3., -4.], [0., 0., 0., 0.], [.5, 0., 0., -1.5]])
_OTHER = np.array([[0., 2., 1., 0.], [0., 0., 0., 5.], [1., 0., 0., 0.], [0., 0., .5, 2.]])


def make(lib, layout, data=_DENSE, dtype=None):
    """A 4 x 4 tensor of `lib` in `layout` (blocks 2 x 2)."""
    d = lib.tensor(data, dtype=dtype or lib.float64)
    return {"csr": lambda: d.to_sparse_csr(), "csc": lambda: d.to_sparse_csc(),
            "bsr": lambda: d.to_sparse_bsr((2, 2)), "bsc": lambda: d.to_sparse_bsc((2, 2)),
            "coo": lambda: d.to_sparse()}[layout]()


def dense(lib, data=_OTHER):
    return lib.tensor(data, dtype=lib.float64)


def _s(lib, layout):
    return make(lib, layout)


def _t(lib, layout):
    return make(lib, layout, _OTHER)


def _no_csc(L, s):
    """PyTorch 2.13 crashes (segmentation fault) on some CSC products of CSC tensors: those cases are not run."""
    if s.layout is L.sparse_csc:
        raise ValueError("not run: PyTorch crashes on this CSC product")
    return s


UNARY = ("abs", "neg", "positive", "sin", "sinh", "tan", "tanh", "asin", "asinh", "atan", "atanh", "sqrt", "relu",
         "sign", "sgn", "expm1", "log1p", "floor", "ceil", "round", "trunc", "frac", "square", "erf", "erfinv",
         "deg2rad", "rad2deg", "signbit", "isnan", "isinf", "isposinf", "isneginf", "nan_to_num", "angle", "conj",
         "conj_physical", "exp", "cos", "sigmoid", "log", "reciprocal", "rsqrt", "erfc", "i0", "sinc", "logit",
         "exp2", "nonzero", "isfinite", "isreal", "clone", "detach", "coalesce", "is_coalesced", "to_dense",
         "t", "numel", "dim", "values", "_nnz", "_values", "_indices", "indices", "is_contiguous", "float", "double",
         "half", "int", "long", "bool", "cfloat", "cdouble", "relu_", "abs_", "neg_", "sin_", "tanh_", "sqrt_",
         "floor_",
         "ceil_", "trunc_", "sign_", "square_", "zero_", "t_", "frac_", "erf_", "expm1_", "log1p_", "asin_", "atan_",
         "sinh_", "tan_", "asinh_", "atanh_", "round_", "deg2rad_", "rad2deg_", "sgn_", "nan_to_num_", "conj_physical_",
         "erfinv_", "positive", "real", "imag", "isnan", "contiguous", "requires_grad_", "cpu", "to_sparse", "to_sparse_csr",
         "to_sparse_csc", "sum")

_BINARY = {
    "mul(s,s)": lambda L, s, t, d: L.mul(s, t), "mul(s,d)": lambda L, s, t, d: L.mul(s, d),
    "mul(d,s)": lambda L, s, t, d: L.mul(d, s), "mul(s,2)": lambda L, s, t, d: L.mul(s, 2),
    "s*2": lambda L, s, t, d: s * 2, "2*s": lambda L, s, t, d: 2 * s, "s*s": lambda L, s, t, d: s * t,
    "s*d": lambda L, s, t, d: s * d, "d*s": lambda L, s, t, d: d * s,
    "s*0-d": lambda L, s, t, d: s * L.tensor(2., dtype=L.float64),
    "mul_(s,s)": lambda L, s, t, d: s.mul_(t), "mul_(s,2)": lambda L, s, t, d: s.mul_(2),
    "mul_(s,d)": lambda L, s, t, d: s.mul_(d), "d.mul_(s)": lambda L, s, t, d: d.mul_(s),
    "div(s,2)": lambda L, s, t, d: s / 2, "div(s,s)": lambda L, s, t, d: s / t, "div(s,d)": lambda L, s, t, d: s / d,
    "div_(s,2)": lambda L, s, t, d: s.div_(2), "true_divide(s,2)": lambda L, s, t, d: L.true_divide(s, 2),
    "s+s": lambda L, s, t, d: s + t, "s-s": lambda L, s, t, d: s - t, "s+d": lambda L, s, t, d: s + d,
    "d+s": lambda L, s, t, d: d + s, "s+2": lambda L, s, t, d: s + 2, "pow(s,2)": lambda L, s, t, d: L.pow(s, 2),
    "s**2": lambda L, s, t, d: s ** 2, "pow(s,0.5)": lambda L, s, t, d: s.pow(0.5),
    "transpose(0,1)": lambda L, s, t, d: s.transpose(0, 1), "transpose(1,0)": lambda L, s, t, d: s.transpose(1, 0),
    "transpose(-1,-2)": lambda L, s, t, d: s.transpose(-1, -2), "transpose(0,0)": lambda L, s, t, d: s.transpose(0, 0),
    "L.transpose": lambda L, s, t, d: L.transpose(s, 0, 1), "L.t": lambda L, s, t, d: L.t(s),
    "mT": lambda L, s, t, d: s.mT, "T": lambda L, s, t, d: s.T, "permute(1,0)": lambda L, s, t, d: s.permute(1, 0),
    "adjoint": lambda L, s, t, d: s.adjoint(),
    "select(0,1)": lambda L, s, t, d: s.select(0, 1), "select(1,2)": lambda L, s, t, d: s.select(1, 2),
    "select(0,-1)": lambda L, s, t, d: s.select(0, -1), "s[1]": lambda L, s, t, d: s[1],
    "s[1,2]": lambda L, s, t, d: s[1, 2], "s[:,1]": lambda L, s, t, d: s[:, 1], "s[1:3]": lambda L, s, t, d: s[1:3],
    "narrow(0,1,2)": lambda L, s, t, d: s.narrow(0, 1, 2), "index_select(0)": lambda L, s, t, d:
        s.index_select(0, L.tensor([2, 0])), "index_select(1)": lambda L, s, t, d: s.index_select(1, L.tensor([3, 1])),
    "addmm(d,s,d)": lambda L, s, t, d: L.addmm(d, s, d), "addmm(d,d,s)": lambda L, s, t, d: L.addmm(d, d, s),
    "addmm(d,s,d,b,a)": lambda L, s, t, d: L.addmm(d, s, d, beta=.5, alpha=2.),
    "addmm(s,s,d)": lambda L, s, t, d: L.addmm(t, s, d),
    "addmm(s,s,s)": lambda L, s, t, d: L.addmm(t, _no_csc(L, s), t),
    "addmm(d,s,s)": lambda L, s, t, d: L.addmm(d, _no_csc(L, s), t),
    "sparse.addmm(d,s,d)": lambda L, s, t, d: L.sparse.addmm(d, s, d),
    "sparse.addmm(s,s,d)": lambda L, s, t, d: L.sparse.addmm(t, s, d),
    "addmm_(d,s,d)": lambda L, s, t, d: d.addmm_(s, dense(L)),
    "mm(s,s)": lambda L, s, t, d: L.mm(s, t), "mm(s,d)": lambda L, s, t, d: L.mm(s, d),
    "mm(d,s)": lambda L, s, t, d: L.mm(d, s), "s@s": lambda L, s, t, d: s @ t,
    "sparse.mm(s,s)": lambda L, s, t, d: L.sparse.mm(s, t), "sparse.mm(s,d)": lambda L, s, t, d: L.sparse.mm(s, d),
    "addmv(v,s,v)": lambda L, s, t, d: L.addmv(d[0], s, d[1]), "mv(s,v)": lambda L, s, t, d: L.mv(s, d[0]),
    "sampled_addmm(s,d,d)": lambda L, s, t, d: L.sparse.sampled_addmm(s, d, d),
    "baddbmm": lambda L, s, t, d: L.baddbmm(d[None], s[None], d[None]),
    "copy_(s)": lambda L, s, t, d: s.copy_(t), "copy_(s same)": lambda L, s, t, d: s.copy_(s.clone() * 2),
    "copy_(d)": lambda L, s, t, d: s.copy_(d), "d.copy_(s)": lambda L, s, t, d: d.copy_(s),
    "zero_": lambda L, s, t, d: s.zero_(), "fill_(0)": lambda L, s, t, d: s.fill_(0),
    "fill_(2)": lambda L, s, t, d: s.fill_(2), "resize_as_(s)": lambda L, s, t, d: s.resize_as_(t),
    "resize_as_(d)": lambda L, s, t, d: s.resize_as_(d),
    "d.sparse_mask(s)": lambda L, s, t, d: d.sparse_mask(s), "s.sparse_mask(s)": lambda L, s, t, d: t.sparse_mask(s),
    "to(float32)": lambda L, s, t, d: s.to(L.float32), "to(int64)": lambda L, s, t, d: s.to(L.int64),
    "to(dtype=)": lambda L, s, t, d: s.to(dtype=L.float32), "type(float32)": lambda L, s, t, d: s.type(L.float32),
    "to('cpu')": lambda L, s, t, d: s.to("cpu"), "to(d)": lambda L, s, t, d: s.to(d),
    "clone": lambda L, s, t, d: s.clone(), "L.clone": lambda L, s, t, d: L.clone(s),
    "L.abs": lambda L, s, t, d: L.abs(s), "L.neg": lambda L, s, t, d: L.neg(s), "-s": lambda L, s, t, d: -s,
    "abs(s)": lambda L, s, t, d: abs(s), "L.sin": lambda L, s, t, d: L.sin(s), "L.tanh": lambda L, s, t, d: L.tanh(s),
    "L.relu": lambda L, s, t, d: L.relu(s), "F.relu": lambda L, s, t, d: L.nn.functional.relu(s),
    "L.sqrt": lambda L, s, t, d: L.sqrt(s), "L.square": lambda L, s, t, d: L.square(s),
    "clamp(min=0)": lambda L, s, t, d: s.clamp(min=0), "clamp(-1,1)": lambda L, s, t, d: s.clamp(-1, 1),
    "threshold": lambda L, s, t, d: L.nn.functional.threshold(s, 0., 0.),
    "softmax(-1)": lambda L, s, t, d: L.sparse.softmax(s, -1), "log_softmax(-1)":
        lambda L, s, t, d: L.sparse.log_softmax(s, -1), "s.softmax(-1)": lambda L, s, t, d: s.softmax(-1),
    "zeros_like": lambda L, s, t, d: L.zeros_like(s), "empty_like": lambda L, s, t, d: L.empty_like(s),
    "ones_like": lambda L, s, t, d: L.ones_like(s), "full_like": lambda L, s, t, d: L.full_like(s, 2.),
    "rand_like": lambda L, s, t, d: L.rand_like(s),
    "cat([s,s])": lambda L, s, t, d: L.cat([s, t]), "cat([s,s],1)": lambda L, s, t, d: L.cat([s, t], 1),
    "stack": lambda L, s, t, d: L.stack([s, t]),
    "eq": lambda L, s, t, d: s == t, "ne(0)": lambda L, s, t, d: s != 0, "ge(0)": lambda L, s, t, d: s >= 0,
    "s.sum()": lambda L, s, t, d: s.sum(), "sparse.sum": lambda L, s, t, d: L.sparse.sum(s),
    "mean": lambda L, s, t, d: s.mean(), "amax": lambda L, s, t, d: s.amax(),
    "sum(0,keepdim)": lambda L, s, t, d: s.sum(0, keepdim=True), "sum(1)": lambda L, s, t, d: s.sum(1),
    "reshape": lambda L, s, t, d: s.reshape(16), "view": lambda L, s, t, d: s.view(16),
    "unsqueeze(0)": lambda L, s, t, d: s.unsqueeze(0), "flatten": lambda L, s, t, d: s.flatten(),
    "where": lambda L, s, t, d: L.where(s != 0, s, d),
    "addcmul": lambda L, s, t, d: L.addcmul(s, s, t), "lerp": lambda L, s, t, d: L.lerp(s, t, .5),
    "add_(s)": lambda L, s, t, d: s.add_(t), "sub_(s)": lambda L, s, t, d: s.sub_(t),
    "d.add_(s)": lambda L, s, t, d: d.add_(s), "mul(s,2.5j)": lambda L, s, t, d: s * 2j,
    "mul(s,True)": lambda L, s, t, d: s * True, "mul(s,tensor2)": lambda L, s, t, d: s * L.tensor(2.),
    "mul(s,d row)": lambda L, s, t, d: s * d[0], "mul(s,d col)": lambda L, s, t, d: s * d[:, :1],
    "mul(s, s int)": lambda L, s, t, d: s * t.to(L.int64), "mul(s int,2.5)": lambda L, s, t, d: s.to(L.int64) * 2.5,
    "mul(s,s float32)": lambda L, s, t, d: s * t.to(L.float32),
    "is_same_size": lambda L, s, t, d: s.is_same_size(t), "element_size": lambda L, s, t, d: s.element_size(),
    "sparse_resize_": lambda L, s, t, d: s.sparse_resize_((4, 4), 2, 0),
    "sparse_resize_and_clear_": lambda L, s, t, d: s.sparse_resize_and_clear_((4, 4), 2, 0),
    "unbind": lambda L, s, t, d: s.unbind(0), "__len__": lambda L, s, t, d: len(s),
    "dense_dim": lambda L, s, t, d: s.dense_dim(), "sparse_dim": lambda L, s, t, d: s.sparse_dim(),
    "F.linear(d,s)": lambda L, s, t, d: L.nn.functional.linear(d, s),
    "F.linear(d,s,b)": lambda L, s, t, d: L.nn.functional.linear(d, s, d[0]),
    "matmul(s,v)": lambda L, s, t, d: s @ d[0], "matmul(v,s)": lambda L, s, t, d: d[0] @ s,
    "tril": lambda L, s, t, d: s.tril(), "triu": lambda L, s, t, d: s.triu(),
    "diagonal": lambda L, s, t, d: s.diagonal(),
    "isclose": lambda L, s, t, d: L.isclose(s, t), "allclose": lambda L, s, t, d: L.allclose(s, t),
    "equal": lambda L, s, t, d: L.equal(s, t), "max": lambda L, s, t, d: s.max(),
    "norm": lambda L, s, t, d: s.norm(), "sign_": lambda L, s, t, d: s.sign_(),
    "floor_divide(s,2)": lambda L, s, t, d: s // 2, "remainder": lambda L, s, t, d: s % 2,
    "addmm(d,s,d) out": lambda L, s, t, d: L.addmm(d, s, d, out=L.empty(4, 4, dtype=L.float64)),
}

CASES = {**{name: (lambda n: lambda L, s, t, d: getattr(s, n)())(name) for name in UNARY}, **_BINARY}


def run(lib, case, layout):
    """Run one case; returns ("ok", result) or (exception type name, message)."""
    try:
        return "ok", CASES[case](lib, _s(lib, layout), _t(lib, layout), dense(lib))
    except Exception as e:   # noqa: BLE001 (the probe records every outcome)
        return type(e).__name__, str(e).split("\n")[0][:160]


def table(torch, tapegrad, cases=None, layouts=LAYOUTS):
    """(case, layout, torch outcome, tapegrad outcome, tapegrad message) for every pair."""
    rows = []
    for case in cases or CASES:
        for layout in layouts:
            (tk, _), (gk, gm) = run(torch, case, layout), run(tapegrad, case, layout)
            rows.append((case, layout, tk, gk, gm))
    return rows


if __name__ == "__main__":
    import sys
    import warnings

    import torch
    import tapegrad
    warnings.simplefilter("ignore")
    only_gaps = "--gaps" in sys.argv
    for case, layout, tk, gk, gm in table(torch, tapegrad):
        gap = tk == "ok" and gk != "ok"
        if not only_gaps or gap:
            note = gm[:90] if gk != "ok" else ""
            print(f"{'GAP ' if gap else '    '}{case:24} {layout:4} torch={tk:20} tapegrad={gk:20} {note}")
