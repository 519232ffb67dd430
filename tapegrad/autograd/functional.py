"""autograd.functional: vjp, jvp, jacobian, hessian, vhp, hvp of a function of tensors.

Two ways, one answer. Results that need no graph (create_graph=False, strict=False) come from JAX's
transforms of the traced function (`tapegrad.func`): one program, forward mode by `jax.jvp`,
Jacobians vectorised. Differentiable results (create_graph=True), strict mode's independence checks,
and functions that cannot be traced (they read values in Python) use the tape, with autograd.grad,
as PyTorch does.
"""
from .. import func as _func
from .._grad_mode import enable_grad
from ._tracing import TRACER_ERRORS

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _tensors(value, arg, fn_name):
    """(whether `value` was a tuple, the tensors as a tuple), with PyTorch's type error."""
    from .._tensor import Tensor
    is_tuple = isinstance(value, (tuple, list))
    items = tuple(value) if is_tuple else (value,)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            if is_tuple:
                raise TypeError(f"The {arg} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                                f"the value at index {i} has type {type(t)}.")
            raise TypeError(f"The {arg} given to {fn_name} must be either a Tensor or a tuple of Tensors but the "
                            f"given {arg} has type {type(t)}.")
    return is_tuple, items


def _shape_as(tuple_flag, items):
    return tuple(items) if tuple_flag else items[0]


def _v(v, like, fn_name, what):
    if v is None:
        if len(like) != 1 or like[0].numel() != 1:
            raise RuntimeError(f"The vector v can only be None if the {what} to the user-provided function is a "
                               "single Tensor with a single element." if what == "input" else
                               "The vector v can only be None if the user-provided function returns a single "
                               "Tensor with a single element.")
        from .._creation import ones_like
        return (ones_like(like[0]),)
    _, vs = _tensors(v, "v", fn_name)
    if len(vs) != len(like):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(like)} but got {len(vs)}.")
    for i, (a, b) in enumerate(zip(vs, like)):
        if tuple(a.shape) != tuple(b.shape):
            raise RuntimeError(("v has invalid size" if len(vs) == 1 else f"Entry {i} in v has invalid size") +
                               f": should be torch.Size({list(b.shape)}) but got "
                               f"torch.Size({list(a.shape)}).")
    return vs


def _traced(compute, fallback, create_graph, strict):
    if create_graph or strict:
        return fallback()
    try:
        return compute()
    except RuntimeError as e:
        if isinstance(e.__cause__, TRACER_ERRORS):
            return fallback()
        raise


# ---- the tape -------------------------------------------------------------------------------------

def _prepare(inputs, create_graph):
    """Inputs the graph starts from: views of the given tensors (create_graph keeps their history)."""
    with enable_grad():
        return tuple(t.view_as(t) if create_graph and t.requires_grad else t.detach().requires_grad_()
                     for t in inputs)


def _grads(outputs, inputs, grad_outputs, create_graph, strict, kind):
    from .._creation import zeros_like
    from . import grad
    needing = [o for o in outputs if o.requires_grad]
    found = grad(needing, inputs, [g for o, g in zip(outputs, grad_outputs) if o.requires_grad],
                 create_graph=create_graph, retain_graph=True, allow_unused=True) if needing else [None] * len(inputs)
    result = []
    for i, (g, t) in enumerate(zip(found, inputs)):
        if g is None:
            if strict:
                raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is "
                                   f"not allowed in strict mode." if kind == "back" else
                                   f"The gradient with respect to input {i} is independent of the inputs of the "
                                   f"user-provided function. This is not allowed in strict mode.")
            g = zeros_like(t)
        result.append(g)
    return tuple(result)


def _post(items, create_graph):
    return tuple(t if create_graph else t.detach() for t in items)


# ---- the functions --------------------------------------------------------------------------------

