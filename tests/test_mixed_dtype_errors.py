"""Layers given tensors of mixed dtypes, and kernels given a dtype they lack (bool abs, integer frac ...),
refuse them with PyTorch's CPU messages: convolutions (expected scalar type), bilinear (all tensors must
have the same dtype), the normalisations (mixed dtype (CPU)), "abs_cpu" not implemented for 'Bool'.
The first sentence of each message is compared with PyTorch's (tapegrad may add how to fix it)."""
import pytest

import tapegrad
from conftest import raised

F64 = "float64"

CALLS = {
    "conv1d, a double weight": lambda lib, F: F.conv1d(lib.ones(1, 1, 3), lib.ones(1, 1, 2, dtype=lib.float64)),
    "conv2d, a double input": lambda lib, F: F.conv2d(lib.ones(1, 1, 3, 3, dtype=lib.float64), lib.ones(1, 1, 2, 2)),
    "conv3d, a half weight": lambda lib, F: F.conv3d(lib.ones(1, 1, 3, 3, 3), lib.ones(1, 1, 2, 2, 2, dtype=lib.float16)),
    "conv2d, a double bias": lambda lib, F: F.conv2d(lib.ones(1, 1, 3, 3), lib.ones(1, 1, 2, 2), lib.ones(1, dtype=lib.float64)),
    "conv_transpose2d, a double weight": lambda lib, F: F.conv_transpose2d(lib.ones(1, 1, 3, 3),
                                                                           lib.ones(1, 1, 2, 2, dtype=lib.float64)),
    "bilinear, a double weight": lambda lib, F: F.bilinear(lib.ones(2, 3), lib.ones(2, 3), lib.ones(4, 3, 3, dtype=lib.float64)),
    "bilinear, a double input": lambda lib, F: F.bilinear(lib.ones(2, 3, dtype=lib.float64), lib.ones(2, 3), lib.ones(4, 3, 3)),
    "bilinear, a double bias": lambda lib, F: F.bilinear(lib.ones(2, 3), lib.ones(2, 3), lib.ones(4, 3, 3),
                                                         lib.ones(4, dtype=lib.float64)),
    "layer_norm, a double weight": lambda lib, F: F.layer_norm(lib.ones(2, 3), (3,), lib.ones(3, dtype=lib.float64)),
    "layer_norm, a double input": lambda lib, F: F.layer_norm(lib.ones(2, 3, dtype=lib.float64), (3,), lib.ones(3)),
    "group_norm, a double input": lambda lib, F: F.group_norm(lib.ones(2, 4, dtype=lib.float64), 2, lib.ones(4)),
    "group_norm, a double bias": lambda lib, F: F.group_norm(lib.ones(2, 4), 2, None, lib.ones(4, dtype=lib.float64)),
    "batch_norm, a double weight": lambda lib, F: F.batch_norm(lib.ones(2, 3), lib.zeros(3), lib.ones(3),
                                                               lib.ones(3, dtype=lib.float64)),
    "batch_norm, double running stats": lambda lib, F: F.batch_norm(lib.ones(2, 3), lib.zeros(3, dtype=lib.float64),
                                                                    lib.ones(3, dtype=lib.float64)),
    "batch_norm, a double input": lambda lib, F: F.batch_norm(lib.ones(2, 3, dtype=lib.float64), lib.zeros(3), lib.ones(3)),
    "batch_norm training, a double weight": lambda lib, F: F.batch_norm(lib.ones(2, 3), None, None,
                                                                        lib.ones(3, dtype=lib.float64), training=True),
    # an integer input with float parameters is a mixed call, refused before the kernel's dtype and (layer_norm)
    # the shapes are looked at
    "layer_norm, a long input": lambda lib, F: F.layer_norm(lib.tensor([3]), (1,), lib.ones(1), lib.ones(1)),
    "layer_norm, a bool input and a bias": lambda lib, F: F.layer_norm(lib.tensor([True]), (1,), None, lib.ones(1)),
    "layer_norm, a long input and a weight of another shape": lambda lib, F: F.layer_norm(lib.tensor([3]), (2,),
                                                                                          lib.ones(1)),
    "nn.LayerNorm, a long input": lambda lib, F: lib.nn.LayerNorm(2)(lib.tensor([[3, 4]])),
    "layer_norm, a long input and long parameters": lambda lib, F: F.layer_norm(lib.tensor([3]), (1,),
                                                                                lib.tensor([1]), lib.tensor([1])),
    "layer_norm, a long bias": lambda lib, F: F.layer_norm(lib.ones(1), (1,), lib.ones(1), lib.tensor([1])),
    "layer_norm, a float bias beside half": lambda lib, F: F.layer_norm(lib.ones(1, dtype=lib.half), (1,),
                                                                        lib.ones(1, dtype=lib.half), lib.ones(1)),
    "group_norm, a long input": lambda lib, F: F.group_norm(lib.tensor([[3, 4]]), 1, None, lib.ones(2)),
    "group_norm, a long input and a weight of another size": lambda lib, F: F.group_norm(lib.tensor([[3, 4]]), 1,
                                                                                         lib.ones(3)),
    "group_norm, a long input of one dimension": lambda lib, F: F.group_norm(lib.tensor([3, 4]), 1, lib.ones(2)),
    "nn.GroupNorm, a long input": lambda lib, F: lib.nn.GroupNorm(1, 2)(lib.tensor([[3, 4]])),
    "group_norm, a double bias beside a float weight": lambda lib, F: F.group_norm(
        lib.ones(1, 2), 1, lib.ones(2), lib.ones(2, dtype=lib.float64)),
}


