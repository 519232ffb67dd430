"""PyTorch's node name for a gradient computed by a recorded backward.

PyTorch prints, for a gradient computed with create_graph=True, the node of
the last op of its backward formula (`3 * x**2 * grad` ends in a mul:
`<MulBackward0>`). A recorded backward is one traced JAX function; the closest
equivalent is the last primitive that produced each output, named after the
PyTorch op that computes the same thing. Formulas differ between the two
libraries (PyTorch has fused backward ops such as TanhBackwardBackward0), so
the name matches where both formulas end in the same op.
"""
import math
import re

from jax.extend.core import Var

# Primitives that only move a value through a call boundary or re-tag its type: look through them.
_TRANSPARENT = {"pjit", "closed_call", "core_call", "custom_jvp_call", "custom_vjp_call", "custom_vjp_call_jaxpr",
                "remat", "checkpoint", "copy", "copy_p", "jit"}

_NAMES = {
    "mul": "MulBackward0", "add": "AddBackward0", "add_any": "AddBackward0", "sub": "SubBackward0",
    "neg": "NegBackward0", "div": "DivBackward0", "exp": "ExpBackward0", "exp2": "Exp2Backward0",
    "log": "LogBackward0", "log1p": "Log1PBackward0", "expm1": "Expm1Backward0", "integer_pow": "PowBackward0",
    "pow": "PowBackward1", "square": "PowBackward0", "sqrt": "SqrtBackward0", "rsqrt": "RsqrtBackward0",
    "tanh": "TanhBackward0", "logistic": "SigmoidBackward0", "sin": "SinBackward0", "cos": "CosBackward0",
    "tan": "TanBackward0", "abs": "AbsBackward0", "sign": "SignBackward0", "max": "MaximumBackward0",
    "min": "MinimumBackward0", "select_n": "WhereBackward0", "reduce_sum": "SumBackward1",
    "reduce_max": "MaxBackward1", "reduce_min": "MinBackward1", "broadcast_in_dim": "ExpandBackward0",
    "reshape": "ViewBackward0", "squeeze": "SqueezeBackward1", "expand_dims": "UnsqueezeBackward0",
    "slice": "SliceBackward0", "dynamic_slice": "SliceBackward0", "pad": "ConstantPadNdBackward0",
    "concatenate": "CatBackward0", "cumsum": "CumsumBackward0", "gather": "IndexBackward0",
    "scatter-add": "IndexPutBackward0", "scatter_add": "IndexPutBackward0", "dynamic_update_slice": "CopySlices",
    "conj": "ConjBackward0", "real": "RealBackward0", "imag": "ImagBackward0", "complex": "ComplexBackward0",
    "convert_element_type": "ToCopyBackward0", "erf": "ErfBackward0", "atan2": "Atan2Backward0",
    "clamp": "ClampBackward1", "conv_general_dilated": "ConvolutionBackward0", "rev": "FlipBackward0",
    "sinh": "SinhBackward0", "cosh": "CoshBackward0", "asin": "AsinBackward0", "acos": "AcosBackward0",
    "atan": "AtanBackward0", "cumprod": "CumprodBackward0", "sort": "SortBackward0",
}
# A formula ending in an op without a PyTorch counterpart: its last step is almost always the chain
# rule's product with the incoming gradient.
FALLBACK = "MulBackward0"


def output_names(closed_jaxpr):
    """One PyTorch node name per output of a traced backward."""
    jaxpr = closed_jaxpr.jaxpr
    return [_name_of(jaxpr, v) for v in jaxpr.outvars]


def output_dependencies(closed_jaxpr, through_ties=True):
    """For each output, the positions of the inputs it is differentiably computed from.

    Values of integer or bool dtype carry no gradient (PyTorch's comparisons and masks are not
    differentiable), so a dependency through one is cut: max()'s backward, `where(x == max, g, 0)`,
    depends on the incoming gradient alone and does not require grad.
    through_ties=False: the inputs a gradient flows back to. An UNDEFINED_TIE makes its gradients depend on
    values whose derivative PyTorch's formula leaves undefined; it is followed only with through_ties."""
    jaxpr = closed_jaxpr.jaxpr
    return _dependencies(jaxpr, [frozenset([i]) for i in range(len(jaxpr.invars))], through_ties)


