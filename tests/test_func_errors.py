"""torch.func's argument and result checks: the same misuse raises the same error type and text under
tapegrad.func as under torch.func (never jax.grad's or jax.vmap's), vmap's randomness modes and its chunks."""
import collections

import pytest

import tapegrad
from conftest import raised

Pair = collections.namedtuple("Pair", "a b")


def _cases():
    def vmap(lib, f, *args, **kw):
        return lib.vmap(f, **kw)(*args)

    def grad(lib, f, *args, **kw):
        return lib.func.grad(f, **kw)(*args)
    one = lambda lib, *s: lib.ones(*(s or (3,)))   # noqa: E731
    return {
        # vmap: in_dims against the arguments
        "in_dim_out_of_range": lambda lib: vmap(lib, lambda x: x, one(lib), in_dims=1),
        "negative_in_dim_out_of_range": lambda lib: vmap(lib, lambda x: x, one(lib), in_dims=-2),
        "in_dim_of_a_zero_dim_tensor": lambda lib: vmap(lib, lambda x: x, lib.tensor(1.0)),
        "batch_sizes_differ": lambda lib: vmap(lib, lambda x, y: x + y, one(lib), one(lib, 4)),
        "in_dims_shorter_than_args": lambda lib: vmap(lib, lambda x, y: x, one(lib), one(lib), in_dims=(0,)),
        "in_dims_a_string": lambda lib: vmap(lib, lambda x: x, one(lib), in_dims="a"),
        "in_dims_a_list": lambda lib: vmap(lib, lambda x: x, one(lib), in_dims=[0]),
        "in_dims_none": lambda lib: vmap(lib, lambda x: x, one(lib), in_dims=None),
        "in_dims_all_none": lambda lib: vmap(lib, lambda x: x, one(lib), in_dims=(None,)),
        "in_dim_a_float": lambda lib: vmap(lib, lambda x: x, one(lib), in_dims=(0.5,)),
        "in_dim_for_a_number": lambda lib: vmap(lib, lambda x: x, 3),
        "no_inputs": lambda lib: vmap(lib, lambda: 1),
        "dict_in_dims_with_other_keys": lambda lib: vmap(lib, lambda d: d["a"], {"a": one(lib)},
                                                         in_dims=({"a": 0, "b": 0},)),
        "list_in_dims_of_another_length": lambda lib: vmap(lib, lambda d: d[0], [one(lib)], in_dims=([0, 0],)),
        "tuple_in_dims_for_a_namedtuple": lambda lib: vmap(lib, lambda p: p.a, Pair(one(lib), one(lib)),
                                                           in_dims=((0, 0),)),
        "names_a_module": lambda lib: vmap(lib, lib.nn.Identity(), one(lib), in_dims=2),
        "names_a_builtin": lambda lib: vmap(lib, lib.sum, one(lib), in_dims=2),
        # vmap: out_dims against the results
        "out_dims_a_string": lambda lib: vmap(lib, lambda x: x, one(lib), out_dims="a"),
        "out_dims_longer_than_results": lambda lib: vmap(lib, lambda x: (x, x), one(lib), out_dims=(0, 0, 0)),
        "out_dims_a_pair_for_one_tensor": lambda lib: vmap(lib, lambda x: x, one(lib), out_dims=(0, 0)),
        "out_dim_out_of_range": lambda lib: vmap(lib, lambda x: x, one(lib, 3, 2), out_dims=-3),
        "out_dim_past_the_end": lambda lib: vmap(lib, lambda x: x, one(lib, 3, 2), out_dims=2),
        "result_not_a_tensor": lambda lib: vmap(lib, lambda x: 3, one(lib)),
        "batched_result_with_out_dim_none": lambda lib: vmap(lib, lambda x: x, one(lib), out_dims=None),
        "chunk_size_zero": lambda lib: lib.vmap(lambda x: x, chunk_size=0),
        "unknown_randomness": lambda lib: lib.vmap(lambda x: x, randomness="xx"),
        # vmap: values read in Python, draws in randomness="error"
        "item": lambda lib: vmap(lib, lambda x: x.item(), one(lib)),
        "float": lambda lib: vmap(lib, lambda x: float(x), one(lib)),
        "int_index": lambda lib: vmap(lib, lambda x: [1, 2, 3][x], one(lib).long()),
        "data_dependent_if": lambda lib: vmap(lib, lambda x: x if x > 0 else -x, one(lib)),
        "tolist": lambda lib: vmap(lib, lambda x: x.tolist(), one(lib)),
        "numpy": lambda lib: vmap(lib, lambda x: x.numpy(), one(lib)),
        "item_under_grad_under_vmap": lambda lib: vmap(lib, lib.func.grad(lambda x: x * x.item()), one(lib)),
        "nonzero": lambda lib: vmap(lib, lambda x: x.nonzero(), one(lib, 2, 3)),
        "nonzero_as_tuple": lambda lib: vmap(lib, lambda x: x.nonzero(as_tuple=True), one(lib, 2, 3)),
        "unique": lambda lib: vmap(lib, lambda x: x.unique(), one(lib, 2, 3)),
        "unique_dim": lambda lib: vmap(lib, lambda x: x.unique(dim=0), one(lib, 2, 3)),
        "unique_consecutive": lambda lib: vmap(lib, lambda x: x.unique_consecutive(), one(lib, 2, 3)),
        "masked_select_by_a_mapped_mask": lambda lib: vmap(lib, lambda x: x.masked_select(x > 0), one(lib, 2, 3)),
        "indexing_by_a_mapped_mask": lambda lib: vmap(lib, lambda x: x[x > 0], one(lib, 2, 3)),
        "nonzero_under_grad_under_vmap": lambda lib: vmap(lib, lib.func.grad(lambda y: y.nonzero().sum() * y.sum()),
                                                          one(lib, 2, 3)),
        "rand_in_error_mode": lambda lib: vmap(lib, lambda x: lib.rand(()), one(lib)),
        "dropout_in_error_mode": lambda lib: vmap(lib, lambda x: lib.nn.functional.dropout(x, 0.5), one(lib, 3, 2)),
        "randn_like_in_an_outer_error_mode": lambda lib: vmap(
            lib, lambda x: lib.vmap(lambda y: lib.randn_like(y), randomness="same")(x), one(lib, 2, 3)),
        # grad and grad_and_value
        "argnum_out_of_range": lambda lib: grad(lib, lambda x: x.sum(), one(lib), argnums=1),
        "argnums_empty": lambda lib: grad(lib, lambda x: x.sum(), one(lib), argnums=()),
        "argnums_repeated": lambda lib: grad(lib, lambda x, y: x.sum(), one(lib), one(lib), argnums=(0, -2)),
        "argnums_a_list": lambda lib: grad(lib, lambda x: x.sum(), one(lib), argnums=[0]),
        "argnum_a_float": lambda lib: grad(lib, lambda x: x.sum(), one(lib), argnums=(0.5,)),
        "grad_of_a_number": lambda lib: grad(lib, lambda x: x * 2, 3.0),
        "grad_of_an_integer_tensor": lambda lib: grad(lib, lambda x: x.sum(), one(lib).long()),
        "grad_of_a_vector": lambda lib: grad(lib, lambda x: x, one(lib)),
        "grad_of_a_number_result": lambda lib: grad(lib, lambda x: 3.0, one(lib)),
        "grad_has_aux_without_a_pair": lambda lib: grad(lib, lambda x: x.sum(), one(lib), has_aux=True),
        "grad_has_aux_with_a_triple": lambda lib: grad(lib, lambda x: (x.sum(), 1, 2), one(lib), has_aux=True),
        "grad_and_value_of_a_vector": lambda lib: lib.func.grad_and_value(lambda x: x * 2)(one(lib)),
        # vjp
        "vjp_of_a_number_result": lambda lib: lib.func.vjp(lambda x: 3.0, one(lib)),
        "vjp_of_none": lambda lib: lib.func.vjp(lambda x: None, one(lib)),
        "vjp_of_nothing": lambda lib: lib.func.vjp(lambda x: (), one(lib)),
        "vjp_of_a_number": lambda lib: lib.func.vjp(lambda x: x, 3.0),
        "vjp_has_aux_without_a_pair": lambda lib: lib.func.vjp(lambda x: x, one(lib), has_aux=True),
        "vjp_cotangent_of_another_shape": lambda lib: lib.func.vjp(lambda x: x * 2, one(lib))[1](one(lib, 4)),
        # jvp
        "jvp_primals_not_a_tuple": lambda lib: lib.func.jvp(lambda x: x, one(lib), (one(lib),)),
        "jvp_tangents_not_a_tuple": lambda lib: lib.func.jvp(lambda x: x, (one(lib),), one(lib)),
        "jvp_more_tangents": lambda lib: lib.func.jvp(lambda x: x, (one(lib),), (one(lib), one(lib))),
        "jvp_of_a_number_result": lambda lib: lib.func.jvp(lambda x: 3.0, (one(lib),), (one(lib),)),
        "jvp_tangent_of_another_shape": lambda lib: lib.func.jvp(lambda x: x, (one(lib),), (one(lib, 4),)),
        "jvp_of_a_number": lambda lib: lib.func.jvp(lambda x: x, (3.0,), (1.0,)),
        "jvp_of_no_primals": lambda lib: lib.func.jvp(lambda: 1, (), ()),
        "jvp_has_aux_without_a_pair": lambda lib: lib.func.jvp(lambda x: x, (one(lib),), (one(lib),), has_aux=True),
        # vmap: an in-place write of a mapped result into a tensor the map does not batch (JAX would batch it)
        "vmap_add_into_an_unmapped_tensor": lambda lib: vmap(lib, _into_zeros(lib, lambda y, x: y.add_(x)),
                                                             one(lib, 2, 3)),
        "vmap_copy_into_an_unmapped_view": lambda lib: vmap(lib, _into_zeros(lib, lambda y, x: y[1:].copy_(x[1:])),
                                                            one(lib, 2, 3)),
        "nested_vmap_write_batched_by_the_inner_map_only": lambda lib: vmap(
            lib, lambda x: vmap(lib, lambda z: x.mul_(z), one(lib, 4, 3)), one(lib, 2, 3)),
        # jacobians
        "jacrev_of_a_number_result": lambda lib: lib.func.jacrev(lambda x: 3.0)(one(lib)),
        "jacfwd_of_a_number_result": lambda lib: lib.func.jacfwd(lambda x: 3.0)(one(lib)),
        "jacfwd_unknown_randomness": lambda lib: lib.func.jacfwd(lambda x: x, randomness="x")(one(lib)),
        "jacfwd_draw_in_error_mode": lambda lib: lib.func.jacfwd(lambda x: x * lib.rand(3))(one(lib)),
        "jacrev_chunk_size_zero": lambda lib: lib.func.jacrev(lambda x: x * 2, chunk_size=0),
        "jacrev_argnum_out_of_range": lambda lib: lib.func.jacrev(lambda x: x * 2, argnums=2)(one(lib)),
        "hessian_draw_in_error_mode": lambda lib: lib.func.hessian(lambda x: (x * lib.rand(3)).sum())(one(lib)),
    }


