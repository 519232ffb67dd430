"""Pooling's recorded nodes against PyTorch: 1-d pools as 2-d over a unit row (Unsqueeze, pool, Squeeze),
3-d kernels named apart (AdaptiveAvgPool3DBackward0), an adaptive average to size 1 as a mean."""
import numpy as np
import pytest

from conftest import assert_close, both


def _chain(y):
    """(type name, name()) of each node from y's grad_fn down its first edges to the leaf."""
    out, g = [], y.grad_fn
    while g is not None:
        out.append((type(g).__name__, g.name()))
        g = g.next_functions[0][0] if g.next_functions else None
    return out


def _pool(lib, kind, nd, out, batched):
    F = lib.nn.functional
    shape = ([2] if batched else []) + [3] + [6] * nd
    x = lib.tensor(np.random.default_rng(nd).normal(size=shape), dtype=lib.float64, requires_grad=True)
    if kind == "adaptive_max_indices":
        y = getattr(F, f"adaptive_max_pool{nd}d")(x, out, return_indices=True)[0]
    elif kind in ("max_pool", "avg_pool"):
        y = getattr(F, f"{kind}{nd}d")(x, 2)
    else:
        y = getattr(F, f"{kind}{nd}d")(x, out)
    (y * y).sum().backward()
    return _chain(y), y, x.grad


CASES = [(kind, out) for kind in ("adaptive_avg_pool", "adaptive_max_pool", "adaptive_max_indices") for out in (1, 3)]
CASES += [("max_pool", None), ("avg_pool", None)]


@pytest.mark.parametrize("nd", [1, 2, 3])
@pytest.mark.parametrize("kind, out", CASES)
@pytest.mark.parametrize("batched", [True, False])
def test_pool_nodes_values_and_grads(torch, nd, kind, out, batched):
    (chain, y, g), (t_chain, t_y, t_g) = both(lambda lib: _pool(lib, kind, nd, out, batched))
    assert chain == t_chain
    assert_close(y, t_y)
    assert_close(g, t_g)
