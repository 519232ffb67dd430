"""grad_fn names against PyTorch over generated expressions.

Each expression runs in tapegrad and in PyTorch on the same float64 leaves requiring grad, and every
output's grad_fn is compared: `type(grad_fn).__name__`, `grad_fn.name()`, the repr's `grad_fn=<...>`
and the structure below it (names and output indices through `next_functions`, down to the leaves).

The expressions come from two sources:
* every case of tests/op_specs*.py (the inputs each op-table entry is checked on), and
* every op-table entry PyTorch also has as a function, method or nn.functional function (and the
  public functions of COMPOSITES, which record other entries' ops), called as
  a function, a method and in place, with each argument form of ARG_FORMS (tensor/tensor,
  tensor/Python scalar, scalar/tensor, dim with and without keepdim, min-only/max-only/both, ...) on
  operands of 1, 2 and 3 dims; the forms PyTorch accepts are compared, so the overloads PyTorch picks
  by argument kind, static and rank are all reached. Operators (+ - * / ** % // @, reflected and in
  place) are generated the same way.

Expressions whose nodes still differ are listed in KNOWN_DIFFERENCES (per op and source, with the
reason), not hidden: the test fails when a listed op starts to match (remove it then) as when an unlisted
op differs. An expression PyTorch accepts and tapegrad raises on is a difference too, unless REFUSED
lists it with the reason. Where PyTorch records a composite (matmul, tensordot, kron, linear, einsum,
losses, normalize, rms_norm, matrix_norm, attention's math path, reshape's clone + _unsafe_view, circular
padding's slice copies), tapegrad's public function records the same ops; what remains listed is fused on
purpose or differs for the reason given.
"""
import re
import zlib

import numpy as np
import pytest
from conftest import require

import tapegrad
from tapegrad._ops._registry import OPS

from test_op_table import SPECS, _draw, _flatten

torch = require("torch")

T, S, L = "T", "S", "L"          # a tensor, the Python scalar 2, the list [1, 2]
# Positional argument kinds, then keyword arguments (a T or S value is drawn like a positional one).
ARG_FORMS = [
    (T,), (T, T), (T, S), (S, T), (T, T, T), (T, T, S), (T, S, S), (T, S, T), (T, L),
    ((T,), {"dim": 1}), ((T,), {"dim": 1, "keepdim": True}), ((T,), {"dim": (0, 1)}),
    ((T, S), {"keepdim": True}),
    ((T,), {"min": S}), ((T,), {"max": S}), ((T,), {"min": T}), ((T,), {"max": T}),
    ((T,), {"min": S, "max": S}), ((T,), {"min": T, "max": T}),
    ((T,), {"decimals": 1}), ((T, T), {"alpha": 2}), ((T, S), {"alpha": 2}),
    ((T, T), {"rounding_mode": "floor"}), ((T, S), {"rounding_mode": "trunc"}),
]
SHAPES = [(3,), (3, 3), (2, 3, 3)]
OPERATORS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "pow": "**", "remainder": "%",
             "floor_divide": "//", "matmul": "@"}

# "generated:<op>" / "spec:<op>" whose nodes still differ from PyTorch's (see the module docstring).
KNOWN_DIFFERENCES = {
    # recurrent layers: PyTorch's CPU kernels unroll them, a dozen nodes per step and layer (addmm,
    # unsafe_split, sigmoid, tanh, mul, add, stack); tapegrad runs one scan per layer, whose single node keeps
    # the compiled program and its compile time independent of the sequence length
    "spec:lstm", "spec:rnn",
    # a sparse operand made by to_sparse() (or a sparse leaf) takes a gradient on another pattern than its
    # own through a route term (sparse/_routes.py): its values are read detached ((None, 0) in
    # next_functions) and the route node (SparseRouteBackward0) stands where PyTorch lists ToSparseBackward
    # (addmv with a compressed matrix: the same, below one AddmvBackward0 as PyTorch's)
    "spec:sparse_route", "spec:sparse_addmv",
    # PyTorch's varlen_attn runs on CUDA only: its spec's oracle is SDPA sequence by sequence (CatBackward0);
    # tapegrad's node has the name of PyTorch's varlen op, checked on meta tensors in tests/test_varlen_attn.py
    "spec:varlen_attention",
}


def _leaves(lib, shapes, seed):
    rng = np.random.default_rng(seed)
    return [lib.tensor(rng.uniform(0.5, 1.5, s)).requires_grad_(True) for s in shapes]


