"""autograd.graph: hooks on the tensors the graph saves for backward (PyTorch's saved_tensors_hooks).

Inside `saved_tensors_hooks(pack, unpack)`, every tensor an op saves for its backward is handed to
`pack(tensor)`, and the node keeps what pack returns instead of the value; each backward that needs it
calls `unpack(packed)` for the tensor to use. tapegrad saves the inputs a gradient formula reads (JAX's
VJP tells which), which for a few ops (exp, tanh, sigmoid) is the input where PyTorch saves the result.
Graphs with packed values run on the general backward path.
"""
import contextlib

from ._node import Node  # noqa: F401  (torch.autograd.graph.Node)

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "Node"]

_stack = []          # active (pack, unpack) pairs, innermost last
_disabled = [None]   # the error message while saved-tensor hooks are disabled


class saved_tensors_hooks:
    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        if _disabled[0] is not None:
            raise RuntimeError(_disabled[0])
        _stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _stack.pop()


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors in host memory, moving them back to their device for the backward."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(t):
            return t.device, t.cpu()

        def unpack(packed):
            device, t = packed
            return t.to(device)
        super().__init__(pack, unpack)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    prev = _disabled[0]
    _disabled[0] = error_message
    try:
        yield
    finally:
        _disabled[0] = prev


class Packed:
    """What a node keeps for a saved value under saved_tensors_hooks."""

    __slots__ = ("packed", "unpack", "shape", "dtype")

    def __init__(self, tensor, pack, unpack):
        self.packed = pack(tensor)
        self.unpack = unpack
        self.shape, self.dtype = tuple(tensor.shape), tensor.dtype.np


def pack(tensor):
    """The value a node keeps for `tensor` (packed when hooks are active)."""
    hook = _stack[-1]
    return Packed(tensor, *hook)


def unpacked(value):
    """A kept value as the backward reads it: unpacked when it was packed."""
    if type(value) is Packed:
        from .._tensor import Tensor
        t = value.unpack(value.packed)
        if not isinstance(t, Tensor):
            raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(t).__name__}")
        return t._peek()
    return value
