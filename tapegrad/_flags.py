"""Global numerics flags: float32 matmul precision (JAX's) and deterministic algorithms (stored).

`set_float32_matmul_precision` sets JAX's `jax_default_matmul_precision`, which XLA applies to every
float32 matmul and convolution traced afterwards (jax.jit retraces when it changes):

    PyTorch     JAX                 float32 inputs multiplied as
    'highest'   'float32'           float32
    'high'      'tensorfloat32'     TF32 on GPUs (bf16 x3 on TPUs)
    'medium'    'bfloat16'          bfloat16

`get_float32_matmul_precision` reads JAX's setting back. JAX's own default (None) depends on the
device: full float32 on CPUs, TF32 on recent NVIDIA GPUs, one bfloat16 pass on TPUs. PyTorch's default
is 'highest' on every device, so importing tapegrad sets JAX's default to float32 unless it was already
chosen (JAX_DEFAULT_MATMUL_PRECISION or jax.config): the same matmul numerics as PyTorch on a GPU, and
'high' a call away as in PyTorch. `torch.backends.cuda.matmul.allow_tf32` is the same setting seen as a flag.

Determinism is stored only: XLA runs deterministically on CPUs, and on GPUs only when started with
XLA_FLAGS=--xla_gpu_deterministic_ops=true (a process-wide flag read before the first computation).
"""
import warnings

import jax

_TO_JAX = {"highest": "float32", "high": "tensorfloat32", "medium": "bfloat16"}
_FROM_JAX = {"float32": "highest", "highest": "highest", "F32_F32_F32": "highest",
             "tensorfloat32": "high", "high": "high", "TF32_TF32_F32": "high", "BF16_BF16_F32_X3": "high",
             "bfloat16": "medium", "default": "medium", "BF16_BF16_F32": "medium"}
_BACKEND_DEFAULT = {"cpu": "highest", "gpu": "high", "cuda": "high", "rocm": "high", "tpu": "medium"}


def set_float32_matmul_precision(precision):
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got {type(precision).__name__}")
    if precision not in _TO_JAX:
        # PyTorch warns and keeps the current setting
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    jax.config.update("jax_default_matmul_precision", _TO_JAX[precision])


def get_float32_matmul_precision():
    value = jax.config.jax_default_matmul_precision
    if value is None:
        return _BACKEND_DEFAULT.get(jax.default_backend(), "highest")
    return _FROM_JAX.get(value, "highest")


if jax.config.jax_default_matmul_precision is None:
    jax.config.update("jax_default_matmul_precision", _TO_JAX["highest"])

_deterministic = {"mode": False, "warn_only": False}


def use_deterministic_algorithms(mode, *, warn_only=False):
    for name, value in (("mode", mode), ("warn_only", warn_only)):
        if not isinstance(value, bool):
            raise TypeError(f"_set_deterministic_algorithms(): argument '{name}' must be bool, not "
                            f"{type(value).__name__}")
    _deterministic.update(mode=mode, warn_only=warn_only)


def are_deterministic_algorithms_enabled():
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled():
    return _deterministic["warn_only"]
