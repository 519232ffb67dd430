"""A scatter that writes as `a.at[index].set(v)` and differentiates as PyTorch's index_put, put, index_copy and
scatter: every copy of v written to a repeated position gets its cotangent, where JAX's scatter rule credits only
the copy that lands last. Op-table entries use it as their reverse form (Op.reverse_fn)."""
import jax
import jax.numpy as jnp
import numpy as np

_sets = {}   # key -> its custom-VJP write


def crediting_set(key, make_index):
    """a.at[make_index(arrays)].set(v) with PyTorch's gradient for repeated indices: every written copy of v
    gets its cotangent (JAX's scatter rule credits only the copy that lands last). One per `key`, which
    names make_index (index_put's spec, put's flat indices, index_copy's or scatter's dim)."""
    found = _sets.get(key)
    if found is not None:
        return found

    def written(a, v, arrays):
        return a.at[make_index(arrays)].set(v)
    put = jax.custom_vjp(written)

    def forward(a, v, arrays):   # (the plain write: an enclosing forward-mode transform differentiates it)
        return written(a, v, arrays), (v, arrays)

    def backward(res, g):
        v, arrays = res
        idx = make_index(arrays)
        picked = g[idx]
        lead = picked.ndim - v.ndim
        dv = jnp.sum(picked, axis=tuple(range(lead))) if lead else picked
        dv = jnp.sum(dv, axis=tuple(d for d, n in enumerate(v.shape) if n == 1 and dv.shape[d] != 1), keepdims=True)
        zeros = tuple(np.zeros(x.shape, jax.dtypes.float0) for x in arrays)
        return g.at[idx].set(0), dv.reshape(v.shape), zeros

    put.defvjp(forward, backward)
    _sets[key] = put
    return put
