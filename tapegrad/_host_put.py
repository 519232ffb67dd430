"""NumPy arrays onto a device as jax.device_put puts them, without its Python.

jax.device_put of a NumPy array takes ~50 us on a CPU (argument checks, sharding and layout inference)
before it calls jaxlib's batched_device_put, which takes ~6 us. Creating a tensor (zeros, tensor of an
ndarray, arange, host-drawn random values, an optimizer's state) was mostly that wrapper; PyTorch creates
one in about a microsecond. `put` calls batched_device_put itself for a plain NumPy array on one device:
the same committed array, copied or not as jax.device_put would.
"""
import jax
import numpy as np

from ._meta import META, MetaArray

try:  # private but long-stable: what jax.device_put ends in, and the abstract value it is given
    from jax._src import core as _core
    from jax._src.lib import xla_client as _xc
    batched_device_put = _xc.batched_device_put
    _ShapedArray = _core.ShapedArray
except (ImportError, AttributeError):  # pragma: no cover
    batched_device_put = None

# the dtypes a jax.Array holds as they are (with jax_enable_x64, which tapegrad sets)
_PLAIN = frozenset(np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
    np.float16, np.float32, np.float64, np.complex64, np.complex128, jax.numpy.bfloat16))
_shardings = {}


def put(value, device, aval=None):
    """`value` on the JAX `device` as jax.device_put(value, device) makes it: committed, and not weakly typed
    unless `aval` (its abstract value, when the caller has it: a kernel's output) says so."""
    if device is META:
        return MetaArray(np.shape(value), value.dtype)
    if batched_device_put is None or device is None or not isinstance(value, np.ndarray) or value.dtype not in _PLAIN:
        return jax.device_put(value, device)
    sharding = _shardings.get(device)
    if sharding is None:
        sharding = _shardings[device] = jax.sharding.SingleDeviceSharding(device)
    if aval is None:
        aval = _ShapedArray(value.shape, value.dtype)
    return batched_device_put(aval, sharding, [value], [device], True)
