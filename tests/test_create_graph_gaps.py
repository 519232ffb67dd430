"""create_graph=True against PyTorch where JAX's formula and PyTorch's differ in what they read: prod over
one element (PyTorch's grad * (result / input) reads the input; JAX's reads nothing), the pools' and pads'
backward kernels (which read the input where JAX's formula does not), a fused backward under a tensor hook
(the node-by-node recording), the grad_inputs a CopySlices post-hook sees, an argument without a
derivative that a gradient's formula reads, backward kernels of several inputs (convolution, grid_sample,
nll_loss), kernels PyTorch cannot differentiate (pdist, cdist, hardsigmoid, the margin losses, ctc_loss,
segment_reduce), and the node names of view and indexing gradients."""
import itertools

import pytest

import tapegrad
from conftest import assert_close, both, raised


def _described(g):
    return None if g is None else (g.requires_grad, g.grad_fn.name() if g.grad_fn is not None else None)


def _second(lib, x, build, hooked):
    y = build(lib, x)
    if hooked:
        y.register_hook(lambda g: g * 1)   # the node-by-node recording
    (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
    h = lib.autograd.grad(g.sum(), x, allow_unused=True)[0] if g.requires_grad else None
    return g, _described(g), h


PRODS = {
    "one_element_all": ([3.0], lambda lib, x: x.prod()),
    "one_element_dim": ([3.0], lambda lib, x: x.prod(0)),
    "zero_d_all": (3.0, lambda lib, x: x.prod()),
    "zero_d_dim": (3.0, lambda lib, x: x.prod(0)),
    "size_one_dim": ([[3.0], [2.0]], lambda lib, x: x.prod(1)),
    "size_one_dim_keepdim": ([[3.0], [2.0]], lambda lib, x: x.prod(-1, keepdim=True)),
    "multi_element": ([3.0, 2.0, 5.0], lambda lib, x: x.prod()),
    "multi_element_dim": ([[3.0, 2.0], [5.0, 4.0]], lambda lib, x: x.prod(0)),
    "relu": ([1.0, -2.0, 3.0], lambda lib, x: lib.relu(x)),
}
# PyTorch's backward kernels of the average pools, the adaptive max pool, reflection and replication padding
# and prelu read the input too (a zero derivative): their gradients require grad, and print the kernel's node
# (AvgPool2DBackwardBackward0); constant padding's backward reads nothing
_FOUR_D = [[[[0.3, -1.2, 0.7, 0.1], [1.5, 0.2, -0.4, 0.9]]]]
KERNELS = {
    "avg_pool2d": (_FOUR_D, lambda lib, x: lib.nn.functional.avg_pool2d(x, 2)),
    "avg_pool2d_padded": (_FOUR_D, lambda lib, x: lib.nn.functional.avg_pool2d(x, 2, padding=1,
                                                                                 count_include_pad=False)),
    "avg_pool3d": (_FOUR_D, lambda lib, x: lib.nn.functional.avg_pool3d(x, (1, 1, 2))),
    "avg_pool1d": (_FOUR_D[0], lambda lib, x: lib.nn.functional.avg_pool1d(x, 2)),
    "adaptive_avg_pool2d": (_FOUR_D, lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x, (1, 2))),
    "adaptive_avg_pool3d": (_FOUR_D, lambda lib, x: lib.nn.functional.adaptive_avg_pool3d(x, (1, 1, 2))),
    "adaptive_max_pool2d": (_FOUR_D, lambda lib, x: lib.nn.functional.adaptive_max_pool2d(x, (1, 2))),
    "adaptive_max_pool1d": (_FOUR_D[0], lambda lib, x: lib.nn.functional.adaptive_max_pool1d(x, 2)),
    "reflection_pad2d": (_FOUR_D, lambda lib, x: lib.nn.functional.pad(x, (1, 1, 1, 0), mode="reflect")),
    "replication_pad2d": (_FOUR_D, lambda lib, x: lib.nn.functional.pad(x, (1, 1, 1, 0), mode="replicate")),
    "replication_pad3d": (_FOUR_D, lambda lib, x: lib.nn.functional.pad(x.unsqueeze(0), (1, 1, 1, 1, 0, 1),
                                                                          mode="replicate")),
    "constant_pad": (_FOUR_D, lambda lib, x: lib.nn.functional.pad(x, (1, 1)) * 3),
    "prelu": (_FOUR_D, lambda lib, x: lib.nn.functional.prelu(x, lib.tensor([0.25], dtype=x.dtype))),
    "max_pool2d": (_FOUR_D, lambda lib, x: lib.nn.functional.max_pool2d(x, 2)),
    "max_pool2d_indices": (_FOUR_D, lambda lib, x: lib.nn.functional.max_pool2d(x, 2, return_indices=True)[0]),
    "max_pool3d": (_FOUR_D, lambda lib, x: lib.nn.functional.max_pool3d(x, (1, 1, 2))),
    "adaptive_max_pool2d_indices": (_FOUR_D, lambda lib, x: lib.nn.functional.adaptive_max_pool2d(
        x, (1, 2), return_indices=True)[0]),
    "fractional_max_pool2d": (_FOUR_D, lambda lib, x: lib.nn.functional.fractional_max_pool2d(
        x, 2, output_size=(1, 2), _random_samples=lib.tensor([[[0.3, 0.6]]], dtype=x.dtype))),
    "max_unpool2d": (_FOUR_D, lambda lib, x: lib.nn.functional.max_unpool2d(
        *lib.nn.functional.max_pool2d(x, 2, return_indices=True), 2)),
}
PRODS.update(KERNELS)


