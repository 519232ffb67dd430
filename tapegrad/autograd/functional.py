"""autograd.functional: vjp, jvp, jacobian, hessian, vhp, hvp of a function of tensors.

Two ways, one answer. Results that need no graph (create_graph=False, strict=False) come from JAX's
transforms of the traced function (`tapegrad.func`): one program, forward mode by `jax.jvp`,
Jacobians vectorised. Differentiable results (create_graph=True), strict mode's independence checks,
and functions that cannot be traced (they read values in Python) use the tape, with autograd.grad, in
PyTorch's steps and checks (its helpers have their names here: `_check_requires_grad`, `_fill_in_zeros`...).
"""
from .. import func as _func
from .._grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from ._tracing import TRACER_ERRORS

__all__ = ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"]


def _as_tuple(value, arg, fn_name):
    """(whether `value` was a tuple, the tensors as a tuple), with PyTorch's type error (a list is refused)."""
    from .._tensor import Tensor
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for i, t in enumerate(items):
        if not isinstance(t, Tensor):
            if is_tuple:
                raise TypeError(f"The {arg} given to {fn_name} must be either a Tensor or a tuple of Tensors but "
                                f"the value at index {i} has type {type(t)}.")
            raise TypeError(f"The {arg} given to {fn_name} must be either a Tensor or a tuple of Tensors but the "
                            f"given {arg} has type {type(t)}.")
    return is_tuple, items


def _tuple_postprocess(res, to_unpack):
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph, need_graph):
    """Inputs the graph starts from: views of the given tensors (create_graph keeps their history)."""
    return tuple(t.view_as(t) if create_graph and t.requires_grad else t.detach().requires_grad_(need_graph)
                 for t in inputs)


def _grad_postprocess(inputs, create_graph):
    from .._tensor import Tensor
    if isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(t.detach() for t in inputs)
    return tuple(_grad_postprocess(t, create_graph) for t in inputs)


def _validate_v(v, other, is_other_tuple):
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for i, (a, b) in enumerate(zip(v, other)):
        if a.size() != b.size():
            prefix = f"Entry {i} in " if is_other_tuple else ""
            raise RuntimeError(f"{prefix}v has invalid size: should be torch.Size({list(b.shape)}) but got "
                               f"torch.Size({list(a.shape)}).")   # (PyTorch's words, as its Size prints)


def _vector(v, like, like_tuple, fn_name, create_graph, none_message):
    if v is None:
        if len(like) != 1 or like[0].numel() != 1:
            raise RuntimeError(none_message)
        return None
    _, v = _as_tuple(v, "v", fn_name)
    v = _grad_preprocess(v, create_graph, need_graph=False)
    _validate_v(v, like, like_tuple)
    return v


_NONE_FOR_OUTPUT = ("The vector v can only be None if the user-provided function returns a single Tensor with a "
                    "single element.")
_NONE_FOR_INPUT = ("The vector v can only be None if the input to the user-provided function is a single Tensor "
                   "with a single element.")


def _check_requires_grad(inputs, input_type, strict):
    if not strict:
        return
    for i, t in enumerate(inputs):
        if t is None:
            raise RuntimeError(f"The output of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode.")
        if not t.requires_grad:
            raise RuntimeError({
                "hessian": f"The hessian of the user-provided function with respect to input {i} is independent of "
                           "the input. This is not allowed in strict mode. You should ensure that your function is "
                           "thrice differentiable and that the hessian depends on the inputs.",
                "jacobian": "While computing the hessian, found that the jacobian of the user-provided function with "
                            f"respect to input {i} is independent of the input. This is not allowed in strict mode. "
                            "You should ensure that your function is twice differentiable and that the jacobian "
                            "depends on the inputs (this would be violated by a linear function for example).",
                "grad_inputs": f"The gradient with respect to input {i} is independent of the inputs of the "
                               "user-provided function. This is not allowed in strict mode.",
            }.get(input_type, f"Output {i} of the user-provided function does not require gradients. The outputs "
                              "must be computed in a differentiable manner from the input when running in strict "
                              "mode."))


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """autograd.grad over the outputs that require grad (None for every input when none does)."""
    from . import grad
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else grad_outputs
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return grad([o for o, _ in pairs], inputs, [g for _, g in pairs], allow_unused=True,
                create_graph=create_graph, retain_graph=retain_graph)


_STAGE_ERRORS = {
    "back": "The output of the user-provided function is independent of input {i}. This is not allowed in strict "
            "mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the grad_outputs when "
                  "using the double backward trick to compute forward mode gradients. This is not allowed in strict "
                  "mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. This is not allowed in "
                   "strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry {i} in the "
                         "grad_jacobian. This is not allowed in strict mode as it prevents from using the double "
                         "backward trick to replace forward mode AD.",
}


def _fill_in_zeros(grads, refs, strict, create_graph, stage):
    from .._creation import zeros_like
    result = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_STAGE_ERRORS[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is not "
                               "allowed in strict mode when create_graph=True.")
        result.append(g)
    return tuple(result)


