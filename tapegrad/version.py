"""tapegrad.version (PyTorch's torch.version): tapegrad's version, and the CUDA version GPU programs run with.

`cuda` is None unless JAX runs on CUDA through its pip plugin, whose CUDA runtime wheel
(nvidia-cuda-runtime-cu<N>) gives the version as PyTorch's "major.minor" (None when CUDA was installed
outside pip); `hip` is None (no ROCm build).
"""
import importlib.metadata as _metadata

from . import __version__

__all__ = ["__version__", "cuda", "hip", "debug", "git_version"]


def _cuda_version():
    for major in ("13", "12", "11"):
        try:
            _metadata.version(f"jax-cuda{major}-plugin")
        except _metadata.PackageNotFoundError:
            continue
        for runtime in (f"nvidia-cuda-runtime-cu{major}", "nvidia-cuda-runtime"):
            try:
                return ".".join(_metadata.version(runtime).split(".")[:2])
            except _metadata.PackageNotFoundError:
                pass
    return None   # no CUDA plugin, or a CUDA installed outside pip whose version tapegrad cannot read


cuda = _cuda_version()
hip = None
debug = False
git_version = "Unknown"