def _graph(fn):
    """A grad_fn's class name, name() and the same for everything below it, as a DAG: a node reached a
    second time is written as a back-reference (its visit number), so shared subgraphs (an RNN's weights,
    reused hidden states) cost once and not once per path."""
    seen = {}
    keep = []  # holds every node while the walk runs so that id() stays unique

    def visit(f):
        if f is None:
            return None
        if id(f) in seen:
            return ("seen", seen[id(f)])
        seen[id(f)] = len(seen)
        keep.append(f)
        return (type(f).__name__, f.name(), tuple((visit(g), i) for g, i in f.next_functions))

    return visit(fn)


def _observe(out):
    """Per tensor output: (graph below grad_fn, the grad_fn=<...> of its repr)."""
    found = []
    for t in _flatten(out):
        if not hasattr(t, "grad_fn"):
            continue
        shown = re.search(r"grad_fn=<([^>]*)>", repr(t))
        found.append((_graph(t.grad_fn), shown and shown.group(1)))
    return found


def _run(build):
    """(torch observation, tapegrad observation); (None, None) where PyTorch rejects the expression (not
    one of its overloads), and for tapegrad the exception it raised where PyTorch accepts it."""
    try:
        theirs = _observe(build(torch))
    except Exception:  # noqa: BLE001
        return None, None
    try:
        return theirs, _observe(build(tapegrad))
    except Exception as error:  # noqa: BLE001  reported as a difference, never skipped
        return theirs, error


# ---- generated expressions ------------------------------------------------------------------------

def _split_form(form):
    return (form, {}) if isinstance(form[-1], str) else form


def _shape_choices(kinds):
    n = sum(k == T for k in kinds)
    if n == 1:
        return [(s,) for s in SHAPES]
    if n == 2:
        return [(SHAPES[1], SHAPES[1]), (SHAPES[0], SHAPES[0]), (SHAPES[1], SHAPES[0]), (SHAPES[0], SHAPES[1]),
                (SHAPES[2], SHAPES[2])]
    return [(SHAPES[1],) * n, (SHAPES[0],) * n]


def _materialise(lib, kinds, shapes, seed):
    tensors = iter(_leaves(lib, shapes, seed))
    return [next(tensors) if k == T else 2 if k == S else [1, 2] for k in kinds]


def _callers(name):
    """(style, call(lib, args, kwargs)) for the ways PyTorch exposes `name`."""
    out = []
    if callable(getattr(torch, name, None)):
        out.append(("torch", lambda lib, a, kw: getattr(lib, name)(*a, **kw)))
    if callable(getattr(torch.nn.functional, name, None)) and not callable(getattr(torch, name, None)):
        out.append(("F", lambda lib, a, kw: getattr(lib.nn.functional, name)(*a, **kw)))
    if callable(getattr(torch.Tensor, name, None)):
        out.append(("method", lambda lib, a, kw: getattr(a[0], name)(*a[1:], **kw)))
    if callable(getattr(torch.Tensor, name + "_", None)):
        out.append(("inplace", lambda lib, a, kw: getattr(a[0].clone(), name + "_")(*a[1:], **kw)))
    if name in OPERATORS:
        sym = OPERATORS[name]
        out.append(("operator", lambda lib, a, kw: eval(f"a[0] {sym} a[1]") if len(a) == 2 and not kw else
                    1 / 0))

        def augmented(lib, a, kw):
            if len(a) != 2 or kw or not isinstance(a[0], lib.Tensor):
                raise TypeError("not an augmented assignment")
            target = a[0].clone()
            return eval(f"target.__i{_DUNDER[sym]}__(a[1])")
        out.append(("augmented", augmented))
    return out


_DUNDER = {"+": "add", "-": "sub", "*": "mul", "/": "truediv", "**": "pow", "%": "mod", "//": "floordiv",
           "@": "matmul"}


def _generated(name):
    """Every accepted (description, build) expression for op-table entry `name`."""
    for style, call in _callers(name):
        for form in ARG_FORMS:
            kinds, kwargs = _split_form(form)
            kw_kinds = {k: v for k, v in kwargs.items() if v in (T, S)}
            tensor_kinds = list(kinds) + [v for v in kw_kinds.values()]
            for shapes in _shape_choices(tensor_kinds):
                seed = zlib.crc32(f"{name}/{style}/{form}/{shapes}".encode())

                def build(lib, kinds=kinds, kwargs=kwargs, kw_kinds=kw_kinds, shapes=shapes, seed=seed,
                          call=call):
                    values = _materialise(lib, list(kinds) + list(kw_kinds.values()), shapes, seed)
                    args = values[:len(kinds)]
                    kw = dict(kwargs)
                    kw.update(zip(kw_kinds, values[len(kinds):]))
                    return call(lib, args, kw)
                yield f"{style} {form} {shapes}", build


