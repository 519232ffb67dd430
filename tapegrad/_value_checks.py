"""The checks PyTorch makes on tensor values (an index within its table, a class target within range,
probabilities in [0, 1]), which JAX would skip: it clamps indices and computes nan.

A value that exists (or is pending, then computed now) is checked on the host, when the op is recorded,
so the error points at the user's line. While `tapegrad.compile` traces a function the value is a
tracer: the check becomes part of the program (a flag and the first offending element are outputs of it),
and the compiled call raises the error without writing anything back (`_compile/_checks.py`). Inside
other traces (torch.func transforms) values are not checked.
"""
import jax
import jax.numpy as jnp
import numpy as np

collector = None   # a list while tapegrad.compile traces: (flag, [first offending value, position], make_error)


def check(t, bad, make_error):
    """Raise make_error(value, flat position) of the first offending element when bad(values, xp) is
    true anywhere in tensor t (`xp` is NumPy on the host, jax.numpy in a traced program)."""
    value = t._value
    if isinstance(value, jax.core.Tracer):
        if collector is not None:
            mask = jnp.reshape(bad(value, jnp), (-1,))   # bad() is elementwise: the mask has t's shape
            at = jnp.argmax(mask)
            collector.append((jnp.any(mask), jnp.stack([jnp.reshape(value, (-1,))[at].astype(jnp.float64),
                                                        at.astype(jnp.float64)]), make_error))
        return
    host = np.asarray(value)
    mask = np.asarray(bad(host, np))
    if mask.any():
        at = int(np.argmax(mask.reshape(-1)))
        raise make_error(host.reshape(-1)[at].item(), at)


def check_storage_size(shape, itemsize):
    """PyTorch's error for a size whose byte count overflows 64 bits (NumPy would abort the process)."""
    n = itemsize
    for s in shape:
        n *= s
    if n >= 2 ** 63:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
