"""NumPy rules for JAX's threefry random primitives, so a random fill of a new shape (a layer's
initial weights, a dropout mask) runs without compiling a kernel for that shape.

Keys are held as their data: uint32 arrays with a trailing dimension of 2. The rules follow JAX's
"partitionable" threefry (the default since jax 0.5): element i of a draw of any shape hashes the
64-bit counter i, split into two uint32 words, with the key's two words. Under the older layout
(`jax_threefry_partitionable=False`) the rules decline and XLA computes the draw. The bits are the
same as XLA's, bit for bit (tests/test_numpy_kernels.py compares them).
"""
import numpy as np

KEY_DTYPE = np.dtype(np.uint32)
# Primitives that may take or make keys here; any other op on a key is left to XLA.
KEY_PRIMITIVES = frozenset(("random_wrap", "random_unwrap", "random_bits", "random_split", "slice", "squeeze",
                            "pjit", "jit", "closed_call", "core_call"))
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
# Per output element: threefry's 20 rounds and 6 key injections, each a few uint32 ops.
ELEMENTS_PER_DRAW = 60


def is_threefry_key(aval):
    dtype = getattr(aval, "dtype", None)   # (NumPy's own dtypes are never keys: skip their slow str())
    return dtype is not None and not isinstance(dtype, np.dtype) and str(dtype) == "key<fry>"


def partitionable():
    import jax
    return bool(jax.config.jax_threefry_partitionable)


def _rotl(v, r):
    return (v << np.uint32(r)) | (v >> np.uint32(32 - r))


def threefry2x32(k1, k2, x1, x2):
    """The Threefry-2x32 hash with 20 rounds (JAX's threefry2x32 primitive), on uint32 arrays."""
    k1, k2 = np.uint32(k1), np.uint32(k2)
    ks = (k1, k2, k1 ^ k2 ^ np.uint32(0x1BD11BDA))
    x = [x1.astype(np.uint32) + ks[0], x2.astype(np.uint32) + ks[1]]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x[0] = x[0] + x[1]
            x[1] = _rotl(x[1], r)
            x[1] = x[0] ^ x[1]
        x[0] = x[0] + ks[(i + 1) % 3]
        x[1] = x[1] + ks[(i + 2) % 3] + np.uint32(i + 1)
    return x[0], x[1]


def _counters(shape):
    """JAX's iota_2x32_shape: the flat index of each element as (high, low) uint32 words."""
    n = int(np.prod(shape, dtype=np.int64))
    counts = np.arange(n, dtype=np.uint64).reshape(shape)
    return (counts >> np.uint64(32)).astype(np.uint32), counts.astype(np.uint32)


def _hash_each(keys, shape):
    """(bits1, bits2) of shape keys.shape[:-1] + shape: every key hashes the counters of `shape`."""
    hi, lo = _counters(shape)
    batch = keys.shape[:-1]
    out1 = np.empty(batch + tuple(shape), np.uint32)
    out2 = np.empty_like(out1)
    for index in np.ndindex(*batch):
        k = keys[index]
        out1[index], out2[index] = threefry2x32(k[0], k[1], hi, lo)
    return out1, out2


def random_bits(params):
    bit_width, shape = params["bit_width"], tuple(params["shape"])
    if not partitionable():
        raise ValueError("threefry draws in the non-partitionable layout are left to XLA")

    def bits(keys):
        b1, b2 = _hash_each(np.asarray(keys, np.uint32), shape)
        if bit_width == 64:
            return (b1.astype(np.uint64) << np.uint64(32)) | b2.astype(np.uint64)
        return (b1 ^ b2).astype(np.dtype(f"uint{bit_width}"))
    return bits


def random_split(params):
    shape = tuple(params["shape"])
    if not partitionable():
        raise ValueError("threefry draws in the non-partitionable layout are left to XLA")

    def split(keys):
        b1, b2 = _hash_each(np.asarray(keys, np.uint32), shape)
        return np.stack([b1, b2], axis=-1)
    return split


RULES = {
    "random_wrap": lambda params: lambda data: np.asarray(data, np.uint32),
    "random_unwrap": lambda params: lambda keys: keys,
    "random_bits": random_bits,
    "random_split": random_split,
}