# Public functions that record other entries' ops, as PyTorch's composites do (no entry of their own).
COMPOSITES = {"linear", "bilinear", "l1_loss", "kl_div", "normalize", "rms_norm", "cosine_embedding_loss", "kron",
              "tensordot", "real", "imag", "einsum", "logdet", "hinge_embedding_loss", "margin_ranking_loss",
              "triplet_margin_loss", "poisson_nll_loss", "pairwise_distance", "multilabel_soft_margin_loss",
              "gaussian_nll_loss", "local_response_norm", "triplet_margin_with_distance_loss"}
GENERATED_OPS = sorted(name for name in set(OPS) | COMPOSITES if _callers(name))


# Expressions PyTorch accepts and tapegrad refuses on purpose: (key, start of the description) -> reason.
# Any other expression tapegrad raises on where PyTorch accepts it is a difference.
REFUSED = {
    ("generated:index", "method"): "Tensor.index(positions, dims) binds first-class dimensions (functorch.dim), "
                                   "which tapegrad does not have; it is not the index op",
}


def _mismatches(key, expressions):
    found = []
    for description, build in expressions:
        theirs, ours = _run(build)
        if isinstance(ours, Exception):
            if not any(k == key and description.startswith(d) for k, d in REFUSED):
                found.append(f"{description}: tapegrad raises {type(ours).__name__}: {ours}, PyTorch accepts it")
            continue
        if theirs is None:
            continue
        if ours != theirs:   # a graph where PyTorch's output has none (or none where it has one) differs too
            found.append(f"{description}: tapegrad {_summary(ours)}, PyTorch {_summary(theirs)}")
    return found


def _check(key, mismatches):
    if key in KNOWN_DIFFERENCES:
        assert mismatches, f"{key} now names its nodes as PyTorch: remove it from KNOWN_DIFFERENCES"
    else:
        assert not mismatches, "\n".join(mismatches)


def _summary(observed):
    return [(g and g[0], g and g[1], shown, g and [(c and c[0], i) for c, i in g[2]]) for g, shown in observed]


@pytest.mark.parametrize("name", GENERATED_OPS)
def test_generated_calls_name_nodes_as_pytorch(name):
    _check(f"generated:{name}", _mismatches(f"generated:{name}", _generated(name)))


# ---- the op specs ---------------------------------------------------------------------------------

def _spec_expressions(name):
    for index, case in enumerate(SPECS[name]):
        arrays = _draw(case, name, index, "float64")

        def build(lib, case=case, arrays=arrays):
            inputs = [lib.tensor(a) for a in arrays]
            for t, a in zip(inputs, arrays):
                if a.dtype.kind in "fc":
                    t.requires_grad_(True)
            return case.fn(lib, *inputs)
        yield f"{name} case {index}", build


@pytest.mark.parametrize("name", sorted(SPECS))
def test_spec_cases_name_nodes_as_pytorch(name):
    _check(f"spec:{name}", _mismatches(f"spec:{name}", _spec_expressions(name)))


# ---- calls with arguments the generated forms and the specs do not reach -----------------------------

def _f(lib):
    return lib.nn.functional


CALLS = {   # name: (leaf shapes, the call)
    # the norms without weight or bias: PyTorch's node lists both `Tensor?` arguments as (None, 0)
    "batch_norm_train_plain": ([(4, 3, 5)], lambda lib, x: _f(lib).batch_norm(x, None, None, training=True)),
    "batch_norm_eval_plain": ([(4, 3)], lambda lib, x: _f(lib).batch_norm(
        x, lib.zeros(3, dtype=x.dtype), lib.ones(3, dtype=x.dtype))),
    "batch_norm_bias_only": ([(4, 3), (3,)], lambda lib, x, b: _f(lib).batch_norm(x, None, None, bias=b,
                                                                                   training=True)),
    "instance_norm_plain": ([(2, 3, 4)], lambda lib, x: _f(lib).instance_norm(x)),
    "layer_norm_plain": ([(2, 3, 4)], lambda lib, x: _f(lib).layer_norm(x, (3, 4))),
    "layer_norm_weight_only": ([(2, 3, 4), (4,)], lambda lib, x, w: _f(lib).layer_norm(x, (4,), w)),
    "group_norm_plain": ([(3, 4, 5)], lambda lib, x: _f(lib).group_norm(x, 2)),
    # the Stirling term's products by a number are ATen's mul.Scalar (MulBackward1)
    "poisson_nll_loss_full": ([(3, 4), (3, 4)], lambda lib, x, t: _f(lib).poisson_nll_loss(x, t * 2, log_input=False,
                                                                                              full=True)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_calls_name_nodes_as_pytorch(name):
    shapes, call = CALLS[name]
    expressions = [(name, lambda lib: call(lib, *_leaves(lib, shapes, zlib.crc32(name.encode()))))]
    _check(f"call:{name}", _mismatches(f"call:{name}", expressions))
