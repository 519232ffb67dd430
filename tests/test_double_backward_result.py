"""create_graph=True through ops whose PyTorch backward reads their result (exp: grad * result): the
gradient's graph goes through the op's node again, so an in-place change of the result, its retained
grad and its hooks take part in a second backward as in PyTorch. Values in float64 against PyTorch."""
import pytest

from conftest import assert_close, both

POSITIVE = [0.5, 1.25, 2.0]
MIXED = [-1.5, 0.5, 2.0]

# name: (input values, the op)
OPS = {
    "exp": (MIXED, lambda lib, x: x.exp()),
    "exp2": (MIXED, lambda lib, x: lib.exp2(x)),
    "expm1": (MIXED, lambda lib, x: x.expm1()),
    "sqrt": (POSITIVE, lambda lib, x: x.sqrt()),
    "rsqrt": (POSITIVE, lambda lib, x: x.rsqrt()),
    "reciprocal": (POSITIVE, lambda lib, x: x.reciprocal()),
    "tan": (MIXED, lambda lib, x: x.tan()),
    "tanh": (MIXED, lambda lib, x: x.tanh()),
    "sigmoid": (MIXED, lambda lib, x: x.sigmoid()),
    "relu": (MIXED, lambda lib, x: x.relu()),
    "softmax": (MIXED, lambda lib, x: lib.softmax(x, 0)),
    "log_softmax": (MIXED, lambda lib, x: lib.log_softmax(x, 0)),
    "nn_softmax": (MIXED, lambda lib, x: lib.nn.functional.softmax(x, dim=0)),
    "prod": (MIXED, lambda lib, x: x.prod()),
    "prod_dim": (MIXED, lambda lib, x: x.prod(0)),
    "prod_keepdim": (MIXED, lambda lib, x: x.prod(-1, keepdim=True)),
    "logsumexp": (MIXED, lambda lib, x: x.logsumexp(0)),
    "logsumexp_keepdim": (MIXED, lambda lib, x: x.logsumexp(-1, keepdim=True)),
    "std": (MIXED, lambda lib, x: x.std()),
    "std_dim": (MIXED, lambda lib, x: x.std(0, correction=0)),
    "std_keepdim": (MIXED, lambda lib, x: x.std(-1, keepdim=True)),
    "norm": (MIXED, lambda lib, x: x.norm()),
    "vector_norm_3": (MIXED, lambda lib, x: lib.linalg.vector_norm(x, 3, dim=0)),
    "vector_norm_half": (MIXED, lambda lib, x: lib.linalg.vector_norm(x, 0.5)),
    "vector_norm_1_5": (MIXED, lambda lib, x: lib.linalg.vector_norm(x, 1.5, keepdim=True)),
}
# PyTorch's formula over a dim without keepdim reads the result unsqueezed, a view of shape [1]; tapegrad's
# version error names the result itself
UNSQUEEZED = {"prod_dim", "logsumexp", "vector_norm_3"}
WEIGHTS = [0.75, -1.25, 2.5]


def _leaf(lib, values):
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


def _first(lib, name, hooked):
    """x, y = op(x) retaining its grad, and g = d(sum(w * y))/dx recorded with create_graph."""
    values, op = OPS[name]
    x = _leaf(lib, values)
    y = op(lib, x)
    y.retain_grad()
    seen = []
    if hooked:   # a tensor hook: the node-by-node recording
        y.register_hook(lambda grad: seen.append(grad.detach().clone()))
    (g,) = lib.autograd.grad((y * lib.tensor(WEIGHTS, dtype=lib.float64)).sum(), x, create_graph=True)
    return x, y, g, seen


def _reaches(node, target):
    seen, stack = set(), [node]
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        if n is target:
            return True
        seen.add(n)
        stack += [m for m, _ in n.next_functions]
    return False


def _next_names(node):
    return sorted(type(n).__name__ for n, _ in node.next_functions if n is not None)


