"""PyTorch's words for setting a read-only Tensor attribute (x.shape = ..., x.grad_fn = None): its properties
without a setter get one that raises them. Imported once every module has attached its properties."""
from ._tensor import Tensor


def _refuse(name):
    def fset(self, value):
        raise AttributeError(f"attribute '{name}' of 'torch._C.TensorBase' objects is not writable")
    return fset


for _name, _attr in list(vars(Tensor).items()):
    if isinstance(_attr, property) and _attr.fset is None and not _name.startswith("__"):
        setattr(Tensor, _name, property(_attr.fget, _refuse(_name), _attr.fdel, _attr.__doc__))
