"""tapegrad.backends.cuda: `matmul.allow_tf32` (JAX's matmul precision) and is_built()."""
from .. import _flags
from ._probe import has_devices, has_plugin


def is_built():
    """Whether JAX can run on NVIDIA GPUs here (its CUDA plugin is installed, or a GPU backend runs)."""
    return has_devices("gpu") or has_plugin("jax_cuda12_plugin", "jax_cuda13_plugin", "jax_plugins.xla_cuda12",
                                            "jax_plugins.xla_cuda13")


def _check_bool(setter, value):
    if not isinstance(value, bool):
        raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}")


class cuBLASModule:
    """torch.backends.cuda.matmul: allow_tf32 is JAX's matmul precision; the reduced-precision
    reduction flags are stored (XLA chooses its own accumulation for float16/bfloat16)."""

    _stored = {"allow_fp16_reduced_precision_reduction": True, "allow_bf16_reduced_precision_reduction": True}

    def __getattr__(self, name):
        if name == "allow_tf32":
            return _flags.get_float32_matmul_precision() != "highest"
        if name in self._stored:
            return self._stored[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        if name == "allow_tf32":
            _check_bool("set_allow_tf32_cublas", value)
            _flags.set_float32_matmul_precision("high" if value else "highest")
        elif name in self._stored:
            _check_bool(f"set_{name}", value)
            self._stored[name] = value
        else:
            raise AttributeError(f"Unknown attribute {name}")


matmul = cuBLASModule()
