"""Kernels on first sight run their jaxpr on NumPy (tapegrad/_numpy_eval.py), compiled only once they
have run long enough to be worth it (tapegrad/_numpy_rent.py).

The rules are checked against XLA itself (the same jaxpr compiled), primitive family by family, on
inputs drawn by hypothesis; the tier's bookkeeping (no compile on first sight, one compile once the
estimated time reaches the budget, tracers and unsupported primitives compiled at once) is checked with
JAX's own compile events. The op table (tests/test_op_table.py) runs every op on first sight through
this tier and compares it with PyTorch.
"""
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jax import lax

import tapegrad
from tapegrad import _numpy_eval, _numpy_rent, _programs

from conftest import require
from xla_events import counting

R = np.random.default_rng(0)
F32 = R.standard_normal((3, 4)).astype(np.float32)
F64 = R.standard_normal((3, 4))
I32 = R.integers(-40, 40, (3, 4)).astype(np.int32)
U32 = R.integers(0, 2**32 - 1, (3, 4), dtype=np.uint32)
SHIFTS = (I32 % 40).astype(np.int32)
SIGNED_ZEROS_AND_NANS = np.array([0.0, -0.0, np.nan, -np.nan, 1, -1, np.inf, -np.inf, 2, 2, 0.0, -0.0], np.float32)
SPD_AND_NOT = np.stack([np.eye(3) * 2 + 0.5, np.diag([1.0, -1.0, 2.0])])
COMPLEX_TIES = np.array([1 + 2j, 1 - 2j, -0.0 + 0j, 0j, 1 + 2j, np.nan + 0j], np.complex64)

