"""torch.ops.load_library / torch.classes.load_library: load a shared library into the process.

As in PyTorch, the library is opened with ctypes (RTLD_GLOBAL, so libraries loaded later can use its
symbols) and its path is added to one `loaded_libraries` set. Its static initialisers run, so a library
that sets itself up on load works. What a library registers with PyTorch's C++ dispatcher
(TORCH_LIBRARY operators, torch::class_ classes) has nothing to register with here: such a library was
linked against libtorch and fails to load, with an error that says how to bring the operation over.
"""
import ctypes
import os

loaded_libraries = set()

_LIBTORCH_SYMBOLS = ("libtorch", "libc10", "_ZN3c10", "_ZN2at", "_ZN5torch")


def load_library(path):
    path = os.path.realpath(path)
    try:
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    except OSError as exc:
        hint = ""
        if any(s in str(exc) for s in _LIBTORCH_SYMBOLS):
            hint = (" It was built against PyTorch's C++ library (libtorch), which tapegrad does not have: write "
                    "the operation in JAX and wrap it with tapegrad.func.from_jax (gradients from jax.vjp), or "
                    "as a tapegrad.autograd.Function.")
        raise OSError(f"Could not load this library: {path}.{hint}") from exc
    loaded_libraries.add(path)