@pytest.mark.parametrize("hooked", [False, True])
@pytest.mark.parametrize("case", sorted(PRODS))
def test_gradient_requires_grad_and_differentiates_again(torch, case, hooked):
    value, build = PRODS[case]

    def run(lib):
        return _second(lib, lib.tensor(value, dtype=lib.float64, requires_grad=True), build, hooked)
    (g, desc, h), (tg, tdesc, th) = both(run)
    assert_close(g, tg)
    assert desc[0] == tdesc[0]   # requires_grad as PyTorch
    if case != "multi_element_dim" and not case.startswith("relu"):
        assert desc == tdesc     # and the node name (PyTorch's formula ends in a mul)
    assert (h is None) == (th is None)
    if h is not None:
        assert_close(h, th)



# Backward kernels of several inputs (convolution_backward, grid_sampler_2d_backward, nll_loss_backward): every
# gradient they compute depends on the inputs they take, so it requires grad wherever one of those does, prints
# the kernel's node, and gives an input it does not depend on an undefined gradient (None), or zeros (nll_loss)
_IMAGE = [[[[0.3, -1.2, 0.7, 0.1], [1.5, 0.2, -0.4, 0.9], [0.6, -0.3, 1.1, 0.4]]]]
_FILTER = [[[[0.5, -0.25], [0.75, 1.0]]]]
_GRID = [[[[-0.8, -0.3], [0.4, 0.9]], [[0.1, -0.6], [0.7, 0.2]]]]
MULTI_KERNELS = {
    "conv2d": ([_IMAGE, _FILTER, [0.3]], lambda lib, x, w, b: lib.nn.functional.conv2d(x, w, b)),
    "conv2d_no_bias": ([_IMAGE, _FILTER], lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding=1)),
    "conv_transpose2d": ([_IMAGE, _FILTER, [0.3]], lambda lib, x, w, b: lib.nn.functional.conv_transpose2d(x, w, b)),
    "grid_sample": ([_IMAGE, _GRID], lambda lib, x, g: lib.nn.functional.grid_sample(x, g, align_corners=False)),
    "nll_loss": ([[[0.3, -1.2, 0.7], [1.5, 0.2, -0.4]]],
                 lambda lib, x: lib.nn.functional.nll_loss(x, lib.tensor([2, 0]))),
    "cross_entropy": ([[[0.3, -1.2, 0.7], [1.5, 0.2, -0.4]]],
                      lambda lib, x: lib.nn.functional.cross_entropy(x, lib.tensor([2, 0]))),
}


