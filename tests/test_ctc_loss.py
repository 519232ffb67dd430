"""CTC loss against PyTorch: values, gradients (PyTorch's backward formula, which is not the loss's derivative
for un-normalized inputs), grad_fn chains, the module, torch.ctc_loss's integer reduction, errors.
(The op-table spec: tests/op_specs_nn_loss.py.)"""
import warnings

import numpy as np
import pytest

import tapegrad
from conftest import assert_close, raised, require

torch = require("torch")

T, N, C, S = 7, 3, 5, 3
RNG = np.random.default_rng(1234)
LOGITS = RNG.standard_normal((T, N, C))
PADDED = np.array([[1, 2, 2], [3, 1, 4], [4, 4, 1]])
INPUT_LENGTHS = [7, 6, 2]
TARGET_LENGTHS = [3, 2, 3]   # the last sample cannot be aligned in 2 steps: an infinite loss
FINITE_LENGTHS = [3, 2, 0]   # ... an empty target instead


def _concatenated(targets, lengths):
    return np.concatenate([row[:k] for row, k in zip(targets, lengths)]).astype(np.int64)


def _chain(fn):
    """A grad_fn's name and the chains of its next_functions, down to the leaves."""
    if fn is None:
        return None
    name = type(fn).__name__
    if name == "AccumulateGrad":
        return name
    return name, [(_chain(f), i) for f, i in fn.next_functions]


def _run(lib, logits, targets, input_lengths, target_lengths, dtype="float64", as_tensors=True, **kwargs):
    """(loss, gradient of the logits through log_softmax) for a seeded cotangent; lengths as tensors or tuples."""
    x = lib.tensor(logits, dtype=getattr(lib, dtype), requires_grad=True)
    lp = x.log_softmax(-1)
    lengths = [lib.tensor(v) if as_tensors else tuple(v) for v in (input_lengths, target_lengths)]
    out = lib.nn.functional.ctc_loss(lp, lib.tensor(targets), *lengths, **kwargs)
    seed = np.random.default_rng(7).standard_normal(tuple(out.shape))
    out.backward(lib.tensor(seed, dtype=out.dtype))
    return out, x.grad


def _compare(build, rtol=None, atol=None):
    (ours, our_grad), (theirs, their_grad) = build(tapegrad), build(torch)
    assert_close(ours, theirs, rtol=rtol, atol=atol)
    assert_close(our_grad, their_grad, rtol=rtol, atol=atol)
    return ours, theirs


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("layout", ["padded", "concatenated"])
def test_values_gradients_and_nodes(reduction, zero_infinity, layout):
    # an infinite loss: inf or 0 (zero_infinity), its gradient NaN or 0, as PyTorch's
    targets = PADDED if layout == "padded" else _concatenated(PADDED, TARGET_LENGTHS)
    as_tensors = layout == "padded"
    ours, theirs = _compare(lambda lib: _run(lib, LOGITS, targets, INPUT_LENGTHS, TARGET_LENGTHS, reduction=reduction,
                                             zero_infinity=zero_infinity, as_tensors=as_tensors))
    assert _chain(ours.grad_fn) == _chain(theirs.grad_fn)


@pytest.mark.parametrize("blank", [0, 2, C - 1])
def test_blank_anywhere_and_empty_targets(blank):
    targets = np.where(PADDED == blank, (blank + 1) % C, PADDED)
    for layout in (targets, _concatenated(targets, FINITE_LENGTHS)):
        _compare(lambda lib: _run(lib, LOGITS, layout, INPUT_LENGTHS, FINITE_LENGTHS, blank=blank, reduction="none"))


