"""tapegrad: PyTorch's eager, stateful autograd on JAX's compiled core.

    import tapegrad as torch   # PyTorch code runs unchanged

JAX's 64-bit mode is switched on at import (PyTorch needs int64 and float64);
tapegrad always passes explicit dtypes, but other JAX code in the same process
sees 64-bit defaults too.

Compiled programs are cached on disk across runs, in ~/.cache/tapegrad/xla (bounded to 1 GiB);
TAPEGRAD_COMPILATION_CACHE=off turns that off, TAPEGRAD_COMPILATION_CACHE=<dir> moves it.
"""
import jax as _jax

_jax.config.update("jax_enable_x64", True)

from . import _warm_start  # noqa: E402

_warm_start.enable()   # programs compiled by earlier runs load from disk (see _warm_start)

from ._dtypes import (  # noqa: E402
    dtype, bool_ as bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
    complex64, complex128, set_default_dtype, get_default_dtype, promote_types)
from ._dtypes import ALIASES as _ALIASES  # noqa: E402
from ._size import Size  # noqa: E402
from ._type_info import finfo, iinfo  # noqa: E402
from .device import device  # noqa: E402
from ._grad_mode import (  # noqa: E402
    no_grad, enable_grad, set_grad_enabled, inference_mode, is_grad_enabled, is_inference_mode_enabled)
from ._tensor import Tensor  # noqa: E402
from . import _tensor_autograd, _tensor_conversions  # noqa: E402,F401  (attach autograd attributes, conversions)
from . import _views  # noqa: E402,F401  (binds view creation into dispatch)
from . import _methods  # noqa: E402,F401  (attaches Tensor methods)
from . import _tensor_extras  # noqa: E402,F401  (Tensor.unfold, sum_to_size, fill_diagonal_, new...)
from . import _tensor_layout, _tensor_dtype_device  # noqa: E402,F401  (attach Tensor's layout, to() and new_*)
from . import _tensor_readonly  # noqa: E402,F401  (after every property: PyTorch's words for x.shape = ...)
from .storage import TypedStorage, UntypedStorage  # noqa: E402  (and Tensor.storage(), untyped_storage())
from ._creation import (  # noqa: E402
    tensor, as_tensor, from_numpy, zeros, ones, empty, full, zeros_like, ones_like, empty_like, full_like,
    arange, linspace, logspace, tril_indices, triu_indices, eye, scalar_tensor, set_default_device,
    get_default_device)
from .random import (  # noqa: E402
    manual_seed, seed, initial_seed, get_rng_state, set_rng_state, Generator, default_generator, rand, randn,
    randint, randperm, normal, rand_like, randn_like, randint_like)
from ._functional import (  # noqa: E402
    add, sub, subtract, rsub, mul, multiply, div, divide, true_divide, floor_divide, remainder, fmod, pow,
    maximum, minimum, atan2, clamp, clip, clamp_min, clamp_max, where, neg, negative, abs, absolute, sign, exp,
    log, sqrt, rsqrt, sin, cos, tan, tanh, sigmoid, relu, reciprocal, square, floor, ceil, trunc, round, eq, ne,
    not_equal, lt, less, le, less_equal, gt, greater, ge, greater_equal, logical_and, logical_or, logical_xor,
    logical_not, bitwise_and, bitwise_or, bitwise_xor, bitwise_not, clone, sum, mean, matmul, mm, reshape,
    flatten, transpose, swapaxes, swapdims, t, permute, unsqueeze, squeeze)
from ._functional import *  # noqa: E402,F401,F403  (the whole functional API: torch.gather, torch.topk...)
from ._functional._random import _standard_gamma  # noqa: E402,F401  (PyTorch's torch._standard_gamma)
from . import linalg, fft  # noqa: E402
from . import special  # noqa: E402
from ._lowrank import svd_lowrank, pca_lowrank  # noqa: E402
from ._linalg_legacy import (  # noqa: E402  (torch.lu, lu_solve, triangular_solve, ...; removed ones raise)
    lu, lu_unpack, lu_solve, triangular_solve, cholesky_solve, cholesky_inverse, geqrf, orgqr, ormqr, inverse,
    matrix_rank, lstsq, eig, symeig, solve)
from ._functional import _return_types as return_types  # noqa: E402
from ._printing import set_printoptions, get_printoptions  # noqa: E402
from . import autograd  # noqa: E402
from .autograd import is_anomaly_enabled, is_anomaly_check_nan_enabled  # noqa: E402
from .autograd import _api as _autograd_api  # noqa: E402,F401  (the engine loads with the package, not at the first backward)
from . import nn  # noqa: E402
from ._nn_functions import (  # noqa: E402  (torch.kl_div, torch.threshold...; Tensor.hardshrink, Tensor.prelu)
    hardshrink, threshold, rrelu, prelu, kl_div, binary_cross_entropy_with_logits, native_dropout,
    conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d, conv_transpose3d, avg_pool1d, adaptive_avg_pool1d,
    max_pool1d, max_pool2d, max_pool3d, cosine_similarity, pairwise_distance, pixel_shuffle, pixel_unshuffle,
    dropout, alpha_dropout, feature_alpha_dropout, batch_norm, instance_norm, layer_norm, group_norm, embedding,
    celu, selu, celu_, selu_, rrelu_, threshold_, bilinear, cosine_embedding_loss, hinge_embedding_loss,
    margin_ranking_loss, triplet_margin_loss, poisson_nll_loss, adaptive_max_pool1d, channel_shuffle,
    native_channel_shuffle, rms_norm)
