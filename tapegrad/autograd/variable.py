from .._user_frames import warn_user
"""Variable: PyTorch's pre-0.4 wrapper, now a function returning a Tensor (as PyTorch's since 0.4).

`isinstance(t, Variable)` is true for every tensor, so old code that checks for it keeps working.
"""


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        from .._tensor import Tensor
        return isinstance(other, Tensor)

    def __call__(cls, data=None, requires_grad=False, volatile=None, **kwargs):
        from .._creation import empty
        from .._tensor import Tensor
        if kwargs:
            raise TypeError(f"'{next(iter(kwargs))}' is an invalid keyword argument for this function")
        if volatile is not None:
            warn_user("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                      UserWarning)
        if data is None:
            return empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}. "
                            "Use torch.tensor(data, requires_grad=...) instead.")
        if requires_grad and not (data.dtype.is_floating_point or data.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients "
                               f"(got {data.dtype}). Convert first, e.g. Variable(t.float(), requires_grad=True).")
        # A new leaf sharing data's storage (PyTorch's Variable(t) is not t, and has no history).
        return data.detach().requires_grad_(bool(requires_grad))


class Variable(metaclass=_VariableMeta):
    """Variable(data, requires_grad=False) returns data as a new leaf Tensor sharing its storage."""
