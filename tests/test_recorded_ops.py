"""A call records the ops that make its result and nothing else: an op recorded only to run its checks
costs a tape entry (recording time, a longer structure key) in every step that calls it. The checks that
replace such ops (matrix products with a bias, expand's) give PyTorch's errors."""
import pytest

import tapegrad as tg
from tapegrad import _segment
from tapegrad._equation import SIGNATURES


def _recorded(fn):
    _segment.end()
    keep = fn()   # (kept alive while the segment is read)
    nodes = _segment.current().nodes
    names = [SIGNATURES[n.sid][0].name for n in (ref() for ref in nodes) if n is not None]
    return len(nodes), names, keep


CASES = {
    "linear": (lambda: tg.nn.functional.linear(tg.randn(4, 5), tg.randn(3, 5, requires_grad=True),
                                               tg.randn(3, requires_grad=True)), ["t", "addmm"]),
    "addmm": (lambda: tg.addmm(tg.randn(3), tg.randn(4, 5), tg.randn(5, 3)), ["addmm"]),
    "baddbmm": (lambda: tg.baddbmm(tg.randn(3), tg.randn(2, 4, 5), tg.randn(2, 5, 3)), ["baddbmm"]),
    "mm": (lambda: tg.mm(tg.randn(4, 5), tg.randn(5, 3)), ["mm"]),
    "bmm": (lambda: tg.bmm(tg.randn(2, 4, 5), tg.randn(2, 5, 3)), ["bmm"]),
    # the exponent's checks are Python's: no op on the exponent, no read of a value
    "pow, an integer exponent": (lambda: tg.randn(3, requires_grad=True).pow(2), ["pow_scalar"]),
    "pow, a float exponent": (lambda: tg.randn(3) ** 0.5, ["pow_scalar"]),
    "pow, a large exponent": (lambda: tg.randn(3).pow(2.0 ** 40), ["pow_scalar"]),
    "reshape of a transposed matrix": (lambda: tg.randn(3, 4).t().reshape(12), ["t", "clone", "reshape_copy"]),
}


# reshapes that cannot be views: PyTorch clones to the contiguous format and views the copy
# (UnsafeViewBackward0 over CloneBackward0), whatever the input's own memory order
NOT_VIEWABLE = {
    "transposed": (lambda lib: lib.arange(12.0).reshape(3, 4).t(), (12,)),
    "permuted 4-d": (lambda lib: lib.arange(120.0).reshape(2, 3, 4, 5).permute(0, 2, 3, 1), (8, 15)),
    "channels last": (lambda lib: lib.arange(120.0).reshape(2, 3, 4, 5).contiguous(memory_format=lib.channels_last),
                      (2, 60)),
    "expanded": (lambda lib: lib.arange(4.0).reshape(4, 1).expand(4, 3), (3, 4)),
    "sliced with a step": (lambda lib: lib.arange(24.0).reshape(4, 6)[:, ::2], (12,)),
}


@pytest.mark.parametrize("case", sorted(NOT_VIEWABLE))
def test_a_reshape_that_copies_matches_torch(case, torch):
    make, shape = NOT_VIEWABLE[case]
    results = []
    for lib in (tg, torch):
        leaf = make(lib).detach().requires_grad_(True)
        base = leaf * 1.0
        out = base.reshape(*shape)
        names, fn = [], out.grad_fn
        while fn is not None and fn.name() != "MulBackward0":
            names.append(fn.name())
            fn = fn.next_functions[0][0]
        (out * lib.arange(float(out.numel())).reshape(out.shape)).sum().backward()
        results.append((out.stride(), out.is_contiguous(), out._base is None, names, out.detach().tolist(),
                        leaf.grad.tolist(), leaf.grad.stride()))
    assert results[0] == results[1]


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_call_records_only_its_ops(case):
    make, expected = CASES[case]
    count, names, _ = _recorded(make)
    # the inputs' own creation (randn) is recorded too: only the ops after them are the call's
    call = names[len(names) - len(expected):]
    assert call == expected
    assert count == len(names), f"{count - len(names)} equation(s) recorded and dropped at once: {names}"


BAD_SHAPES = {
    "addmm: mat1 and mat2": ("addmm", (3,), (4, 6), (5, 3)),
    "addmm: a bias of the wrong width": ("addmm", (3,), (4, 5), (5, 2)),
    "addmm: a matrix bias of the wrong width": ("addmm", (4, 3), (4, 5), (5, 2)),
    "addmm: a bias of more dims": ("addmm", (2, 1, 3), (4, 5), (5, 3)),
    "baddbmm: a bias of the wrong width": ("baddbmm", (3,), (2, 4, 5), (2, 5, 2)),
    "baddbmm: a bias of the wrong rows": ("baddbmm", (3, 2, 3), (2, 4, 5), (2, 5, 3)),
}


@pytest.mark.parametrize("case", sorted(BAD_SHAPES))
def test_matmul_with_bias_shape_errors_are_pytorchs(case, torch):
    name, *shapes = BAD_SHAPES[case]
    with pytest.raises(RuntimeError) as theirs:
        getattr(torch, name)(*[torch.randn(*s) for s in shapes])
    with pytest.raises(RuntimeError) as ours:
        getattr(tg, name)(*[tg.randn(*s) for s in shapes])
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("shape, sizes", [((3, 2, 3), (2, 4, 3)), ((3,), (-1, 3)), ((2, 3), (-1, -1)),
                                          ((3, 1), (2, -1, 4)), ((2, 3), (3, 4)), ((1,), (0,))])
def test_expand_checks_from_the_last_dimension(shape, sizes, torch):
    """PyTorch reports the last dimension that does not fit, and refuses -1 in a new leading dimension."""
    try:
        expected = tuple(torch.randn(*shape).expand(*sizes).shape)
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as ours:
            tg.randn(*shape).expand(*sizes)
        assert str(ours.value) == str(e)
    else:
        assert tuple(tg.randn(*shape).expand(*sizes).shape) == expected
