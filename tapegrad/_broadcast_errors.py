"""PyTorch's error for tensors whose shapes do not broadcast, in place of JAX's (a ValueError or TypeError
"incompatible shapes for broadcasting" from an op's abstract evaluation)."""
import re

from ._tensor import Tensor

_JAX_BROADCAST = re.compile(r"incompatible shapes for broadcasting", re.IGNORECASE)


def broadcast_error(args):
    """RuntimeError naming the first dim where two of the tensors in `args` do not broadcast, or None."""
    return broadcast_mismatch([tuple(a.shape) for a in args if isinstance(a, Tensor)])


def broadcast_mismatch(shapes):
    """PyTorch's RuntimeError for shapes that do not broadcast together (None when they do)."""
    for i, a in enumerate(shapes):
        for b in shapes[i + 1:]:
            for k in range(1, min(len(a), len(b)) + 1):
                if a[-k] != b[-k] and a[-k] != 1 and b[-k] != 1:
                    return RuntimeError(f"The size of tensor a ({a[-k]}) must match the size of tensor b ({b[-k]}) "
                                        f"at non-singleton dimension {max(len(a), len(b)) - k}")
    return None


def from_jax(error, args):
    """The PyTorch error for JAX's broadcasting failure `error` of an op called on `args`, or None."""
    if not _JAX_BROADCAST.search(str(error)):
        return None
    return broadcast_error(args)
