"""Views whose elements are not a selection of the input's: view(dtype) (the same bytes read as another
dtype) and the parts of complex numbers (view_as_real, view_as_complex; real and imag select from view_as_real).

Each entry carries Op.value_view = (write, positions): how a write through the view changes the input,
and how storage positions map (PyTorch counts strides and offsets in the view's element size).
"""
import jax.numpy as jnp
from jax import lax

from ._registry import defop, KEEP


def _unit(dtype):
    """The dtype bytes are read as: a complex number's part, bool's byte."""
    if jnp.issubdtype(dtype, jnp.complexfloating):
        return jnp.finfo(dtype).dtype
    return jnp.dtype(jnp.uint8) if dtype == jnp.bool_ else dtype


def _bytes(a):
    """a's bytes as uint8 of shape a.shape[:-1] + (-1,) ((itemsize,) for a 0-d array)."""
    lead = a.shape[:-1]
    if jnp.iscomplexobj(a):
        a = jnp.stack([jnp.real(a), jnp.imag(a)], -1)
    elif a.dtype == jnp.bool_:
        a = a.astype(jnp.uint8)
    return lax.bitcast_convert_type(a, jnp.uint8).reshape(lead + (-1,))


def _from_bytes(b, dtype, shape):
    unit = _unit(dtype)
    if unit.itemsize > 1:
        b = b.reshape(b.shape[:-1] + (-1, unit.itemsize))
    x = lax.bitcast_convert_type(b, unit)
    if jnp.issubdtype(dtype, jnp.complexfloating):
        x = x.reshape(x.shape[:-1] + (-1, 2))
        x = lax.complex(x[..., 0], x[..., 1])
    elif dtype == jnp.bool_:
        x = x != 0
    return x.reshape(shape)


def viewed_shape(shape, src, dst):
    """PyTorch's shape of view(dtype): the last dim scales by the ratio of element sizes."""
    src, dst = jnp.dtype(src).itemsize, jnp.dtype(dst).itemsize
    if src == dst:
        return tuple(shape)
    return tuple(shape[:-1]) + (shape[-1] * src // dst,)


def _view_dtype(a, dtype):
    dtype = jnp.dtype(dtype)
    return _from_bytes(_bytes(a), dtype, viewed_shape(a.shape, a.dtype, dtype))


def _view_dtype_positions(p, src, dtype):
    ratio = jnp.dtype(src).itemsize, jnp.dtype(dtype).itemsize
    if ratio[0] == ratio[1]:
        return p
    if ratio[0] > ratio[1]:   # each element becomes r smaller ones
        r = ratio[0] // ratio[1]
        return (p[..., None] * r + jnp.arange(r, dtype=p.dtype)).reshape(p.shape[:-1] + (-1,))
    r = ratio[1] // ratio[0]   # a power of two; positions are multiples of it (view_dtype's checks)
    return jnp.right_shift(p[..., ::r], r.bit_length() - 1)


# src: the input's dtype name (a static, so that the position rule knows the element sizes)
view_dtype = defop("view_dtype", lambda a, dtype, src: _view_dtype(a, dtype), dtype_rule=KEEP, view=True, diff=(),
                   node="view",
                   value_view=(lambda x, new, dtype, src: _view_dtype(new, x.dtype).reshape(x.shape),
                               _view_dtype_positions))


view_as_real = defop("view_as_real", lambda a: jnp.stack([jnp.real(a), jnp.imag(a)], -1), dtype_rule=KEEP,
                     view=True, value_view=(lambda x, new: lax.complex(new[..., 0], new[..., 1]).astype(x.dtype),
                                            lambda p: jnp.stack([p * 2, p * 2 + 1], -1)))
view_as_complex = defop("view_as_complex", lambda a: lax.complex(a[..., 0], a[..., 1]), dtype_rule=KEEP, view=True,
                        value_view=(lambda x, new: jnp.stack([jnp.real(new), jnp.imag(new)], -1).astype(x.dtype),
                                    lambda p: jnp.right_shift(p[..., 0], 1)))
