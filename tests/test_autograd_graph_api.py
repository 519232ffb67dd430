"""autograd's graph API as PyTorch's, case by case against it (printed output and errors; tapegrad may add a
sentence on how to fix an error): leaf hooks and post-accumulate hooks under backward(inputs=...) and
autograd.grad (with and without create_graph), a non-leaf input's gradient accumulated once (PyTorch retains it
and runs its node), grad_fn._saved_<name> as PyTorch unpacks it (a leaf itself, else a tensor with its
history), grad_fn._raw_saved_<name>.register_hooks, autograd.graph.register_multi_grad_hook and
increment_version."""
import pytest
import torch

import tapegrad as tg
from conftest import run_code

CASES = {
    "leaf hook, backward(inputs=)": """
a = lib.ones(2, requires_grad=True); b = lib.ones(2, requires_grad=True)
a.register_hook(lambda g: print("hook a", g)); b.register_hook(lambda g: print("hook b", g))
(a * b * 2).sum().backward(inputs=(a,))
print(a.grad, b.grad)""",
    "leaf hook changes backward(inputs=)": """
a = lib.ones(2, requires_grad=True); a.register_hook(lambda g: g * 10)
(a * 2).sum().backward(inputs=[a]); print(a.grad)""",
    "leaf hook changes autograd.grad": """
a = lib.ones(2, requires_grad=True); a.register_hook(lambda g: g * 10)
print(lib.autograd.grad((a * 2).sum(), a))""",
    "leaf hook changes autograd.grad, create_graph": """
a = lib.ones(2, requires_grad=True); a.register_hook(lambda g: g * 10)
print(lib.autograd.grad((a * a).sum(), a, create_graph=True))""",
    "leaf hook changes backward(inputs=), create_graph": """
a = lib.ones(2, requires_grad=True); a.register_hook(lambda g: g * 10)
(a * a).sum().backward(inputs=[a], create_graph=True); print(a.grad)""",
    "post-accumulate hook, backward(inputs=)": """
a = lib.ones(2, requires_grad=True); a.register_post_accumulate_grad_hook(lambda t: print("post", t.grad))
(a * 2).sum().backward(inputs=[a])""",
    "post-accumulate hook, backward(inputs=), create_graph": """
a = lib.ones(2, requires_grad=True); a.register_post_accumulate_grad_hook(lambda t: print("post", t.grad))
(a * a).sum().backward(inputs=[a], create_graph=True)""",
    "non-leaf input that retains its grad": """
a = lib.ones(2, requires_grad=True); c = a * 3
c.register_hook(lambda g: print("c", g)); c.retain_grad()
(c * 2).sum().backward(inputs=[c]); print(c.grad, a.grad)""",
    "non-leaf input, create_graph": """
a = lib.ones(2, requires_grad=True); c = a * 3; c.retain_grad()
(c * c).sum().backward(inputs=[c], create_graph=True); print(c.grad, a.grad, c.retains_grad)""",
    "a non-leaf input's node runs and is freed": """
a = lib.ones(2, requires_grad=True); c = a * 3
(c * 2).sum().backward(inputs=[c]); print(c.grad, c.retains_grad)
(c * 2).sum().backward()""",
    "existing grad accumulates": """
a = lib.ones(2, requires_grad=True); a.grad = lib.tensor([5., 5.])
(a * 2).sum().backward(inputs=[a]); print(a.grad)
(a * 2).sum().backward(inputs=a); print(a.grad)""",
    "an input that does not require grad": """
a = lib.ones(2, requires_grad=True)
(a * 2).sum().backward(inputs=[lib.ones(2)])""",
    "an input outside the graph": """
a = lib.ones(2, requires_grad=True); b = lib.ones(2, requires_grad=True)
(a * 2).sum().backward(inputs=[b]); print(a.grad, b.grad)""",
    "saved leaf is the leaf": """
x = lib.ones(2, requires_grad=True); y = x.pow(2)
print(y.grad_fn._saved_self.equal(x), x is y.grad_fn._saved_self)
y = x.exp(); print(y.equal(y.grad_fn._saved_result), y is y.grad_fn._saved_result, y.grad_fn._saved_result)""",
    "saved non-leaf has its history": """
x = lib.ones(2, requires_grad=True); z = x * 3; y = z * z
s = y.grad_fn._saved_self; print(s, s.grad_fn is z.grad_fn)
with lib.no_grad(): z.add_(1)
y.grad_fn._saved_self""",
    "raw saved tensor hooks": """
a = lib.ones(2, requires_grad=True); b = lib.ones(2, requires_grad=True) * 2; y = a * b
def pack(x):
    print("Packing", x); return x
def unpack(x):
    print("Unpacking", x); return x
r = y.grad_fn._raw_saved_self
r.register_hooks(pack, unpack)
print(y.grad_fn._saved_self)
y.sum().backward(); print(a.grad)
r.register_hooks(pack, unpack)""",
    "raw saved tensor hooks set twice": """
a = lib.ones(2, requires_grad=True); y = a * a
y.grad_fn._raw_saved_self.register_hooks(lambda x: x, lambda x: x)
y.grad_fn._raw_saved_self.register_hooks(lambda x: x, lambda x: x)""",
    "raw saved tensor unpack returning no tensor": """
a = lib.ones(2, requires_grad=True); y = a * a
y.grad_fn._raw_saved_self.register_hooks(lambda x: 1, lambda x: 2)
y.sum().backward()""",
    "multi-grad hook, all": """
a = lib.ones(2, 3, requires_grad=True); b = lib.ones(2, 3, requires_grad=True) * 1
c = a * b; d = a * b
lib.autograd.graph.register_multi_grad_hook((a, b, c, d), lambda grads: print([g is not None for g in grads]))
c.sum().backward(retain_graph=True)
c.sum().backward(inputs=(a,), retain_graph=True)
(c.sum() + d.sum()).backward()""",
    "multi-grad hook, any, removed": """
a = lib.ones(2, requires_grad=True); b = lib.ones(2, requires_grad=True)
h = lib.autograd.graph.register_multi_grad_hook((a, b), lambda g: print("first", g), mode="any")
(a * b).sum().backward(); (a * 2).sum().backward(); h.remove(); (a * b).sum().backward()""",
    "multi-grad hook, bad mode": """
lib.autograd.graph.register_multi_grad_hook((lib.ones(2, requires_grad=True),), print, mode="some")""",
    "increment_version": """
x = lib.ones(2, requires_grad=True); y = x * 2
lib.autograd.graph.increment_version(x); print(x._version)
lib.autograd.graph.increment_version([x, y]); print(x._version, y._version)""",
    "hook on the output itself": """
t0 = lib.tensor(1.5, requires_grad=True); t0.register_hook(lambda g: g * 2)
print(lib.autograd.grad(t0, [t0], retain_graph=True)[0])
t0.backward(); print(t0.grad)
(t0 * 1).backward(inputs=[t0]); print(t0.grad)""",
    "hook on a wanted non-leaf": """
a = lib.ones(2, requires_grad=True); c = a * 3; c.register_hook(lambda g: g * 2)
print(lib.autograd.grad(c.sum(), [c]), lib.autograd.grad(c, [c], lib.ones(2)))""",
    "Node's path": "print(lib.autograd.graph.Node, isinstance(lib.ones(1, requires_grad=True).exp().grad_fn, "
                   "lib.autograd.graph.Node))",
}


@pytest.mark.parametrize("case", CASES)
def test_as_pytorch(case):
    assert run_code(tg, CASES[case], _first_sentence) == run_code(torch, CASES[case], _first_sentence)


def _first_sentence(error):
    return str(error).split(". ")[0]
