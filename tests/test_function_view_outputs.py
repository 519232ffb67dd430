"""Views that a custom Function returns, as PyTorch treats them: modifying one in place (or its base, then
reading its history) is refused, with PyTorch's words for one differentiable output ("created inside a custom
Function") and for several ("the output of a function that returns multiple views"); a repr of a tensor whose
history can no longer be read shows grad_fn=<Invalid>."""
import pytest
import torch

import tapegrad as tg
from conftest import run_code

FUNCTION = """
class F(lib.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        out = OUTPUTS
        if isinstance(out, tuple):
            ctx.mark_non_differentiable(*[o for o in out if not o.is_floating_point()])
        return out
    @staticmethod
    def backward(ctx, *grads):
        return grads[0].reshape(2)
x = lib.tensor([1., 2.], requires_grad=True)
"""

CASES = {
    "one view, modified": ("x.view(2, 1)", "y = F.apply(x.clone()); y.mul_(2)"),
    "input returned as-is": ("x", "y = F.apply(x.clone()); y.mul_(2)"),
    "base modified, history read": ("x.view(2, 1)", "b = x.clone(); y = F.apply(b); b.mul_(2); print(y.grad_fn)"),
    "view of the output": ("x.view(2, 1)", "y = F.apply(x.clone()); y.view(2).mul_(2)"),
    "selected element, no_grad write": ("x[0]", "y = F.apply(x.clone())\nwith lib.no_grad(): y.mul_(2)\nprint(y)"),
    "detached alias written": ("x.view(2, 1)", "y = F.apply(x.clone()); y.detach().mul_(2); print(y)"),
    "gradient still flows": ("x.view(2, 1)", "y = F.apply(x.clone()); y.sum().backward(); print(x.grad, y._base is None)"),
    "two views": ("(x.view(2, 1), x.view(1, 2))", "y, z = F.apply(x.clone()); z.add_(1)"),
    "view beside a new tensor": ("(x.view(2, 1), x * 2)", "y, z = F.apply(x.clone()); z.add_(1); y.add_(1)"),
    "new tensor beside a view": ("(x * 2, x.view(2, 1))", "y, z = F.apply(x.clone()); y.add_(1); z.add_(1)"),
    "a non-differentiable second view": ("(x.view(2, 1), lib.arange(2).view(2))",
                                         "y, i = F.apply(x.clone()); i.add_(1); y.add_(1)"),
    "input as-is beside a view": ("(x.view(2, 1), x)", "y, z = F.apply(x.clone()); z.add_(1)"),
    "nothing requires grad": ("x.view(2, 1)", "y = F.apply(x.detach().clone()); y.mul_(2); print(y, y.grad_fn)"),
    "applied under no_grad": ("x.view(2, 1)", "with lib.no_grad(): y = F.apply(x.clone())\ny.mul_(2); print(y)"),
}


@pytest.mark.parametrize("case", CASES)
def test_function_view_outputs_as_pytorch(case):
    outputs, use = CASES[case]
    code = FUNCTION.replace("OUTPUTS", outputs) + use
    assert run_code(tg, code) == run_code(torch, code)


@pytest.mark.parametrize("code", [
    "base = x.clone(); v, _ = base.unbind(); base.detach().mul_(2)",
    "base = x.clone()\nwith lib.no_grad(): v = base[:1]\nbase.detach().mul_(2)",
])
def test_repr_of_a_history_that_cannot_be_read(code):
    def shown(lib):
        env = {"lib": lib, "x": lib.tensor([1., 2.], requires_grad=True)}
        exec(code, env)
        return repr(env["v"]).replace("tapegrad", "torch")
    assert shown(tg) == shown(torch)
    assert "grad_fn=<Invalid>" in shown(tg)
