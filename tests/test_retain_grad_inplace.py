"""retain_grad() followed by an in-place op: the retained .grad is the gradient of the tensor's new value.

PyTorch binds a tensor's hooks to its grad_fn, so hooks registered before an in-place op see the gradient
of the old value, except the retains_grad hook, which moves to the new grad_fn (autograd mechanics,
"Behavior of Tensor hooks when Tensor is modified in-place"). Each case runs twice, so that both the
first sight (op by op) and the compiled step of its structure are compared.
"""
import pytest

from conftest import assert_close, both

CASES = {
    "in place on the tensor": """
y = x * 3
y.retain_grad()
y.mul_(2)
(y * 5).sum().backward()
""",
    "in place adding itself": """
y = x ** 3
y.retain_grad()
y.add_(y)
y.sum().backward()
""",
    "two in-place ops": """
y = x + 1
y.retain_grad()
y.mul_(2)
y.sub_(x)
(y * y).sum().backward()
""",
    "through a view of it": """
y = x * 1
y.retain_grad()
y[0].mul_(2)
(y * x).sum().backward()
""",
    "retained view, base written": """
y = x * 1
v = y[:2]
v.retain_grad()
y.mul_(2)
(v * 3).sum().backward()
""",
    "old value on the loss's path only": """
y = x * 2
y.retain_grad()
z = y * 3
y.add_(1)
z.sum().backward()
""",
    "autograd.grad": """
y = x * 3
y.retain_grad()
y.exp_()
torch.autograd.grad(y.sum(), [x])
""",
    "a hook before and retain_grad": """
y = x * 3
seen = []
y.register_hook(lambda g: seen.append(g.clone()))
y.retain_grad()
y.mul_(x)
y.sum().backward()
extra = seen[0]
""",
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_retained_grad_follows_the_in_place_op_as_in_torch(torch, name):
    def build(lib):
        out = []
        for _ in range(2):
            x = lib.tensor([1.0, 2.0, -0.5], dtype=lib.float64, requires_grad=True)
            env = {"torch": lib, "x": x}
            exec(CASES[name], env)
            y = env.get("v", env["y"])
            out.append((y.grad, x.grad, env.get("extra")))
        return out
    ours, theirs = both(build)
    for (grad, xgrad, extra), (tgrad, txgrad, textra) in zip(ours, theirs):
        assert (grad is None) == (tgrad is None)
        if tgrad is not None:
            assert_close(grad, tgrad)
        assert (xgrad is None) == (txgrad is None)
        if txgrad is not None:
            assert_close(xgrad, txgrad)
        if textra is not None:
            assert_close(extra, textra)


def test_two_retained_outputs_of_one_node_each_get_their_grad(torch):
    def build(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        grads = []
        for _ in range(2):
            a, b = (x * 1).unbind(0)
            a.retain_grad()
            b.retain_grad()
            (a * 2 + b * 3).backward()
            grads.append((a.grad, b.grad))
        return grads
    ours, theirs = both(build)
    for (a, b), (ta, tb) in zip(ours, theirs):
        assert_close(a, ta)
        assert_close(b, tb)


def test_grad_of_a_non_leaf_warns_in_torchs_words(torch):
    import warnings

    def build(lib):
        y = lib.ones(2, requires_grad=True) * 2
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert y.grad is None
        return str(caught[0].message).split(" (Triggered internally")[0]
    ours, theirs = both(build)
    assert ours == theirs