def _first_sentence(error):
    if error is None:
        return None
    kind, message = error
    return kind, message.split(". ")[0]


@pytest.mark.parametrize("case", sorted(CALLS))
def test_mixed_dtypes_are_refused_as_torch_does(case, torch):
    call = CALLS[case]
    ours = _first_sentence(raised(lambda: call(tapegrad, tapegrad.nn.functional)))
    theirs = _first_sentence(raised(lambda: call(torch, torch.nn.functional)))
    assert ours == theirs


@pytest.mark.filterwarnings("ignore:Mismatch dtype between input and weight")
@pytest.mark.parametrize("input_dtype, weight_dtype", [("float32", "float32"), ("float32", "float64"),
                                                       ("float16", "float16"), ("float16", "float32"),
                                                       ("bfloat16", "float64"), ("float16", None)])
def test_rms_norm_computes_in_float32_and_returns_the_input_dtype_as_torch(input_dtype, weight_dtype, torch):
    """PyTorch's composite: half and bfloat16 inputs normalised in float32, the weight multiplied in before the
    one cast back to the input's dtype (so a float32 weight's gradient is not rounded to half)."""
    def run(lib):
        x = lib.tensor([[3., 1., -2.], [0.5, 0.25, 4.]], dtype=getattr(lib, input_dtype), requires_grad=True)
        w = None if weight_dtype is None else lib.tensor([1., 2., 0.5], dtype=getattr(lib, weight_dtype),
                                                         requires_grad=True)
        out = lib.nn.functional.rms_norm(x, (3,), w)
        (out * lib.arange(6.).reshape(2, 3)).sum().backward()
        return (str(out.dtype).split(".")[1], out.grad_fn.name(), out.detach().double().flatten().tolist(),
                x.grad.double().flatten().tolist(),
                None if w is None else (str(w.grad.dtype).split(".")[1], w.grad.double().tolist()))
    (dtype, name, out, x_grad, w_grad), theirs = run(tapegrad), run(torch)
    assert (dtype, name) == theirs[:2]
    assert (w_grad is None) == (theirs[4] is None)
    tol = 1e-6 if input_dtype == "float32" else 1e-2
    assert out == pytest.approx(theirs[2], rel=tol, abs=tol) and x_grad == pytest.approx(theirs[3], rel=tol, abs=tol)
    if w_grad is not None:   # (float32 and float64 weights: their gradient is not rounded to the input's dtype)
        assert w_grad[0] == theirs[4][0] and w_grad[1] == pytest.approx(theirs[4][1], rel=1e-6)


