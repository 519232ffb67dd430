"""tapegrad.classes (PyTorch's torch.classes): the namespace of C++ classes registered by extensions.

tapegrad runs no C++ extensions (its operations are JAX functions), so no library loads and no
class is ever registered: `load_library` refuses, pointing at the ways to add an operation.
"""
__all__ = ["load_library", "loaded_libraries"]

loaded_libraries = set()


def load_library(path):
    raise NotImplementedError(
        f"tapegrad.classes.load_library({path!r}): C++ extensions (TorchScript classes and operators) cannot "
        "load into tapegrad, whose operations are JAX functions. Write the operation in JAX and wrap it with "
        "tapegrad.func.from_jax (gradients from jax.vjp), or as a tapegrad.autograd.Function.")


class _ClassNamespace:
    """torch.classes.<namespace>: every class lookup fails, as for a namespace no library registered."""

    def __init__(self, name):
        self.name = name

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise RuntimeError(f"Tried to instantiate class '{self.name}.{attr}', but it does not exist! Ensure that it "
                           "is registered via torch::class_ (tapegrad loads no C++ extensions: see "
                           "tapegrad.classes.load_library).")


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(f"module 'tapegrad.classes' has no attribute {name!r}")
    return _ClassNamespace(name)
