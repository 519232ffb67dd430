"""NumPy arrays onto a device without jax.device_put's Python (tapegrad/_host_put.py): the same arrays."""
import jax
import numpy as np
import pytest

import tapegrad
from tapegrad._host_put import put

CPU = jax.devices("cpu")[0]
ARRAYS = {
    "float32": np.arange(12, dtype=np.float32).reshape(3, 4),
    "transposed_int64": np.arange(12).reshape(3, 4).T,
    "strided": np.arange(10.0)[::3],
    "bool": np.array([True, False, True]),
    "scalar_float64": np.array(2.5),
    "uint64": np.arange(4, dtype=np.uint64) * (2 ** 63 // 3),
    "bfloat16": np.arange(3).astype(jax.numpy.bfloat16),
    "float16": np.linspace(-1, 1, 5).astype(np.float16),
    "empty_complex": np.zeros((0, 3), np.complex64),
}


@pytest.mark.parametrize("name", sorted(ARRAYS))
def test_put_makes_what_device_put_makes(name):
    a = ARRAYS[name]
    got, want = put(a, CPU), jax.device_put(a, CPU)
    assert type(got) is type(want)
    assert (got.dtype, got.shape, got.committed, got.weak_type) == (want.dtype, want.shape, want.committed,
                                                                      want.weak_type)
    assert got.sharding == want.sharding
    np.testing.assert_array_equal(np.asarray(got), a)


def test_other_values_go_through_device_put():
    assert put(np.float32(3.0), CPU).shape == ()            # a NumPy scalar
    moved = put(jax.numpy.ones(2), CPU)                      # a jax.Array
    assert moved.committed and moved.tolist() == [1.0, 1.0]


def test_tensors_made_from_arrays_keep_their_values():
    # the arrays handed over are the tensor's own copies: a later write to the source changes nothing
    a = np.arange(6, dtype=np.float32)
    t, u = tapegrad.tensor(a), tapegrad.from_numpy(a)
    a[:] = -1
    assert t.tolist() == u.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
