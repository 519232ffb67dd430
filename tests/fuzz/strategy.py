"""The hypothesis strategy `programs()`: random, mostly valid PyTorch programs over a pool of tensors.

Each generator below writes one step's code and updates the abstract `State`, which it also reads to
pick operands that fit (broadcasting shapes, matmul partners, tensors that require grad, leaves with a
.grad). A small share of steps is left invalid on purpose, so that errors are compared too.
"""
import sys

import numpy as np
from hypothesis import strategies as st

from . import breadth
from .program import Program, Step
from .shapes import broadcast, broadcasts_to, matmul_shape, numel, reduced
from .state import FLOATS, State, Var, allowed, floating, promote

SCALARS = [2, -1, 3, 0.5, 1.5, -2.0]
DTYPES = ["float32", "float64"]
OTHER_DTYPES = ["int64", "bool"]   # (a leaf in ten: PyTorch's promotion, integer kernels and their refusals)
MAX_STEPS = 14


def _higher_order():
    return sys.modules[__package__].HIGHER_ORDER


def _pick(draw, items):
    return draw(st.sampled_from(items))


def _chance(draw, p_true):
    """A boolean that is True about p_true of the time (shrinks toward False)."""
    return draw(st.integers(0, 99)) < p_true * 100


def _literal(values):
    if np.ndim(values) == 0:
        return repr(values.item() if isinstance(values, np.generic) else values)
    return "[" + ", ".join(_literal(v) for v in values) + "]"


# ---- leaves -------------------------------------------------------------------------------------------

def _leaf_shape(draw, s):
    existing = list(s.vars.values())
    how = _pick(draw, ["fresh", "like", "like", "matmul"]) if existing else "fresh"
    if how == "fresh":
        return tuple(draw(st.lists(st.integers(1, 3), max_size=3)))
    if how == "like":
        v = _pick(draw, existing)
        shape = [1 if _chance(draw, 0.3) else d for d in v.shape]
        return tuple(shape[draw(st.integers(0, len(shape))):])
    partners = [v for v in existing if v.shape]
    if not partners:
        return (draw(st.integers(1, 3)),)
    k = _pick(draw, partners).shape[-1]
    return (k,) if _chance(draw, 0.3) else (k, draw(st.integers(1, 3)))


def leaf(draw, s):
    shape = _leaf_shape(draw, s)
    dtype = _pick(draw, OTHER_DTYPES) if _chance(draw, 0.1) else _pick(draw, DTYPES)
    requires_grad = dtype in FLOATS and not _chance(draw, 0.3)
    seed = draw(st.integers(0, 2 ** 16))
    values = np.random.default_rng(seed).integers(-8, 9, size=shape)
    values = values / 4 if dtype in FLOATS else values > 0 if dtype == "bool" else values // 2
    name = s.fresh()
    s.add(Var(name, shape, dtype, requires_grad, True, root=name,
              leaves=frozenset({name}) if requires_grad else frozenset()))
    flag = ", requires_grad=True" if requires_grad else ""
    return f"{name} = torch.tensor({_literal(values)}, dtype=torch.{dtype}{flag})"


# ---- elementwise, reductions, matmul ---------------------------------------------------------------------

UNARY = ["{x}.exp()", "{x}.tanh()", "{x}.sigmoid()", "{x}.sin()", "{x}.cos()", "{x}.abs()", "-{x}",
         "{x}.relu()", "{x}.pow(2)", "{x} ** 3", "torch.tanh({x})", "{x}.clamp(min=-1.0, max=1.0)",
         "{x}.clamp(min=0.5)", "{x}.log()", "{x}.sqrt()", "{x}.clone()", "{x}.double()", "{x}.float()"]
# (see state.py: results that may differ in their last bits, and ops that need operands that do not)
UNARY_ROUNDS = {"{x}.exp()", "{x}.tanh()", "{x}.sigmoid()", "{x}.sin()", "{x}.cos()", "torch.tanh({x})",
                "{x}.log()", "{x}.sqrt()"}