@pytest.mark.parametrize("hooked", [False, True])
@pytest.mark.parametrize("name", sorted(OPS))
def test_second_backward_goes_through_the_result_as_torch_s(torch, name, hooked):
    def run(lib):
        x, y, g, seen = _first(lib, name, hooked)
        first_y_grad = y.grad.detach().clone()
        reaches_y = _reaches(g.grad_fn, y.grad_fn)
        # the gradient's node, and the nodes it reads when the result's node is one of them
        fed = any(n is y.grad_fn for n, _ in g.grad_fn.next_functions)
        names = (type(g.grad_fn).__name__, _next_names(g.grad_fn) if fed else None)
        (g * lib.tensor([1.0, -0.5, 0.25], dtype=lib.float64)).sum().backward()
        return g.detach(), x.grad, first_y_grad, y.grad, reaches_y, names, seen
    ours, theirs = both(run)
    g, x_grad, first_y_grad, y_grad, reaches_y, names, seen = ours
    t_g, t_x_grad, t_first_y_grad, t_y_grad, t_reaches_y, t_names, t_seen = theirs
    assert_close(g, t_g)
    assert_close(x_grad, t_x_grad)
    assert_close(first_y_grad, t_first_y_grad)
    assert_close(y_grad, t_y_grad)   # the second-order part reached the result's retained grad
    assert reaches_y and t_reaches_y
    assert names[0] == t_names[0]
    if t_names[1] is not None:
        assert names[1] == t_names[1]
    assert len(seen) == len(t_seen)   # the result's hook ran in the second backward too
    for a, b in zip(seen, t_seen):
        assert_close(a, b)


@pytest.mark.parametrize("hooked", [False, True])
@pytest.mark.parametrize("name", sorted(OPS))
def test_in_place_change_of_the_result_breaks_the_second_backward_as_in_torch(torch, name, hooked):
    def run(lib):
        _, y, g, _ = _first(lib, name, hooked)
        with lib.no_grad():
            y.mul_(2)
        try:
            g.sum().backward()
        except RuntimeError as e:
            return str(e)
        return None
    ours, theirs = both(run)
    assert theirs is not None and ours is not None, (ours, theirs)
    # (where PyTorch saved an unsqueezed view of the result, its message describes that view)
    cut = ": [" if name in UNSQUEEZED else ", is at version"
    assert theirs.split(cut)[0] == ours.split(cut)[0]
    assert "is at version 1; expected version 0 instead." in ours
    assert "is at version 1; expected version 0 instead." in theirs


def test_grad_fn_hook_on_the_result_s_node_runs_in_the_second_backward(torch):
    def run(lib):
        x = _leaf(lib, MIXED)
        y = x.tanh()
        calls = []
        y.grad_fn.register_hook(lambda grad_inputs, grad_outputs: calls.append(grad_outputs[0].detach().clone()))
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        g.sum().backward()
        return calls, x.grad
    (calls, x_grad), (t_calls, t_x_grad) = both(run)
    assert len(calls) == len(t_calls) == 2
    for a, b in zip(calls, t_calls):
        assert_close(a, b)
    assert_close(x_grad, t_x_grad)


def test_chain_of_result_readers_to_third_order(torch):
    def run(lib):
        x = _leaf(lib, MIXED)
        y = x.sigmoid().exp().tanh()
        (g,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), x, create_graph=True)
        (k,) = lib.autograd.grad(h.sum(), x)
        return g.detach(), h.detach(), k, type(h.grad_fn).__name__
    (g, h, k, name), (tg, th, tk, tname) = both(run)
    assert_close(g, tg)
    assert_close(h, th)
    assert_close(k, tk)


def test_result_changed_in_place_but_off_the_second_backward_is_allowed(torch):
    # g = d(y.sum())/dx; only g's dependence on x is asked for with inputs: the second backward still
    # runs through y's node (its formula reads y), so torch raises; with y unrelated it does not
    def run(lib):
        x = _leaf(lib, MIXED)
        z = _leaf(lib, MIXED)
        y = x.exp()
        (g,) = lib.autograd.grad((y + z * z).sum(), [z], create_graph=True)
        with lib.no_grad():
            y.mul_(2)
        g.sum().backward()
        return z.grad
    ours, theirs = both(run)
    assert_close(ours, theirs)


def test_given_seed_requiring_grad_through_a_result_reader(torch):
    def run(lib):
        x = _leaf(lib, MIXED)
        v = _leaf(lib, WEIGHTS)
        y = x.tanh()
        (g,) = lib.autograd.grad(y, x, grad_outputs=v, create_graph=True)
        (g * g).sum().backward()
        return g.detach(), x.grad, v.grad
    ours, theirs = both(run)
    for a, b in zip(ours, theirs):
        assert_close(a, b)


def test_retained_result_s_grad_requires_grad_after_a_create_graph_pass_through_it(torch):
    # found by the fuzzer: the second create_graph gradient runs through logsumexp's node (its formula
    # reads the result), so the result's retained grad is written with history
    def run(lib):
        x = lib.tensor([-1.25, -2.0], dtype=lib.float64, requires_grad=True)
        y = x.logsumexp(dim=-1, keepdim=False)
        (g,) = lib.autograd.grad(y, [x], create_graph=True)
        y.retain_grad()
        lib.autograd.grad(g.min(), [x], create_graph=True)
        return y.grad.requires_grad, y.grad.detach()
    (flag, value), (t_flag, t_value) = both(run)
    assert flag == t_flag
    assert_close(value, t_value)


