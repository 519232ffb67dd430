"""Shape arithmetic the generator needs to keep programs valid (PyTorch's rules)."""
import math


def broadcast(a, b):
    """The broadcast shape of a and b, or None where they do not broadcast."""
    out = []
    for i in range(1, max(len(a), len(b)) + 1):
        x = a[-i] if i <= len(a) else 1
        y = b[-i] if i <= len(b) else 1
        if x != y and 1 not in (x, y):
            return None
        out.append(max(x, y))
    return tuple(reversed(out))


def broadcasts_to(source, target):
    """True where `source` broadcasts to exactly `target` (what an in-place op's other operand needs)."""
    return broadcast(source, target) == tuple(target)


def matmul_shape(a, b):
    """The shape of a @ b, or None where matmul rejects the pair."""
    if not a or not b:
        return None
    if len(a) == 1 and len(b) == 1:
        return () if a[0] == b[0] else None
    if len(b) == 1:
        return a[:-1] if a[-1] == b[0] else None
    if len(a) == 1:
        return b[:-2] + b[-1:] if a[0] == b[-2] else None
    if a[-1] != b[-2]:
        return None
    batch = broadcast(a[:-2], b[:-2])
    return None if batch is None else batch + (a[-2], b[-1])


def numel(shape):
    return math.prod(shape)


def reduced(shape, dim, keepdim):
    """The shape after reducing `dim` (None: every dim)."""
    if dim is None:
        return ()
    dim %= len(shape)
    if keepdim:
        return shape[:dim] + (1,) + shape[dim + 1:]
    return shape[:dim] + shape[dim + 1:]
