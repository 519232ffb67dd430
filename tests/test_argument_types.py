"""Int and bool arguments are parsed as PyTorch's argument parser does (tapegrad/_arg_types.py).

A dim, k, diagonal or chunk count is an int or has `__index__` (a NumPy integer, a one-element integer
tensor); a bool, a float or another tensor is a TypeError naming the argument. A flag (keepdim, largest,
descending) is a Python bool and nothing else. Each call is compared with PyTorch: the same exception
type and the phrase "must be int, not ..." / "must be bool, not ...", or the same result.
"""
import numpy as np
import pytest

import tapegrad

from conftest import raised, require

torch = require("torch")

CALLS = {
    "sum dim": lambda lib, a: lib.ones(4, 6).sum(a),
    "softmax dim": lambda lib, a: lib.softmax(lib.ones(4, 6), a),
    "cumsum dim": lambda lib, a: lib.cumsum(lib.ones(4, 6), a),
    "unsqueeze dim": lambda lib, a: lib.ones(4, 6).unsqueeze(a),
    "topk dim": lambda lib, a: lib.topk(lib.arange(24.0).reshape(4, 6), 2, a),
    "mean dims": lambda lib, a: lib.ones(4, 6).mean((0, a)),   # in a list a bool is an int, as PyTorch
    "topk k": lambda lib, a: lib.topk(lib.arange(6.0), a),
    "kthvalue k": lambda lib, a: lib.arange(6.0).kthvalue(a),
    "tril diagonal": lambda lib, a: lib.ones(4, 6).tril(a),
    "triu diagonal": lambda lib, a: lib.triu(lib.ones(4, 6), a),
    "chunk chunks": lambda lib, a: lib.arange(6.0).chunk(a),
}
FLAGS = {
    "sum keepdim": lambda lib, a: lib.ones(4, 6).sum(1, a),
    "amax keepdim": lambda lib, a: lib.amax(lib.ones(4, 6), 1, a),
    "median keepdim": lambda lib, a: lib.ones(4, 6).median(1, a),
    "vector_norm keepdim": lambda lib, a: lib.linalg.vector_norm(lib.ones(4, 6), 2, 1, a),
    "topk largest": lambda lib, a: lib.topk(lib.arange(6.0), 2, 0, a),
    "sort descending": lambda lib, a: lib.sort(lib.arange(6.0), 0, a),
}
NOT_INTS = {
    "bool": lambda lib: True,
    "float": lambda lib: 1.0,
    "float tensor": lambda lib: lib.tensor(1.0),
    "two-element tensor": lambda lib: lib.ones(2, dtype=lib.int64),
}
INTS = {
    "numpy int": lambda lib: np.int64(1),
    "0-d int tensor": lambda lib: lib.tensor(1),
}
NOT_BOOLS = {
    "int": lambda lib: 1,
    "float": lambda lib: 0.0,
    "None": lambda lib: None,
    "bool tensor": lambda lib: lib.tensor(True),
    "numpy bool": lambda lib: np.bool_(True),
}


def _error(lib, call, make):
    with pytest.raises(Exception) as info:
        call(lib, make(lib))
    return info.value


def _values(out):
    out = out if isinstance(out, (tuple, list)) else (out,)
    return [np.asarray(t.detach().numpy() if hasattr(t, "detach") else t) for t in out]


@pytest.mark.parametrize("kind", NOT_INTS)
@pytest.mark.parametrize("call", CALLS)
def test_a_non_int_is_pytorchs_type_error(call, kind):
    try:
        expected = _values(CALLS[call](torch, NOT_INTS[kind](torch)))
    except TypeError as error:
        theirs = error
    else:   # an int list takes a bool
        for o, t in zip(_values(CALLS[call](tapegrad, NOT_INTS[kind](tapegrad))), expected):
            np.testing.assert_array_equal(o, t)
        return
    ours = _error(tapegrad, CALLS[call], NOT_INTS[kind])
    assert type(ours) is type(theirs) is TypeError, (ours, theirs)
    if "must be int, not" in str(theirs):
        assert "must be int, not" in str(ours), ours
        assert str(theirs).split("must be int, not ")[1].split()[0] == str(ours).split("must be int, not ")[1]


