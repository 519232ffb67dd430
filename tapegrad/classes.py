"""tapegrad.classes (PyTorch's torch.classes): the namespace of C++ classes registered by extensions.

`load_library` loads a shared library into the process as PyTorch's does (`_native_library.py`);
tapegrad's operations are JAX functions, so no C++ class is ever registered and every class lookup fails
as it does in PyTorch for a namespace no library registered.
"""
from ._native_library import load_library, loaded_libraries

__all__ = ["load_library", "loaded_libraries"]


class _ClassNamespace:
    """torch.classes.<namespace>: every class lookup fails, as for a namespace no library registered."""

    def __init__(self, name):
        self.name = name

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise RuntimeError(f"Tried to instantiate class '{self.name}.{attr}', but it does not exist! Ensure that it "
                           "is registered via torch::class_ (tapegrad registers no C++ classes: write the operation in JAX "
                           "and wrap it with tapegrad.func.from_jax).")


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(f"module 'tapegrad.classes' has no attribute {name!r}")
    return _ClassNamespace(name)