# Kernels PyTorch has no bool (or integer) version of refuse those dtypes with its errors
NO_KERNEL = {
    "abs of bool": lambda lib: lib.tensor([True, False]).abs(),
    "floor of bool": lambda lib: lib.tensor([True]).floor(),
    "ceil_ of bool": lambda lib: lib.tensor([True]).ceil_(),
    "trunc of bool": lambda lib: lib.trunc(lib.tensor([True])),
    "round of bool": lambda lib: lib.tensor([True]).round(),
    "round of bool to decimals": lambda lib: lib.tensor([True]).round(decimals=1),
    "frac of long": lambda lib: lib.tensor([1, 2]).frac(),
    "frac of int": lambda lib: lib.tensor([1, 2], dtype=lib.int32).frac(),
    "negation of bool": lambda lib: -lib.tensor([True]),
    "neg_ of bool": lambda lib: lib.tensor([True]).neg_(),
    "relu of bool": lambda lib: lib.tensor([True]).relu(),
    "argmax of bool": lambda lib: lib.tensor([True, False]).argmax(),
    "argmin of bool along a dim": lambda lib: lib.tensor([[True, False]]).argmin(1),
    "median of bool": lambda lib: lib.tensor([True, False]).median(),
    "median of bool along a dim": lambda lib: lib.tensor([True, False]).median(0),
    "hardshrink of long": lambda lib: lib.nn.functional.hardshrink(lib.tensor([1, 2])),
    "abs of long": lambda lib: lib.tensor([-1, 2]).abs(),
    "floor of long": lambda lib: lib.tensor([-1, 2]).floor(),
    "leaky_relu of long": lambda lib: lib.nn.functional.leaky_relu(lib.tensor([1, -2])),
    "leaky_relu of complex": lambda lib: lib.nn.functional.leaky_relu(lib.tensor([1, -2], dtype=lib.complex64)),
    "rrelu of long": lambda lib: lib.nn.functional.rrelu(lib.tensor([1, -2])),
    "rrelu of bool": lambda lib: lib.rrelu(lib.tensor([True, False])),
    "rrelu_ of long in training": lambda lib: lib.nn.functional.rrelu_(lib.tensor([1, -2]), training=True),
    "rrelu of half in training": lambda lib: lib.nn.functional.rrelu(lib.ones(2, dtype=lib.half), training=True),
    "repeat_interleave by bool counts": lambda lib: lib.repeat_interleave(lib.ones(3), lib.tensor([True, False, True])),
    "repeat_interleave of bool counts": lambda lib: lib.repeat_interleave(lib.tensor([True, False])),
    "repeat_interleave by float counts": lambda lib: lib.ones(2).repeat_interleave(lib.tensor([1.0, 2.0])),
    "repeat_interleave by a 0-d byte count": lambda lib: lib.ones(2).repeat_interleave(lib.tensor(2, dtype=lib.uint8)),
    "trace of bool": lambda lib: lib.trace(lib.tensor([[True, False], [True, True]])),
    "trace of a bool vector": lambda lib: lib.tensor([True, False]).trace(),
    "pow of bool by a bool tensor": lambda lib: lib.pow(lib.tensor([True]), lib.tensor(True)),
    "pow of True by bool": lambda lib: lib.pow(True, lib.tensor([True])),
}


@pytest.mark.parametrize("case", sorted(NO_KERNEL))
def test_kernels_without_a_dtype_refuse_it_as_torch(case, torch):
    call = NO_KERNEL[case]
    ours, theirs = (_first_sentence(raised(lambda lib=lib: call(lib))) for lib in (tapegrad, torch))
    assert ours == theirs


@pytest.mark.parametrize("code", ["lib.pow(b, True)", "lib.pow(b, False)", "b ** True", "b.clone().pow_(True)",
                                  "lib.pow(b[0], True)", "lib.pow(b, 1)", "lib.pow(b, 0.0)",
                                  "lib.repeat_interleave(b, 2)", "lib.repeat_interleave(b, lib.tensor([1, 0, 2]))",
                                  "lib.repeat_interleave(lib.tensor([1, 2], dtype=lib.int32))",
                                  "lib.trace(lib.tensor([[1, 2], [3, 4]], dtype=lib.int8))"])
def test_bool_and_integer_forms_that_torch_computes(code, torch):
    # pow(Tensor, Scalar) copies or fills for an exponent 1 / 0 (True / False), without a kernel
    def run(lib):
        out = eval(code, {"lib": lib, "b": lib.tensor([True, False, True])})
        return str(out.dtype).rsplit(".")[-1], out.tolist()
    assert run(tapegrad) == run(torch)