def _into_zeros(lib, write):
    def f(x):
        y = lib.zeros(3)
        write(y, x)
        return y
    return f


CASES = _cases()


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_same_error_as_torch_func(torch, case):
    theirs = raised(lambda: CASES[case](torch))
    assert theirs is not None, f"{case}: PyTorch raises nothing here"
    ours = raised(lambda: CASES[case](tapegrad))
    assert ours is not None, f"{case}: tapegrad raised nothing, PyTorch raised {theirs}"
    assert ours[0].__name__ == theirs[0].__name__ and ours[1] == theirs[1]


def test_vmap_randomness_different_draws_per_element_and_same_draws_once():
    tapegrad.manual_seed(0)
    x = tapegrad.ones(4, 6)
    different = tapegrad.vmap(lambda r: tapegrad.rand(()) + 0 * r.sum(), randomness="different")(x)
    same = tapegrad.vmap(lambda r: tapegrad.rand(()) + 0 * r.sum(), randomness="same")(x)
    assert len(set(different.tolist())) == 4 and len(set(same.tolist())) == 1
    masks = tapegrad.vmap(lambda r: tapegrad.nn.functional.dropout(r, 0.5), randomness="different")(x)
    assert len({tuple(row) for row in masks.tolist()}) > 1
    nested = tapegrad.vmap(tapegrad.vmap(lambda v: tapegrad.rand(()), randomness="different"),
                           randomness="different")(x)
    assert nested.shape == (4, 6) and len(set(nested.flatten().tolist())) == 24
    # a new call draws again
    again = tapegrad.vmap(lambda r: tapegrad.rand(()) + 0 * r.sum(), randomness="different")(x)
    assert again.tolist() != different.tolist()


