"""linear, bilinear, convolutions and transposed convolutions."""
from ..._dispatch import apply
from ..._ops import nn as K
from ..._ops import shape as SHAPE
from ._util import check_param_dtypes, check_same_dtype, widened
from ..._dtypes import cpp_name
from ..._arg_types import as_int, int_lists
from ..._autocast import policy
from ..._functional import _linalg as L
from ..._functional import _shape as S
from ..._functional._common import check_tensors
from ..._views import is_contiguous


@policy("linear")
def linear(input, weight, bias=None):
    check_tensors("linear", (input, "input"), (weight, "weight"), (bias, "bias"), optional=("bias",))
    if input.is_nested:   # a jagged nested tensor: its values, row by row
        return input._map_values(lambda values: linear(values, weight, bias), "linear")
    # dtypes: addmm, mm or matmul refuse a mismatch with their own errors, as in PyTorch
    if input.ndim == 0:
        raise RuntimeError("both arguments to linear need to be at least 1D, but they are 0D and 2D")
    if input.shape[-1] != weight.shape[-1]:
        rows = input.numel() // max(input.shape[-1], 1) if input.ndim > 1 else 1
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{input.shape[-1]} and "
                           f"{weight.shape[-1]}x{weight.shape[0]}). The last dimension of the input must "
                           "equal in_features.")
    return _as_pytorch_records(input, weight, bias)


def _as_pytorch_records(input, weight, bias):
    """linear as the ops PyTorch records for it, so grad_fn and next_functions read the same: the weight's
    transpose (TBackward0), then addmm with a bias or mm without, on the input flattened to two dims when it
    is contiguous (a view back to its leading dims), else matmul and an in-place add (the result keeps
    matmul's dtype, as PyTorch's output.add_(bias))."""
    w_t = weight.t()
    if input.ndim == 2 and bias is not None:   # addmm, which refuses a vector of weights as PyTorch's does
        return L.addmm(bias, input, w_t)
    if weight.ndim == 1:   # a vector of weights: PyTorch's matmul (dot or mv), then the bias
        out = L.matmul(input, w_t)
        return out if bias is None else out.add_(bias)
    if input.ndim == 2:
        return L.mm(input, w_t)
    lead = tuple(input.shape[:-1])
    if input.ndim == 1:
        if bias is None:
            return L.mm(S.unsqueeze(input, 0), w_t).squeeze_(0)
        return S.view(L.addmm(bias, S.view(input, 1, -1), w_t), -1)
    if not is_contiguous(input):   # matmul's folding: mm on a copy, then its result unfolded
        k = input.shape[-1]   # PyTorch's matmul takes its batched path here, so bmm's dtype check
        L._check_bmm_operands((1, 1, k), input.dtype, (1, k, 1), weight.dtype)
        out = apply(SHAPE.reshape_copy, L.mm(S.reshape(input, -1, input.shape[-1]), w_t),
                    shape=lead + (weight.shape[0],))
        return out if bias is None else out.add_(bias)
    flat = S.view(input, -1, input.shape[-1])
    if bias is None:
        return apply(SHAPE.reshape_copy, L.mm(flat, w_t), shape=lead + (weight.shape[0],))
    return S.view(L.addmm(bias, flat, w_t), *lead, weight.shape[0])


def bilinear(input1, input2, weight, bias=None):
    check_tensors("bilinear", (input1, "input1"), (input2, "input2"), (weight, "weight"), (bias, "bias"), optional=("bias",))
    if not (input1.dtype is input2.dtype is weight.dtype) or (bias is not None and bias.dtype is not input1.dtype):
        raise RuntimeError(f"All tensors must have the same dtype, got input1: {cpp_name(input1.dtype)}, input2: "
                           f"{cpp_name(input2.dtype)}, weight: {cpp_name(weight.dtype)}"
                           + (f", bias: {cpp_name(bias.dtype)}" if bias is not None else ""))
    if input1.shape[-1] != weight.shape[1] or input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input sizes {input1.shape[-1]} and {input2.shape[-1]} do not match "
                           f"the weight of size {list(weight.shape)}")
    # As PyTorch: the inputs flattened to rows, _trilinear, a view back to the leading dims, + bias.
    rows = apply(K.trilinear, input1.reshape(-1, input1.shape[-1]), weight, input2.reshape(-1, input2.shape[-1]))
    out = rows.reshape(*input1.shape[:-1], weight.shape[0])
    return out if bias is None else out + bias


def _batched(input, nd, name):
    if input.ndim == nd + 1:
        return input.unsqueeze(0), True
    if input.ndim != nd + 2:
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to {name}, but got "
                           f"input of size: {list(input.shape)}")
    return input, False