_EMPTY = frozenset()
# call-like primitives whose body is differentiated as it is: look inside for exact dependencies
_CALLS = {"pjit", "closed_call", "core_call", "remat", "checkpoint", "jit"}
# The name of the call that ties a fused kernel's gradients to the values the kernel reads (see
# autograd._higher._tied) where PyTorch's double backward gives those values no gradient (an undefined
# tensor: layer_norm's weight gets none from the weight's own gradient): its inputs are the gradients,
# then the tied values; its outputs are the gradients.
UNDEFINED_TIE = "tapegrad_undefined_tie"
# The name of the call around a backward kernel PyTorch cannot differentiate (Op.no_double_backward): this
# prefix, then the index of its error in NO_DERIVATIVE_ERRORS. Its inputs are the gradients, then the values
# the kernel reads; its outputs are the gradients.
NO_DERIVATIVE = "tapegrad_no_derivative_"
NO_DERIVATIVE_ERRORS = []
# PyTorch's node for a backward kernel without a derivative of its own, as a recorded gradient prints it
NOT_IMPLEMENTED = "torch::autograd::NotImplemented"


def no_derivative_name(error):
    """The name of the call marking a kernel whose derivative raises `error` (exception type, message)."""
    if error not in NO_DERIVATIVE_ERRORS:
        NO_DERIVATIVE_ERRORS.append(error)
    return NO_DERIVATIVE + str(NO_DERIVATIVE_ERRORS.index(error))


def output_crossings(closed_jaxpr):
    """For each output, {input position: (exception type, message)} of the inputs whose dependency reaches it
    through a call marked NO_DERIVATIVE: its derivative toward them raises that error."""
    jaxpr = closed_jaxpr.jaxpr
    n = len(jaxpr.invars)
    outs = _crossings(jaxpr, [frozenset([i]) for i in range(n)], [_NONE] * n)
    return [dict(crossed) for _, crossed in outs]


_NONE = frozenset()


def _crossings(jaxpr, in_deps, in_crossed):
    """(dependencies, crossed) per output: crossed is a frozenset of (input position, error) pairs."""
    state = dict(zip(jaxpr.invars, zip(in_deps, in_crossed)))
    for eqn in jaxpr.eqns:
        ins = [state.get(v, (_EMPTY, _NONE)) if isinstance(v, Var) else (_EMPTY, _NONE) for v in eqn.invars]
        deps, crossed = _EMPTY.union(*(d for d, _ in ins)), _NONE.union(*(c for _, c in ins))
        inner = _inner_jaxpr(eqn) if eqn.primitive.name in _CALLS else None
        name = str(eqn.params.get("name", "")) if inner is not None else ""
        if name.startswith(NO_DERIVATIVE):
            error = NO_DERIVATIVE_ERRORS[int(name[len(NO_DERIVATIVE):])]
            outs = [(deps, crossed | {(i, error) for i in deps})] * len(eqn.outvars)
        elif inner is not None and len(inner.invars) == len(ins) and len(inner.outvars) == len(eqn.outvars):
            outs = _crossings(inner, [d for d, _ in ins], [c for _, c in ins])
        else:
            outs = [(deps, crossed)] * len(eqn.outvars)
        for o, dc in zip(eqn.outvars, outs):
            state[o] = dc if _carries_gradient(o) else (_EMPTY, _NONE)
    return [state.get(v, (_EMPTY, _NONE)) if isinstance(v, Var) else (_EMPTY, _NONE) for v in jaxpr.outvars]