@pytest.mark.parametrize("code", ["x.std()", "x.std(0)", "x[:1].std()", "x[:1].std(0)", "x.std(0, correction=3)",
                                  "lib.linalg.vector_norm(x, 1)", "lib.linalg.vector_norm(x, float('inf'))",
                                  "lib.linalg.vector_norm(x * 0)",
                                  "lib.linalg.vector_norm(x, 2, dtype=lib.float64)", "(x * 0).std()"])
def test_reductions_reading_their_result_to_second_order(torch, code):
    # the edge cases of the result formulas: too few elements for the correction, a zero norm or deviation,
    # orders whose PyTorch formula does not read the result
    def run(lib):
        x = lib.tensor([0.5, -1.25, 2.0], dtype=lib.float32 if "dtype" in code else lib.float64,
                       requires_grad=True)
        y = eval(code, {"lib": lib, "x": x})
        (g,) = lib.autograd.grad((y * 1.5).sum(), x, create_graph=True)
        h = lib.autograd.grad((g * lib.tensor([1.0, 2.0, -1.0], dtype=g.dtype)).sum(), x, allow_unused=True)[0] \
            if g.requires_grad else None
        return g.detach(), g.requires_grad, h
    (g, flag, h), (tg, tflag, th) = both(run)
    assert_close(g, tg)
    assert flag == tflag
    assert (h is None) == (th is None)
    if h is not None:
        assert_close(h, th)


def test_result_computed_and_dropped_before_the_create_graph_backward(torch):
    # the recorded formula reads the result computed again from the node's inputs when the tape no longer
    # holds it: same values, and the version check still guards the result
    def run(lib):
        x = _leaf(lib, MIXED)
        z = x.tanh().sigmoid()
        z.tolist()   # computed: the results' pending values may be gone
        (g,) = lib.autograd.grad(z.sum(), x, create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), x)
        y = x.exp()
        y.tolist()
        (k,) = lib.autograd.grad(y.sum(), x, create_graph=True)
        y.add_(1.0)
        try:
            k.sum().backward()
        except RuntimeError as e:
            return g.detach(), h, str(e).split(", which is output")[0]
        return g.detach(), h, None
    (g, h, err), (tg, th, terr) = both(run)
    assert_close(g, tg)
    assert_close(h, th)
    assert err == terr and err is not None


@pytest.mark.parametrize("name", sorted(OPS))
def test_second_order_passes_gradgradcheck(name):
    import tapegrad
    values, op = OPS[name]
    x = _leaf(tapegrad, values)
    assert tapegrad.autograd.gradgradcheck(lambda t: op(tapegrad, t), (x,))


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_lower_precision_second_order_as_torch(torch, dtype):
    def run(lib):
        x = lib.tensor(MIXED, dtype=getattr(lib, dtype), requires_grad=True)
        y = lib.softmax(x.tanh().sigmoid().exp(), 0).relu().sqrt().logsumexp(0)
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        (h,) = lib.autograd.grad(g.sum(), x)
        return g.detach(), h
    (g, h), (tg, th) = both(run)
    assert_close(g, tg, rtol=1e-2 if dtype == "float16" else None, atol=1e-3 if dtype == "float16" else None)
    assert_close(h, th, rtol=1e-2 if dtype == "float16" else None, atol=1e-3 if dtype == "float16" else None)


def test_fuzzer_s_program_changing_tanh_s_result_after_create_graph(torch):
    # found by the fuzzer (tests/fuzz, --higher-order): torch raises at the second backward, through
    # TanhBackwardBackward0's saved result; tapegrad used to differentiate the input directly
    def run(lib):
        t0 = lib.tensor([[-2.0]], dtype=lib.float32, requires_grad=True)
        t1 = lib.tanh(t0)
        t2 = lib.autograd.grad(t1.sum(), [t0], create_graph=True)[0]
        t1.sub_(0.5)
        try:
            t2.sum().backward()
        except RuntimeError as e:
            return type(e), str(e).split(", which is output")[0], t0.grad
        return None, None, t0.grad
    (kind, message, grad), (t_kind, t_message, t_grad) = both(run)
    assert kind is t_kind is RuntimeError
    assert message == t_message
    assert grad is None and t_grad is None
