"""Where PyTorch's CPU build refuses a unary op that keeps zeros on a sparse tensor: in the forward (square and
nan_to_num of a compressed tensor) or in its backward, whose formula needs an op the layout lacks (sin's cos on
COO, abs's sign product on CSC, ...). tapegrad computes every one; these tables make it refuse where PyTorch does,
with PyTorch's exception type and message, the backward ones through a pre-hook on the op's node."""

_LAYOUTS = {"SparseCsr": "csr", "SparseCsc": "csc", "SparseBsr": "bsr", "SparseBsc": "bsc", "Sparse": "coo"}
_TRIG = ("asinh", "atanh", "erf", "erfinv", "sin", "sinh", "tan", "tanh")   # "unsupported tensor layout" on all four


def _backward_table():
    """(op, layout) -> (exception type, message template: {layout}, {shape})."""
    unsupported = (RuntimeError, "unsupported tensor layout: {layout}")
    add = (RuntimeError, "add: expected 'self' and 'other' to have same size, but self has size [] while other has "
                         "size {shape}")
    table = {(op, kind): unsupported for op in _TRIG for kind in ("csr", "csc", "bsr", "bsc")}
    table.update({("sqrt", "csr"): unsupported, ("asin", "csr"): add, ("atan", "csr"): add, ("expm1", "csr"): add,
                  ("expm1", "csc"): add})
    csc_product = (RuntimeError, "Expected result Tensor to be of format CSR")
    block_product = (RuntimeError, "empty_sparse_compressed expected sparse compressed (non-block) tensor layout but "
                                   "got {layout}")
    for op in ("abs", "asin", "atan", "log1p"):
        table.update({(op, "csc"): csc_product, (op, "bsr"): block_product, (op, "bsc"): block_product})
    for op in ("deg2rad", "rad2deg", "sqrt"):
        table.update({(op, "csc"): (RuntimeError, "col_indices expected sparse row compressed tensor layout but got "
                                                  "{layout}"),
                      (op, "bsr"): (RuntimeError, "sparse compressed layout must be SparseCsr but got {layout}"),
                      (op, "bsc"): (RuntimeError, "col_indices expected sparse row compressed tensor layout but got "
                                                  "{layout}")})
    assert_failed = (RuntimeError, "src.layout() == kSparseCsr || src.layout() == kSparseCsc INTERNAL ASSERT FAILED")
    table.update({("expm1", "bsr"): assert_failed, ("expm1", "bsc"): assert_failed})
    for kind in ("csr", "csc", "bsr", "bsc", "coo"):
        backend = "SparseCPU" if kind == "coo" else "SparseCsrCPU"
        table[("sgn", kind)] = (NotImplementedError, "Could not run 'aten::_efficientzerotensor' with arguments from "
                                                     f"the '{backend}' backend.")

    def missing(name):
        return NotImplementedError, f"Could not run 'aten::{name}' with arguments from the 'SparseCPU' backend."
    for op in ("asin", "asinh", "atan", "expm1", "tan"):
        table[(op, "coo")] = (RuntimeError, "add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    table.update({("atanh", "coo"): (RuntimeError, "memory format option is only supported by strided tensors"),
                  ("erf", "coo"): missing("exp"), ("erfinv", "coo"): missing("exp"),
                  ("nan_to_num", "coo"): missing("ne.Scalar"), ("sin", "coo"): missing("cos"),
                  ("sinh", "coo"): missing("cosh"), ("tanh", "coo"): missing("tanh_backward"),
                  ("sqrt", "coo"): (RuntimeError, "Sparse division requires a scalar or zero-dim dense tensor divisor "
                                                  "(got shape {shape} for divisor)")})
    return table


_BACKWARD = _backward_table()


def check_forward(name, s):
    """PyTorch's forward refusals of square and nan_to_num on compressed tensors."""
    if not s._sp_compressed:
        return
    if name == "square":
        raise RuntimeError(f"unsupported tensor layout: {s._layout_name}. Multiply the tensor by itself (s * s) "
                           "instead.")
    if name == "nan_to_num":
        raise NotImplementedError("Could not run 'aten::nan_to_num.out' with arguments from the 'SparseCsrCPU' "
                                  "backend. Call .to_dense() first.")


def refuse_backward(name, s, out):
    """Make out's node refuse its backward where PyTorch's does for op `name` on s's layout."""
    entry = _BACKWARD.get((name, _LAYOUTS.get(s._layout_name)))
    if entry is None or not out.requires_grad:
        return out
    kind, template = entry
    message = template.format(layout=s._layout_name, shape=list(s.shape))

    def refuse(grad_outputs):
        raise kind(f"{message} (PyTorch cannot compute the gradient of {name} of a {s._layout_name} tensor). Apply "
                   f"{name} to .to_dense() instead.")
    out.grad_fn.register_prehook(refuse)
    return out
