"""tapegrad.backends.cuda: `matmul.allow_tf32` (JAX's matmul precision), is_built() and the attention-backend
flags (stored; they change nothing under XLA)."""
import contextlib
import enum

from .. import _flags
from ._probe import has_devices, has_plugin
from .._user_frames import warn_user


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


# ---- scaled dot-product attention backends ----------------------------------------------------------
# PyTorch picks a fused attention kernel by these flags; tapegrad's attention is one XLA computation
# whatever they say (XLA fuses it), so they are stored and reported, and change nothing.
class SDPBackend(enum.Enum):
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4

    def __int__(self):
        return self.value


_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def _sdp_flag(name):
    def enable(enabled):
        _sdp[name] = bool(enabled)

    def enabled():
        return _sdp[name]
    return enable, enabled


enable_flash_sdp, flash_sdp_enabled = _sdp_flag("flash")
enable_mem_efficient_sdp, mem_efficient_sdp_enabled = _sdp_flag("mem_efficient")
enable_math_sdp, math_sdp_enabled = _sdp_flag("math")
enable_cudnn_sdp, cudnn_sdp_enabled = _sdp_flag("cudnn")


@contextlib.contextmanager
def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    warn_user("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will be "
              "removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context manager, with updated "
              "signature.", FutureWarning)
    saved = dict(_sdp)
    _sdp.update(flash=bool(enable_flash), math=bool(enable_math), mem_efficient=bool(enable_mem_efficient),
                cudnn=bool(enable_cudnn))
    try:
        yield {}
    finally:
        _sdp.update(saved)