CASES = {
    "shift_left": (lax.shift_left, (I32, SHIFTS)),
    "shift_right_arithmetic": (lax.shift_right_arithmetic, (I32, SHIFTS)),
    "shift_right_logical": (lax.shift_right_logical, (I32, SHIFTS)),
    "shift_right_logical_unsigned": (lax.shift_right_logical, (U32, (U32 % 40).astype(np.uint32))),
    "bitcast": (lambda x: lax.bitcast_convert_type(x, jnp.int32), (F32,)),
    "round_away": (lambda x: lax.round(x * 3, lax.RoundingMethod.AWAY_FROM_ZERO), (F32,)),
    "round_away_large": (lambda x: lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO),
                         (np.array([8388609.0, -8388609.0, 2.5, -2.5, -0.5, 0.49999997], np.float32),)),
    "round_even": (lambda x: lax.round(x * 3, lax.RoundingMethod.TO_NEAREST_EVEN), (F32,)),
    "batched_matmul": (lambda x, y: jnp.einsum("bij,bjk->bik", x, y),
                       (R.standard_normal((2, 3, 4)), R.standard_normal((2, 4, 5)))),
    "dot_general_permuted": (lambda x, y: lax.dot_general(x, y, (((0,), (1,)), ((2,), (0,)))),
                             (R.standard_normal((4, 3, 2)), R.standard_normal((2, 4, 5)))),
    "int_matmul": (lambda x, y: x @ y, (I32, I32.T)),
    "matmul_2d": (lambda x, y: x @ y, (R.standard_normal((3, 4)).astype(np.float32),
                                       R.standard_normal((4, 5)).astype(np.float32))),
    "matmul_by_transpose": (lambda x, y: lax.dot_general(x, y, (((1,), (1,)), ((), ()))),
                            (R.standard_normal((3, 4)), R.standard_normal((5, 4)))),
    "dynamic_slice_clamped": (lambda x, i: lax.dynamic_slice(x, (i, 1), (2, 2)), (F32, 5)),
    "dynamic_update_slice_clamped": (lambda x, u, i: lax.dynamic_update_slice(x, u, (i, -1)),
                                     (F32, F32[:2, :2], 2)),
    "cumsum_reverse": (lambda x: lax.cumsum(x, 1, reverse=True), (F32,)),
    "cummax": (lambda x: lax.cummax(x, 0), (F64,)),
    "logsumexp": (lambda x: jax.nn.logsumexp(x, 1), (F32,)),
    "softmax": (lambda x: jax.nn.softmax(x, 1), (F32,)),
    "relu_custom_jvp": (jax.nn.relu, (F32,)),
    "select_n_three_cases": (lax.select_n, (np.array([0, 1, 2, 1], np.int32), F32[0], F32[1], F32[2])),
    "clamp": (lambda x: lax.clamp(np.float32(-0.5), x, np.float32(0.5)), (F32,)),
    "argmax": (lambda x: jnp.argmax(x, 1), (F32,)),
    "argmin_nan": (lambda x: jnp.argmin(jnp.where(x > 1, jnp.nan, x), 1), (F32,)),
    "pad": (lambda x: jnp.pad(x, ((1, 2), (0, 1)), constant_values=3.0), (F32,)),
    "iota": (lambda x: x + jnp.arange(4), (F32,)),
    "concatenate": (lambda x: jnp.concatenate([x, x * 2], 0), (F32,)),
    "split": (lambda x: jnp.split(x, [1, 3], 1), (F32,)),
    "negative_integer_pow": (lambda x: x ** -3, (F32,)),
    "where": (lambda x: jnp.where(x > 0, x, 0.0), (F32,)),
    "float_rem": (lambda x: x % 0.7, (F64,)),
    "int_div_truncates_and_gives_all_ones_at_zero": (
        lambda x, y, u, v: (lax.div(x, y), lax.div(u, v), lax.div(x.astype(jnp.int8), y.astype(jnp.int8))),
        (np.array([7, -7, 7, -7, 5, -5, 0, np.iinfo(np.int32).min, np.iinfo(np.int32).min], np.int32),
         np.array([2, 2, -2, -2, 0, 0, 0, -1, 1], np.int32),
         np.array([7, 5, 0, 2**32 - 1], np.uint32), np.array([2, 0, 0, 3], np.uint32))),
    "searchsorted": (lambda s, x: (jnp.searchsorted(s, x), jnp.searchsorted(s, x, side="right")),
                     (np.sort(SIGNED_ZEROS_AND_NANS), SIGNED_ZEROS_AND_NANS)),
    "int_rem_truncates_and_keeps_x_at_zero": (
        lax.rem, (np.array([7, -7, 7, -7, 5, np.iinfo(np.int32).min], np.int32),
                  np.array([2, 2, -2, -2, 0, -1], np.int32))),
    "max_propagates_nan": (lambda x: jnp.maximum(x, jnp.nan), (F32,)),
    "reductions": (lambda x: (x.sum(0), x.max(1), x.min(), x.prod(1), (x > 0).all(0), (x > 1).any(1)), (F64,)),
    "transcendental": (lambda x: (jnp.tanh(x), jnp.exp(x), jnp.log1p(jnp.abs(x)), jax.nn.sigmoid(x),
                                  lax.rsqrt(jnp.abs(x) + 1), jnp.arctan2(x, x + 1)), (F32,)),
    "casts": (lambda x: (x.astype(jnp.int32), (x > 0).astype(jnp.float64), x.astype(jnp.bool_)), (F32 * 10,)),
    "int_arithmetic_wraps": (lambda x: x * np.int32(2**30) + x, (I32,)),
    "transpose_reshape_rev": (lambda x: jnp.flip(x.T.reshape(2, 6), 1)[:, ::2], (F32,)),
    "broadcast_compare": (lambda x, y: (x[:, None] < y[None, :]) ^ (x[:, None] == 0), (F32[0], F32[1])),
    "complex": (lambda x, y: (lax.complex(x, y) * 2).real, (F32, F32)),
    # gathers and scatters: indexing, embedding, take_along_axis (cross_entropy) and their gradients
    "take": (lambda x, i: x[i], (F64, np.array([2, 1, -1, 0]))),
    "take_clip": (lambda x, i: jnp.take(x, i, 0, mode="clip"), (F64, np.array([7, -9, 2]))),
    "take_fill": (lambda x, i: jnp.take(x, i, 0, mode="fill"), (F64, np.array([7, -9, 2]))),
    "take_along_axis": (lambda x, i: jnp.take_along_axis(x, i, 1), (F64, R.integers(0, 4, (3, 2)))),
    "take_middle_axis_2d_index": (lambda x, i: x[:, i], (R.standard_normal((2, 5, 3)), R.integers(-5, 5, (2, 4)))),
    "take_last_axis_clip_and_fill": (lambda x, i: (jnp.take(x, i, 2, mode="clip"), jnp.take(x, i, 2, mode="fill")),
                                     (R.standard_normal((2, 3, 4)), np.array([[0, 3], [5, -7]]))),
    "bitcast_of_a_scalar": (lambda x: (lax.bitcast_convert_type(x, jnp.int64), jnp.copysign(x, -x)),
                            (np.float64(-0.25),)),
    "take_with_the_index_dims_last": (
        lambda x, i: lax.gather(x, i[..., None], lax.GatherDimensionNumbers(offset_dims=(0, 1), collapsed_slice_dims=(1,),
                                                                          start_index_map=(1,)), (2, 1, 3),
                                mode=lax.GatherScatterMode.CLIP),
        (R.standard_normal((2, 5, 3)), R.integers(-1, 6, (2, 4)))),
    "take_in_bounds_fill": (lambda x, i: jnp.take(x, i, 1, mode="fill"), (F64, np.array([[0, 1], [2, 3]]))),
    # a window gather (a dynamic slice written as a gather, as a traced slice start makes): clamped
    # where the mode clips or promises, filled where it fills
    **{f"window_gather_{mode.name.lower()}_{start}": (
        lambda x, i, mode=mode: lax.gather(x, i, lax.GatherDimensionNumbers(offset_dims=(0, 1), collapsed_slice_dims=(),
                                                                            start_index_map=(1,)), (3, 2), mode=mode),
        (F64, np.array([start])))
       for mode in (lax.GatherScatterMode.CLIP, lax.GatherScatterMode.FILL_OR_DROP,
                    lax.GatherScatterMode.PROMISE_IN_BOUNDS) for start in (1, 3, -2)},
    "batched_take": (jax.vmap(lambda x, i: x[i]), (F64, np.array([3, 1, 0]))),
    "two_index_arrays": (lambda x, i, j: x[i, j], (F64, np.array([0, 2, 2]), np.array([1, 3, 3]))),
    "index_in_the_middle": (lambda x, i: x[:, i], (R.standard_normal((2, 5, 4)), np.array([[0, 4], [2, 2]]))),
    "index_then_slice": (lambda x, i: x[i, 1:3], (F64, np.array([2, 0]))),
    "take_gradient": (jax.grad(lambda x, i: (x[i] ** 2).sum()), (F64, np.array([2, 1, 1]))),
    "take_along_axis_gradient": (jax.grad(lambda x, i: (jnp.take_along_axis(x, i, 1) ** 2).sum()),
                                 (F64, R.integers(0, 4, (3, 2)))),
    # take_along_axis's own path: out-of-bounds indices filled, clamped or dropped, any axis, duplicates
    "take_along_axis_out_of_bounds": (lambda x, i: (jnp.take_along_axis(x, i, 1),
                                                    jnp.take_along_axis(x, i, 1, mode="clip")),
                                      (F64, np.array([[0, 4, -1], [-5, 3, 9], [2, 2, 1]]))),
    "take_along_the_middle_axis": (lambda x, i: jnp.take_along_axis(x, i, 1),
                                   (R.standard_normal((2, 5, 3)), R.integers(-5, 5, (2, 4, 3)))),
    "take_along_the_first_axis": (lambda x, i: jnp.take_along_axis(x, i, 0), (F64, R.integers(0, 3, (6, 4)))),
    "take_along_axis_gradient_with_duplicates_and_drops": (
        jax.grad(lambda x, i: (jnp.take_along_axis(x, i, 1) ** 2).sum()),
        (F64, np.array([[1, 1, 3, 9], [0, -7, 0, 2], [3, 3, 3, 3]]))),
    "take_along_axis_gradient_clamped": (
        jax.grad(lambda x, i: (jnp.take_along_axis(x, i, 0, mode="clip") ** 3).sum()),
        (F32 * 1, np.array([[1, 0, 5, 2], [-3, 2, 0, 0]]))),
    "scatter_set": (lambda x, i: x.at[i].set(7.0), (F64, np.array([1, 2]))),
    "scatter_add_duplicates": (lambda x, i: x.at[i].add(1.0), (F64, np.array([1, 1, 2]))),
    "scatter_mul": (lambda x, i: x.at[i, 2].multiply(3.0), (F64, np.array([1, 1, 2]))),
    "scatter_max": (lambda x, i, u: x.at[i].max(u), (F64, np.array([0, 0, 2]), R.standard_normal((3, 4)))),
    "scatter_drops_out_of_bounds": (lambda x, i: x.at[i].add(1.0, mode="drop"), (F64, np.array([1, 9]))),
    "batched_take_gradient": (jax.vmap(jax.grad(lambda x, i: x[i] ** 2)), (F64, np.array([3, 1, 0]))),
    # scans (recurrent layers): forward, reverse, several carries, and the transposed scan of a gradient
    "scan": (lambda h, xs, w: lax.scan(lambda c, x: (jnp.tanh(c @ w + x), c * 2), h, xs),
             (R.standard_normal((2, 3)), R.standard_normal((5, 2, 3)), R.standard_normal((3, 3)))),
    "scan_reverse_two_carries": (lambda xs: lax.scan(lambda c, x: ((c[0] + x, c[1] * x), None), (0.0, 1.0), xs,
                                                     reverse=True)[0], (F64[0],)),
    "scan_gradient": (jax.grad(lambda w, xs: lax.scan(lambda c, x: (jnp.tanh(c * w + x), c), 0.5, xs)[0]),
                      (0.3, F64[0])),
    "erf_erfc_exact_gelu": (lambda x: (jax.scipy.special.erf(x * 3), jax.scipy.special.erfc(x),
                                       jax.nn.gelu(x * 4, approximate=False)), (F32,)),
    "erf_erfc_over_large_arrays": (lambda x: (jax.scipy.special.erf(x), jax.scipy.special.erfc(x * 2)),
                                   (R.standard_normal((40, 64)).astype(np.float32) * 2,)),
    "stack_unstack": (lambda x: (jnp.stack([x, x * 2], 1), *jnp.unstack(x[:1], axis=0)), (F32,)),
    # lax's total order: sorts, argsorts (sort, topk's sort, median) and searchsorted's comparisons put -0
    # before +0 and order nan by its sign; a stable sort keeps the places of equal keys (+-0, every nan)
    "sort_total_order": (lambda x: (jnp.sort(x), jnp.argsort(x), jnp.argsort(x, descending=True),
                                    lax.sort((x, jnp.arange(x.size)), num_keys=1)), (SIGNED_ZEROS_AND_NANS,)),
    "sort_along_an_axis": (lambda x: (jnp.sort(x, 0), jnp.argsort(x, 1), lax.sort((x, -x), 0, num_keys=2)),
                           (SIGNED_ZEROS_AND_NANS.reshape(3, 4),)),
    "sort_integers_and_complex": (lambda i, z: (jnp.sort(i, 1), jnp.argsort(z)), (I32, COMPLEX_TIES)),
    "total_order_compares": (lambda x: (lax.lt_to_p.bind(x, x[::-1]), lax.le_to_p.bind(x, x[::-1]),
                                        lax.eq_to_p.bind(x, x[::-1])), (SIGNED_ZEROS_AND_NANS,)),
    # 0-d operands keep their shape (a scalar searched for in a one-element sequence: its scan compares scalars)
    "total_order_compares_of_scalars": (lambda x: (lax.lt_to_p.bind(x[0], x[1]), lax.le_to_p.bind(x[2], x[3]),
                                                   lax.eq_to_p.bind(x[1], x[1])), (SIGNED_ZEROS_AND_NANS,)),
    "searchsorted_of_a_scalar": (lambda s, x: (jnp.searchsorted(s[:1], x[0]),
                                               jnp.searchsorted(s, x[4], side="right")),
                                 (np.sort(SIGNED_ZEROS_AND_NANS), SIGNED_ZEROS_AND_NANS)),
    "tile": (lambda x: jnp.tile(x, (2, 1, 3)), (F32,)),
    # linear algebra: a batch of factors where one matrix is not positive definite (all nan, as XLA's),
    # triangular solves in every orientation (a zero pivot gives inf/nan, not an error), LU's permutation
    "cholesky_one_fails": (lambda a: lax.linalg.cholesky(a, symmetrize_input=False), (SPD_AND_NOT,)),
    **{f"triangular_solve_{'left' if left else 'right'}_{'lower' if lower else 'upper'}_{'t' if tr else 'n'}": (
        lambda a, b, left=left, lower=lower, tr=tr: (
            lax.linalg.triangular_solve(a, b, left_side=left, lower=lower, transpose_a=tr),
            lax.linalg.triangular_solve(a, b, left_side=left, lower=lower, transpose_a=tr, unit_diagonal=True)),
        (SPD_AND_NOT[0] * np.array([[1.0, 1, 1], [1, 0, 1], [1, 1, 1]]) + np.eye(3) * [1, 0, 1],
         R.standard_normal((3, 2) if left else (2, 3))))
       for left in (True, False) for lower in (True, False) for tr in (True, False)},
    # LU with getf2's pivoting (first largest magnitude, reciprocal scaling: an exactly singular matrix
    # rounds as LAPACK's does), rectangular and batched, and the solves, inverses and determinants on it
    "lu": (lambda a: (lax.linalg.lu(a), lax.linalg.lu(a[..., :3]), lax.linalg.lu(a[..., :3, :])),
           (R.standard_normal((2, 4, 4)),)),
    "lu_singular": (lax.linalg.lu, (np.array([[1.0, 2, 3], [0.3, 0.6, 7], [2.1, 4.2, 1]]),)),
    "solve_inv_det": (lambda a: (jnp.linalg.solve(a, a[..., :2]), jnp.linalg.inv(a), jnp.linalg.det(a),
                                 jnp.linalg.slogdet(a)), (R.standard_normal((3, 4, 4)),)),
    "lu_pivots_to_permutation": (lambda p: lax.linalg.lu_pivots_to_permutation(p, 5),
                                 (np.array([[2, 2, 3, 3], [0, 4, 2, 3]], np.int32),)),
    # lgamma and digamma: XLA's Lanczos approximation and reflection, its values at poles and infinities
    "lgamma_digamma": (lambda x: (lax.lgamma(x), lax.digamma(x)),
                       (np.array([0.0, -0.0, -1.0, -2.5, 1e-8, 0.5, 1.0, 2.0, 3.7, 40.0, 1e5, 1e30, -1e5 - 0.5,
                                  np.inf, -np.inf, np.nan, 171.5, -7.25]),)),
    "lgamma_digamma_float32": (lambda x: (lax.lgamma(x), lax.digamma(x)), (F32 * 4 + 2,)),
    # top_k: the k greatest in total order (+nan first, +0 before -0), the lower index first among equals
    "top_k_total_order": (lambda x, i: (lax.top_k(x, 9), lax.top_k(x[:, ::-1], 3), lax.top_k(i, 3)),
                          (np.tile(np.array([1.0, np.nan, 3.0, -0.0, 0.0, 3.0, -np.nan, -np.inf, np.inf, 2.0, 0.0, -0.0],
                                            np.float32), (2, 1)), I32 % 3)),
    # primitives JAX lowers as functions of other primitives (_numpy_lowered): their jaxprs, inlined
    "incomplete_gamma_and_beta": (
        lambda a, x: (lax.igamma(a, x), lax.igammac(a, x), lax.igamma_grad_a(a, x),
                      lax.betainc(a, a[::-1], x / (1 + x)), lax.bessel_i0e(x - 3)),
        (np.array([0.0, np.inf, np.nan, 0.5, 1.0, 2.5, 7.0, 30.0, 0.1, 12.0, 3.0, 1e-3]),
         np.array([1.0, 1.0, 1.0, 0.0, np.inf, 1e-30, 3.0, 25.0, 0.05, 40.0, 3.0, 2.0]))),
    "incomplete_gamma_float32": (lambda a, x: (lax.igamma(a, x), lax.igammac(a, x)), (F32 ** 2 + 0.5, F32 ** 2 * 3)),
    "while_loop": (lambda x: lax.while_loop(lambda c: (c[1] < 5) & (c[0].sum() < 50.0),
                                            lambda c: (jnp.tanh(c[0]) * 1.5 + c[0], c[1] + 1), (x, 0)), (F32,)),
    "fori_loop_with_a_traced_bound": (lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 0.5 + i, x), (F64, 4)),
    "reshape_with_dimensions": (lambda x: lax.reshape(x, (2, 6), dimensions=(1, 0)), (F32,)),
    "pad_interior_and_negative": (lambda x: lax.pad(x, np.float32(7), ((-1, 2, 1), (1, -2, 2))), (F32,)),
    "pooling_int_max": (lambda i: lax.reduce_window(i, np.int32(-2**31), lax.max, (2, 2), (1, 2), "SAME"), (I32,)),
    # convolutions: groups, strides, negative padding, kernel dilation, a transposed one (input dilation) in
    # NHWC, and the gradients (a transposed convolution, one grouped by batch, a reshape with dimensions)
    "conv_grouped_strided_dilated": (
        lambda x, w: lax.conv_general_dilated(x, w, (2, 1), ((1, -1), (2, 0)), rhs_dilation=(1, 2),
                                              feature_group_count=2),
        (R.standard_normal((2, 4, 7, 6)).astype(np.float32), R.standard_normal((6, 2, 3, 2)).astype(np.float32))),
    "conv_transposed_nhwc": (
        lambda x, w: lax.conv_general_dilated(x, w, (1, 1), ((2, 2), (1, 1)), lhs_dilation=(2, 2),
                                              dimension_numbers=("NHWC", "HWIO", "NHWC")),
        (R.standard_normal((2, 5, 4, 3)), R.standard_normal((3, 2, 3, 4)))),
    "conv_gradients": (
        jax.grad(lambda x, w: (lax.conv_general_dilated(x, w, (2,), ((1, 2),), rhs_dilation=(2,),
                                                        feature_group_count=3) ** 2).sum(), (0, 1)),
        (R.standard_normal((2, 6, 9)), R.standard_normal((6, 2, 3)))),
    "cond_and_platform_branches": (lambda x, i: (jnp.diagonal(x), jnp.diagonal(x, 1),
                                                 lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x)), (F64, 7)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_matches_xla(name):
    fn, args = CASES[name]
    run = _numpy_eval.compile_jaxpr(jax.make_jaxpr(fn)(*args))
    assert run is not None, f"{name}: a primitive here lost its NumPy rule"
    got = run(*args)
    want = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6, equal_nan=True)
        if g.dtype.kind in "fc":   # -0 and +0 compare equal; where they sit (a sort) must match too
            zeros = np.real(w) == 0
            np.testing.assert_array_equal(np.signbit(np.real(g))[zeros], np.signbit(np.real(w))[zeros])


