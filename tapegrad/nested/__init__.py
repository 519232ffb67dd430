"""tapegrad.nested: PyTorch's nested tensors for the simple cases (a list of tensors of one rank).

Supported: `nested_tensor(list)`, `as_nested_tensor`, `size`/`dim`/`is_nested`, `unbind`,
`to_padded_tensor`, and printing. Other ops on a NestedTensor raise a TypeError; pad the tensors
(`to_padded_tensor`) to compute with them.
"""
from ._nested import NestedTensor, as_nested_tensor, nested_tensor, to_padded_tensor  # noqa: F401
