"""tapegrad.backends: PyTorch's torch.backends flags, answered from JAX's devices.

* `cuda.matmul.allow_tf32` is `torch.set_float32_matmul_precision` seen as a flag: True sets JAX's
  `jax_default_matmul_precision` to 'tensorfloat32' (PyTorch's 'high'), False to 'float32'
  ('highest'); reading it reads JAX's setting (see `tapegrad._flags` for the mapping).
* `cudnn.benchmark`, `cudnn.deterministic`, `cudnn.enabled`, `cudnn.allow_tf32` are accepted and
  stored: XLA autotunes its GPU kernels itself, has no cuDNN switch, and applies one precision
  setting to matmuls and convolutions alike (the matmul one above).
* `cuda.is_built()`, `mps.is_available()`... say whether JAX has (or can start) that backend.
"""
from . import cuda, cudnn, mps  # noqa: F401
