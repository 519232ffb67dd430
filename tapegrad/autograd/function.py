"""autograd.Function: operations with a user-written forward and backward (PyTorch's torch.autograd.Function).

The ctx a Function's forward sees is its graph node, as in PyTorch (`y.grad_fn.saved_tensors`,
`y.grad_fn.<attribute set in forward>`). The node is an ordinary graph node whose backward is the
user's `backward`, run in one of two ways (`_function_node`):

- traced: the backward is run on tensors holding JAX tracers, which makes it one pure JAX function
  of the saved tensors and the incoming gradients, keyed by the Function, the shapes and the
  non-tensor values kept on ctx. It then runs wherever a table op's VJP runs: inside the compiled
  backward program, or as one kernel node by node.
- in Python, node by node, on concrete tensors, as PyTorch runs every backward: when the backward
  reads values in Python (`.item()`, data-dependent `if`), prints, keeps tensors or other objects on
  ctx instead of `save_for_backward`, or keeps values that change at every call. One warning per
  Function says why, where it is not plainly intended (printing).

With create_graph the backward always runs in Python in grad mode, so its own ops are recorded
and can be differentiated again, as in PyTorch.
"""
import functools

from .._grad_mode import _state, no_grad
from . import _function_transforms, forward_ad
from ._function_backward import FunctionCtx
from ._function_node import FunctionNode, build_node
from .._user_frames import warn_user

__all__ = ["Function", "FunctionCtx", "once_differentiable", "InplaceFunction", "NestedIOFunction"]


class _FunctionMeta(type):
    """Gives every Function subclass its node class, named `<Function>Backward` as in PyTorch."""

    def __init__(cls, name, bases, attrs):
        backward_cls = type(name + "Backward", (FunctionNode,), {"node_name": name + "Backward", "function": cls})
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=_FunctionMeta):
    """Subclass with static `forward` and `backward`, then call `MyFunction.apply(*args)`.

    forward(ctx, *args) (or forward(*args) plus setup_context(ctx, inputs, output)) runs outside
    grad mode; backward(ctx, *grad_outputs) returns one gradient (or None) per forward argument.
    """

    def __init__(self, *args, **kwargs):
        warn_user(f"{type(self)} should not be instantiated. Methods on autograd functions are all static, so "
                  "you should invoke them on the class itself. Instantiating an autograd function will raise an "
                  "error in a future version of PyTorch.", DeprecationWarning)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use new-style "
            "autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom autograd.Function to use it "
                                  "with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        if kwargs:
            args = _bind(cls, args, kwargs)
        from .._tensor import Tensor
        if _function_transforms.ACTIVE:   # inside tapegrad.func: the Function's own backward / jvp
            return _function_transforms.apply(cls, args, Function)
        record = _state.grad_enabled
        return cls._apply(args, tuple(record and isinstance(a, Tensor) and a.requires_grad for a in args))

    @classmethod
    def _apply(cls, args, needs, force=False):
        ctx = cls._backward_cls.__new__(cls._backward_cls)
        ctx._start(needs)
        new_style = cls.setup_context is not Function.setup_context
        tangents = forward_ad.function_tangents(args)
        with no_grad(), forward_ad.function_paused(tangents):
            if new_style:
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args)
        final = build_node(ctx, args, output, any(needs), force)
        if tangents is not None:
            forward_ad.function_jvp(cls, ctx, args, tangents, output, final)
        return final


def _bind(cls, args, kwargs):
    import inspect
    forward = cls.forward
    params = list(inspect.signature(forward).parameters)
    if cls.setup_context is Function.setup_context:
        params = params[1:]   # ctx
    bound = inspect.signature(forward).bind_partial(*(() if params == list(inspect.signature(forward).parameters)
                                                       else (None,)), *args, **kwargs)
    bound.apply_defaults()
    values = list(bound.arguments.values())
    return tuple(values[len(values) - len(params):])


class InplaceFunction(Function):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


NestedIOFunction = Function


# ---- once_differentiable --------------------------------------------------------------------

ONCE_DIFFERENTIABLE = "trying to differentiate twice a function that was marked with @once_differentiable"


def once_differentiable(fn):
    """The backward is not differentiable: with create_graph its results carry a node that raises when
    differentiated (PyTorch's DelayedError)."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        from .._tensor import Tensor
        with no_grad():
            outputs = fn(ctx, *args)
        if not _state.grad_enabled or not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        wrapped = tuple(_DelayedError._apply((o,), (True,)) if isinstance(o, Tensor) and o.dtype.is_floating_point else o
                        for o in ((outputs,) if single else outputs))
        return wrapped[0] if single else wrapped
    return wrapper


class _DelayedError(Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        raise RuntimeError(ONCE_DIFFERENTIABLE)


_DelayedError._backward_cls.node_name = "DelayedError"
