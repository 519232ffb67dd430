"""conj() as PyTorch's lazy view (its conjugate bit) and the negative bit of a conjugate view's imaginary part:
layouts, bits, aliasing, writes through the view, gradients and node names, compared with PyTorch."""
import numpy as np
import pytest

import tapegrad
from conftest import assert_close, raised, require

torch = require("torch")

Z = np.array([[1 + 2j, 3 - 4j, 5j], [6, 7 + 1j, -8j]], dtype=np.complex64)


def _chain(node):
    """The node names along the first input of each node, from `node` down."""
    names = []
    while node is not None:
        names.append(type(node).__name__)
        node = next((f for f, _ in node.next_functions if f is not None), None)
    return names


def _described(lib, x, t):
    return (tuple(t.shape), t.stride(), t.storage_offset(), t.is_conj(), t.is_neg(), t._is_view(), t._base is x,
            t.is_contiguous(), str(t.dtype).split(".")[-1])


VIEWS = {
    "conj": lambda lib, x: x.conj(),
    "torch.conj": lambda lib, x: lib.conj(x),
    "conj of conj": lambda lib, x: x.conj().conj(),
    "mH": lambda lib, x: x.mH,
    "H": lambda lib, x: x.H,
    "adjoint": lambda lib, x: x.adjoint(),
    "slice of conj": lambda lib, x: x.conj()[:, 1:],
    "conj of a row": lambda lib, x: x[1].conj(),
    "t of conj": lambda lib, x: x.conj().t(),
    "expanded conj": lambda lib, x: x[:1, :1].conj().expand(3, 2),
    "reshaped conj": lambda lib, x: x.conj().reshape(-1),
    "0-d conj": lambda lib, x: x[0, 0].conj(),
    "detached conj": lambda lib, x: x.conj().detach(),
    "real of conj": lambda lib, x: x.conj().real,
    "imag of conj": lambda lib, x: x.conj().imag,
    "imag of mH": lambda lib, x: x.mH.imag,
    "resolve_conj": lambda lib, x: x.conj().resolve_conj(),
    "resolve_neg": lambda lib, x: x.conj().imag.resolve_neg(),
    "clone of conj": lambda lib, x: x.conj().clone(),
    "contiguous of conj": lambda lib, x: x.conj().contiguous(),
    "conj_physical": lambda lib, x: x.conj_physical(),
    "conj_physical of conj": lambda lib, x: x.conj().conj_physical(),
    "sum of conj": lambda lib, x: x.conj() * 2,
}


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_conj_views_are_pytorchs(name):
    def build(lib):
        x = lib.tensor(Z)
        t = VIEWS[name](lib, x)
        return t, _described(lib, x, t)

    (ours, layout), (theirs, expected) = build(tapegrad), build(torch)
    assert layout == expected
    assert_close(ours, theirs.resolve_conj().resolve_neg())


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_conj_view_node_names_are_pytorchs(name):
    def build(lib):
        x = lib.tensor(Z, requires_grad=True)
        return _chain(VIEWS[name](lib, x).grad_fn)
    assert build(tapegrad) == build(torch)


def test_conj_of_a_real_tensor_is_itself():
    for lib in (tapegrad, torch):
        x = lib.tensor([1.0, 2.0])
        assert x.conj() is x and x.resolve_conj() is x and not x.conj().is_conj()
        z = lib.tensor(Z)
        assert z.resolve_conj() is z and z.resolve_neg() is z


def test_contiguous_conj_view_is_itself():
    for lib in (tapegrad, torch):
        y = lib.tensor(Z).conj()
        assert y.contiguous() is y


WRITES = {
    "setitem": lambda lib, x: x.conj().__setitem__(0, 1 + 2j),
    "mul_": lambda lib, x: x.conj().mul_(1j),
    "add_ a tensor": lambda lib, x: x.conj().add_(lib.tensor([1j, 0, 2])),
    "copy_ into conj of a slice": lambda lib, x: x[1:].conj().copy_(lib.tensor([5j, 6j])),
    "setitem through conj of conj": lambda lib, x: x.conj().conj().__setitem__(0, 9j),
    "zero_": lambda lib, x: x.conj().zero_(),
    "conj_physical_": lambda lib, x: x.conj().conj_physical_(),
    "real of conj": lambda lib, x: x.conj().real.__setitem__(0, 5.0),
    "imag of conj": lambda lib, x: x.conj().imag.__setitem__(1, 5.0),
    "imag of conj mul_": lambda lib, x: x.conj().imag.mul_(2),
}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_writes_through_conj_views_are_pytorchs(name):
    def build(lib):
        x = lib.tensor([1 + 1j, 2 + 2j, 3 - 3j])
        WRITES[name](lib, x)
        return x, x._version

    (ours, version), (theirs, expected) = build(tapegrad), build(torch)
    assert_close(ours, theirs)
    assert version == expected


def test_setitem_through_mH_writes_the_conjugate():
    def build(lib):
        x = lib.tensor([[1 + 1j, 2 + 2j], [3 + 3j, 4j]])
        y = x.mH
        y[0, 1] = 7 + 7j
        return x, y

    (x, y), (tx, ty) = build(tapegrad), build(torch)
    assert_close(x, tx)
    assert_close(y, ty.resolve_conj())