def test_jacfwd_randomness_different_draws_per_column_as_pytorch(torch):
    """Each column of jacfwd's Jacobian comes from draws of its own (one per input element, as PyTorch's vmap
    over the basis); "same" draws once; the Jacobian's layout over tuple argnums, dicts and aux is PyTorch's."""
    tapegrad.manual_seed(0)
    for lib in (tapegrad, torch):
        F, x = lib.func, lib.ones(5, dtype=lib.float64)
        J = F.jacfwd(lambda v: v * lib.rand(()), randomness="different")(x)
        assert len(set(J.diagonal().tolist())) == 5 and (J - lib.diag(J.diagonal())).abs().sum().item() == 0
        same = F.jacfwd(lambda v: v * lib.rand(()), randomness="same")(x)
        assert len(set(same.diagonal().tolist())) == 1
        masks = F.jacfwd(lambda v: lib.nn.functional.dropout(v, 0.5), randomness="different")(lib.ones(40))
        assert set(masks.flatten().tolist()) == {0.0, 2.0}

    def layout(lib):
        (ja, jb), aux = lib.func.jacfwd(lambda a, b: ((a * b * lib.rand(2, 1)).sum(0), a.sum() + lib.rand(())),
                                        argnums=(0, 1), has_aux=True, randomness="different")(lib.ones(2, 3),
                                                                                              lib.ones(3))
        d = lib.func.jacfwd(lambda d: d["w"] * 2 + d["b"].sum(), randomness="different")(
            {"w": lib.ones(3), "b": lib.ones(2)})
        return ja.shape, jb.shape, aux.shape, list(d), d["w"].tolist(), d["b"].tolist()
    assert layout(tapegrad) == layout(torch)

    def f(lib):
        return lib.func.jacfwd(lambda v: (v.sin() * v[:1]).exp(), randomness="different")(
            lib.arange(4.0, dtype=lib.float64))
    assert f(tapegrad).numpy() == pytest.approx(f(torch).numpy(), rel=1e-12)