# (of exact operands only: kinks, and functions that blow a rounded operand's last bits up: log and sqrt near
# 0, sin and cos of a large value, a sum of exps say, whose rounding is a sizeable share of a period)
UNARY_KINKED = {"{x}.abs()", "{x}.relu()", "{x}.clamp(min=-1.0, max=1.0)", "{x}.clamp(min=0.5)", "{x}.log()",
                "{x}.sqrt()", "{x}.sin()", "{x}.cos()"}


def unary(draw, s):
    x = _pick(draw, list(s.vars.values()))
    template = _pick(draw, allowed(UNARY, UNARY_KINKED, x))
    dtype = {"{x}.double()": "float64", "{x}.float()": "float32"}.get(
        template, floating(x.dtype) if template in UNARY_ROUNDS else x.dtype)
    name = s.fresh()
    s.result(name, x.shape, dtype, [x], rounds=template in UNARY_ROUNDS)
    return f"{name} = " + template.format(x=x.name)


BINARY = ["{a} + {b}", "{a} - {b}", "{a} * {b}", "torch.maximum({a}, {b})", "torch.minimum({a}, {b})",
          "{a}.add({b}, alpha=2)", "torch.where({a} > {b}, {a}, {b})"]
WITH_SCALAR = ["{a} * {c}", "{c} * {a}", "{a} + {c}", "{c} - {a}", "{a} / {c}", "{a} - {c}"]
BINARY_KINKED = {"torch.maximum({a}, {b})", "torch.minimum({a}, {b})", "torch.where({a} > {b}, {a}, {b})"}
# A tie of +0.0 and -0.0 between two tensors: PyTorch's CPU kernel picks the first operand in its scalar loop
# and the second in its vectorised one, so the sign of that zero depends on the element's position (and the
# machine's vector width). The result counts as rounded: nothing that tells zeros apart takes it.
SIGNED_ZERO_TIES = {"torch.maximum({a}, {b})", "torch.minimum({a}, {b})"}
POWERS_OF_TWO = {2, -1, 0.5, -2.0}   # (dividing by the other scalars rounds)


def binary(draw, s):
    pool = list(s.vars.values())
    a = _pick(draw, pool)
    name = s.fresh()
    if _chance(draw, 0.3):
        template, c = _pick(draw, WITH_SCALAR), _pick(draw, SCALARS)
        dtype = floating(a.dtype) if "/" in template or isinstance(c, float) else a.dtype
        s.result(name, a.shape, dtype, [a], rounds="/" in template and c not in POWERS_OF_TWO)
        return f"{name} = " + template.format(a=a.name, c=c)
    fits = [b for b in pool if broadcast(a.shape, b.shape) is not None]
    misfits = [b for b in pool if b not in fits]
    b = _pick(draw, misfits) if misfits and _chance(draw, 0.05) else _pick(draw, fits)
    shape = broadcast(a.shape, b.shape) or a.shape
    template = _pick(draw, allowed(BINARY, BINARY_KINKED, a, b))
    s.result(name, shape, promote(a, b), [a, b], rounds=template in SIGNED_ZERO_TIES)
    return f"{name} = " + template.format(a=a.name, b=b.name)


FULL_REDUCTIONS = ["sum()", "mean()", "prod()", "amax()", "amin()", "max()", "min()"]
DIM_REDUCTIONS = ["sum(dim={d}, keepdim={k})", "mean(dim={d}, keepdim={k})", "prod(dim={d}, keepdim={k})",
                  "amax(dim={d}, keepdim={k})", "amin(dim={d}, keepdim={k})",
                  "logsumexp(dim={d}, keepdim={k})", "max(dim={d}, keepdim={k}).values",
                  "min(dim={d}, keepdim={k}).values"]
REDUCTION_ROUNDS = {"mean()", "mean(dim={d}, keepdim={k})", "logsumexp(dim={d}, keepdim={k})"}
# (PyTorch splits the gradient among tied extremes: a tie broken by rounding sends it all to one)
REDUCTION_KINKED = {"amax()", "amin()", "max()", "min()", "amax(dim={d}, keepdim={k})",
                    "amin(dim={d}, keepdim={k})", "max(dim={d}, keepdim={k}).values",
                    "min(dim={d}, keepdim={k}).values"}