def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at `inputs`."""
    in_tuple, xs = _tensors(inputs, "inputs", "vjp")

    def compute():
        out, pull = _func.vjp(func, *xs)
        out_tuple, outs = _tensors(out, "outputs of the user-provided function", "vjp")
        vs = _v(v, outs, "vjp", "output")
        return _shape_as(out_tuple, outs), _shape_as(in_tuple, pull(_shape_as(out_tuple, vs)))

    def tape():
        ins = _prepare(xs, create_graph)
        with enable_grad():
            out_tuple, outs = _tensors(func(*ins), "outputs of the user-provided function", "vjp")
            vs = _v(v, outs, "vjp", "output")
            gs = _grads(outs, ins, vs, create_graph, strict, "back")
        return _shape_as(out_tuple, _post(outs, create_graph)), _shape_as(in_tuple, _post(gs, create_graph))
    return _traced(compute, tape, create_graph, strict)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, by forward mode."""
    in_tuple, xs = _tensors(inputs, "inputs", "jvp")
    vs = _v(v, xs, "jvp", "input")

    def compute():
        out, tangent = _func.jvp(func, xs, vs)
        out_tuple, outs = _tensors(out, "outputs of the user-provided function", "jvp")
        return _shape_as(out_tuple, outs), tangent

    def tape():   # the double-vjp trick: differentiate v^T J's linear map in its cotangent
        from .._creation import zeros_like
        from . import grad
        ins = _prepare(xs, create_graph)
        with enable_grad():
            out_tuple, outs = _tensors(func(*ins), "outputs of the user-provided function", "jvp")
            dummies = tuple(zeros_like(o).requires_grad_() for o in outs)
            gs = _grads(outs, ins, dummies, True, strict, "back")
            found = grad(gs, dummies, vs, create_graph=create_graph, allow_unused=True)
            jv = tuple(zeros_like(o) if g is None else g for o, g in zip(outs, found))
        return _shape_as(out_tuple, _post(outs, create_graph)), _shape_as(out_tuple, _post(jv, create_graph))
    return _traced(compute, tape, create_graph, strict)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """d func(inputs) / d inputs: a tensor, or tuples indexed [output][input] as the arguments are tuples."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                         'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                         'Otherwise, prefer to use "reverse-mode".')
    in_tuple, xs = _tensors(inputs, "inputs", "jacobian")

    def compute():
        transform = _func.jacfwd if strategy == "forward-mode" else _func.jacrev
        out_tuple, _ = _tensors(func(*xs), "outputs of the user-provided function", "jacobian")
        jac = transform(func, argnums=tuple(range(len(xs))))(*xs)
        return _nest(out_tuple, in_tuple, [list(r) for r in (jac if out_tuple else (jac,))])
    return _traced(compute, lambda: _jacobian_tape(func, xs, in_tuple, create_graph, strict), create_graph, strict)


def _jacobian_tape(func, xs, in_tuple, create_graph, strict):
    ins = _prepare(xs, create_graph)
    with enable_grad():
        out_tuple, outs = _tensors(func(*ins), "outputs of the user-provided function", "jacobian")
        rows = [_jacobian_rows(o, ins, create_graph, strict) for o in outs]
    return _nest(out_tuple, in_tuple, [[t if create_graph else t.detach() for t in r] for r in rows])


def _jacobian_rows(out, ins, create_graph, strict):
    """One backward per output element (PyTorch's loop), stacked into out.shape + input.shape."""
    from .._creation import zeros_like
    from .. import stack
    flat = out.reshape(-1)
    per_input = [[] for _ in ins]
    for k in range(flat.numel()):
        seed = zeros_like(flat)
        seed[k] = 1
        for j, g in enumerate(_grads((flat,), ins, (seed,), create_graph, strict, "back")):
            per_input[j].append(g)
    return [(stack(gs) if gs else zeros_like(x).unsqueeze(0)[:0]).reshape(tuple(out.shape) + tuple(x.shape))
            for gs, x in zip(per_input, ins)]


def _nest(out_tuple, in_tuple, rows):
    rows = [tuple(r) if in_tuple else r[0] for r in rows]
    return tuple(rows) if out_tuple else rows[0]


def _scalar(func, name):
    def scalar(*args):
        out_tuple, outs = _tensors(func(*args), "outputs of the user-provided function", name)
        if out_tuple or outs[0].numel() != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {name} should contain a single "
                               "element")
        return outs[0].reshape(())
    return scalar


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a function returning a single-element tensor: [i][j] blocks for tuple inputs."""
    in_tuple, xs = _tensors(inputs, "inputs", "hessian")
    scalar = _scalar(func, "hessian")

    def compute():
        h = _func.hessian(scalar, argnums=tuple(range(len(xs))))(*xs)
        return tuple(tuple(r) for r in h) if in_tuple else h[0][0]

    def tape():
        def gradient(*args):
            return vjp(scalar, args, create_graph=True, strict=strict)[1]
        return _jacobian_tape(gradient, xs, in_tuple, create_graph, strict)
    return _traced(compute, tape, create_graph, strict)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H)."""
    return _second_order(func, inputs, v, create_graph, strict, "vhp")


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v)."""
    return _second_order(func, inputs, v, create_graph, strict, "hvp")


def _second_order(func, inputs, v, create_graph, strict, name):
    in_tuple, xs = _tensors(inputs, "inputs", name)
    vs = _v(v, xs, name, "input")
    scalar = _scalar(func, name)

    def compute():
        value = scalar(*xs)
        grad_fn = _func.grad(scalar, argnums=tuple(range(len(xs))))
        if name == "hvp":
            _, product = _func.jvp(grad_fn, xs, vs)
        else:
            _, pull = _func.vjp(grad_fn, *xs)
            product = pull(vs)
        return value, _shape_as(in_tuple, tuple(product))

    def tape():
        ins = _prepare(xs, create_graph)
        with enable_grad():
            out = scalar(*ins)
            gs = _grads((out,), ins, (None,), True, strict, "back")
            products = _grads(gs, ins, vs, create_graph, strict, "double")
        return _post((out,), create_graph)[0], _shape_as(in_tuple, _post(products, create_graph))
    return _traced(compute, tape, create_graph, strict)