@pytest.mark.parametrize("sequence", [[1.0], [1.0, 2.0, 3.0]])
def test_searchsorted_of_a_scalar_is_a_scalar_as_torch(torch, sequence):
    """(its first sight runs on NumPy, whose total-order comparison of two scalars returned a 1-element array)"""
    ours = tapegrad.searchsorted(tapegrad.tensor(sequence), tapegrad.tensor(1.5))
    theirs = torch.searchsorted(torch.tensor(sequence), torch.tensor(1.5))
    assert (repr(ours), tuple(ours.shape)) == (repr(theirs), tuple(theirs.shape))


@pytest.mark.parametrize("name", sorted(CASES))
def test_straight_line_code_matches_the_interpreter(name):
    """A kernel called often runs as generated straight-line code: the same results, dtypes included."""
    fn, args = CASES[name]
    run = _numpy_eval.compile_jaxpr(jax.make_jaxpr(fn)(*args))
    interpreted = run(*args)
    run.straight = _numpy_eval._straight_line(run)
    assert run.straight
    got = run(*args)
    assert len(got) == len(interpreted)
    for g, w in zip(got, interpreted):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_array_equal(g, w)


def test_a_kernel_goes_straight_line_after_it_has_come_back(monkeypatch):
    monkeypatch.setattr(_numpy_eval, "STRAIGHT_AFTER", 2)
    run = _numpy_eval.compile_jaxpr(jax.make_jaxpr(lambda x: jnp.tanh(x) * 2)(F32))
    for _ in range(2):
        run(F32)
        assert run.straight is None
    run(F32)
    assert callable(run.straight)