def _traced(compute, tape, create_graph, strict):
    if create_graph or strict:
        return tape()
    try:
        return compute()
    except RuntimeError as e:
        if isinstance(e.__cause__, TRACER_ERRORS):
            return tape()
        raise


def _single_output(outputs, out_tuple, fn_name):
    if out_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single "
                           "element")


# ---- the functions --------------------------------------------------------------------------------

def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T J): the vector-Jacobian product at `inputs`."""
    in_tuple, xs = _as_tuple(inputs, "inputs", "vjp")

    def compute():
        out, pull = _func.vjp(func, *xs)
        out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "vjp")
        vs = _vector(v, outs, out_tuple, "vjp", False, _NONE_FOR_OUTPUT)
        if vs is None:
            from .._creation import ones_like
            vs = (ones_like(outs[0]),)
        return _tuple_postprocess(outs, out_tuple), _tuple_postprocess(pull(_tuple_postprocess(vs, out_tuple)),
                                                                       in_tuple)

    def tape():
        with enable_grad():
            ins = _grad_preprocess(xs, create_graph, need_graph=True)
            out_tuple, outs = _as_tuple(func(*ins), "outputs of the user-provided function", "vjp")
            _check_requires_grad(outs, "outputs", strict)
            vs = _vector(v, outs, out_tuple, "vjp", create_graph, _NONE_FOR_OUTPUT)
        with set_grad_enabled(create_graph or is_grad_enabled()):
            grads = _fill_in_zeros(_autograd_grad(outs, ins, vs, create_graph), ins, strict, create_graph, "back")
        return (_tuple_postprocess(_grad_postprocess(outs, create_graph), out_tuple),
                _tuple_postprocess(_grad_postprocess(grads, create_graph), in_tuple))
    return _traced(compute, tape, create_graph, strict)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), J v): the Jacobian-vector product, by forward mode."""
    in_tuple, xs = _as_tuple(inputs, "inputs", "jvp")

    def compute():
        vs = _vector(v, xs, in_tuple, "jvp", False, _NONE_FOR_INPUT)
        if vs is None:
            from .._creation import ones_like
            vs = (ones_like(xs[0]),)
        out, tangent = _func.jvp(func, xs, vs)
        out_tuple, outs = _as_tuple(out, "outputs of the user-provided function", "jvp")
        return _tuple_postprocess(outs, out_tuple), tangent

    def tape():   # the double backward trick: differentiate v^T J's linear map in its cotangent
        from .._creation import zeros_like
        with enable_grad():
            ins = _grad_preprocess(xs, create_graph, need_graph=True)
            vs = _vector(v, ins, in_tuple, "jvp", create_graph, _NONE_FOR_INPUT)
            out_tuple, outs = _as_tuple(func(*ins), "outputs of the user-provided function", "jvp")
            _check_requires_grad(outs, "outputs", strict)
            dummies = tuple(zeros_like(o, requires_grad=True) for o in outs)
            grad_inputs = _autograd_grad(outs, ins, dummies, create_graph=True)
            _check_requires_grad(grad_inputs, "grad_inputs", strict)
        with set_grad_enabled(create_graph or is_grad_enabled()):
            found = _autograd_grad(grad_inputs, dummies, vs, create_graph=create_graph)
            jv = _fill_in_zeros(found, outs, strict, create_graph, "back_trick")
        return (_tuple_postprocess(_grad_postprocess(outs, create_graph), out_tuple),
                _tuple_postprocess(_grad_postprocess(jv, create_graph), out_tuple))
    return _traced(compute, tape, create_graph, strict)


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    """d func(inputs) / d inputs: a tensor, or tuples indexed [output][input] as the arguments are tuples."""
    _check_strategy(strategy, create_graph, strict, vectorize, inputs)
    in_tuple, xs = _as_tuple(inputs, "inputs", "jacobian")
    if vectorize and strict:
        raise RuntimeError("torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
                           "supported together. Please either set `strict=False` or `vectorize=False`.")

    def compute():
        transform = _func.jacfwd if strategy == "forward-mode" else _func.jacrev
        out_tuple, _ = _as_tuple(func(*xs), "outputs of the user-provided function", "jacobian")
        jac = transform(func, argnums=tuple(range(len(xs))))(*xs)
        return _tuple_postprocess(tuple(jac) if out_tuple else (jac,), (out_tuple, in_tuple))
    return _traced(compute, lambda: _jacobian_tape(func, xs, in_tuple, create_graph, strict), create_graph, strict)


def _check_strategy(strategy, create_graph, strict, vectorize, inputs):
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                             'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                             'Otherwise, prefer to use "reverse-mode".')
    if strategy == "reverse-mode":
        return
    if create_graph:
        raise NotImplementedError('torch.autograd.functional.jacobian: `create_graph=True` and `strategy="forward-'
                                  'mode"` are not supported together (yet). Please either set `create_graph=False` '
                                  'or `strategy="reverse-mode"`.')
    if strict:
        raise RuntimeError('torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"` are not '
                           'supported together (yet). Please either set `strict=False` or `strategy="reverse-mode"`.')
    _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError("Computing Jacobian using forward-AD or forward-over-reverse Hessian isonly "
                                  "implemented for `vectorize=True`.")   # ("isonly": PyTorch's words)