def _multi_calls():
    for name, (values, _) in MULTI_KERNELS.items():
        for requires in itertools.product((False, True), repeat=len(values)):
            if any(requires):
                yield pytest.param(name, requires, id=f"{name}-{''.join('TF'[not r] for r in requires)}")


@pytest.mark.parametrize("name,requires", list(_multi_calls()))
def test_kernel_gradients_of_several_inputs_as_pytorch(torch, name, requires):
    values, build = MULTI_KERNELS[name]

    def run(lib):
        xs = [lib.tensor(v, dtype=lib.float64, requires_grad=r) for v, r in zip(values, requires)]
        out = build(lib, *xs)
        wanted = [x for x in xs if x.requires_grad]
        grads = lib.autograd.grad((out * out).sum() if name.startswith("conv") else out.sum(), wanted,
                                  create_graph=True)
        live = [g for g in grads if g.requires_grad]
        again = lib.autograd.grad(sum((g * g).sum() for g in live), wanted, allow_unused=True) if live else ()
        return grads, [_described(g) for g in grads], again
    (grads, desc, again), (tgrads, tdesc, tagain) = both(run)
    for g, tg in zip(grads, tgrads):
        assert_close(g, tg)
    assert desc == tdesc
    assert [h is None for h in again] == [h is None for h in tagain]
    for h, th in zip(again, tagain):
        if h is not None:
            assert_close(h, th)


# Backward kernels PyTorch cannot differentiate (derivatives.yaml's not_implemented): a gradient recorded through
# one requires grad, and raises PyTorch's error when differentiated toward an input whose path crosses the kernel;
# toward one that reaches the gradient another way it works.
_ROWS = [[0.3, -1.2, 0.7, 0.1], [1.5, 0.2, -0.4, 0.9], [0.6, -0.3, 1.1, 0.4]]
UNDIFFERENTIATED = {
    "pdist": lambda lib, x: lib.nn.functional.pdist(x),
    "pdist_p1": lambda lib, x: lib.nn.functional.pdist(x, 1),
    "cdist": lambda lib, x: lib.cdist(x, x.flip(0) * 0.7),
    "cdist_inf": lambda lib, x: lib.cdist(x, x.flip(0) * 0.7, float("inf")),
    "hardsigmoid": lambda lib, x: lib.nn.functional.hardsigmoid(x * 3),
    "multi_margin_loss": lambda lib, x: lib.nn.functional.multi_margin_loss(x, lib.tensor([0, 2, 1])),
    "multilabel_margin_loss": lambda lib, x: lib.nn.functional.multilabel_margin_loss(
        x, lib.tensor([[0, -1, 1, 2]] * 3)),
    "ctc_loss": lambda lib, x: lib.nn.functional.ctc_loss(x.log_softmax(1)[:, None], lib.tensor([[1]]),
                                                          lib.tensor([3]), lib.tensor([1])),
    "segment_reduce": lambda lib, x: lib.segment_reduce(x.flatten(), "sum", lengths=lib.tensor([5, 7])),
}


@pytest.mark.parametrize("case", sorted(UNDIFFERENTIATED))
def test_second_derivative_pytorch_does_not_implement(torch, case):
    def run(lib):
        x = lib.tensor(_ROWS, dtype=lib.float64, requires_grad=True)
        z = lib.tensor(_ROWS, dtype=lib.float64, requires_grad=True)
        out = UNDIFFERENTIATED[case](lib, x)
        gx, gz = lib.autograd.grad(out.sum() + (x * z).sum(), (x, z), create_graph=True)
        off_path = lib.autograd.grad(gx.sum(), z, retain_graph=True)[0]   # z reaches gx without the kernel
        crossing = raised(lambda: lib.autograd.grad((gx * gx).sum(), x))
        return gx, _described(gx), off_path, crossing
    (gx, desc, off, err), (tgx, tdesc, toff, terr) = both(run)
    assert_close(gx, tgx)
    assert desc == tdesc
    assert_close(off, toff)
    assert err == terr and err is not None


