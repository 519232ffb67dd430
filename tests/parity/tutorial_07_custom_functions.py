import torch
from torch.autograd import Function, gradcheck

# Extending PyTorch: custom autograd Functions (the docs' examples)
class LinearFunction(Function):
    @staticmethod
    def forward(input, weight, bias):
        output = input.mm(weight.t())
        if bias is not None:
            output += bias.unsqueeze(0).expand_as(output)
        return output

    @staticmethod
    def setup_context(ctx, inputs, output):
        input, weight, bias = inputs
        ctx.save_for_backward(input, weight, bias)

    @staticmethod
    def backward(ctx, grad_output):
        input, weight, bias = ctx.saved_tensors
        grad_input = grad_weight = grad_bias = None
        if ctx.needs_input_grad[0]:
            grad_input = grad_output.mm(weight)
        if ctx.needs_input_grad[1]:
            grad_weight = grad_output.t().mm(input)
        if bias is not None and ctx.needs_input_grad[2]:
            grad_bias = grad_output.sum(0)
        return grad_input, grad_weight, grad_bias


class MulConstant(Function):
    @staticmethod
    def forward(ctx, tensor, constant):
        ctx.constant = constant
        return tensor * constant

    @staticmethod
    def backward(ctx, grad_output):
        return grad_output * ctx.constant, None


class MyCube(Function):
    @staticmethod
    def forward(x):
        result = x ** 3
        dx = 3 * x ** 2
        return result, dx

    @staticmethod
    def setup_context(ctx, inputs, output):
        x, = inputs
        result, dx = output
        ctx.save_for_backward(x, dx)

    @staticmethod
    def backward(ctx, grad_output, grad_dx):
        x, dx = ctx.saved_tensors
        result = grad_output * dx + grad_dx * 6 * x
        return result


class Exp(Function):
    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result


torch.manual_seed(0)
linear = LinearFunction.apply
input = (torch.randn(20, 20, dtype=torch.double, requires_grad=True),
         torch.randn(30, 20, dtype=torch.double, requires_grad=True), None)
print(gradcheck(linear, input, eps=1e-6, atol=1e-4))
x = torch.randn(3, 4, requires_grad=True)
w = torch.randn(2, 4, requires_grad=True)
b = torch.randn(2, requires_grad=True)
y = linear(x, w, b)
print(y.grad_fn, y.grad_fn.name())
y.sum().backward()
print(x.grad, w.grad, b.grad)
z = MulConstant.apply(x, 3.0)
print(z.grad_fn.name(), z.requires_grad)
z.sum().backward()
print(x.grad)
c = torch.tensor([1.0, 2.0], requires_grad=True)
r, dx = MyCube.apply(c)
(g,) = torch.autograd.grad(r.sum(), c, create_graph=True)
print(r, dx, g)
(gg,) = torch.autograd.grad(g.sum(), c)
print(gg)
e = Exp.apply(torch.tensor([0.0, 1.0], requires_grad=True))
print(e, e.grad_fn.name())
with torch.no_grad():
    print(Exp.apply(torch.ones(1, requires_grad=True)).requires_grad)
print(gradcheck(MulConstant.apply, (torch.randn(3, dtype=torch.double, requires_grad=True), 2.0)))
print(torch.autograd.gradgradcheck(lambda t: MyCube.apply(t)[0],
                                   (torch.randn(3, dtype=torch.double, requires_grad=True),)))