@pytest.mark.parametrize("kind", INTS)
@pytest.mark.parametrize("call", CALLS)
def test_what_has_index_is_an_int(call, kind):
    theirs = _values(CALLS[call](torch, INTS[kind](torch)))
    ours = _values(CALLS[call](tapegrad, INTS[kind](tapegrad)))
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        np.testing.assert_array_equal(o, t)


@pytest.mark.parametrize("kind", NOT_BOOLS)
@pytest.mark.parametrize("call", FLAGS)
def test_a_flag_is_a_python_bool(call, kind):
    theirs = _error(torch, FLAGS[call], NOT_BOOLS[kind])
    ours = _error(tapegrad, FLAGS[call], NOT_BOOLS[kind])
    assert type(ours) is type(theirs) is TypeError, (ours, theirs)
    if "must be bool, not" in str(theirs):
        assert "must be bool, not" in str(ours), ours


@pytest.mark.parametrize("call", FLAGS)
def test_bools_are_taken(call):
    for flag in (False, True):
        theirs, ours = _values(FLAGS[call](torch, flag)), _values(FLAGS[call](tapegrad, flag))
        for o, t in zip(ours, theirs):
            np.testing.assert_array_equal(o, t)


# A number where a Tensor is wanted: PyTorch's TypeError "<fn>(): argument '<name>' (position <i>) must be
# Tensor, not float" (tapegrad's names the same function, argument and position).
X = (4, 6)
TENSOR_ARGUMENTS = {
    "matmul": lambda lib, a: lib.matmul(lib.ones(*X), a),
    "mm": lambda lib, a: lib.mm(lib.ones(*X), a),
    "bmm": lambda lib, a: lib.bmm(lib.ones(2, *X), a),
    "mv": lambda lib, a: lib.mv(lib.ones(*X), a),
    "dot": lambda lib, a: lib.dot(lib.ones(6), a),
    "outer": lambda lib, a: lib.outer(lib.ones(6), a),
    "kron": lambda lib, a: lib.kron(lib.ones(*X), a),
    "addmm": lambda lib, a: lib.addmm(lib.ones(4, 3), lib.ones(*X), a),
    "addmv": lambda lib, a: lib.addmv(lib.ones(4), lib.ones(*X), a),
    "baddbmm": lambda lib, a: lib.baddbmm(lib.ones(2, 4, 3), lib.ones(2, *X), a),
    "addbmm": lambda lib, a: lib.addbmm(lib.ones(4, 3), lib.ones(2, *X), a),
    "addr": lambda lib, a: lib.addr(lib.ones(4, 6), lib.ones(4), a),
    "addcdiv": lambda lib, a: lib.addcdiv(lib.ones(*X), lib.ones(*X), a),
    "cross": lambda lib, a: lib.cross(lib.ones(4, 3), a, dim=1),
    "cdist": lambda lib, a: lib.cdist(lib.ones(*X), a),
    "isclose": lambda lib, a: lib.isclose(lib.ones(*X), a),
    "allclose": lambda lib, a: lib.allclose(lib.ones(*X), a),
    "equal": lambda lib, a: lib.equal(lib.ones(*X), a),
    "inner": lambda lib, a: lib.inner(lib.ones(*X), a),
    "cholesky_solve": lambda lib, a: lib.cholesky_solve(lib.ones(*X), a),
    "put": lambda lib, a: lib.put(lib.ones(*X), lib.tensor([0]), a),
    "linear weight": lambda lib, a: lib.nn.functional.linear(lib.ones(*X), a),
    "linear input": lambda lib, a: lib.nn.functional.linear(a, lib.ones(3, 6)),
    "linear bias": lambda lib, a: lib.nn.functional.linear(lib.ones(*X), lib.ones(3, 6), a),
    "bilinear": lambda lib, a: lib.nn.functional.bilinear(lib.ones(*X), lib.ones(*X), a),
    "cross_entropy": lambda lib, a: lib.nn.functional.cross_entropy(lib.ones(*X), a),
    "nll_loss": lambda lib, a: lib.nn.functional.nll_loss(lib.ones(*X), a),
    "kl_div": lambda lib, a: lib.nn.functional.kl_div(lib.ones(*X), a),
    "embedding": lambda lib, a: lib.nn.functional.embedding(lib.tensor([1]), a),
    "layer_norm": lambda lib, a: lib.nn.functional.layer_norm(lib.ones(*X), (6,), a),
    "group_norm": lambda lib, a: lib.nn.functional.group_norm(lib.ones(*X), 2, a),
    "prelu": lambda lib, a: lib.nn.functional.prelu(lib.ones(*X), a),
    "cosine_similarity": lambda lib, a: lib.nn.functional.cosine_similarity(lib.ones(*X), a),
    "pairwise_distance": lambda lib, a: lib.nn.functional.pairwise_distance(lib.ones(*X), a),
    "cosine_embedding_loss": lambda lib, a: lib.nn.functional.cosine_embedding_loss(lib.ones(*X), a, lib.ones(4)),
    "triplet_margin_loss": lambda lib, a: lib.nn.functional.triplet_margin_loss(lib.ones(*X), a, lib.ones(*X)),
    "scaled_dot_product_attention": lambda lib, a: lib.nn.functional.scaled_dot_product_attention(
        lib.ones(*X), a, lib.ones(*X)),
    "complex": lambda lib, a: lib.complex(lib.ones(2), a),
    "polar": lambda lib, a: lib.polar(lib.ones(2), a),
    "select_scatter": lambda lib, a: lib.select_scatter(lib.ones(*X), a, 0, 0),
    "slice_scatter": lambda lib, a: lib.slice_scatter(lib.ones(*X), a),
    "diagonal_scatter": lambda lib, a: lib.diagonal_scatter(lib.ones(*X), a),
    # methods: positions count from the argument after self, in PyTorch's messages and tapegrad's
    "Tensor.type_as": lambda lib, a: lib.ones(*X).type_as(a),
    "Tensor.view_as": lambda lib, a: lib.ones(*X).view_as(a),
    "Tensor.reshape_as": lambda lib, a: lib.ones(*X).reshape_as(a),
    "Tensor.expand_as": lambda lib, a: lib.ones(*X).expand_as(a),
    "Tensor.is_same_size": lambda lib, a: lib.ones(*X).is_same_size(a),
    # PyTorch's own Python raises AttributeError here: so does tapegrad
    "mse_loss": lambda lib, a: lib.nn.functional.mse_loss(lib.ones(*X), a),
}


