"""Module backward hooks (register_full_backward_hook / _pre_hook), as PyTorch builds them: the module's
tensor inputs and outputs pass through identity Functions (BackwardHookFunction) whose backward sees
the gradients of the outputs (pre-hooks, which may replace them) and then of the inputs (hooks, which
may replace those). These Functions run in Python node by node; the module's own ops are unchanged.
"""
from ...autograd.function import Function


def _is_tensor(x):
    from ..._tensor import Tensor
    return isinstance(x, Tensor)


class _Call:
    """What one module call's two Functions share."""

    __slots__ = ("module", "grad_output", "n_inputs", "input_seen")

    def __init__(self, module, n_inputs):
        self.module, self.grad_output, self.n_inputs, self.input_seen = module, None, n_inputs, False


class BackwardHookFunction(Function):
    _runs_in_python = True   # it calls user hooks: never traced, no warning

    @staticmethod
    def forward(ctx, call, side, *tensors):
        ctx.call, ctx.side = call, side
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        call, module = ctx.call, ctx.call.module
        grads = tuple(grads)
        if ctx.side == "output":
            for hook in list(module._backward_pre_hooks.values()):
                result = hook(module, grads)
                if result is not None:
                    grads = _checked(result, grads, "backward pre hook")
            call.grad_output = grads
            if call.n_inputs == 0:   # no input requires grad: the hooks hear of it here, as in PyTorch
                _run_hooks(module, (None,), grads)
            return (None, None) + grads
        grads = _run_hooks(module, grads, call.grad_output)
        return (None, None) + grads


def _run_hooks(module, grad_input, grad_output):
    for hook in list(module._backward_hooks.values()):
        result = hook(module, grad_input, grad_output)
        if result is not None:
            grad_input = _checked(result, grad_input, "backward hook")
    return grad_input


def _checked(result, expected, what):
    result = result if isinstance(result, tuple) else (result,)
    if len(result) != len(expected):
        raise RuntimeError(f"Backward hook returned an invalid number of grad_input, got {len(result)}, but "
                           f"expected {len(expected)}" if what == "backward hook" else
                           f"Backward pre hook returned an invalid number of grad_output, got {len(result)}, "
                           f"but expected {len(expected)}")
    return result


def wrap_inputs(module, args):
    """args with the tensors requiring grad passed through the input-side Function; and the call state."""
    positions = [i for i, a in enumerate(args) if _is_tensor(a) and a.requires_grad]
    call = _Call(module, len(positions))
    if not positions:
        return args, call
    wrapped = BackwardHookFunction.apply(call, "input", *[args[i] for i in positions])
    args = list(args)
    for i, t in zip(positions, wrapped):
        args[i] = t
    return tuple(args), call


def wrap_outputs(call, output):
    """output with its tensors passed through the output-side Function."""
    single = _is_tensor(output)
    items = (output,) if single else output if isinstance(output, tuple) else None
    if items is None:
        return output
    positions = [i for i, o in enumerate(items) if _is_tensor(o) and o.requires_grad]
    if not positions:
        return output
    wrapped = BackwardHookFunction.apply(call, "output", *[items[i] for i in positions])
    items = list(items)
    for i, t in zip(positions, wrapped):
        items[i] = t
    return items[0] if single else tuple(items)


def hook_last_node(module, args, output):
    """PyTorch's deprecated register_backward_hook: each hook is registered on the grad_fn of the output's
    first tensor (the forward's last op), for this call, seeing that node's gradients; with PyTorch's
    FutureWarning where those cannot be the module's inputs' and outputs'."""
    var = output
    while not _is_tensor(var):
        var = next(v for v in var.values() if _is_tensor(v)) if isinstance(var, dict) else var[0]
    grad_fn = var.grad_fn
    if grad_fn is None:
        return
    for hook in list(module._backward_hooks.values()):
        grad_fn.register_hook(lambda grad_input, grad_output, hook=hook: hook(module, grad_input, grad_output))
    _warn_partial(args[0] if len(args) == 1 else args, output, grad_fn)


def _warn_partial(inputs, result, grad_fn):
    from ..._user_frames import warn_user
    suggestion = "Please use register_full_backward_hook to get the documented behavior."
    if not _is_tensor(result):
        if not (isinstance(result, tuple) and all(_is_tensor(r) for r in result)):
            warn_user("Using non-full backward hooks on a Module that does not return a single Tensor or a tuple of "
                      f"Tensors is deprecated and will be removed in future versions. This hook will be missing some "
                      f"of the grad_output. {suggestion}", FutureWarning)
            return
    else:
        result = (result,)
    if not _is_tensor(inputs):
        if not (isinstance(inputs, tuple) and all(_is_tensor(i) for i in inputs)):
            warn_user("Using non-full backward hooks on a Module that does not take as input a single Tensor or a "
                      "tuple of Tensors is deprecated and will be removed in future versions. This hook will be "
                      f"missing some of the grad_input. {suggestion}", FutureWarning)
            return
    else:
        inputs = (inputs,)
    out_grad_fn = {id(r.grad_fn) for r in result if r.grad_fn is not None}
    if not out_grad_fn or (len(out_grad_fn) == 1 and id(grad_fn) not in out_grad_fn):
        warn_user("Using a non-full backward hook when outputs are nested in python data structure is deprecated "
                  f"and will be removed in future versions. This hook will be missing some grad_output. {suggestion}",
                  FutureWarning)
    elif len(out_grad_fn) > 1:
        warn_user("Using a non-full backward hook when outputs are generated by different autograd Nodes is "
                  "deprecated and will be removed in future versions. This hook will be missing some grad_output. "
                  f"{suggestion}", FutureWarning)
    elif {id(i.grad_fn) for i in inputs if i.grad_fn is not None} != {id(n[0]) for n in grad_fn.next_functions}:
        warn_user("Using a non-full backward hook when the forward contains multiple autograd Nodes is deprecated "
                  "and will be removed in future versions. This hook will be missing some grad_input. "
                  f"{suggestion}", FutureWarning)