def _dependencies(jaxpr, in_deps, through_ties=True):
    deps = dict(zip(jaxpr.invars, in_deps))
    for eqn in jaxpr.eqns:
        ins = [deps.get(v, _EMPTY) if isinstance(v, Var) else _EMPTY for v in eqn.invars]
        inner = _inner_jaxpr(eqn) if eqn.primitive.name in _CALLS else None
        if inner is not None and not through_ties and eqn.params.get("name") == UNDEFINED_TIE:
            outs = ins[:len(eqn.outvars)]
        elif inner is not None and len(inner.invars) == len(ins) and len(inner.outvars) == len(eqn.outvars):
            outs = _dependencies(inner, ins, through_ties)
        else:
            outs = [_EMPTY.union(*ins)] * len(eqn.outvars)
        for o, d in zip(eqn.outvars, outs):
            deps[o] = d if _carries_gradient(o) else _EMPTY
    return [deps.get(v, _EMPTY) if isinstance(v, Var) else _EMPTY for v in jaxpr.outvars]


def _carries_gradient(var):
    aval = getattr(var, "aval", None)
    dtype = getattr(aval, "dtype", None)
    return dtype is None or getattr(dtype, "kind", "f") in "fcV"


def _name_of(jaxpr, var, depth=0):
    eqn = _producer(jaxpr, var)
    if eqn is None or depth > 32:
        return FALLBACK
    prim = eqn.primitive.name
    if prim in _TRANSPARENT:
        if re.search(r"Backward\d+$", str(eqn.params.get("name", ""))) or eqn.params.get("name") == NOT_IMPLEMENTED:
            return eqn.params["name"]   # a formula named after PyTorch's node for it (_registry.named_formula)
        inner = _inner_jaxpr(eqn)
        if inner is not None:
            return _name_of(inner, inner.outvars[list(eqn.outvars).index(var)], depth + 1)
        return _name_of(jaxpr, eqn.invars[0], depth + 1) if eqn.invars else FALLBACK
    if prim == "convert_element_type" and eqn.invars and _same_dtype(eqn.invars[0], var):
        return _name_of(jaxpr, eqn.invars[0], depth + 1)   # a weak-type re-tag, not a cast
    if prim == "optimization_barrier":   # a fused backward's tie (autograd._higher._tied): values pass through
        return _name_of(jaxpr, eqn.invars[list(eqn.outvars).index(var)], depth + 1)
    if prim == "dot_general":
        return _dot_name(eqn)
    if prim == "reduce_sum" and not var.aval.shape:
        return "SumBackward0"   # (PyTorch's sum_to a 0-d shape is sum() of all elements)
    if prim == "broadcast_in_dim" and _kept_dims_sum(jaxpr, eqn):
        return "SumBackward1"   # (sum_to a shape of ones: sum(dims, keepdim=True))
    if prim == "transpose":
        return "TBackward0" if len(var.aval.shape) == 2 else "PermuteBackward0"
    return _NAMES.get(prim, FALLBACK)


def _kept_dims_sum(jaxpr, eqn):
    """Whether a broadcast only puts back the unit dims of the sum it follows (JAX's keepdim sum)."""
    source = eqn.invars[0]
    producer = _producer(jaxpr, source)
    return (producer is not None and producer.primitive.name == "reduce_sum"
            and math.prod(source.aval.shape) == math.prod(eqn.outvars[0].aval.shape))


def _producer(jaxpr, var):
    if not isinstance(var, Var):
        return None
    for eqn in reversed(jaxpr.eqns):
        if any(o is var for o in eqn.outvars):
            return eqn
    return None


def _inner_jaxpr(eqn):
    for key in ("jaxpr", "call_jaxpr", "fun_jaxpr"):
        inner = eqn.params.get(key)
        if inner is not None:
            return getattr(inner, "jaxpr", inner)
    return None


def _same_dtype(a, b):
    return getattr(a, "aval", None) is not None and a.aval.dtype == b.aval.dtype


def _dot_name(eqn):
    (contract, _), (batch, _) = eqn.params["dimension_numbers"]
    ranks = [len(v.aval.shape) for v in eqn.invars]
    if not contract:
        return "MulBackward0"   # an outer product: PyTorch multiplies unsqueezed operands
    if batch:
        return "BmmBackward0"
    if ranks == [1, 1]:
        return "DotBackward0"
    if 1 in ranks:
        return "MvBackward0"
    return "MmBackward0"