# The gradients of views and indexing recorded under create_graph print the node of PyTorch's backward formula
_CUBE = [[[0.3, -1.2, 0.7, 0.1], [1.5, 0.2, -0.4, 0.9], [0.6, -0.3, 1.1, 0.4]],
         [[-0.5, 0.8, 0.25, -0.9], [1.2, -0.7, 0.35, 0.45], [0.15, 0.55, -1.1, 0.65]]]
VIEW_GRADIENTS = {
    "select": lambda lib, x: x[0], "select_negative": lambda lib, x: x[:, -1], "slice": lambda lib, x: x[1:],
    "slice_step": lambda lib, x: x[:, :, ::2], "narrow": lambda lib, x: x.narrow(2, 1, 2),
    "none_index": lambda lib, x: x[None], "trailing_none": lambda lib, x: x[..., None],
    "index_tensor": lambda lib, x: x[lib.tensor([0, 1, 1])], "index_mask": lambda lib, x: x[x > 0],
    "index_two": lambda lib, x: x[lib.tensor([0, 1]), lib.tensor([2, 0])],
    "diagonal": lambda lib, x: x.diagonal(0, 1, 2), "unbind": lambda lib, x: x.unbind(1)[1],
    "split": lambda lib, x: x.split(2, 2)[1], "chunk": lambda lib, x: x.chunk(2, 2)[0],
    "as_strided": lambda lib, x: x.as_strided((2, 2), (1, 2)), "transpose": lambda lib, x: x.transpose(0, 2),
    "mT": lambda lib, x: x.mT, "unsqueeze": lambda lib, x: x.unsqueeze(1), "unfold": lambda lib, x: x.unfold(2, 2, 1),
    "index_select": lambda lib, x: x.index_select(1, lib.tensor([0, 2])),
    "gather": lambda lib, x: x.gather(2, lib.tensor([[[0, 1]] * 3] * 2)),
    "take": lambda lib, x: x.take(lib.tensor([0, 5, 7])),
    "roll": lambda lib, x: x.roll(1, 2), "tril": lambda lib, x: x.tril(), "triu": lambda lib, x: x.triu(1),
    "masked_select": lambda lib, x: x.masked_select(x > 0), "diag_embed": lambda lib, x: lib.diag_embed(x),
    "rot90": lambda lib, x: x.rot90(1, (1, 2)), "permute": lambda lib, x: x.permute(2, 0, 1),
    "view": lambda lib, x: x.view(6, 4), "flip": lambda lib, x: x.flip(1),
}


@pytest.mark.parametrize("case", sorted(VIEW_GRADIENTS))
def test_view_gradient_nodes_under_create_graph(torch, case):
    def run(lib):
        x = lib.tensor(_CUBE, dtype=lib.float64, requires_grad=True)
        y = VIEW_GRADIENTS[case](lib, x)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        return g, _described(g), lib.autograd.grad((g * g).sum(), x)[0]
    (g, desc, h), (tg, tdesc, th) = both(run)
    assert_close(g, tg)
    assert desc == tdesc
    assert_close(h, th)

