"""Misuse raises what PyTorch raises: the same exception type and PyTorch's key phrase."""
import pytest

import tapegrad

from conftest import assert_close, require

torch = require("torch")

# (call, key phrase both messages contain; None: the opening of PyTorch's message)
CASES = {
    "add_shapes": (lambda lib: lib.ones(2, 3) + lib.ones(4), "must match the size of tensor b"),
    "matmul_shapes": (lambda lib: lib.ones(2, 3) @ lib.ones(2, 3), None),
    "mm_dtype": (lambda lib: lib.ones(2, 2).mm(lib.ones(2, 2, dtype=lib.float64)), None),
    "bmm_rank": (lambda lib: lib.bmm(lib.ones(2, 2), lib.ones(2, 2)), None),
    "dot_rank": (lambda lib: lib.dot(lib.ones(2, 2), lib.ones(2, 2)), None),
    "dim_out_of_range": (lambda lib: lib.ones(2, 3).sum(2), "Dimension out of range"),
    "dim_negative": (lambda lib: lib.ones(2, 3).softmax(-3) if hasattr(lib.ones(1), "softmax")
                     else lib.ones(2, 3).cumsum(-3), "Dimension out of range"),
    "max_dim": (lambda lib: lib.ones(2).max(1), "Dimension out of range"),
    "transpose_dim": (lambda lib: lib.ones(2, 3).transpose(0, 2), "Dimension out of range"),
    "view_size": (lambda lib: lib.ones(2, 3).view(4), None),
    "view_two_inferred": (lambda lib: lib.ones(2, 3).view(-1, -1), None),
    "reshape_size": (lambda lib: lib.ones(6).reshape(4, 2), None),
    "expand": (lambda lib: lib.ones(2, 3).expand(3, 3), "The expanded size of the tensor"),
    "cat_shapes": (lambda lib: lib.cat([lib.ones(2, 3), lib.ones(2, 2)]), "Sizes of tensors must match"),
    "cat_empty": (lambda lib: lib.cat([]), None),
    "stack_shapes": (lambda lib: lib.stack([lib.ones(2), lib.ones(3)]), "stack expects each tensor to be equal size"),
    "permute_dup": (lambda lib: lib.ones(2, 3).permute(0, 0), "duplicate dims"),
    "narrow": (lambda lib: lib.ones(2, 3).narrow(1, 2, 3), None),
    "chunk_zero": (lambda lib: lib.ones(3).chunk(0), None),
    "repeat_few": (lambda lib: lib.ones(2, 3).repeat(2), None),
    "select_index": (lambda lib: lib.ones(2, 3).select(0, 5), "out of range"),
    "diagonal_same": (lambda lib: lib.ones(2, 3).diagonal(0, 1, 1), None),
    "topk_k": (lambda lib: lib.ones(3).topk(4), None),
    "kthvalue_k": (lambda lib: lib.ones(3).kthvalue(4), None),
    "mean_int": (lambda lib: lib.tensor([1, 2]).mean(), "mean(): could not infer output dtype"),
    "std_int": (lambda lib: lib.tensor([1, 2]).std(), "std and var only support floating point and complex dtypes"),
    "max_empty": (lambda lib: lib.ones(0).max(), "Expected reduction dim to be specified"),
    "gather_dtype": (lambda lib: lib.ones(2, 2).gather(1, lib.zeros(2, 1)), None),
    "gather_rank": (lambda lib: lib.ones(2, 2).gather(1, lib.tensor([0])), None),
    "index_select_dtype": (lambda lib: lib.ones(3).index_select(0, lib.tensor([0.0])), None),
    "masked_fill_mask": (lambda lib: lib.ones(3).masked_fill(lib.ones(3), 0.0), "only supports boolean masks"),
    "where_cond": (lambda lib: lib.where(lib.ones(2), lib.ones(2), lib.ones(2)), "where expected condition to be a boolean"),
    "float_index": (lambda lib: lib.ones(3)[lib.tensor([0.0])], "tensors used as indices must be long"),
    "int_requires_grad": (lambda lib: lib.tensor([1, 2]).requires_grad_(), "only Tensors of floating point"),
    "int_div_zero": (lambda lib: lib.tensor([1, 2]) // 0, "ZeroDivisionError"),
    "int_neg_pow": (lambda lib: lib.tensor([1, 2]) ** -1, "Integers to negative integer powers are not allowed"),
    "bool_sub": (lambda lib: lib.tensor([True]) - lib.tensor([False]), "Subtraction, the `-` operator"),
    "bitwise_float": (lambda lib: lib.ones(2) & lib.ones(2), None),
    "inv_shape": (lambda lib: lib.linalg.inv(lib.ones(2, 3)), "must be batches of square matrices"),
    "inv_singular": (lambda lib: lib.linalg.inv(lib.zeros(2, 2)), "singular"),
    "cholesky_not_pd": (lambda lib: lib.linalg.cholesky(-lib.eye(2)), "positive-definite"),
    "cholesky_legacy_not_pd": (lambda lib: lib.cholesky(-lib.eye(2)), "cholesky: The factorization"),
    "cholesky_legacy_of_long": (lambda lib: lib.cholesky(lib.eye(2, dtype=lib.long)), None),
    "eigh_of_long": (lambda lib: lib.linalg.eigh(lib.eye(2, dtype=lib.long)), None),
    "eigvalsh_of_a_vector": (lambda lib: lib.linalg.eigvalsh(lib.ones(2)), None),
    "pinv_of_a_vector": (lambda lib: lib.linalg.pinv(lib.ones(3)), "linalg.pinv(Float{[3]}): expected a tensor"),
    "scalar_tensor_of_a_complex": (lambda lib: lib.scalar_tensor(1 + 2j), None),
    "vector_norm_int": (lambda lib: lib.linalg.vector_norm(lib.tensor([1, 2])), "Expected a floating point or complex"),
    "clamp_none": (lambda lib: lib.ones(2).clamp(), "At least one of 'min' or 'max' must not be None"),
    "inplace_cast": (lambda lib: lib.tensor([1, 2]).mul_(1.5), "can't be cast to the desired output type"),
    "inplace_broadcast": (lambda lib: lib.ones(3).add_(lib.ones(2, 3)), "doesn't match the broadcast shape"),
    "copy_shapes": (lambda lib: lib.ones(2, 3).copy_(lib.ones(3, 2)),
                    "The size of tensor a (3) must match the size of tensor b (2) at non-singleton dimension 1"),
    "multinomial_rank": (lambda lib: lib.ones(2, 2, 2).multinomial(1), "prob_dist must be 1 or 2 dim"),
    "uniform_int": (lambda lib: lib.tensor([1, 2]).uniform_(), None),
    "item_many": (lambda lib: lib.ones(2).item(), "elements cannot be converted to Scalar"),
    "std_mean_int": (lambda lib: lib.std_mean(lib.tensor([1, 2])), "std_mean only support floating point"),
    "var_mean_int": (lambda lib: lib.var_mean(lib.tensor([1, 2])), "var_mean only support floating point"),
    "view_as_complex_int": (lambda lib: lib.view_as_complex(lib.tensor([[1, 2]])),
                            "only supported for half, float and double tensors, but got a tensor of scalar type: Long"),
    "adjoint_vector": (lambda lib: lib.ones(2).adjoint(), "only supported on matrices or batches of matrices. Got 1-D"),
    "fliplr_vector": (lambda lib: lib.fliplr(lib.ones(2)), "Input must be >= 2-d."),
    "flipud_scalar": (lambda lib: lib.flipud(lib.tensor(1.0)), "Input must be >= 1-d."),
    "flip_without_dims": (lambda lib: lib.ones(2).flip(), 'flip() missing 1 required positional arguments: "dims"'),
    "permute_without_dims": (lambda lib: lib.ones(2).permute(), "permute() missing 1 required positional argument"),
    "reshape_without_shape": (lambda lib: lib.ones(2).reshape(), "reshape() missing 1 required positional argument"),
    "finfo_of_a_tensor": (lambda lib: lib.finfo(lib.ones(2)), "argument 'type' (position 1) must be torch.dtype"),
    "iinfo_of_a_tensor": (lambda lib: lib.iinfo(lib.tensor([1])), "argument 'type' (position 1) must be torch.dtype"),
    "square_of_bool_in_place": (lambda lib: lib.tensor([True]).square_(), "result type Long can't be cast"),
    "sort_stable_with_positional_dim": (lambda lib: lib.ones(2, 3).sort(1, stable=True), None),
    "sort_function_stable_with_positional_dim": (lambda lib: lib.sort(lib.ones(2, 3), 1, True, stable=True), None),
    "argsort_stable_with_positional_dim": (lambda lib: lib.argsort(lib.ones(3), 0, stable=True), None),
    "sort_bool_dim": (lambda lib: lib.ones(3).sort(True), None),
    "qr_of_an_integer_vector": (lambda lib: lib.linalg.qr(lib.tensor([1, 2, 3])), None),
    "qr_method_of_a_vector": (lambda lib: lib.ones(3).qr(), None),
    "linalg_svd_of_an_integer_vector": (lambda lib: lib.linalg.svd(lib.tensor([1, 2, 3])), None),
    "svd_of_an_integer_vector": (lambda lib: lib.svd(lib.tensor([1, 2, 3])), None),
    "svd_method_of_a_vector": (lambda lib: lib.ones(3).svd(), None),
    "svdvals_of_an_integer_vector": (lambda lib: lib.linalg.svdvals(lib.tensor([1, 2, 3])), None),
    "svdvals_of_an_integer_matrix": (lambda lib: lib.linalg.svdvals(lib.tensor([[1, 2], [3, 4]])), None),
    "add_method_with_out": (lambda lib: lib.ones(2).add(lib.ones(2), out=lib.empty(2)), None),
    "mul_method_with_out": (lambda lib: lib.ones(2).mul(2, out=lib.empty(2)), None),
    "sum_method_with_out": (lambda lib: lib.ones(2, 2).sum(0, out=lib.empty(2)), None),
    "matmul_method_with_out": (lambda lib: lib.ones(2, 2).matmul(lib.ones(2, 2), out=lib.empty(2, 2)), None),
    "cumsum_method_with_out": (lambda lib: lib.ones(2).cumsum(0, out=lib.empty(2)), None),
    "max_method_with_out": (lambda lib: lib.ones(2, 2).max(0, out=(lib.empty(2), lib.empty(2))), None),
    "add_inplace_with_out": (lambda lib: lib.ones(2).add_(lib.ones(2), out=lib.empty(2)), None),
    "add_method_with_out_none": (lambda lib: lib.ones(2).add(lib.ones(2), out=None), None),
    "scalar_tensor_of_a_vector": (lambda lib: lib.scalar_tensor(lib.tensor([1.0])), None),
    "scalar_tensor_of_a_string": (lambda lib: lib.scalar_tensor("a"), None),
    "scalar_tensor_of_none": (lambda lib: lib.scalar_tensor(None), None),
    "scalar_tensor_of_a_tensor_requiring_grad": (lambda lib: lib.scalar_tensor(lib.tensor(1.0, requires_grad=True)),
                                                 None),
    "an_int_beyond_uint64": (lambda lib: lib.zeros(2) * 2 ** 64, "int too big to convert"),
    "an_int_below_int64": (lambda lib: lib.zeros(2) + (-2 ** 63 - 1), "can't convert negative int to unsigned"),
    "backward_of_a_complex_scalar_without_a_gradient": (
        lambda lib: (lib.tensor([1 + 2j], requires_grad=True) * 2).sum().backward(),
        "grad can be implicitly created only for real scalar outputs"),
    "grad_of_a_complex_scalar_without_a_gradient": (
        lambda lib: _grad_of((lambda x: (x * 2).sum()), lib.tensor([1 + 2j], requires_grad=True), lib),
        "grad can be implicitly created only for real scalar outputs"),
}


def _grad_of(fn, x, lib):
    return lib.autograd.grad(fn(x), x)


def _error(fn, lib):
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001  what is raised is the thing under test
        return e
    return None


@pytest.mark.parametrize("name", sorted(CASES))
def test_error_matches_pytorch(name):
    fn, phrase = CASES[name]
    theirs = _error(fn, torch)
    assert theirs is not None, "PyTorch accepts this call; the case is wrong"
    ours = _error(fn, tapegrad)
    assert ours is not None, f"PyTorch raises {type(theirs).__name__}: {theirs}; tapegrad raises nothing"
    # PyTorch's LinAlgError class is named _LinAlgError.
    assert type(ours).__name__.lstrip("_") == type(theirs).__name__.lstrip("_"), \
        f"{type(ours).__name__}: {ours} vs PyTorch's {type(theirs).__name__}: {theirs}"
    phrase = phrase or str(theirs).split(".")[0].split(",")[0][:30]
    assert phrase in str(theirs), f"the key phrase is not PyTorch's: {theirs}"
    assert phrase in str(ours), f"tapegrad's message {str(ours)!r} lacks PyTorch's key phrase {phrase!r}"


@pytest.mark.parametrize("code", ["x + 2 ** 63", "x.fill_(2 ** 63)", "i + 2 ** 63", "x - (2 ** 64 - 1)",
                                  "i * (2 ** 64 - 1)", "x.add(2 ** 63, alpha=2)"])
def test_python_ints_beyond_int64_convert_as_torch(code):
    # up to 2**64 PyTorch reads the int as unsigned: the float of a floating op, wrapped bits of an integer one
    def run(lib):
        return eval(code, {"lib": lib, "x": lib.zeros(2), "i": lib.zeros(2, dtype=lib.int64)})
    assert_close(run(tapegrad), run(torch), rtol=0, atol=0)


@pytest.mark.parametrize("code", ["x.flip(dims=[0])", "lib.flip(x, dims=(0, 1))", "x.permute(dims=[1, 0])",
                                  "x.reshape(shape=(6,))", "lib.reshape(x, shape=[3, 2])", "b.square()",
                                  "lib.square(b)", "x.sort(stable=True, dim=1, descending=True).indices",
                                  "lib.argsort(x, stable=True, dim=0)", "x.sort(1, True).values",
                                  "x.argsort(0, descending=True)", "lib.scalar_tensor(lib.tensor(2))",
                                  "lib.scalar_tensor(lib.tensor(True), dtype=lib.float64)"])
def test_keyword_and_bool_forms_as_in_torch(code):
    def run(lib):
        out = eval(code, {"lib": lib, "x": lib.arange(6.0).reshape(2, 3), "b": lib.tensor([True, False])})
        return str(out.dtype).rsplit(".")[-1], out.tolist()
    assert run(tapegrad) == run(torch)


@pytest.mark.parametrize("reshape", ["squeeze_()", "unsqueeze_(0)", "t_()"])
def test_version_error_prints_the_shape_at_the_error(reshape):
    # PyTorch's message shows a saved argument's shape now, after the in-place reshape that made it stale
    def run(lib):
        x = lib.ones(2, 1, 3, requires_grad=True) if reshape != "t_()" else lib.ones(2, 3, requires_grad=True)
        y = x * 2
        z = y.sin()
        eval("y." + reshape)
        z.sum().backward()
    ours, theirs = _error(run, tapegrad), _error(run, torch)
    assert str(ours).split(" is at version")[0] == str(theirs).split(" is at version")[0]
