"""PyTorch's functional API (torch.add, torch.sum, ...) over the op table.

Each function parses PyTorch's arguments into an op's inputs and statics and
calls `apply`; the maths is in `_ops`. One module per family.
"""
from ._common import scalar_or_tensor  # noqa: F401
from ._arith import *  # noqa: F401,F403
from ._arith import pow  # noqa: F401  (builtin names, skipped by *)
from ._unary import *  # noqa: F401,F403
from ._unary import abs, round  # noqa: F401
from ._comparison import *  # noqa: F401,F403
from ._special import *  # noqa: F401,F403
from ._reduce import *  # noqa: F401,F403
from ._reduce import sum, max, min, all, any  # noqa: F401
from ._sort import *  # noqa: F401,F403
from ._shape import *  # noqa: F401,F403
from ._joins import *  # noqa: F401,F403
from ._splits import *  # noqa: F401,F403
from ._rearrange import *  # noqa: F401,F403
from ._index import *  # noqa: F401,F403
from ._linalg import *  # noqa: F401,F403
from ._linalg_functions import *  # noqa: F401,F403
from ._distance import *  # noqa: F401,F403
from ._complex import *  # noqa: F401,F403
from ._complex import complex  # noqa: F401
from ._random import *  # noqa: F401,F403
from ._windows import *  # noqa: F401,F403
from ._stft import *  # noqa: F401,F403
from ._compositions import *  # noqa: F401,F403
from ._statistics import *  # noqa: F401,F403
from ._products import *  # noqa: F401,F403
from ._combinatorics import *  # noqa: F401,F403
from ._integrate import *  # noqa: F401,F403
from ._put import *  # noqa: F401,F403
from ._type_queries import *  # noqa: F401,F403
from ._copies import *  # noqa: F401,F403
from ._gradient import gradient  # noqa: F401
from ._histogramdd import histogramdd  # noqa: F401
from ._segment_reduce import segment_reduce  # noqa: F401
from ._binomial import binomial  # noqa: F401


def _public_names():
    # Every function defined in this package, except argument helpers, the in-place fills (Tensor
    # methods only) and what PyTorch keeps in torch.linalg only (or with other semantics at top level).
    linalg_only = {"linalg_norm", "linalg_cross", "LinAlgError", "inv", "eigh", "eigvalsh", "svdvals", "solve",
                   "solve_triangular",
                   "matrix_norm", "vector_norm", "multi_dot", "svd", "svd_legacy", "qr", "qr_legacy", "pinv",
                   "inner_product",
                   "linalg_cholesky", "linalg_slogdet"}
    return sorted(name for name, value in globals().items()
                  if callable(value) and not name.startswith("_") and not name.endswith("_")
                  and getattr(value, "__module__", "").startswith(__name__)
                  and value.__module__ != __name__ + "._common" and name not in linalg_only)


__all__ = _public_names()

# The functions as they are, before out= is handled: Tensor methods and operators bind these (PyTorch's
# take no out=), sparing every method call the wrapper's frame (about 1 us of an op's 10).
WITHOUT_OUT = {name: globals()[name] for name in __all__}

from ._out import wrap_all as _wrap_all  # noqa: E402
_wrap_all(globals(), __all__)   # out=: each function's result written into the tensor given