def test_a_conj_view_reads_its_base_after_a_write():
    def build(lib):
        x = lib.tensor([1 + 1j, 2 - 2j])
        y = x.conj()
        x.mul_(2)
        return y, y.is_conj()

    (y, bit), (ty, tbit) = build(tapegrad), build(torch)
    assert_close(y, ty.resolve_conj())
    assert bit == tbit


GRADIENTS = {
    "conj": lambda lib, a: (a.conj() * lib.tensor([2 + 1j, 1j, 1])).abs().sum(),
    "conj of conj": lambda lib, a: a.conj().conj().abs().sum(),
    "mH matmul": lambda lib, a: (a[:2, :2].mH @ lib.tensor([[1 + 1j], [2j]], dtype=lib.complex128)).abs().sum(),
    "resolve_conj": lambda lib, a: (a.conj().resolve_conj() ** 2).abs().sum(),
    "imag of conj": lambda lib, a: (a.conj().imag * lib.tensor([1.0, 2.0, 3.0])).sum(),
    "real of conj": lambda lib, a: (a.conj().real ** 2).sum(),
}


@pytest.mark.parametrize("name", sorted(GRADIENTS))
def test_gradients_through_conj_views_are_pytorchs(name):
    def build(lib):
        a = lib.tensor(np.array([[1 + 2j, 3 - 1j, 0.5j], [2j, 1, -1 + 1j], [1, 1j, 2]]), requires_grad=True)
        GRADIENTS[name](lib, a).backward()
        return a.grad

    assert_close(build(tapegrad), build(torch))


def test_gradient_of_a_real_tensor_through_conj():
    def build(lib):
        a = lib.tensor([1.0, 2.0], requires_grad=True)
        (a.conj() * 3).sum().backward()
        return a.grad

    assert_close(build(tapegrad), build(torch))


INPLACE = {
    "conj": lambda b: b.conj(),
    "mH": lambda b: b.mH,
    "slice of conj": lambda b: b.conj()[1:],
    "conj of slice": lambda b: b[1:].conj(),
    "conj of conj": lambda b: b.conj().conj(),
    "t of conj": lambda b: b.conj().t(),
    "real of conj": lambda b: b.conj().real,
    "imag of conj": lambda b: b.conj().imag,
}


@pytest.mark.parametrize("name", sorted(INPLACE))
def test_inplace_on_conj_views_is_pytorchs(name):
    """The base records CopySlices; the view's history is regenerated as PyTorch's (as_strided for the selecting
    steps, the conjugation as ConjBackward0)."""
    def build(lib):
        a = lib.tensor([[1 + 2j, 3 - 1j], [2j, 1]], requires_grad=True)
        b = a * 1
        y = INPLACE[name](b)
        y.mul_(2)
        (b.abs().sum() + y.abs().sum()).backward()
        return a.grad, _chain(y.grad_fn), _chain(b.grad_fn), y.is_conj(), y._version

    (grad, *rest), (tgrad, *trest) = build(tapegrad), build(torch)
    assert_close(grad, tgrad)
    assert rest == trest


def test_conj_view_of_a_no_grad_block_requires_grad():
    def build(lib):
        a = lib.tensor([1 + 2j, 3 - 1j], requires_grad=True)
        with lib.no_grad():
            b = a.conj()
        return b.requires_grad, b.grad_fn is None, b.is_conj()
    assert build(tapegrad) == build(torch)


def test_autograd_grad_hands_back_the_seeds_conjugate_view():
    def build(lib):
        g = lib.tensor([1j, 2 + 0j])
        x = lib.tensor([1 + 1j, 2 - 1j], requires_grad=True)
        r = lib.autograd.grad(x.conj(), x, g)[0]
        return r, r.is_conj(), r._base is g

    (r, *rest), (tr, *trest) = build(tapegrad), build(torch)
    assert_close(r, tr.resolve_conj())
    assert rest == trest


REFUSED = {
    "numpy of conj": lambda lib, x: x.conj().numpy(),
    "numpy of neg": lambda lib, x: x.conj().imag.numpy(),
    "view_as_real of conj": lambda lib, x: lib.view_as_real(x.conj()),
    "view dtype of conj": lambda lib, x: x.conj().view(lib.float32),
    "view same dtype of conj": lambda lib, x: x.conj().view(lib.complex64),
    "view dtype of neg": lambda lib, x: x.conj().imag.view(lib.int32),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_reading_the_bytes_of_a_conj_view_is_refused_as_pytorch(name):
    assert raised(lambda: REFUSED[name](tapegrad, tapegrad.tensor(Z))) == \
        raised(lambda: REFUSED[name](torch, torch.tensor(Z)))


def test_numpy_force_reads_the_values_of_a_conj_view():
    assert np.array_equal(tapegrad.tensor(Z).conj().numpy(force=True),
                          torch.tensor(Z).conj().numpy(force=True))
    assert np.array_equal(tapegrad.tensor(Z).conj().imag.numpy(force=True),
                          torch.tensor(Z).conj().imag.numpy(force=True))