def test_one_element_zero_prod_values(torch):
    # PyTorch picks its formula by value: with a zero input, its safe-zeros formula over one element reads no
    # element of the input, and the gradient does not require grad. tapegrad decides requires_grad by the
    # graph's structure alone (no value is read to record a backward), so here its gradient requires grad,
    # with the same value and a zero second derivative.
    def run(lib):
        x = lib.tensor([0.0], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(x.prod(), x, create_graph=True)
        return x, g
    (x, g), (_, tg) = both(run)
    assert_close(g, tg)
    (h,) = tapegrad.autograd.grad(g.sum(), x)
    assert h.tolist() == [0.0]


def test_one_element_prod_second_order_value(torch):
    # the second derivative is zero in both; PyTorch's formula (x / x) still reads the input at this order, so
    # there the result requires grad again, while tapegrad's tie to the input has a zero derivative: a constant
    def run(lib):
        x = lib.tensor([3.0], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(x.prod(), x, create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), x, create_graph=True)
        return g, h
    (g, h), (tg, th) = both(run)
    assert_close(g, tg)
    assert_close(h, th)


# ---- CopySlices post-hooks under create_graph ------------------------------------------------------------

WRITES = {
    "mul_scalar": lambda y, w: y[1:].mul_(2),
    "mul_tensor": lambda y, w: y[1:].mul_(w),
    "add_tensor": lambda y, w: y[:2].add_(w * w),
    "copy_strided": lambda y, w: y[::2].copy_(w * 3),
}


def _hooked_backward(lib, write, scale):
    x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([5.0, 7.0], dtype=lib.float64, requires_grad=True)
    y = x.clone() * x
    write(y, w)
    seen = []

    def hook(grad_inputs, grad_outputs):
        seen.append((grad_inputs, grad_outputs))
        if scale is not None:
            return tuple(None if g is None else g * scale for g in grad_inputs)
    y.grad_fn.register_hook(hook)
    grads = lib.autograd.grad((y * y).sum(), (x, w), create_graph=True, allow_unused=True)
    grad_inputs, grad_outputs = seen[0]
    # a second backward through what the hook captured, and through the final gradients
    captured = [None if g is None else
                lib.autograd.grad(g.sum(), (x, w), allow_unused=True, retain_graph=True) for g in grad_inputs]
    total = sum(g.sum() for g in grads if g is not None)
    again = lib.autograd.grad(total, (x, w), allow_unused=True)
    return grad_inputs, grad_outputs, captured, grads, again


@pytest.mark.parametrize("scale", [None, 3.0])
@pytest.mark.parametrize("case", sorted(WRITES))
def test_copy_slices_post_hook_args_carry_history(torch, case, scale):
    ours, theirs = both(lambda lib: _hooked_backward(lib, WRITES[case], scale))
    for mine, its in zip(ours[0] + ours[1], theirs[0] + theirs[1]):   # grad_inputs, grad_outputs
        assert (mine is None) == (its is None)
        if mine is not None:
            assert_close(mine, its)
            assert mine.requires_grad == its.requires_grad
    assert ours[0][0].grad_fn.name() == theirs[0][0].grad_fn.name()   # the base's: CopySlices
    for mine, its in zip(ours[2] + [ours[3], ours[4]], theirs[2] + [theirs[3], theirs[4]]):
        assert (mine is None) == (its is None)
        for a, b in zip(mine or (), its or ()):
            assert (a is None) == (b is None)
            if a is not None:
                assert_close(a, b)


@pytest.mark.parametrize("shape, dim", [((1,), None), ((2, 1), 1), ((2, 3), 0), ((), None)])
def test_prod_gradgradcheck(shape, dim):
    x = tapegrad.rand(*shape, dtype=tapegrad.float64).add(0.5).requires_grad_()
    fn = (lambda t: t.prod()) if dim is None else (lambda t: t.prod(dim))
    assert tapegrad.autograd.gradcheck(fn, (x,))
    assert tapegrad.autograd.gradgradcheck(fn, (x,))


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("order", [(0, 1), (1, 0), (0, 2, 1)])
def test_unused_input_error_names_its_index(torch, create_graph, order):
    def call(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        others = [lib.tensor([1.0, 2.0], requires_grad=True), lib.tensor(1.0, requires_grad=True)]
        inputs = [x, *others][:len(order)]
        return lambda: lib.autograd.grad((x * x).sum(), [inputs[i] for i in order], create_graph=create_graph)
    ours, theirs = raised(call(tapegrad)), raised(call(torch))
    assert ours == (RuntimeError, theirs[1]) and theirs[0] is RuntimeError


@pytest.mark.parametrize("second", ["self", "other"])
@pytest.mark.parametrize("fn", ["igamma", "igammac", "special.gammainc", "special.gammaincc"])
def test_a_gradient_is_differentiated_through_an_argument_without_a_derivative(torch, fn, second):
    """PyTorch implements igamma's derivative for `other` only, a formula that reads `self`: that gradient,
    recorded with create_graph, differentiates with respect to `self` as any formula does (it was zero here:
    the argument without a derivative was cut from the formula, not only from the gradients asked for)."""
    def run(lib):
        a = lib.tensor([[1.3, 2.6], [0.7, 1.45]], dtype=lib.float64, requires_grad=True)
        x = lib.tensor([[0.9, 1.4], [2.3, 0.5]], dtype=lib.float64, requires_grad=True)
        f = lib
        for part in fn.split("."):
            f = getattr(f, part)
        (g,) = lib.autograd.grad(f(a, x).sum(), [x], create_graph=True)
        return lib.autograd.grad((g * g).sum(), [a if second == "self" else x])[0]
    ours, theirs = both(run)
    assert_close(ours, theirs)


_KERNEL_NAMED = {
    "gelu": lambda lib, a, b: lib.nn.functional.gelu(a) * b,
    "softplus": lambda lib, a, b: lib.nn.functional.softplus(a) * b,
    "hardswish": lambda lib, a, b: lib.nn.functional.hardswish(a) * b,
    "logsigmoid": lambda lib, a, b: lib.nn.functional.logsigmoid(a) * b,
    "leaky_relu": lambda lib, a, b: lib.nn.functional.leaky_relu(a, 0.1) * b,
    "leaky_relu_": lambda lib, a, b: lib.nn.functional.leaky_relu(a * 1, 0.1, inplace=True) * b,
    "hardtanh": lambda lib, a, b: lib.nn.functional.hardtanh(a, -0.5, 0.5) * b,
    "relu6": lambda lib, a, b: lib.nn.functional.relu6(a * 4) * b,
    "threshold": lambda lib, a, b: lib.nn.functional.threshold(a, 0.1, 0.0) * b,
    "softshrink": lambda lib, a, b: lib.nn.functional.softshrink(a, 0.25) * b,
    "hardshrink": lambda lib, a, b: lib.nn.functional.hardshrink(a, 0.25) * b,
    "rrelu": lambda lib, a, b: lib.nn.functional.rrelu(a, training=False) * b,
    "mse_loss": lambda lib, a, b: lib.nn.functional.mse_loss(a, b),
    "smooth_l1_loss": lambda lib, a, b: lib.nn.functional.smooth_l1_loss(a, b, beta=0.5),
    "huber_loss": lambda lib, a, b: lib.nn.functional.huber_loss(a, b, delta=0.5),
    "cdist": lambda lib, a, b: lib.cdist(a, b),
    "pdist": lambda lib, a, b: lib.nn.functional.pdist(a) * b.sum(),
}


@pytest.mark.parametrize("wrt", ["a", "b"])
@pytest.mark.parametrize("case", sorted(_KERNEL_NAMED))
def test_a_gradient_through_a_backward_kernel_prints_that_kernels_node(torch, case, wrt):
    """A gradient recorded with create_graph through an op whose PyTorch backward is a kernel of its own
    (gelu_backward, mse_loss_backward, ...) prints that kernel's node (GeluBackwardBackward0), as PyTorch's."""
    def run(lib):
        a = lib.tensor([[0.3, -0.6, 0.7], [0.45, 0.2, -0.4]], dtype=lib.float64, requires_grad=True)
        b = lib.tensor([[0.9, 0.4, -0.6], [-0.3, 1.1, 0.5]], dtype=lib.float64, requires_grad=True)
        (g,) = lib.autograd.grad(_KERNEL_NAMED[case](lib, a, b).sum(), [a if wrt == "a" else b], create_graph=True,
                                 allow_unused=True)
        return g, _described(g)
    (g, desc), (tg, tdesc) = both(run)
    assert desc == tdesc
    if g is not None:
        assert_close(g, tg)
