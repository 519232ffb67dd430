"""Parameter: a leaf Tensor that a Module registers as one of its parameters."""
from .._tensor import Tensor


class Parameter(Tensor):
    """A Tensor that `Module.__setattr__` registers as a parameter; a leaf with requires_grad=True.

    It shares storage (and version counter) with the tensor it wraps, as in PyTorch.
    """

    _is_parameter = True

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from .._creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter expects a Tensor as data, but got {type(data).__name__}. "
                            "Wrap it first: nn.Parameter(torch.tensor(data)).")
        if cls is Parameter and hasattr(data, "_placements"):   # nn.Parameter(dtensor) is a DTensor, as PyTorch's
            from ..distributed.tensor._dtensor import to_parameter
            return to_parameter(data, requires_grad)
        return cls._from_tensor(data, requires_grad)

    def __init__(self, data=None, requires_grad=True):
        pass

    @classmethod
    def _from_tensor(cls, data, requires_grad=None):
        p = object.__new__(cls)
        p._storage = data._storage
        p._view = data.detach()._view   # PyTorch's parameter of a view shares its data but is no view
        p._grad_fn = None
        p._out_idx = 0
        p._requires_grad = False
        p._grad = None
        p._retains_grad = False
        p._accumulator = None
        p._inference = data._inference
        p._hooks = None
        p.requires_grad_(data._requires_grad if requires_grad is None else requires_grad)
        return p

    def __reduce_ex__(self, protocol):
        import numpy as np
        return (_rebuild_parameter, (np.asarray(self._value), self._requires_grad))


def _rebuild_parameter(array, requires_grad):
    from .._creation import tensor
    return Parameter(tensor(array), requires_grad)



from ._uninitialized import (  # noqa: E402,F401  (PyTorch defines them in nn.parameter)
    UninitializedTensorMixin, UninitializedParameter, UninitializedBuffer, Buffer, is_lazy)