def _check_weight_dims(input, weight, params, padding_mode=False):
    """PyTorch's _convolution checks, before JAX sees the operands: a weight of at least 3 dims, each list
    parameter (`params`: (name, values) in its order) of one value or one per spatial dim of the weight, and an
    input of as many dims as the weight (padding_mode: padding="same"'s path, which checks no list and prints
    the weight's sizes without a space)."""
    if weight.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    k = weight.ndim - 2
    for name, values in () if padding_mode else params:
        if not isinstance(values, str) and len(values) not in (1, k):
            raise RuntimeError(f"expected {name} to be a single integer value or a list of {k} values to match the "
                               f"convolution dimensions, but got {name}={list(values)}")
    if input.ndim != weight.ndim:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional weight"
                           f"{'' if padding_mode else ' '}{list(weight.shape)}, but got {input.ndim}-dimensional "
                           f"input of size {list(input.shape)} instead")


def _conv_padding(padding, nd, weight, dilation, stride):
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nd
        if padding != "same":
            raise ValueError(f"Invalid padding string '{padding}', should be one of {{'valid', 'same'}}")
        if any(s != 1 for s in stride):
            raise ValueError("padding='same' is not supported for strided convolutions")
        pads = []
        for k, d in zip(weight.shape[2:], dilation):
            total = d * (k - 1)
            pads.append((total // 2, total - total // 2))
        return tuple(pads)
    return tuple((p, p) for p in padding)


def _conv(nd, input, weight, bias, stride, padding, dilation, groups):
    name = f"conv{nd}d"
    # the argument parser's checks first, as PyTorch's (the positions of conv2d's arguments)
    lists = [("stride", stride, 4)] + [("padding", padding, 5)] * (not isinstance(padding, str)) + [
        ("dilation", dilation, 6)]
    parsed = dict((n, widened(v, nd, n)) for (n, _, _), v in zip(lists, int_lists(name, lists)))
    stride, dilation, padding = parsed["stride"], parsed["dilation"], parsed.get("padding", padding)
    groups = as_int(groups, "groups", name, 7)
    input, unbatched = _batched(input, nd, name)
    _check_weight_dims(input, weight, [("stride", stride), ("padding", padding), ("dilation", dilation)],
                       padding_mode=padding == "same")
    check_param_dtypes(input, weight)
    check_same_dtype(input, bias, what="bias")
    pads = _conv_padding(padding, nd, weight, dilation, stride)
    cin = input.shape[1]
    if cin != weight.shape[1] * groups:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, expected "
                           f"input{list(input.shape)} to have {weight.shape[1] * groups} channels, but got "
                           f"{cin} channels instead")
    padded = tuple(n + lo + hi for n, (lo, hi) in zip(input.shape[2:], pads))
    kernel = tuple(d * (k - 1) + 1 for k, d in zip(weight.shape[2:], dilation))
    if any(k > n for k, n in zip(kernel, padded)):
        raise RuntimeError(f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). Kernel "
                           f"size: ({' x '.join(map(str, kernel))}). Kernel size can't be greater than actual input "
                           "size")
    out = apply(K.conv, input, weight, bias, stride=stride, padding=pads, dilation=dilation,
                groups=int(groups))
    return out.squeeze(0) if unbatched else out


@policy("conv1d")
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(1, input, weight, bias, stride, padding, dilation, groups)


@policy("conv2d")
def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(2, input, weight, bias, stride, padding, dilation, groups)


@policy("conv3d")
def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose(nd, input, weight, bias, stride, padding, output_padding, groups, dilation):
    name = f"conv_transpose{nd}d"
    lists = [("stride", stride, 4), ("padding", padding, 5), ("output_padding", output_padding, 6),
             ("dilation", dilation, 8)]
    stride, padding, output_padding, dilation = (widened(v, nd, n)
                                                 for (n, _, _), v in zip(lists, int_lists(name, lists)))
    groups = as_int(groups, "groups", name, 7)
    input, unbatched = _batched(input, nd, name)
    _check_weight_dims(input, weight, [("stride", stride), ("padding", padding), ("dilation", dilation),
                                       ("output_padding", output_padding)])
    check_param_dtypes(input, weight)
    if input.shape[1] != weight.shape[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {list(weight.shape)}, expected "
                           f"input{list(input.shape)} to have {weight.shape[0]} channels, but got "
                           f"{input.shape[1]} channels instead")
    out = apply(K.conv_transpose, input, weight, bias, stride=stride, padding=padding,
                output_padding=output_padding, dilation=dilation, groups=int(groups))
    return out.squeeze(0) if unbatched else out


@policy("conv_transpose1d")
def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transpose(1, input, weight, bias, stride, padding, output_padding, groups, dilation)


@policy("conv_transpose2d")
def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transpose(2, input, weight, bias, stride, padding, output_padding, groups, dilation)


@policy("conv_transpose3d")
def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    return _conv_transpose(3, input, weight, bias, stride, padding, output_padding, groups, dilation)