def test_valid_in_and_out_dims_still_map(torch):
    def run(lib):
        x = lib.arange(6.0).view(3, 2)
        pair = lib.vmap(lambda a, b: (a * b, a.sum()), in_dims=(1, None), out_dims=(-1, 0))(x, lib.ones(3))
        d = lib.vmap(lambda d: d["w"] * d["s"], in_dims=({"w": 0, "s": None},))({"w": x, "s": lib.tensor(2.0)})
        return pair + (d, lib.vmap(lambda p: p.a + p.b, in_dims=(Pair(0, None),))(Pair(x, lib.ones(2))))
    for a, b in zip(run(tapegrad), run(torch)):
        assert a.tolist() == b.tolist()


@pytest.mark.parametrize("chunk_size", [1, 3, 10, 20])
def test_vmap_in_chunks_gives_the_whole_maps_results(torch, chunk_size):
    def run(lib, **kw):
        x = lib.arange(30.0, dtype=lib.float64).view(10, 3)
        return lib.vmap(lambda r, s: (r * s, {"m": r.sum(), "k": r[:2]}), in_dims=(0, None),
                        out_dims=(0, {"m": 0, "k": 1}), **kw)(x, lib.tensor(2.0, dtype=lib.float64))
    ours, theirs = run(tapegrad, chunk_size=chunk_size), run(torch, chunk_size=chunk_size)
    for a, b in ((ours[0], theirs[0]), (ours[1]["m"], theirs[1]["m"]), (ours[1]["k"], theirs[1]["k"])):
        assert a.shape == b.shape and a.tolist() == b.tolist()
    assert list(ours[1]) == ["m", "k"]


def test_vmap_in_chunks_draws_the_same_values_per_chunk_with_randomness_same():
    tapegrad.manual_seed(0)
    draw = lambda r: tapegrad.rand(()) + 0 * r.sum()   # noqa: E731
    same = tapegrad.vmap(draw, randomness="same", chunk_size=3)(tapegrad.ones(10, 2))
    different = tapegrad.vmap(draw, randomness="different", chunk_size=3)(tapegrad.ones(10, 2))
    assert len(set(same.tolist())) == 1 and len(set(different.tolist())) == 10


def test_masked_select_by_a_mask_outside_the_map_works_as_in_pytorch(torch):
    def run(lib):
        return lib.vmap(lambda x: x.masked_select(lib.tensor([True, False, True])))(lib.arange(6.0).view(2, 3))
    assert run(tapegrad).tolist() == run(torch).tolist()


@pytest.mark.parametrize("method", ["add_", "mul_", "sub_", "div_", "pow_", "atan2_", "fmod_", "clamp_min_",
                                    "xlogy_", "logical_and_", "hypot_", "__iadd__", "__imul__", "__itruediv__"])
def test_vmap_in_place_op_writing_a_mapped_value_into_an_unmapped_tensor_raises_as_pytorch(torch, method):
    # each form PyTorch's batching rules give: the kernel's shape error, "inplace arithmetic", or the per-example
    # fallback naming the aten op and the vmap level
    def run(lib):
        return raised(lambda: lib.vmap(_into_zeros(lib, lambda y, x: getattr(y + 1.5, method)(x)))(
            lib.ones(2, 3) * 1.5))
    theirs, ours = run(torch), run(tapegrad)
    assert theirs is not None
    assert ours is not None and ours[0].__name__ == theirs[0].__name__ and ours[1] == theirs[1]
