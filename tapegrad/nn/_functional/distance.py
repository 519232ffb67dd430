"""cosine_similarity and pairwise_distance, composed as PyTorch composes them."""
from ... import _functional as TF, linalg
from ..._dispatch import apply
from ..._functional._common import check_tensors, result_dtype, wrap_dim
from ..._ops import elementwise as E, linalg as L
from ..._grad_mode import no_grad
from ..._arg_types import as_bool
from ..._tensor import _wrap_dim
from ._util import SCALAR_NAMES


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    check_tensors("cosine_similarity", (x1, "x1"), (x2, "x2"))
    common = result_dtype(x1, x2)
    if not common.is_floating_point:
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{SCALAR_NAMES[common.name]}. Convert the inputs first, e.g. x1.float().")
    x1, x2 = (x if x.dtype.is_floating_point else x.to(common) for x in (x1, x2))
    if tuple(x1.shape) != tuple(x2.shape):
        x1, x2 = TF.broadcast_tensors(x1, x2)
    dim = _wrap_dim(dim, x1.ndim)
    # Each input is divided by its norm first (keeps the result within [-1, 1]); the norms are clamped to eps
    # outside the graph, so the gradient is that of the unclamped norm, as in PyTorch.
    n1 = linalg.vector_norm(x1, 2, dim=dim, keepdim=True).clone()
    n2 = linalg.vector_norm(x2, 2, dim=dim, keepdim=True).clone()
    with no_grad():
        n1.clamp_min_(eps)
        n2.clamp_min_(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    check_tensors("pairwise_distance", (x1, "x1"), (x2, "x2"))
    # ATen's composite: at::norm(x1 - x2 + eps, p, innermost dim), eps added as a Scalar (AddBackward1)
    innermost = max(x1.ndim, x2.ndim) - 1
    diff = apply(E.add_scalar, x1 - x2, eps)
    return apply(L.vector_norm, diff, ord=p, dim=(wrap_dim(innermost, diff.ndim),) if diff.ndim else None,
                 keepdim=as_bool(keepdim, "keepdim"), aten=True)