@pytest.mark.filterwarnings("ignore:reduction. .mean. divides")
@pytest.mark.parametrize("number", [1.0, 2, True], ids=["float", "int", "bool"])
@pytest.mark.parametrize("call", TENSOR_ARGUMENTS)
def test_a_number_for_a_tensor_is_pytorchs_error(call, number):
    theirs = _error(torch, TENSOR_ARGUMENTS[call], lambda lib: number)
    ours = _error(tapegrad, TENSOR_ARGUMENTS[call], lambda lib: number)
    assert type(ours) is type(theirs), (ours, theirs)
    if "must be Tensor, not" in str(theirs):
        assert str(theirs).split(" must be")[0] == str(ours).split(" must be")[0], (ours, theirs)
        assert f"must be Tensor, not {type(number).__name__}" in str(ours)


# Sizes and permutations: an int list's elements are ints (or have __index__; a bool in a list is an int);
# a float was truncated (ones(2.5) made 2 elements, view(2.0, 3) a 2x3 view).
SIZES = {
    "ones float": lambda lib: lib.ones(2.5),
    "ones 0-d int tensor": lambda lib: lib.ones(lib.tensor(3)),
    "ones float in a tuple": lambda lib: lib.ones((2, 1.0)),
    "ones bool": lambda lib: lib.ones(True),
    "ones bool in a tuple": lambda lib: lib.ones((2, True)),
    "ones two-element tensor": lambda lib: lib.ones(lib.tensor([2, 3])),
    "zeros int and 0-d tensor": lambda lib: lib.zeros(2, lib.tensor(3)),
    "full float in the size": lambda lib: lib.full((2.0,), 1.0),
    "randn float": lambda lib: lib.randn(2.0),
    "view float": lambda lib: lib.ones(2, 3).view(2.0, 3),
    "view tensor": lambda lib: lib.ones(2, 3).view(lib.tensor([6])),
    "reshape 0-d tensor": lambda lib: lib.ones(2, 3).reshape(lib.tensor(6)),
    "reshape float": lambda lib: lib.ones(3).reshape(3.0),
    "repeat float": lambda lib: lib.ones(2, 3).repeat(1.0, 2),
    "permute float": lambda lib: lib.ones(2, 3).permute(1.0, 0),
    "expand float": lambda lib: lib.ones(2, 3).expand(2.0, 3),
    "flip float": lambda lib: lib.ones(3).flip(0.0),
}


