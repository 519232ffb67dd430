"""Global flags: float32 matmul precision (JAX's), deterministic algorithms (stored), warnings once or always,
flushing denormals.

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

`set_warn_always(True)` makes the warnings PyTorch gives once per process (TORCH_WARN_ONCE: deprecations,
complex-to-real casts...) come every time: each such site asks `warn_once`.

`set_flush_denormal` sets the calling thread's flush-to-zero and denormals-are-zero bits (MXCSR on x86-64,
FPCR's FZ on AArch64, Linux), as PyTorch does: what runs on that thread (the NumPy tier, first calls) follows
it. XLA's CPU runtime runs compiled programs on its own threads and flushes denormals there whatever the mode.
"""
import ctypes
import platform
import sys

import jax
from ._user_frames import warn_user

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
        warn_user(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                  "setFloat32MatmulPrecision call has no effect.", UserWarning)
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


_DEBUG_MODES = ("default", "warn", "error")


def set_deterministic_debug_mode(debug_mode):
    """use_deterministic_algorithms by a level: 0 / "default" off, 1 / "warn" warn only, 2 / "error" on."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got "
                               f"{debug_mode}")
        debug_mode = _DEBUG_MODES.index(debug_mode)
    elif isinstance(debug_mode, int):
        if debug_mode not in (0, 1, 2):
            raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    else:
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """0, 1 or 2: see set_deterministic_debug_mode."""
    if not _deterministic["mode"]:
        return 0
    return 1 if _deterministic["warn_only"] else 2


# ---- one-argument builtins: PyTorch's METH_O / METH_NOARGS errors ----------------------------------------------

def one_argument(name, args, kwargs):
    """The one positional argument of PyTorch's C function torch.<name>, with CPython's errors otherwise."""
    if kwargs:
        raise TypeError(f"torch.{name}() takes no keyword arguments")
    if len(args) != 1:
        raise TypeError(f"torch.{name}() takes exactly one argument ({len(args)} given)")
    return args[0]


def no_arguments(name, args, kwargs):
    if kwargs:
        raise TypeError(f"torch.{name}() takes no keyword arguments")
    if args:
        raise TypeError(f"torch.{name}() takes no arguments ({len(args)} given)")


def type_name(value):
    """The name PyTorch prints for a value's type (CPython's tp_name)."""
    from ._argument_errors import _tp_name   # (on the error path only)
    return _tp_name(value)


# ---- warnings once or always ------------------------------------------------------------------------------------

_warn_always = [False]


def set_warn_always(b, /):
    """When b is False (the default), some warnings come once per process, as PyTorch's; True makes them come
    every time, which helps when debugging."""
    if type(b) is not bool:
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type_name(b)}")
    _warn_always[0] = b


def is_warn_always_enabled():
    """Whether set_warn_always(True) is on."""
    return _warn_always[0]


def warn_once(seen, key):
    """TORCH_WARN_ONCE's test for the warning `key`: due the first time (then recorded in `seen`: a set, or a dict
    or list holding a flag at `key`) and every time while set_warn_always(True) is on, which records nothing (so
    the first warning after it is turned off still comes, as in PyTorch)."""
    if _warn_always[0]:
        return True
    if isinstance(seen, set):
        due = key not in seen
        seen.add(key)
    else:
        due = not seen[key]
        seen[key] = True
    return due


# ---- flush denormals ---------------------------------------------------------------------------------------------

# machine -> (offset of the control word in glibc's fenv_t, its flush bits): MXCSR's FTZ and DAZ, FPCR's FZ
_FLUSH_BITS = {"x86_64": (28, (1 << 15) | (1 << 6)), "AMD64": (28, (1 << 15) | (1 << 6)),
               "aarch64": (0, 1 << 24), "arm64": (0, 1 << 24)}


def set_flush_denormal(*args, **kwargs):
    """set_flush_denormal(mode) -> bool: flush denormal floats to zero on this thread's CPU arithmetic (True) or
    keep them (False). Returns True where the flags could be set (x86-64 and AArch64 Linux), else False, as
    PyTorch on a CPU without such a mode. XLA's compiled CPU programs flush denormals whatever the mode."""
    mode = one_argument("set_flush_denormal", args, kwargs)
    if type(mode) is not bool:
        raise RuntimeError(f"flush_denormal expects a bool, but got {type_name(mode)}")
    where = _FLUSH_BITS.get(platform.machine())
    if where is None or not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None)
    except OSError:
        return False
    env = (ctypes.c_uint8 * 64)()   # (larger than fenv_t: 32 bytes on x86-64, 8 on AArch64)
    if libc.fegetenv(env) != 0:
        return False
    offset, bits = where
    word = ctypes.c_uint32.from_buffer(env, offset)
    word.value = (word.value | bits) if mode else (word.value & ~bits)
    return libc.fesetenv(env) == 0
