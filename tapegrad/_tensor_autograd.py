"""Tensor's autograd-facing attributes: requires_grad, grad, grad_fn, is_leaf, retain_grad, hooks,
backward and detach; attached to the class as _methods.py attaches the maths."""
import weakref

from . import _dispatch, _dtypes as D
from ._arg_types import as_bool
from ._grad_mode import _state
from ._tensor import Tensor, _check_rebase
from ._view_info import gradless_base_histories
from ._user_frames import warn_user

_NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute "
    "won't be populated during autograd.backward(). If you indeed want the .grad field to be populated "
    "for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor "
    "by mistake, make sure you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 "
    "for more information.")


@property
def requires_grad(self):
    return self._requires_grad


@requires_grad.setter
def requires_grad(self, flag):
    if type(flag) is not bool:
        raise RuntimeError("requires_grad must be a bool")
    self.requires_grad_(flag)


def requires_grad_(self, requires_grad=True):
    if type(requires_grad) is not bool:
        requires_grad = as_bool(requires_grad, "requires_grad", "requires_grad_", 1)
    if self._grad_fn is not None:
        if requires_grad:
            return self
        raise RuntimeError(
            "you can only change requires_grad flags of leaf variables. If you want to use a computed "
            "variable in a subgraph that doesn't require differentiation use var_no_grad = var.detach().")
    if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(
            "only Tensors of floating point and complex dtype can require gradients "
            f"(got {self.dtype}). Convert first, e.g. x.float().requires_grad_().")
    if requires_grad and self._inference and not _state.inference:
        raise RuntimeError(
            "Setting requires_grad=True on inference tensor outside InferenceMode is not allowed. "
            "Make a clone() of it first.")
    if self._view is not None or not requires_grad:
        gradless_base_histories[0] = True
    self._requires_grad = bool(requires_grad)
    return self


@property
def is_leaf(self):
    return self.grad_fn is None


@property
def grad_fn(self):
    info = self._view
    if info is not None:
        info.unread = False
        if info.creation is not None:
            _check_rebase(self)
    return self._grad_fn


@property
def output_nr(self):
    info = self._view
    if info is not None and info.output_nr is not None and self._grad_fn is not None:
        return info.output_nr   # the k-th output of unbind or split (one node each here)
    return self._out_idx


@property
def grad(self):
    if self._grad_fn is not None and not self._retains_grad:
        warn_user(_NON_LEAF_GRAD_WARNING, UserWarning)
    return self._grad


@grad.setter
def grad(self, value):
    if value is not None:
        if not isinstance(value, Tensor):
            raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of type "
                            f"{type(value).__name__}")
        if value.shape != self.shape:
            raise RuntimeError(f"attempting to assign a gradient of size '{list(value.shape)}' to a tensor of "
                               f"size '{list(self.shape)}'. Please ensure that the gradient and the tensor are "
                               "the same size")
        if value.dtype != self.dtype:
            raise RuntimeError(f"attempting to assign a gradient with dtype '{D.cpp_name(value.dtype)}' to a tensor "
                               f"with grad_dtype '{D.SCALAR_NAMES[self.dtype.name]}'. The gradient must match the "
                               "tensor's grad_dtype (defaults to the tensor's dtype). Convert it first, e.g. "
                               "x.grad = g.to(x.dtype).")
    self._grad = value


@grad.deleter
def grad(self):
    self._grad = None


@property
def retains_grad(self):
    return self._retains_grad


def retain_grad(self):
    if not self._requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False. "
                           "Set requires_grad=True on the tensor (or an input it depends on) first.")
    if self._grad_fn is None or self._retains_grad:
        return
    self._retains_grad = True
    node = self._grad_fn
    if node.retained is None:
        node.retained = {}
    node.retained[self._out_idx] = weakref.ref(self)
    if node.seg is not None and not node.seg.ended:
        node.seg.retained.append(weakref.ref(node))


def register_hook(self, hook):
    """Call hook(grad) when this tensor's gradient is computed; it may return a replacement."""
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    from .autograd._hooks import register_tensor_hook
    return register_tensor_hook(self, hook)


def register_post_accumulate_grad_hook(self, hook):
    """Call hook(tensor) after this leaf's .grad has been accumulated."""
    from .autograd._hooks import register_post_accumulate_grad_hook
    return register_post_accumulate_grad_hook(self, hook)


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    from .autograd import backward
    backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def detach(self):
    """A tensor sharing this one's data and version counter, cut from the graph (not a view: in-place
    ops on it record on it alone, as in PyTorch)."""
    if _dispatch.CAPTURE[0] is not None and _traced(self):
        # in a traced function (tapegrad.func's transforms) the transform must not differentiate through it
        import jax
        return Tensor._wrap(jax.lax.stop_gradient(self._peek()), self._inference)
    view = self._view
    if view is not None:
        from ._views import ViewInfo
        view = ViewInfo(None, view.steps, view.positions, view.version, view.value)
    return object.__new__(Tensor)._init(self._storage, view, self._inference)


def _traced(t):
    import jax
    return isinstance(t._peek(), jax.core.Tracer)


def detach_(self):
    """Cut this tensor from the graph in place. A backward that reads it as saved then raises PyTorch's
    error; the retain_grad() of its former grad_fn still fills its .grad, as in PyTorch."""
    if self._view is not None and self._view.base is not None:   # any view, with a history or not
        raise RuntimeError(
            "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel "
            "(DDP) for training, and gradient_as_bucket_view is set as True, gradients are views of DDP "
            "buckets, and hence detach_() cannot be called on these gradients. To fix this error, please "
            "refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
    if self._grad_fn is not None:
        self._storage.counter.detach(self._grad_fn, self._out_idx)
    self._grad_fn = None
    self._out_idx = 0
    self._requires_grad = False
    return self


@property
def data(self):
    return self.detach()


@data.setter
def data(self, value):
    # `.data = t` rebinds this tensor to t's storage without autograd knowing (as in PyTorch).
    if not isinstance(value, Tensor):
        raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
    self._storage = value._storage
    self._view = value._view


Tensor.requires_grad = requires_grad
Tensor.requires_grad_ = requires_grad_
Tensor.is_leaf = is_leaf
Tensor.grad_fn = grad_fn
Tensor.output_nr = output_nr
Tensor.grad = grad
Tensor.retains_grad = retains_grad
Tensor.retain_grad = retain_grad
Tensor.register_hook = register_hook
Tensor.register_post_accumulate_grad_hook = register_post_accumulate_grad_hook
Tensor.backward = backward
Tensor.detach = detach
Tensor.detach_ = detach_
Tensor.data = data