def test_pytorchs_backward_formula_for_unnormalized_and_leaf_inputs():
    # PyTorch's gradient is exp(log_probs) * grad - (the class posteriors): not the derivative of the loss
    # for raw scores, nor for normalized log_probs taken as the leaf
    for normalize in (False, True):
        def build(lib):
            lp = lib.tensor(LOGITS).log_softmax(-1) if normalize else lib.tensor(LOGITS)
            lp = lp.detach().requires_grad_()
            out = lib.nn.functional.ctc_loss(lp, lib.tensor(PADDED), tuple(INPUT_LENGTHS), tuple(FINITE_LENGTHS),
                                             reduction="sum")
            out.backward()
            return out, lp.grad
        _compare(build)


def test_float32_within_tolerance():
    _compare(lambda lib: _run(lib, LOGITS, PADDED, INPUT_LENGTHS, FINITE_LENGTHS, dtype="float32"),
             rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_unbatched(reduction):
    def build(lib, lengths):
        x = lib.tensor(LOGITS[:, 0], requires_grad=True)
        out = lib.nn.functional.ctc_loss(x.log_softmax(-1), lib.tensor(PADDED[0, :2]), *lengths, reduction=reduction)
        out.backward()
        return out, x.grad
    for lengths in (lambda lib: (lib.tensor(6), lib.tensor(2)), lambda lib: ((6,), (2,))):
        ours, theirs = _compare(lambda lib: build(lib, lengths(lib)))
        assert _chain(ours.grad_fn) == _chain(theirs.grad_fn)


def test_input_length_zero_and_padding_past_the_lengths():
    # an empty input: -0.0 for an empty target, inf otherwise; steps past a length get no gradient, whatever
    # they hold
    logits = LOGITS.copy()
    logits[5:, 1] = np.nan
    for lengths in ([0, 5, 7], [0, 0, 7]):
        _compare(lambda lib: _run(lib, logits, PADDED, lengths, [0, 2, 3], reduction="none", zero_infinity=True))


def test_every_target_empty():
    for targets in (np.zeros((N, 0), np.int64), np.zeros(0, np.int64)):
        _compare(lambda lib: _run(lib, LOGITS, targets, INPUT_LENGTHS, [0, 0, 0], reduction="mean"))


def test_func_grad_and_vmap():
    # tapegrad.func traces the op's reverse form: PyTorch's formula on a leaf of log-probabilities too
    def both(lib):
        targets = lib.tensor(PADDED)
        lp = lib.tensor(LOGITS).log_softmax(2)
        grad = lib.func.grad(lambda v: lib.nn.functional.ctc_loss(v, targets, INPUT_LENGTHS, FINITE_LENGTHS,
                                                                  reduction="sum"))(lp)
        per_sample = lib.func.vmap(lambda v, t: lib.nn.functional.ctc_loss(v, t[:2], (7,), (2,)), in_dims=(1, 0))(
            lp, targets)
        return per_sample, grad
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # (PyTorch's vmap has no batching rule for it and says so)
        _compare(both)


def test_minus_infinity_log_probability():
    # log(0) in the input: PyTorch's formula gives NaN at that class where it is on a path
    lp = torch.tensor(LOGITS).log_softmax(-1)
    lp[2, 0, PADDED[0, 1]] = -float("inf")

    def build(lib):
        x = lib.tensor(lp.numpy(), requires_grad=True)
        out = lib.nn.functional.ctc_loss(x, lib.tensor(PADDED), INPUT_LENGTHS, FINITE_LENGTHS, reduction="none")
        out.sum().backward()
        return out, x.grad
    _compare(build)


def test_module_and_aten_function():
    for args in ((), (2, "sum", True)):
        ours, theirs = tapegrad.nn.CTCLoss(*args), torch.nn.CTCLoss(*args)
        assert repr(ours) == repr(theirs)
        assert (ours.blank, ours.reduction, ours.zero_infinity) == (theirs.blank, theirs.reduction,
                                                                    theirs.zero_infinity)

        def build(lib):
            x = lib.tensor(LOGITS, requires_grad=True)
            module = lib.nn.CTCLoss(*args)
            out = module(x.log_softmax(2), lib.tensor(PADDED % 2 + 3), lib.tensor(INPUT_LENGTHS),
                         lib.tensor(TARGET_LENGTHS))
            out.backward()
            return out, x.grad
        _compare(build)
    with pytest.warns(UserWarning, match="elementwise_mean' is deprecated"):
        ours = tapegrad.nn.functional.ctc_loss(tapegrad.tensor(LOGITS), tapegrad.tensor(PADDED), INPUT_LENGTHS,
                                               FINITE_LENGTHS, reduction="elementwise_mean")
    assert_close(ours, torch.nn.functional.ctc_loss(torch.tensor(LOGITS), torch.tensor(PADDED), INPUT_LENGTHS,
                                                    FINITE_LENGTHS))
    # torch.ctc_loss: reduction is at::Reduction's int, and no reduction when it is not given
    lp = LOGITS / 2
    for kwargs in ({}, {"reduction": 1}, {"reduction": 2, "zero_infinity": True}, {"reduction": 5, "blank": 2}):
        def call(lib):
            return lib.ctc_loss(lib.tensor(lp).log_softmax(2), lib.tensor(PADDED % 2 + 3), INPUT_LENGTHS,
                                TARGET_LENGTHS, **kwargs)
        assert_close(call(tapegrad), call(torch))


def test_integer_lengths_and_targets_of_other_dtypes():
    def build(lib):
        x = lib.tensor(LOGITS, requires_grad=True)
        out = lib.nn.functional.ctc_loss(x.log_softmax(2), lib.tensor(PADDED).int(), lib.tensor([[7, 6, 5]]).short(),
                                         lib.tensor(FINITE_LENGTHS).to(lib.uint8), reduction="none")
        out.sum().backward()
        return out, x.grad
    _compare(build)


def test_in_place_change_of_the_result_fails_backward():
    def build(lib):
        x = lib.tensor(LOGITS, requires_grad=True)
        out = lib.nn.functional.ctc_loss(x.log_softmax(2), lib.tensor(PADDED), INPUT_LENGTHS, FINITE_LENGTHS,
                                         reduction="none")
        out.add_(1)
        out.sum().backward()
    ours, theirs = raised(lambda: build(tapegrad)), raised(lambda: build(torch))
    assert theirs[0] is RuntimeError and ours[0] is RuntimeError
    assert ours[1].split(" Hint:")[0] == theirs[1].split(" Hint:")[0]   # (tapegrad's hint is its own)


def test_finite_differences_through_log_softmax():
    x = tapegrad.tensor(LOGITS[:4, :2, :3] / 2, requires_grad=True)
    targets = tapegrad.tensor([1, 2, 2])
    # (reduction='none': the op-table spec's finite differences)
    assert tapegrad.autograd.gradcheck(lambda v: tapegrad.nn.functional.ctc_loss(
        v.log_softmax(2), targets, (4, 3), (2, 1), blank=0, reduction="mean"), (x,))


@pytest.mark.usefixtures("no_program_rent")
def test_compiled_programs_and_kernels(monkeypatch):
    # a steady loop: the step's program compiles once it comes back; kernels compiled instead of NumPy too
    from tapegrad import _numpy_rent
    monkeypatch.setattr(_numpy_rent, "NUMPY_KERNELS", [False])
    expected = _run(torch, LOGITS, PADDED, INPUT_LENGTHS, TARGET_LENGTHS, reduction="mean", zero_infinity=True)
    for _ in range(3):
        got = _run(tapegrad, LOGITS, PADDED, INPUT_LENGTHS, TARGET_LENGTHS, reduction="mean", zero_infinity=True)
        assert_close(got[0], expected[0])
        assert_close(got[1], expected[1])


def _errors():
    lp = LOGITS
    t, tl, il = PADDED, TARGET_LENGTHS, INPUT_LENGTHS
    cases = {
        "reduction": lambda lib, F: F.ctc_loss(lib.tensor(lp), lib.tensor(t), il, tl, reduction="avg"),
        "int lengths": lambda lib, F: F.ctc_loss(lib.tensor(lp), lib.tensor(t), 7, 3),
        "mixed lengths": lambda lib, F: F.ctc_loss(lib.tensor(lp), lib.tensor(t), lib.tensor(il), tuple(tl)),
        "float in list": lambda lib, F: F.ctc_loss(lib.tensor(lp), lib.tensor(t), [7, 6.0, 2], tl),
        "bool blank": lambda lib, F: F.ctc_loss(lib.tensor(lp), lib.tensor(t), il, tl, blank=True),
        "aten keyword": lambda lib, F: lib.ctc_loss(lib.tensor(lp), lib.tensor(t), il, tl, reduction="mean"),
        "float lengths": lambda lib, F: F.ctc_loss(lib.tensor(lp), lib.tensor(t), lib.tensor(il).double(),
                                                   lib.tensor(tl)),
        "bool lengths": lambda lib, F: F.ctc_loss(lib.tensor(lp), lib.tensor(t), lib.tensor(il),
                                                  lib.tensor(tl).bool()),
        "0-d log_probs": lambda lib, F: F.ctc_loss(lib.tensor(1.0), lib.tensor(t), il, tl),
        "int log_probs": lambda lib, F: F.ctc_loss(lib.tensor(t).view(1, 3, 3), lib.tensor(t), il, tl),
        "half log_probs": lambda lib, F: F.ctc_loss(lib.tensor(lp).half(), lib.tensor(t), il, tl),
        "empty": lambda lib, F: F.ctc_loss(lib.zeros(0, 3, 5), lib.tensor(t), il, tl),
        "4-d log_probs": lambda lib, F: F.ctc_loss(lib.tensor(lp).unsqueeze(-1), lib.tensor(t), il, tl),
        "3-d targets": lambda lib, F: F.ctc_loss(lib.tensor(lp), lib.tensor(t).unsqueeze(-1), il, tl),
        "blank": lambda lib, F: F.ctc_loss(lib.tensor(lp), lib.tensor(t), il, tl, blank=C),
        "negative blank": lambda lib, F: F.ctc_loss(lib.tensor(lp), lib.tensor(t), il, tl, blank=-1),
        "input_lengths size": lambda lib, F: F.ctc_loss(lib.tensor(lp), lib.tensor(t), il[:2], tl),
        "target_lengths size": lambda lib, F: F.ctc_loss(lib.tensor(lp), lib.tensor(t), il, tl + [1]),
        "negative target length": lambda lib, F: F.ctc_loss(lib.tensor(lp), lib.tensor(t), [9, 9, 9], [1, -1, 2]),
        "targets batch": lambda lib, F: F.ctc_loss(lib.tensor(lp), lib.tensor(t[:2]), [9, 9, 9], tl),
        "target longer than padding": lambda lib, F: F.ctc_loss(lib.tensor(lp), lib.tensor(t), il, [1, 4, 2]),
        "concatenated size": lambda lib, F: F.ctc_loss(lib.tensor(lp), lib.tensor([1, 2, 3]), [9, 9, 9], tl),
        "input length too long": lambda lib, F: F.ctc_loss(lib.tensor(lp), lib.tensor(t), [7, 8, -1], tl),
        "negative input length": lambda lib, F: F.ctc_loss(lib.tensor(lp), lib.tensor(t), [7, -1, 8], tl),
        "unbatched lengths": lambda lib, F: F.ctc_loss(lib.tensor(lp[:, 0]), lib.tensor(t[0]), (7, 7), (3,)),
    }
    return cases


@pytest.mark.parametrize("name", sorted(_errors()))
def test_errors_as_pytorchs(name):
    case = _errors()[name]
    ours = raised(lambda: case(tapegrad, tapegrad.nn.functional))
    theirs = raised(lambda: case(torch, torch.nn.functional))
    assert theirs is not None and ours == theirs