BINARY = {"add": jnp.add, "sub": jnp.subtract, "mul": jnp.multiply, "max": jnp.maximum, "min": jnp.minimum,
          "lt": jnp.less, "ne": jnp.not_equal, "pow": lambda x, y: jnp.abs(x) ** y}


@settings(max_examples=25, deadline=None)
@given(op=st.sampled_from(sorted(BINARY)),
       shapes=st.sampled_from([((3,), (3,)), ((2, 1), (1, 3)), ((), (2, 3)), ((4, 1, 2), (3, 1))]),
       dtype=st.sampled_from(["float32", "float64", "int32"]),
       seed=st.integers(0, 2**16))
def test_broadcasting_binary_ops_match_xla(op, shapes, dtype, seed):
    rng = np.random.default_rng(seed)
    x, y = (rng.uniform(-3, 3, s).astype(dtype) for s in shapes)
    if op == "pow" and dtype == "int32":
        y = np.abs(y)   # integers to negative powers are not defined alike
    fn = BINARY[op]
    (got,) = _numpy_eval.compile_jaxpr(jax.make_jaxpr(fn)(x, y))(x, y)
    want = np.asarray(jax.jit(fn)(x, y))
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_conv_rule_matches_xla_on_drawn_configurations(data):
    """Convolutions of 1-3 spatial dimensions in permuted layouts, with feature or batch groups, strides,
    (negative) padding and both dilations, and their gradients, against XLA's (float64)."""
    ints = lambda lo, hi, n: tuple(data.draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n)))
    spatial = data.draw(st.integers(1, 3))
    groups = data.draw(st.sampled_from([1, 1, 2, 3]))
    batch_groups = 1 if groups > 1 else data.draw(st.sampled_from([1, 2]))
    features = data.draw(st.integers(1, 2))
    x = R.standard_normal((data.draw(st.integers(1, 2)) * batch_groups, features * groups) + ints(1, 6, spatial))
    w = R.standard_normal((data.draw(st.integers(1, 2)) * groups * batch_groups, features) + ints(1, 3, spatial))
    layout = tuple(data.draw(st.permutations(range(spatial + 2))))
    dims = lax.ConvDimensionNumbers(layout, tuple(range(spatial + 2)), layout)
    strides, lhs_dilation, rhs_dilation = ints(1, 2, spatial), ints(1, 2, spatial), ints(1, 2, spatial)
    padding = tuple(zip(ints(-1, 2, spatial), ints(-1, 2, spatial)))

    def conv(a, b):
        return lax.conv_general_dilated(a, b, strides, padding, lhs_dilation, rhs_dilation, dims,
                                        feature_group_count=groups, batch_group_count=batch_groups)
    x = np.transpose(x, np.argsort(layout))
    try:
        jax.eval_shape(conv, x, w)
    except Exception:  # noqa: BLE001  (padding that leaves no input)
        return
    cases = [conv]
    if batch_groups == 1 and lhs_dilation == (1,) * spatial:   # (XLA itself fails some gradients of these)
        cases.append(jax.grad(lambda a, b: (conv(a, b) ** 2).sum(), (0, 1)))
    for fn in cases:
        run = _numpy_eval.compile_jaxpr(jax.make_jaxpr(fn)(x, w))
        assert run is not None
        for g, want in zip(run(x, w), jax.tree_util.tree_leaves(jax.jit(fn)(x, w))):
            assert g.shape == want.shape and g.dtype == want.dtype
            np.testing.assert_allclose(g, want, rtol=1e-9, atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_window_rules_match_xla_on_drawn_configurations(data):
    """Pooling windows (sum, max, min) with strides, padding and both dilations over inputs with nan and
    ties, max pooling's gradient (select_and_scatter_add: ties, nan and padding pick as XLA's window scan
    does) and average pooling's (an interior pad), against XLA's (float64)."""
    ints = lambda lo, hi, n: tuple(data.draw(st.lists(st.integers(lo, hi), min_size=n, max_size=n)))
    ndim = data.draw(st.integers(1, 3))
    shape, window, strides = ints(1, 6, ndim), ints(1, 3, ndim), ints(1, 2, ndim)
    base, dilation = ints(1, 2, ndim), ints(1, 2, ndim)
    padding = tuple(zip(ints(0, 2, ndim), ints(0, 2, ndim)))
    x = R.standard_normal(shape)
    x[R.random(shape) < 0.15] = np.nan
    x[R.random(shape) < 0.2] = 0.5
    cases = [lambda a, init=init, op=op: lax.reduce_window(a, init, op, window, strides, padding, base, dilation)
             for init, op in ((0.0, lax.add), (-np.inf, lax.max), (np.inf, lax.min))]
    if all(lo < w and hi < w for (lo, hi), w in zip(padding, window)):
        def weighted(pool):   # distinct weights per window, so that each window's pick shows
            out = pool(x)
            return lambda a: (pool(a) * jnp.arange(1.0, 1 + out.size).reshape(out.shape)).sum()
        cases += [jax.grad(weighted(lambda a: lax.reduce_window(a, -np.inf, lax.max, window, strides, padding))),
                  jax.grad(weighted(lambda a: lax.reduce_window(a, 0.0, lax.add, window, strides, padding)))]
    for fn in cases:
        try:
            jax.eval_shape(fn, x)
        except Exception:  # noqa: BLE001  (a window larger than the padded input)
            continue
        run = _numpy_eval.compile_jaxpr(jax.make_jaxpr(fn)(x))
        assert run is not None
        for g, want in zip(run(x), jax.tree_util.tree_leaves(jax.jit(fn)(x))):
            assert g.shape == want.shape and g.dtype == want.dtype
            np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-12, equal_nan=True)