def reduction(draw, s):
    x = _pick(draw, list(s.vars.values()))
    name = s.fresh()
    if not x.shape or _chance(draw, 0.3):
        template = _pick(draw, allowed(FULL_REDUCTIONS, REDUCTION_KINKED, x))
        s.result(name, (), x.dtype, [x], rounds=template in REDUCTION_ROUNDS)
        return f"{name} = {x.name}." + template
    d = draw(st.integers(-len(x.shape), len(x.shape) - 1))
    k = _chance(draw, 0.5)
    template = _pick(draw, allowed(DIM_REDUCTIONS, REDUCTION_KINKED, x))
    s.result(name, reduced(x.shape, d, k), x.dtype, [x], rounds=template in REDUCTION_ROUNDS)
    return f"{name} = {x.name}." + template.format(d=d, k=k)


def matmul(draw, s):
    pool = list(s.vars.values())
    pairs = [(a, b) for a in pool for b in pool if matmul_shape(a.shape, b.shape) is not None]
    if not pairs:
        return None
    # matmul does not promote: mixed dtypes raise, so they are drawn only now and then
    same = [(a, b) for a, b in pairs if a.dtype == b.dtype]
    a, b = _pick(draw, same) if same and not _chance(draw, 0.05) else _pick(draw, pairs)
    name = s.fresh()
    s.result(name, matmul_shape(a.shape, b.shape), promote(a, b),
             [a, b])
    return f"{name} = {a.name} @ {b.name}"


# ---- views --------------------------------------------------------------------------------------------

