"""Which results are views, as PyTorch's: each call's shape, strides, is_contiguous(), _is_view(), what its
_base is (its input, another tensor, or None) and its grad_fn's name are compared with PyTorch's."""
import pytest

import tapegrad


def _layout(t, inputs):
    base = t._base
    which = None if base is None else next((i for i, x in enumerate(inputs) if base is x),
                                            (tuple(base.shape), base.stride()))
    name = None if t.grad_fn is None else t.grad_fn.name()
    return tuple(t.shape), t.stride(), t.is_contiguous(), t._is_view(), which, name


def _max_pool1d(lib, requires_grad=False, grad_mode=True, **kwargs):
    x = lib.arange(48.0).reshape(2, 3, 8).requires_grad_(requires_grad)
    with lib.set_grad_enabled(grad_mode):
        return lib.nn.functional.max_pool1d(x, 2, **kwargs), (x,)


CALLS = {
    # PyTorch's CPU max_pool1d makes a new tensor unless a gradient is wanted (then max_pool1d_with_indices:
    # a squeezed view of 2-d pooling)
    "max_pool1d": lambda lib: _max_pool1d(lib),
    "max_pool1d padded and dilated": lambda lib: _max_pool1d(lib, padding=1, dilation=2, stride=1),
    "max_pool1d of an unbatched input": lambda lib: (lib.nn.functional.max_pool1d(lib.ones(3, 8), 3), ()),
    "max_pool1d requiring grad": lambda lib: _max_pool1d(lib, requires_grad=True),
    "max_pool1d requiring grad under no_grad": lambda lib: _max_pool1d(lib, requires_grad=True, grad_mode=False),
    "MaxPool1d": lambda lib: (lib.nn.MaxPool1d(2, ceil_mode=True)(lib.ones(2, 3, 7)), ()),
    "max_pool1d with indices": lambda lib: (lib.nn.functional.max_pool1d(lib.ones(2, 3, 8), 2,
                                                                         return_indices=True)[1], ()),
    # unique's kernel writes the inverse in the input's shape
    "unique's inverse": lambda lib: (lib.unique(lib.tensor([[3, 1], [2, 3]]), return_inverse=True)[1], ()),
    "unique's inverse with counts": lambda lib: (lib.tensor([[3.0, 1.0, 2.0]]).requires_grad_().unique(
        return_inverse=True, return_counts=True)[1], ()),
    "unique's inverse of a number": lambda lib: (lib.unique(lib.tensor(2.0), return_inverse=True)[1], ()),
    # PyTorch computes dense @ COO as (COO^T @ dense^T)^T: column-major, batches unfolded by _unsafe_view
    "dense @ COO": lambda lib: (_dense(lib, 2, True) @ _sparse(lib).to_sparse(), ()),
    "mm(dense, COO)": lambda lib: (lib.mm(_dense(lib, 2, False), _sparse(lib).to_sparse()), ()),
    "batched dense @ COO": lambda lib: (_dense(lib, 3, True) @ _sparse(lib).to_sparse(), ()),
    "vector @ COO": lambda lib: (_dense(lib, 1, True) @ _sparse(lib).to_sparse(), ()),
    "dense @ CSR": lambda lib: (_dense(lib, 2, True) @ _sparse(lib).to_sparse_csr(), ()),
    "batched dense @ CSR": lambda lib: (_dense(lib, 3, False) @ _sparse(lib).to_sparse_csr(), ()),
}


def _dense(lib, ndim, requires_grad):
    return lib.arange(12.0)[:[3, 6, 12][ndim - 1]].reshape((2, 2, 3)[-ndim:]).requires_grad_(requires_grad)


def _sparse(lib):
    return lib.tensor([[1.0, 0.0], [0.0, 2.0], [5.0, 0.0]])


@pytest.mark.parametrize("case", sorted(CALLS))
def test_result_views_are_pytorchs(case, torch):
    seen = []
    for lib in (tapegrad, torch):
        t, inputs = CALLS[case](lib)
        seen.append(_layout(t, inputs) + (t.tolist(),))
    assert seen[0] == seen[1]


RNN_CALLS = [(mode, batch_first, shape, layers, bidirectional)
             for mode in ("RNN", "GRU", "LSTM") for batch_first in (False, True)
             for shape, layers, bidirectional in (((3, 2, 4), 1, False), ((3, 2, 4), 2, True), ((3, 4), 1, False))]


@pytest.mark.parametrize("mode, batch_first, shape, layers, bidirectional", RNN_CALLS)
def test_recurrent_output_views_are_pytorchs(mode, batch_first, shape, layers, bidirectional, torch):
    """PyTorch's RNN and GRU transpose a batch_first output in place (not a view), its LSTM returns a
    transposed view, and an unbatched input runs as a batch of one along the batch dim. Node names are
    compared only where PyTorch's are those of these layout steps: tapegrad records the recurrence as one
    node where PyTorch records each step's ops."""
    seen = []
    for lib in (tapegrad, torch):
        lib.manual_seed(0)
        module = getattr(lib.nn, mode)(4, 5, num_layers=layers, bidirectional=bidirectional,
                                       batch_first=batch_first)
        output = module(lib.randn(*shape))[0]
        seen.append(_layout(output, ()))
    layout_steps = batch_first or len(shape) == 2
    assert seen[0] == seen[1] if layout_steps else seen[0][:5] == seen[1][:5]


@pytest.mark.parametrize("shapes", [((2,), (2,)), ((2,), (3, 1)), ((3, 1), (3, 2), (2,)), ((2, 2),)])
def test_broadcast_tensors_returns_inputs_already_of_the_shape(shapes, torch):
    """PyTorch's broadcast_tensors hands back the very tensor that already has the broadcast shape (its
    expand_outplace borrows it); the others are expanded views."""
    def run(lib):
        inputs = [lib.ones(s, requires_grad=i == 0) for i, s in enumerate(shapes)]
        out = lib.broadcast_tensors(*inputs)
        return [(o is x, None if o.grad_fn is None else o.grad_fn.name()) for o, x in zip(out, inputs)]
    assert run(tapegrad) == run(torch)
