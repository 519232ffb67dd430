"""Tensor subclasses that run ops themselves (sparse, masked, jagged nested): their storage and autograd.

Such a tensor has no dense storage. `_dispatch.apply` reading its storage gets `Redirect(handler)` and
hands the op to the subclass's handler, as PyTorch's dispatcher hands an op to a layout's kernels; any
other dense access raises the subclass's refusal. Its autograd state is that of one inner tensor (the
values, the data), whose gradient the subclass presents in its own form.
"""
from ._dispatch import Redirect


class RedirectingStorage:
    """handler() -> the subclass's op handler (looked up at the call: it may live in a module imported
    later); refusal: (exception type, message) for any other read."""

    __slots__ = ("handler", "refusal")

    def __init__(self, handler, refusal):
        self.handler, self.refusal = handler, refusal

    @property
    def _raw(self):
        raise Redirect(self.handler())

    def __getattr__(self, name):
        kind, message = self.refusal
        raise kind(message)


class InnerAutograd:
    """requires_grad, requires_grad_(), is_leaf and grad_fn of the inner tensor in attribute `_autograd_inner`
    (the subclass defines `grad`, which presents the inner gradient in its own form)."""

    __slots__ = ()
    _autograd_inner = None

    @property
    def requires_grad(self):
        return getattr(self, self._autograd_inner).requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        getattr(self, self._autograd_inner).requires_grad_(flag)

    def requires_grad_(self, requires_grad=True):
        getattr(self, self._autograd_inner).requires_grad_(requires_grad)
        return self

    @property
    def is_leaf(self):
        return getattr(self, self._autograd_inner).is_leaf

    @property
    def grad_fn(self):
        return getattr(self, self._autograd_inner).grad_fn