def _index(draw, shape):
    """An index expression for basic slicing, the resulting shape and whether it stays contiguous."""
    items, out = [], []
    count = draw(st.integers(1, len(shape)))
    for dim in range(count):
        n = shape[dim]
        # (an empty dim has no element to pick nor a non-empty slice: only ":" and "::2" apply)
        kind = _pick(draw, ["int", "slice", "all", "step"] if n else ["all", "step"])
        if kind == "int":
            items.append(str(draw(st.integers(-n, n - 1))))
        elif kind == "slice":
            start = draw(st.integers(0, n - 1))
            stop = draw(st.integers(start + 1, n))
            items.append(f"{start}:{stop}")
            out.append(stop - start)
        elif kind == "all":
            items.append(":")
            out.append(n)
        else:
            items.append("::2")
            out.append((n + 1) // 2)
    out += list(shape[count:])
    contiguous = all(item == ":" for item in items[1:]) and items[0] != "::2" or numel(out) <= 1
    return ", ".join(items), tuple(out), contiguous


def _reshape_target(draw, shape):
    options = [(-1,), (1,) + shape, tuple(reversed(shape)), tuple(d for d in shape if d != 1)]
    target = _pick(draw, options)
    real = (numel(shape),) if target == (-1,) else target
    return ", ".join(map(str, target)) if target else "()", real


def view(draw, s):
    x = _pick(draw, list(s.vars.values()))
    n = len(x.shape)
    kinds = ["unsqueeze", "expand", "reshape"] + (["index", "select"] if n else []) + \
            (["transpose", "permute"] if n >= 2 else []) + (["t"] if n <= 2 else []) + \
            (["view"] if x.contiguous or _chance(draw, 0.1) else [])
    kind = _pick(draw, kinds)
    name = s.fresh()
    contiguous, overlapping, is_view = x.contiguous, x.overlapping, True
    if kind == "index":
        index, shape, contiguous = _index(draw, x.shape)
        code = f"{x.name}[{index}]"
        contiguous = contiguous and x.contiguous
    elif kind == "select":
        d = draw(st.integers(0, n - 1))
        i = draw(st.integers(-x.shape[d], x.shape[d] - 1)) if x.shape[d] else 0   # (an empty dim: both raise)
        code, shape = f"{x.name}.select({d}, {i})", x.shape[:d] + x.shape[d + 1:]
        contiguous = x.contiguous and d == 0
    elif kind == "transpose":
        d0, d1 = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
        shape = list(x.shape)
        shape[d0], shape[d1] = shape[d1], shape[d0]
        code, shape, contiguous = f"{x.name}.transpose({d0}, {d1})", tuple(shape), d0 == d1 and x.contiguous
    elif kind == "permute":
        code, shape = f"{x.name}.permute({', '.join(map(str, reversed(range(n))))})", x.shape[::-1]
        contiguous = False
    elif kind == "t":
        code, shape, contiguous = f"{x.name}.t()", x.shape[::-1], n < 2 and x.contiguous
    elif kind in ("reshape", "view"):
        text, shape = _reshape_target(draw, x.shape)
        code = f"{x.name}.{kind}({text})"
        is_view = kind == "view" or x.contiguous
    elif kind == "unsqueeze":
        d = draw(st.integers(-n - 1, n))
        shape = list(x.shape)
        shape.insert(d % (n + 1), 1)
        code, shape = f"{x.name}.unsqueeze({d})", tuple(shape)
    else:
        shape = tuple(draw(st.integers(1, 3)) if d == 1 else d for d in x.shape)
        if _chance(draw, 0.3):
            shape = (2,) + shape
        code = f"{x.name}.expand({', '.join(map(str, shape))})" if shape else f"{x.name}.expand(())"
        overlapping = overlapping or numel(shape) > numel(x.shape)
        contiguous = contiguous and not overlapping
    s.result(name, shape, x.dtype, [x], view_of=x if is_view else None,
             contiguous=contiguous if is_view else True, overlapping=overlapping if is_view else False)
    return f"{name} = {code}"


# ---- in-place ops, detach ------------------------------------------------------------------------------

def _writable(s, v):
    """Whether PyTorch lets an in-place op write v in the current grad mode."""
    if v.overlapping:
        return False
    if not s.grad_enabled:
        return True
    root = s.vars.get(v.root, v)
    return not (v.is_leaf and v.requires_grad) and not (v.is_view and root.is_leaf and root.requires_grad) \
        and not v.made_in_no_grad


INPLACE_TENSOR = ["{x}.add_({y})", "{x}.mul_({y})", "{x}.sub_({y})", "{x}.add_({y}, alpha=-0.5)"]
INPLACE_SCALAR = ["{x}.add_({c})", "{x}.mul_({c})", "{x}.sub_({c})", "{x}.div_({c})",
                  "{x}.clamp_(min=-1.0, max=1.0)", "{x}.clamp_(min=0.0)"]
INPLACE_KINKED = {"{x}.clamp_(min=-1.0, max=1.0)", "{x}.clamp_(min=0.0)"}


def inplace(draw, s):
    pool = list(s.vars.values())
    writable = [v for v in pool if _writable(s, v)]
    x = _pick(draw, writable) if writable and not _chance(draw, 0.08) else _pick(draw, pool)
    # an operand sharing x's memory in another layout is refused by PyTorch (partial overlap)
    fits = [y for y in pool if broadcasts_to(y.shape, x.shape)]
    apart = [y for y in fits if y is x or y.root != x.root]
    others = apart if apart and not _chance(draw, 0.08) else fits
    form = _pick(draw, ["tensor", "scalar", "scalar", "on_view", "setitem"] if x.shape else ["tensor", "scalar"])
    if form == "tensor" and others:
        y = _pick(draw, others)
        s.write_inplace(x, [y])
        return _pick(draw, INPLACE_TENSOR).format(x=x.name, y=y.name)
    c = _pick(draw, SCALARS)
    if form in ("on_view", "setitem"):
        s.write_inplace(x, [])
        index, _, _ = _index(draw, x.shape)
        if form == "setitem":
            return f"{x.name}[{index}] = {c}"
        return f"{x.name}[{index}].mul_({c})"
    template = _pick(draw, allowed(INPLACE_SCALAR, INPLACE_KINKED, x))
    s.write_inplace(x, [], rounds="div_" in template and c not in POWERS_OF_TWO)
    return template.format(x=x.name, c=c)


def detach(draw, s):
    x = _pick(draw, list(s.vars.values()))
    name = s.fresh()
    s.add(Var(name, x.shape, x.dtype, False, True, root=name, contiguous=x.contiguous,
              overlapping=x.overlapping, exact=x.exact))
    return f"{name} = {x.name}.detach()"


# ---- autograd ------------------------------------------------------------------------------------------

def retain_grad(draw, s):
    candidates = [v for v in s.vars.values() if v.requires_grad and not v.is_leaf]
    if not candidates:
        return None
    x = _pick(draw, candidates)
    s.retained.add(x.name)
    return f"{x.name}.retain_grad()"


def _root_for_backward(draw, s):
    candidates = [v for v in s.vars.values() if v.requires_grad]
    if not candidates:
        return None
    intact = [v for v in candidates if not (v.nodes & s.freed)]
    again = [v for v in candidates if v.name in s.backward_roots and v in intact]
    if again and _chance(draw, 0.4):
        return _pick(draw, again)
    return _pick(draw, intact) if intact and not _chance(draw, 0.1) else _pick(draw, candidates)


def backward(draw, s):
    x = _root_for_backward(draw, s)
    if x is None:
        return None
    retain = _chance(draw, 0.5)
    s.backward_roots.append(x.name)
    s.with_grad |= x.leaves
    if not x.exact:   # (a gradient that is zero up to rounding, say: Adam's step would turn it into ±lr)
        s.noisy_grads |= x.leaves
    if not retain:
        s.freed |= x.nodes
    loss = x.name if x.shape == () else f"{x.name}.sum()"
    return f"{loss}.backward(retain_graph=True)" if retain else f"{loss}.backward()"


def backward_inputs(draw, s):
    """backward(inputs=...): gradients accumulate into the chosen leaves alone (their hooks run)."""
    x = _root_for_backward(draw, s)
    if x is None:
        return None
    leaves = [n for n in sorted(x.leaves) if n in s.vars and s.vars[n].is_leaf]
    if not leaves:
        return None
    chosen = draw(st.lists(st.sampled_from(leaves), min_size=1, max_size=2, unique=True))
    s.backward_roots.append(x.name)
    s.with_grad |= set(chosen)
    if not x.exact:
        s.noisy_grads |= set(chosen)
    loss = x.name if x.shape == () else f"{x.name}.sum()"
    return f"{loss}.backward(inputs=[{', '.join(chosen)}], retain_graph=True)"


def leaf_hook(draw, s):
    """A hook doubling a leaf's gradient (it runs in backward, backward(inputs=) and autograd.grad)."""
    candidates = [v for v in s.vars.values() if v.is_leaf and v.requires_grad]
    if not candidates:
        return None
    return f"{_pick(draw, candidates).name}.register_hook(lambda g: g * 2)"


def _grad_of(draw, s, create_graph):
    x = _root_for_backward(draw, s)
    if x is None:
        return None
    leaves = [s.vars[n] for n in sorted(x.leaves) if n in s.vars and s.vars[n].is_leaf]
    if not leaves:
        return None
    wrt = _pick(draw, leaves)
    loss = x.name if x.shape == () else f"{x.name}.sum()"
    name = s.fresh()
    # (a gradient is rounding arithmetic, exact only as the ones of d(x.sum())/dx)
    if create_graph:
        # the gradient of a sum of the leaf itself is constant (no graph); otherwise it has one
        s.add(Var(name, wrt.shape, wrt.dtype, x is not wrt, x is wrt, root=name, overlapping=x is wrt,
                  leaves=x.leaves if x is not wrt else frozenset(),
                  nodes=x.nodes | {s.new_op_id()} if x is not wrt else frozenset(), exact=x is wrt))
        return f"{name} = torch.autograd.grad({loss}, [{wrt.name}], create_graph=True)[0]"
    retain = _chance(draw, 0.7)
    if not retain:
        s.freed |= x.nodes
    # d(x.sum())/dx is PyTorch's ones expanded to x's shape: in-place writes to it are refused
    s.add(Var(name, wrt.shape, wrt.dtype, False, True, root=name, overlapping=x is wrt, contiguous=x is not wrt,
              exact=x is wrt))
    flag = ", retain_graph=True" if retain else ""
    return f"{name} = torch.autograd.grad({loss}, [{wrt.name}]{flag})[0]"


def grad(draw, s):
    return _grad_of(draw, s, create_graph=False)


def double_grad(draw, s):
    """autograd.grad with create_graph=True; later backward/grad steps then differentiate it again."""
    return _grad_of(draw, s, create_graph=True)


def zero_grad(draw, s):
    candidates = sorted(n for n in s.with_grad if n in s.vars and s.vars[n].is_leaf)
    if not candidates:
        return None
    x = _pick(draw, candidates)
    s.noisy_grads.discard(x)
    if _chance(draw, 0.5):
        s.with_grad.discard(x)
        return f"{x}.grad = None"
    return f"{x}.grad.zero_()"


def make_optimizer(draw, s):
    leaves = [v.name for v in s.grad_leaves()]
    if not leaves:
        return None
    params = draw(st.lists(st.sampled_from(leaves), min_size=1, max_size=3, unique=True))
    name = s.fresh("opt")
    s.optimizers[name] = params
    plist = ", ".join(params)
    if _chance(draw, 0.5):
        return f"{name} = torch.optim.SGD([{plist}], lr=0.1, momentum=0.9)"
    s.adams.add(name)
    return f"{name} = torch.optim.Adam([{plist}], lr=0.1)"


def optimizer_step(draw, s):
    if not s.optimizers:
        return None
    name = _pick(draw, sorted(s.optimizers))
    # (Adam divides a gradient by its own size: one that is rounding noise steps by ±lr either way)
    noisy = name in s.adams and any(p in s.noisy_grads for p in s.optimizers[name])
    if noisy or _chance(draw, 0.25):
        s.with_grad -= set(s.optimizers[name])
        s.noisy_grads -= set(s.optimizers[name])
        return f"{name}.zero_grad()"
    for param in s.optimizers[name]:   # (lr 0.1, Adam's square root: the parameters are rounded)
        if param in s.vars:
            s.rounded(s.vars[param].root)
    return f"{name}.step()"


def observe(draw, s):
    x = _pick(draw, list(s.vars.values()))
    return f"observe({x.name})"


NO_GRAD_BODY = [unary, binary, reduction, view, inplace, inplace, optimizer_step, backward]


def no_grad(draw, s):
    s.grad_enabled = False
    lines = []
    try:
        for _ in range(draw(st.integers(1, 3))):
            code = _pick(draw, NO_GRAD_BODY)(draw, s)
            if code is not None:
                lines += ["    " + line for line in code.splitlines()]
    finally:
        s.grad_enabled = True
    return "with torch.no_grad():\n" + "\n".join(lines) if lines else None


# ---- the program ---------------------------------------------------------------------------------------

WEIGHTS = {leaf: 2, unary: 3, binary: 3, reduction: 2, matmul: 1, view: 3, inplace: 3, detach: 1,
           no_grad: 1, retain_grad: 1, backward: 3, backward_inputs: 1, leaf_hook: 1, grad: 1, zero_grad: 1,
           make_optimizer: 1, optimizer_step: 2, observe: 1}


def _kinds():
    weights = {**WEIGHTS, **breadth.WEIGHTS}
    if _higher_order():
        weights[double_grad] = 2
    return [kind for kind, weight in weights.items() for _ in range(weight)]


@st.composite
def programs(draw, max_steps=MAX_STEPS):
    s = State()
    steps = [Step("leaf", leaf(draw, s))]
    kinds = _kinds()
    for _ in range(draw(st.integers(1, max_steps))):
        kind = _pick(draw, kinds)
        code = kind(draw, s)
        if code is not None:
            steps.append(Step(kind.__name__, code))
    return Program(steps, tensors=list(s.vars), retained=set(s.retained))