from .nn._functional.activation import (  # noqa: E402
    softmax_function as softmax, log_softmax_function as log_softmax)
from .nn._functional.ctc import aten_ctc_loss as ctc_loss  # noqa: E402  (reduction as an int, as ATen's)
from . import optim, utils, distributions, multiprocessing, nested  # noqa: E402
from . import func  # noqa: E402
from .func import vmap  # noqa: E402
from . import sparse, masked  # noqa: E402  (sparse COO tensors, MaskedTensor)
from ._layout import layout, strided, sparse_coo, sparse_csr, sparse_csc, sparse_bsr, sparse_bsc, jagged  # noqa: E402
from .sparse import sparse_coo_tensor, spmm, sparse_csr_tensor, sparse_csc_tensor  # noqa: E402
from .sparse import sparse_bsr_tensor, sparse_bsc_tensor, sparse_compressed_tensor  # noqa: E402
from ._compile import compile  # noqa: E402
from . import _dynamo  # noqa: E402,F401  (torch._dynamo.exc.Unsupported)
from .serialization import save, load  # noqa: E402
from ._interop import from_jax, from_dlpack  # noqa: E402  (jax.Array and DLPack interop; Tensor.jax())
from ._faults import OutOfMemoryError  # noqa: E402
# PyTorch's legacy API and device probing: typed tensor classes, Tensor.type(), torch.cuda, backends flags.
from ._legacy import (  # noqa: E402
    is_tensor, is_storage, is_floating_point, is_complex, numel, get_device, is_inference, detach,
    set_default_tensor_type)
from ._legacy import CPU_CLASSES as _CPU_CLASSES  # noqa: E402
from ._memory_format import (  # noqa: E402,F401
    memory_format, contiguous_format, channels_last, channels_last_3d, preserve_format)
from ._flags import (  # noqa: E402
    set_float32_matmul_precision, get_float32_matmul_precision, use_deterministic_algorithms,
    are_deterministic_algorithms_enabled, is_deterministic_algorithms_warn_only_enabled,
    set_deterministic_debug_mode, get_deterministic_debug_mode)
from ._flags import set_warn_always, is_warn_always_enabled, set_flush_denormal  # noqa: E402
from . import cuda, accelerator, backends  # noqa: E402
from . import profiler  # noqa: E402,F401
from . import amp, cpu  # noqa: E402,F401
from .amp import autocast, is_autocast_enabled, get_autocast_dtype  # noqa: E402,F401
from . import distributed, futures  # noqa: E402,F401

globals().update(_CPU_CLASSES)   # FloatTensor, DoubleTensor, LongTensor, ...
from ._inplace_functions import FUNCTIONS as _INPLACE_FUNCTIONS  # noqa: E402
globals().update(_INPLACE_FUNCTIONS)   # torch.sin_(x), torch.clamp_(x, 0, 1), ...
from ._functional._linalg_functions import svd_legacy as svd  # noqa: E402  (torch.svd: V, some, compute_uv)
from ._functional._linalg_functions import qr_legacy as qr  # noqa: E402  (torch.qr: some)
from ._strided import empty_strided  # noqa: E402
from . import _pinned  # noqa: E402,F401  (Tensor.pin_memory, Tensor.is_pinned)
from . import _shared_memory, _apply  # noqa: E402,F401  (Tensor.share_memory_, is_shared; apply_, map_, map2_)
from ._resize import resize_as_  # noqa: E402  (and Tensor.resize_, resize_as_, resize, resize_as)
from ._threads import (  # noqa: E402
    get_num_threads, set_num_threads, get_num_interop_threads, set_num_interop_threads, init_num_threads)
from ._asarray import asarray  # noqa: E402
from ._range import range  # noqa: E402  (deprecated: torch.range includes its end)

half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble = complex64, complex128
import math as _math  # noqa: E402
inf, nan, pi, e, newaxis = _math.inf, _math.nan, _math.pi, _math.e, None

__version__ = "0.1.0"

from ._argument_errors import (  # noqa: E402
    pack_int_varargs as _pack_int_varargs, parse_all as _parse_all, refuse_loose_int_lists as _refuse_loose_int_lists)
# PyTorch's errors for arguments that fit none of its signatures, on the public functions and methods not parsed
# yet (the public names only: tapegrad's own calls into _functional pay no wrapper)
_parse_all(globals(), list(globals()), "function")
_refuse_loose_int_lists(globals(), "function")   # torch.flip(x, 1): PyTorch takes no lone int for its int list
_parse_all(Tensor, list(vars(Tensor)), "method")
_pack_int_varargs(Tensor)   # x.tile(2, 3), x.squeeze(0, 1): several ints as the one int list, as PyTorch

from . import _gc_policy  # noqa: E402
_gc_policy.apply()   # full garbage collections ten times rarer: the tape's objects form no cycles

from . import _public_paths  # noqa: E402
_public_paths.publish()   # <class 'tapegrad.Tensor'>: public classes show PyTorch's module paths

_LAZY_MODULES = frozenset({"jit", "fx", "onnx", "export", "testing", "hub", "version", "classes", "ops",
                           "functional"})   # imported on first use


def __getattr__(name):
    if name in _LAZY_MODULES:
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'tapegrad' has no attribute {name!r}")