@pytest.mark.parametrize("call", SIZES)
def test_sizes_are_int_lists(call):
    try:
        expected = tuple(SIZES[call](torch).shape)
    except TypeError as theirs:
        ours = _error(tapegrad, lambda lib, _: SIZES[call](lib), lambda lib: None)
        assert type(ours) is TypeError, ours
        if "received an invalid combination" in str(theirs):   # (an overloaded function: its listing, exactly)
            assert str(ours) == str(theirs)
        elif "tuple of ints" in str(theirs):
            assert "must be tuple of ints" in str(ours), ours
    else:
        assert tuple(SIZES[call](tapegrad).shape) == expected


def _parser_text(message):
    """Whether a TypeError is PyTorch's parser's own (one argument named), not its message for a call that
    matches none of a function's overloads."""
    return "received an invalid combination" not in message and "positional argument" not in message


@pytest.mark.parametrize("call", SIZES)
def test_size_errors_have_pytorchs_text(call):
    """Where PyTorch's parser names the argument, the function, the position and the element, so does ours."""
    try:
        SIZES[call](torch)
    except TypeError as theirs:
        if _parser_text(str(theirs)):
            assert str(_error(tapegrad, lambda lib, _: SIZES[call](lib), lambda lib: None)) == str(theirs)


def _windows():
    x = {1: lambda lib: lib.ones(1, 1, 6), 2: lambda lib: lib.ones(1, 1, 6, 6), 3: lambda lib: lib.ones(1, 1, 4, 4, 4)}
    calls = {}
    for kind in ("max", "avg"):
        for nd in (1, 2, 3):
            pool = f"{kind}_pool{nd}d"
            names = ("kernel_size", "stride", "padding") + (("dilation",) if kind == "max" else ())
            for i, name in enumerate(names):
                for label, bad in (("float", 2.0), ("floats", (2.0,) * nd), ("a float after an int", (2, 2.0)),
                                   ("a bool", True), ("None", None) if name == "kernel_size" else ("an empty list", []),
                                   ("too many", (1,) * (nd + 2)), ("five", [1] * 5)):
                    args = [2, None, 0, 1][:len(names)]
                    args[i] = bad
                    calls[f"{pool} {name} {label}"] = (
                        lambda lib, pool=pool, nd=nd, args=tuple(args): getattr(lib.nn.functional, pool)(
                            x[nd](lib), *args))
    calls["max_pool2d ceil_mode int"] = lambda lib: lib.nn.functional.max_pool2d(x[2](lib), 2, ceil_mode=1)
    calls["max_pool2d with indices float"] = lambda lib: lib.nn.functional.max_pool2d(x[2](lib), 2.0,
                                                                                      return_indices=True)
    calls["max_pool1d with indices too many"] = lambda lib: lib.nn.functional.max_pool1d(x[1](lib), (2, 2),
                                                                                         return_indices=True)
    calls["avg_pool2d ceil_mode int"] = lambda lib: lib.nn.functional.avg_pool2d(x[2](lib), 2, ceil_mode=1)
    calls["avg_pool3d count_include_pad int"] = lambda lib: lib.nn.functional.avg_pool3d(x[3](lib), 2,
                                                                                         count_include_pad=1)
    calls["avg_pool2d divisor_override float"] = lambda lib: lib.nn.functional.avg_pool2d(x[2](lib), 2,
                                                                                          divisor_override=2.0)
    calls["MaxPool2d float kernel"] = lambda lib: lib.nn.MaxPool2d(2.0)(x[2](lib))
    calls["MaxPool2d float in the kernel (stride reported)"] = lambda lib: lib.nn.MaxPool2d((2, 2.0))(x[2](lib))
    calls["AvgPool1d float kernel"] = lambda lib: lib.nn.AvgPool1d(2.0)(x[1](lib))
    calls["lp_pool2d float kernel"] = lambda lib: lib.nn.functional.lp_pool2d(x[2](lib), 2, 2.0)
    calls["Conv2d float kernel"] = lambda lib: lib.nn.Conv2d(1, 1, 2.0)
    calls["Conv2d float in the kernel"] = lambda lib: lib.nn.Conv2d(1, 1, (2.0, 2))
    calls["Conv2d float channels"] = lambda lib: lib.nn.Conv2d(1, 1.0, 2)
    calls["ConvTranspose1d float kernel"] = lambda lib: lib.nn.ConvTranspose1d(1, 1, 2.0)
    calls["conv2d float in the stride"] = lambda lib: lib.nn.functional.conv2d(x[2](lib), lib.ones(1, 1, 2, 2),
                                                                               None, (1, 1.0))
    calls["Linear float features"] = lambda lib: lib.nn.Linear(2.0, 3)
    calls["unfold float kernel"] = lambda lib: lib.nn.functional.unfold(x[2](lib), 2.0)
    calls["unfold float in the kernel"] = lambda lib: lib.nn.functional.unfold(x[2](lib), (2, 2.0))
    calls["fold float kernel"] = lambda lib: lib.nn.functional.fold(lib.ones(1, 4, 9), (4, 4), 2.0)
    calls["pad float"] = lambda lib: lib.nn.functional.pad(x[2](lib), (1.0, 1))
    calls["pad float second"] = lambda lib: lib.nn.functional.pad(x[2](lib), (1, 1.5))
    calls["pad an int"] = lambda lib: lib.nn.functional.pad(x[2](lib), 1)
    calls["layer_norm float shape"] = lambda lib: lib.nn.functional.layer_norm(x[1](lib), (6.0,))
    calls["dropout training int"] = lambda lib: lib.nn.functional.dropout(x[1](lib), 0.5, training=0)
    calls["dropout in place training int"] = lambda lib: lib.nn.functional.dropout(x[1](lib), 0.5, 0, True)
    calls["dropout2d training int"] = lambda lib: lib.nn.functional.dropout2d(x[2](lib), 0.5, training=0)
    calls["alpha_dropout training int"] = lambda lib: lib.nn.functional.alpha_dropout(x[1](lib), 0.5, training=0)
    calls["embedding sparse int"] = lambda lib: lib.nn.functional.embedding(lib.tensor([0]), lib.ones(2, 2),
                                                                            sparse=1)
    calls["LSTM float input size"] = lambda lib: lib.nn.LSTM(2.0, 3)
    calls["GRU bias int"] = lambda lib: lib.nn.GRU(2, 3, bias=1)
    calls["unique sorted int"] = lambda lib: lib.ones(3).unique(sorted=1)
    calls["svd some int"] = lambda lib: lib.svd(lib.ones(3, 2), some=1)
    calls["linalg.svd full_matrices int"] = lambda lib: lib.linalg.svd(lib.ones(3, 2), full_matrices=1)
    calls["qr some int"] = lambda lib: lib.qr(lib.ones(3, 2), some=1)
    calls["empty keyword size"] = lambda lib: lib.empty(size=(2, 3.0))
    calls["randint float in the size"] = lambda lib: lib.randint(3, (2, 3.0))
    calls["new_zeros float"] = lambda lib: lib.ones(1).new_zeros(2, 3.0)
    calls["tile float"] = lambda lib: lib.ones(2, 3).tile((1, 2.0))
    calls["sum_to_size float"] = lambda lib: lib.ones(2, 3).sum_to_size(2, 1.0)
    return calls


WINDOWS = _windows()


@pytest.mark.parametrize("call", sorted(WINDOWS))
def test_window_and_flag_arguments_as_pytorch_reads_them(call):
    """Kernel sizes, strides, paddings and flags: a float or a bool is PyTorch's TypeError (never truncated to
    an int), a list of the wrong length the kernel's own RuntimeError, both in PyTorch's words."""
    theirs = raised(lambda: WINDOWS[call](torch), fold=True)
    assert raised(lambda: WINDOWS[call](tapegrad), fold=True) == theirs


def test_valid_window_arguments_still_pool():
    def run(lib):
        x = lib.arange(36.0).view(1, 1, 6, 6)
        F = lib.nn.functional
        return (F.max_pool2d(x, [3], (2,), 1), F.avg_pool2d(x, (2, 3), [2, 1]), F.max_pool2d(x, lib.tensor(2)),
                F.avg_pool1d(x[0], 3, None, 1, True, False), lib.nn.MaxPool2d((2, 3), stride=(1, 2))(x),
                F.unfold(x, [2, 3], stride=(2, 1)), F.pad(x, [1, 2]), F.max_pool2d(x, 2, stride=()))
    for a, b in zip(run(tapegrad), run(torch)):
        assert a.tolist() == b.tolist()
