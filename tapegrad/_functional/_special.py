"""Special elementwise functions (xlogy, sinc, copysign), and diff, the n-th difference along a dim."""
import builtins

from .. import _dtypes as D
from .._ops import elementwise as E
from ._arith import _apply, _binary
from ._common import scalar_or_tensor
from ._comparison import logical_xor
from ._unary import _unary


xlogy = _binary(E.xlogy)
sinc = _unary(E.sinc)


def copysign(input, other, *, out=None):
    return _apply(E.copysign, input, scalar_or_tensor(other))


def diff(input, n=1, dim=-1, prepend=None, append=None):
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    from ._joins import cat
    from ._splits import narrow
    from ._common import wrap_dim
    d = wrap_dim(dim, input.ndim)
    parts = [t for t in (prepend, input, append) if t is not None]
    result = cat(parts, d) if len(parts) > 1 else input
    if n == 0:
        return result.clone()
    # Each order is the later slice minus the earlier one (logical_xor for bool), as PyTorch computes it.
    size = result.shape[d]
    for _ in range(builtins.min(n, size)):
        size -= 1
        later, earlier = narrow(result, d, 1, size), narrow(result, d, 0, size)
        result = logical_xor(later, earlier) if result.dtype is D.bool_ else later - earlier
    return result