def test_unsupported_primitives_are_left_to_xla():
    x = np.ones((3, 2), np.float32)
    assert _numpy_eval.compile_jaxpr(jax.make_jaxpr(lambda a: lax.sort(a, is_stable=False))(x)) is None
    assert _numpy_eval.compile_jaxpr(jax.make_jaxpr(lax.zeta)(x + 1, x)) is None   # (XLA's own series: no rule)
    # a loop that draws (gamma's rejection sampler): a last-bit difference could flip an accept decision
    gamma = jax.make_jaxpr(lambda k: jax.random.gamma(k, 2.0, (3,)))(jax.random.key(0))
    assert _numpy_eval.compile_jaxpr(gamma) is None
    assert _numpy_eval.compile_jaxpr(jax.make_jaxpr(lambda a: a * 2)(x.astype(jnp.float16))) is None
    assert _numpy_eval.compile_jaxpr(jax.make_jaxpr(lambda a: a // 2)(x.astype(np.int32))) is not None


def _fresh_kernel(fn):
    return _programs.kernel(("test_numpy_kernels", fn), lambda: fn)


def test_a_kernel_runs_on_numpy_until_its_budget_then_compiles_once():
    kernel = _fresh_kernel(lambda a, b: jnp.tanh(a @ b) * 2)
    a, b, other = jnp.ones((4, 3), jnp.float32), jnp.ones((3, 5), jnp.float32), jnp.ones((2, 3), jnp.float32)
    want = np.tanh(np.full((4, 5), 3.0, np.float32)) * 2
    with counting() as xla:
        first = kernel(a, b)
        assert xla.compiles == 0 and xla.executions == 0
        np.testing.assert_allclose(np.asarray(first), want, rtol=1e-6)
        assert isinstance(first, jax.Array) and first.dtype == jnp.float32 and not first.weak_type
        # Renting stops when the estimated NumPy time reaches the budget: an estimate, not a clock,
        # so the compile comes at the same call on every machine and under any load.
        rented = next(iter(kernel.numpy.values()))
        calls = int(np.ceil((_numpy_rent.NUMPY_BUDGET_SECONDS - _numpy_rent.TRACE_SECONDS) / rented.run.seconds))
        for _ in range(calls - 1):
            kernel(a, b)
        assert xla.compiles == 0
        compiled = kernel(a, b)
        kernel(a, b)
        assert xla.compiles == 1 and xla.executions == 2
        np.testing.assert_allclose(np.asarray(compiled), np.asarray(first), rtol=1e-6)
        kernel(other, b)   # new shapes: NumPy again
        assert xla.compiles == 1


def test_tracers_and_unsupported_kernels_compile_at_once():
    zeta = _fresh_kernel(lax.zeta)   # (no NumPy rule)
    square = _fresh_kernel(lambda a: a * a)
    a, b = jnp.ones((3, 2)) * 2, jnp.ones(3)
    with counting() as xla:
        zeta(a, a)
        assert xla.compiles == 1
        jax.jit(lambda a: square(a) + 1)(b)   # inside a trace the kernel is traced, not run
        assert xla.compiles == 2


def test_the_same_leaves_in_other_places_are_another_kernel():
    # clamp's backward keeps (x, min, max) with one bound None: (x, None, 0.5) and (x, 0.5, None) flatten
    # to the same leaves, and must not share a jaxpr
    kernel = _fresh_kernel(lambda a, lo, hi: jnp.clip(a, lo, hi))
    x = jnp.array([0.0, 1.0])
    assert np.asarray(kernel(x, None, 0.5)).tolist() == [0.0, 0.5]
    assert np.asarray(kernel(x, 0.5, None)).tolist() == [0.5, 1.0]


def test_switched_off(monkeypatch):
    monkeypatch.setattr(_programs, "NUMPY_KERNELS", [False])
    kernel = _fresh_kernel(lambda a: a + 1)
    a = jnp.ones(3)
    with counting() as xla:
        kernel(a)
        assert xla.compiles == 1


def test_first_sight_of_a_new_shape_compiles_nothing():
    # an eager evaluation of one-off shapes: PyTorch-style code whose batch size changes every call
    model = tapegrad.nn.Sequential(tapegrad.nn.Linear(4, 8), tapegrad.nn.Tanh(), tapegrad.nn.Linear(8, 2))
    with tapegrad.no_grad():
        model(tapegrad.ones(1, 4)).sum().item()   # the parameters' own initialisation is not counted
    with counting() as xla:
        with tapegrad.no_grad():
            for n in (3, 5, 7):
                out = tapegrad.softmax(model(tapegrad.ones(n, 4) * n), -1).sum().item()
                assert out == pytest.approx(n, rel=1e-5)
        assert xla.compiles == 0


def test_incomplete_gamma_and_i0e_of_a_new_shape_compile_nothing():
    # JAX lowers these as functions of other primitives: the NumPy tier runs those (XLA takes ~0.4 s to
    # compile the incomplete gamma's series and continued fraction)
    require("torch")
    import torch
    a, x = R.uniform(0.1, 9, (5, 3)), R.uniform(0, 12, (5, 3))
    with counting() as xla:
        for dtype in ("float32", "float64"):
            ta, tx = (tapegrad.tensor(v, dtype=getattr(tapegrad, dtype)) for v in (a, x))
            pa, px = (torch.tensor(v, dtype=getattr(torch, dtype)) for v in (a, x))
            for name in ("gammainc", "gammaincc"):
                got = getattr(tapegrad.special, name)(ta, tx).numpy()
                np.testing.assert_allclose(got, getattr(torch.special, name)(pa, px).numpy(), rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(tapegrad.special.i0e(tx - 6).numpy(), torch.special.i0e(px - 6).numpy(),
                                       rtol=1e-6)
        assert xla.compiles == 0


def test_decompositions_and_topk_of_a_new_shape_compile_nothing():
    # svd, qr and eigh call XLA's LAPACK routines on the NumPy tier, top_k is XLA's TopK: first sight of a
    # model's pinv, orthogonalisation or top-k accuracy costs no compile (each ~0.1 s)
    with counting() as xla:
        for n in (5, 7):
            a = tapegrad.rand(n, 3, dtype=tapegrad.float64)
            u, s, vh = tapegrad.linalg.svd(a, full_matrices=False)
            assert tapegrad.allclose((u * s) @ vh, a)
            q, r = tapegrad.linalg.qr(a)
            assert tapegrad.allclose(q @ r, a)
            w, v = tapegrad.linalg.eigh(a.T @ a)
            assert tapegrad.allclose((v * w) @ v.T, a.T @ a)
            assert tapegrad.allclose(tapegrad.linalg.pinv(a) @ a, tapegrad.eye(3, dtype=tapegrad.float64))
            assert tapegrad.topk(a[:, 0], 2).values.tolist() == sorted(a[:, 0].tolist(), reverse=True)[:2]
        assert xla.compiles == 0


def test_sizes_read_from_values_are_counted_on_the_host():
    # the ops whose output size depends on values (unique, nonzero, masked_select, bincount) and the checks
    # that raise PyTorch's errors (inv's singular matrix, multinomial's probabilities) read a CPU value with
    # NumPy, as PyTorch syncs; eye is built by NumPy: no program per new size
    with counting() as xla:
        for n in (5, 7):
            x = tapegrad.arange(n) % 3
            assert tapegrad.eye(n).sum().item() == n
            assert x.unique().tolist() == [0, 1, 2]
            assert x.nonzero().shape == (n - (n + 2) // 3, 1)
            assert x.masked_select(x > 1).tolist() == [2] * (n // 3)
            assert tapegrad.bincount(x).tolist() == [(n + 2) // 3, (n + 1) // 3, n // 3]
            assert tapegrad.linalg.inv(tapegrad.eye(n) * 2).sum().item() == n / 2
            with pytest.raises(RuntimeError, match="probability tensor contains"):
                tapegrad.multinomial(tapegrad.ones(n) * -1, 1)
        assert xla.compiles == 0


_FACTORIZATIONS = {
    "svd": lambda a: lax.linalg.svd(a, full_matrices=False),
    "svd_full": lambda a: lax.linalg.svd(a, full_matrices=True),
    "singular_values": lambda a: lax.linalg.svd(a, compute_uv=False),
    "svd_qr_algorithm": lambda a: lax.linalg.svd(a, algorithm=lax.linalg.SvdAlgorithm.QR),
    "eigh": lambda a: lax.linalg.eigh(a + jnp.conj(jnp.swapaxes(a, -1, -2))),
    "eigh_upper": lambda a: lax.linalg.eigh(a + jnp.conj(jnp.swapaxes(a, -1, -2)), lower=False,
                                            symmetrize_input=False),
    "qr": lambda a: lax.linalg.qr(a, full_matrices=False),
    "qr_full": lambda a: lax.linalg.qr(a, full_matrices=True),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("name", sorted(_FACTORIZATIONS))
def test_lapack_factorizations_are_xlas_bit_for_bit(name, dtype):
    """svd, eigh and qr call the LAPACK routines XLA:CPU calls, with its workspace: the same bits."""
    fn = _FACTORIZATIONS[name]
    for shape in [(2, 5, 3), (3, 6)] if "eigh" not in name else [(2, 3, 3)]:
        a = R.standard_normal(shape) + (1j * R.standard_normal(shape) if np.dtype(dtype).kind == "c" else 0)
        a = a.astype(dtype)
        run = _numpy_eval.compile_jaxpr(jax.make_jaxpr(fn)(a))
        assert run is not None
        for got, want in zip(run(a), jax.tree_util.tree_leaves(jax.jit(fn)(a))):
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, np.asarray(want))
    if name.startswith("qr"):
        return
    nan = np.full((3, 3), np.nan, dtype)   # LAPACK's failure: every factor nan, as XLA's lowering makes it
    run = _numpy_eval.compile_jaxpr(jax.make_jaxpr(fn)(nan))
    for got, want in zip(run(nan), jax.tree_util.tree_leaves(jax.jit(fn)(nan))):
        np.testing.assert_array_equal(got, np.asarray(want))


# ---- random draws --------------------------------------------------------------------------------

def _key_data(seed):
    return np.asarray(jax.random.key_data(jax.random.fold_in(jax.random.key(seed), 7)), np.int64)


def _draw(fn, dtype):
    from tapegrad._ops import random_fill as r
    return {
        "bits32": lambda a, k: jax.random.bits(r._key(k), a.shape, jnp.uint32),
        "bits8": lambda a, k: jax.random.bits(r._key(k), a.shape, jnp.uint8),
        "bits64": lambda a, k: jax.random.bits(r._key(k), a.shape, jnp.uint64),
        "rand": lambda a, k: jax.random.uniform(r._key(k), a.shape, a.dtype),
        "uniform_pow2_bounds": lambda a, k: jax.random.uniform(r._key(k), a.shape, a.dtype, -0.25, 0.25),
        "randint": lambda a, k: r._random(a, r._key(k), -5, 17),
        "random_": lambda a, k: r._random(a, r._key(k), None, None),
        "bernoulli": lambda a, k: r._bernoulli(a, k, 0.3),
        "split": lambda a, k: jax.random.key_data(jax.random.split(r._key(k), 3)),
    }[fn], dtype


@pytest.mark.parametrize("fn", ["bits32", "bits8", "bits64", "rand", "uniform_pow2_bounds", "randint", "random_",
                                "bernoulli", "split"])
@pytest.mark.parametrize("shape", [(), (1,), (7, 5), (2, 3, 4), (129,)])
def test_random_draws_on_numpy_are_xlas_bit_for_bit(fn, shape):
    """Threefry in NumPy: the same bits as XLA's, for every shape (each element hashes its flat index)."""
    fn, _ = _draw(fn, None)
    for seed in (0, 12345, 2 ** 32 - 1):
        for dtype in (np.float32, np.float64):
            a, k = np.zeros(shape, dtype), _key_data(seed)
            run = _numpy_eval.compile_jaxpr(jax.make_jaxpr(fn)(a, k))
            assert run is not None and run.draws
            got, want = run(a, k)[0], np.asarray(jax.jit(fn)(a, k))
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_array_equal(got, want)


def test_random_kernels_choose_their_tier_by_shape_not_by_history():
    from tapegrad._ops import random_fill as r
    kernel = _fresh_kernel(lambda a, k, lo, hi: jax.random.uniform(r._key(k), a.shape, a.dtype, lo, hi))
    small, k = jnp.zeros((3, 4), jnp.float32), jnp.asarray(_key_data(0))
    with counting() as xla:
        first = np.asarray(kernel(small, k, -0.1, 0.3))
        for _ in range(200):   # far past the budget that would move an ordinary kernel to XLA
            again = np.asarray(kernel(small, k, -0.1, 0.3))
        assert xla.compiles == 0
    np.testing.assert_array_equal(first, again)
    big = jnp.zeros((1024, 1024), jnp.float32)   # too much work for NumPy: XLA from the first call
    with counting() as xla:
        kernel(big, k, -0.1, 0.3)
        assert xla.compiles == 1


def test_layer_initialisation_compiles_nothing():
    with counting() as xla:   # (counting clears JAX's caches)
        tapegrad.manual_seed(1)
        tapegrad.rand(1).item()   # the generator's own programs (seeding, fold_in, key data), once per process
        tapegrad.empty(1).uniform_(-1, 1).item()
        warm = xla.compiles
        layer = tapegrad.nn.Linear(37, 19)
        x = tapegrad.rand(5, 37)
        assert layer(x).shape == (5, 19)
        layer.weight.sum().item()
        assert tapegrad.randint(0, 10, (6,)).max().item() < 10
        assert xla.compiles == warm


@pytest.mark.parametrize("mode", ["LSTM", "GRU", "RNN"])
def test_recurrent_layers_run_new_lengths_without_compiling(torch, mode):
    """A recurrent layer is a scan: forward and backward over a length never seen compile nothing, and
    give PyTorch's values and gradients."""
    tapegrad.manual_seed(0)
    ours = getattr(tapegrad.nn, mode)(5, 7, batch_first=True)
    theirs = getattr(torch.nn, mode)(5, 7, batch_first=True)
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    ours(tapegrad.ones(2, 3, 5))[0].sum().backward()   # the layer's own first-use programs
    ours.zero_grad()
    for length in (4, 9):
        x = np.random.default_rng(length).standard_normal((2, length, 5)).astype(np.float32)
        with counting() as xla:
            out = ours(tapegrad.tensor(x))[0]
            out.pow(2).sum().backward()
            got = [out.detach().numpy()] + [p.grad.numpy() for p in ours.parameters()]
            assert xla.compiles == 0
        tout = theirs(torch.tensor(x))[0]
        tout.pow(2).sum().backward()
        want = [tout.detach().numpy()] + [p.grad.numpy() for p in theirs.parameters()]
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
        ours.zero_grad()
        theirs.zero_grad()


@pytest.mark.parametrize("name", ["erf", "erfc"])
def test_erf_over_an_array_is_maths_within_a_few_ulp(name):
    """The vectorised fdlibm formulas (arrays of VECTOR_FROM elements or more) against math.erf, one
    element at a time, across every interval of the fit, the signs, the edges and the special values."""
    from tapegrad import _numpy_erf
    rng = np.random.default_rng(7)
    edges = [0.84375, 1.25, 1 / 0.35, 6.0, 28.0, 2.0 ** -28, 0.25]
    x = np.concatenate([rng.standard_normal(20000) * 3, rng.uniform(-30, 30, 5000), rng.standard_normal(500) * 1e-9,
                        (np.array(edges) * np.array([[1.0], [-1.0], [1 - 1e-12], [1 + 1e-12]])).ravel(),
                        [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -1e-300, 40.0, -40.0]])
    assert x.size >= _numpy_erf.VECTOR_FROM
    got = getattr(_numpy_erf, name)(x)
    want = np.array([getattr(math, name)(v) for v in x])
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = ~np.isnan(want)
    ulps = np.abs(got[finite] - want[finite]) / np.spacing(np.abs(want[finite]))
    assert ulps.max() <= 4
    np.testing.assert_array_equal(np.signbit(got[finite]), np.signbit(want[finite]))
    small = x[:100]   # below VECTOR_FROM: element by element, exactly math's
    np.testing.assert_array_equal(getattr(_numpy_erf, name)(small), [getattr(math, name)(v) for v in small])


def test_erf_inv_is_at_least_as_accurate_as_xlas():
    """float32 erf_inv (normal draws) on NumPy: Giles' approximation evaluated in double, against a
    50-digit reference; XLA evaluates the same polynomial in float32."""
    mpmath = require("mpmath")
    mpmath.mp.dps = 50
    x = np.concatenate([np.linspace(-0.999999, 0.999999, 2001, dtype=np.float32), np.float32([0.0, 0.5, -0.25])])
    run = _numpy_eval.compile_jaxpr(jax.make_jaxpr(jax.scipy.special.erfinv)(x))
    ours, xlas = run(x)[0], np.asarray(jax.jit(jax.scipy.special.erfinv)(x))
    exact = np.array([float(mpmath.erfinv(mpmath.mpf(float(v)))) for v in x])
    ours_err, xla_err = np.abs(ours - exact) / np.abs(exact).clip(1e-30), np.abs(xlas - exact) / np.abs(exact).clip(1e-30)
    assert ours.dtype == np.float32 and ours_err.max() <= max(xla_err.max(), 1e-6)
    np.testing.assert_array_equal(run(np.float32([1.0, -1.0]))[0], [np.inf, -np.inf])


def test_normal_draws_of_a_shape_are_the_same_on_every_call():
    tapegrad.manual_seed(3)
    first = tapegrad.randn(40, 3).numpy()
    with counting() as xla:   # (counting clears JAX's caches: the generator's own programs come again)
        tapegrad.manual_seed(3)
        tapegrad.randn(2).numpy()
        warm = xla.compiles
        for _ in range(30):
            tapegrad.manual_seed(3)
            np.testing.assert_array_equal(tapegrad.randn(40, 3).numpy(), first)
        assert xla.compiles == warm
