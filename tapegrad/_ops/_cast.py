"""A value converted to the dtype of the tensor it is written into (copy_, fill_, setitem)."""
import jax.numpy as jnp


def written_as(value, dtype):
    """`value` as `dtype`: a complex value written into a real tensor keeps its real part, as PyTorch's copy
    does (the caller warns, see _inplace.warn_complex_to_real); jnp's astype would warn instead."""
    value = jnp.asarray(value)
    if jnp.iscomplexobj(value) and not jnp.issubdtype(dtype, jnp.complexfloating):
        value = jnp.real(value)
    return value.astype(dtype)