def _jacobian_tape(func, xs, in_tuple, create_graph, strict):
    """PyTorch's loop: one backward per output element, stacked into out.shape + input.shape."""
    from .. import stack
    from .._creation import zeros_like
    with enable_grad():
        ins = _grad_preprocess(xs, create_graph, need_graph=True)
        out_tuple, outs = _as_tuple(func(*ins), "outputs of the user-provided function", "jacobian")
        _check_requires_grad(outs, "outputs", strict)
        jacobian = []
        for i, out in enumerate(outs):
            rows = tuple([] for _ in ins)
            for j in range(out.numel()):
                found = _autograd_grad((out.reshape(-1)[j],), ins, retain_graph=True, create_graph=create_graph)
                for k, (row, g, x) in enumerate(zip(rows, found, ins)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                               f"{k}. This is not allowed in strict mode.")
                        g = zeros_like(x)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. "
                                           "This is not allowed in strict mode when create_graph=True.")
                    row.append(g)
            jacobian.append(tuple((stack(row, dim=0) if row else zeros_like(x).unsqueeze(0)[:0]).view(
                tuple(out.shape) + tuple(x.shape)) for row, x in zip(rows, ins)))
        return _tuple_postprocess(_grad_postprocess(tuple(jacobian), create_graph), (out_tuple, in_tuple))


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    """The Hessian of a function returning a single-element tensor: [i][j] blocks for tuple inputs."""
    in_tuple, xs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    _check_strategy(outer_jacobian_strategy, create_graph, strict, vectorize, inputs)

    def single_output(*args):
        out_tuple, outs = _as_tuple(func(*args), "outputs of the user-provided function", "hessian")
        _check_requires_grad(outs, "outputs", strict)
        _single_output(outs, out_tuple, "hessian")
        return outs[0].squeeze()

    def compute():
        h = _func.hessian(single_output, argnums=tuple(range(len(xs))))(*xs)
        return _tuple_postprocess(tuple(tuple(r) for r in h), (in_tuple, in_tuple))

    def tape():
        def jac_func(*args):
            if outer_jacobian_strategy == "forward-mode":
                args = tuple(t.requires_grad_(True) for t in args)
            jac = jacobian(single_output, args, create_graph=True)
            _check_requires_grad(jac, "jacobian", strict)
            return jac
        res = jacobian(jac_func, xs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                       strategy=outer_jacobian_strategy)
        return _tuple_postprocess(res, (in_tuple, in_tuple))
    return _traced(compute, tape, create_graph, strict)


def vhp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), v^T H)."""
    return _second_order(func, inputs, v, create_graph, strict, "vhp")


def hvp(func, inputs, v=None, create_graph=False, strict=False):
    """(func(inputs), H v)."""
    return _second_order(func, inputs, v, create_graph, strict, "hvp")


def _second_order(func, inputs, v, create_graph, strict, name):
    in_tuple, xs = _as_tuple(inputs, "inputs", name)

    def checked(*args):
        out_tuple, outs = _as_tuple(func(*args), "outputs of the user-provided function", name)
        _check_requires_grad(outs, "outputs", strict)
        _single_output(outs, out_tuple, name)
        return outs[0]

    def compute():
        vs = _vector(v, xs, in_tuple, name, False, _NONE_FOR_INPUT)
        if vs is None:
            from .._creation import ones_like
            vs = (ones_like(xs[0]),)
        value = checked(*xs).detach()
        grad_fn = _func.grad(lambda *a: checked(*a).sum(), argnums=tuple(range(len(xs))))
        if name == "hvp":
            _, product = _func.jvp(grad_fn, xs, vs)
        else:
            _, pull = _func.vjp(grad_fn, *xs)
            product = pull(vs)
        return value, _tuple_postprocess(tuple(product), in_tuple)

    def tape():
        from .._creation import zeros_like
        with enable_grad():
            ins = _grad_preprocess(xs, create_graph, need_graph=True)
            vs = _vector(v, ins, in_tuple, name, create_graph, _NONE_FOR_INPUT)
            out = checked(*ins)
            jac = _autograd_grad((out,), ins, create_graph=True)
            _check_requires_grad(jac, "jacobian", strict)
            if name == "hvp":   # the double backward trick
                grad_jac = tuple(zeros_like(x, requires_grad=True) for x in ins)
                double_back = _autograd_grad(jac, ins, grad_jac, create_graph=True)
                _check_requires_grad(jac, "hessian", strict)
        with set_grad_enabled(create_graph or is_grad_enabled()):
            if name == "hvp":
                found = _autograd_grad(double_back, grad_jac, vs, create_graph=create_graph)
                products = _fill_in_zeros(found, ins, strict, create_graph, "double_back_trick")
            else:
                found = _autograd_grad(jac, ins, vs, create_graph=create_graph)
                products = _fill_in_zeros(found, ins, strict, create_graph, "double_back")
        return (_grad_postprocess((out,), create_graph)[0],
                _tuple_postprocess(_grad_postprocess(products, create_graph), in_tuple))
    return _traced(compute, tape, create_graph, strict)
