"""tapegrad.nested: PyTorch's nested tensors.

The strided layout (the default) covers the simple cases: `nested_tensor(list)`, `as_nested_tensor`,
`size`/`dim`/`is_nested`, `unbind`, `to_padded_tensor`, and printing; other ops on it raise a TypeError. The
jagged layout (`layout=tapegrad.jagged`, `nested_tensor_from_jagged`, `narrow`) holds the components in one
values tensor and runs elementwise and per-dimension ops on it, with gradients (see _jagged.py).
"""
from ._nested import NestedTensor, as_nested_tensor, nested_tensor, to_padded_tensor  # noqa: F401
from ._jagged_create import nested_tensor_from_jagged  # noqa: F401


def narrow(tensor, dim, start, length, layout=None):
    """A nested tensor of tensor[b, start[b]:start[b] + length[b]] per row b (a view with layout=jagged)."""
    from .._layout import jagged
    from ._jagged_create import narrow as jagged_narrow
    if layout is jagged:
        return jagged_narrow(tensor, dim, start, length)
    raise RuntimeError("tapegrad's nested narrow() makes jagged nested tensors only: pass layout=tapegrad.jagged.")
