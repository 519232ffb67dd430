import torch

# Learn the Basics: automatic differentiation with torch.autograd
torch.manual_seed(0)
x = torch.ones(5)
y = torch.zeros(3)
w = torch.randn(5, 3, requires_grad=True)
b = torch.randn(3, requires_grad=True)
z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
print(f"Gradient function for z = {z.grad_fn}")
print(f"Gradient function for loss = {loss.grad_fn}")
loss.backward()
print(w.grad)
print(b.grad)
z = torch.matmul(x, w) + b
print(z.requires_grad)
with torch.no_grad():
    z = torch.matmul(x, w) + b
print(z.requires_grad)
z = torch.matmul(x, w) + b
z_det = z.detach()
print(z_det.requires_grad)
inp = torch.eye(4, 5, requires_grad=True)
out = (inp + 1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\n{inp.grad}")
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nSecond call\n{inp.grad}")
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nCall after zeroing gradients\n{inp.grad}")
# A gentle introduction to torch.autograd
a = torch.tensor([2., 3.], requires_grad=True)
b = torch.tensor([6., 4.], requires_grad=True)
Q = 3 * a ** 3 - b ** 2
external_grad = torch.tensor([1., 1.])
Q.backward(gradient=external_grad)
print(9 * a ** 2 == a.grad)
print(-2 * b == b.grad)
x = torch.rand(5, 5)
y = torch.rand(5, 5)
z = torch.rand((5, 5), requires_grad=True)
a = x + y
print(f"Does `a` require gradients?: {a.requires_grad}")
b = x + z
print(f"Does `b` require gradients?: {b.requires_grad}")
# autograd mechanics: hooks, grad, higher order
x = torch.tensor([1., 2., 3.], requires_grad=True)
y = (x ** 3).sum()
(g,) = torch.autograd.grad(y, x, create_graph=True)
print(g, g.grad_fn)
(h,) = torch.autograd.grad(g.sum(), x)
print(h)
v = torch.tensor([0.5, 1.0, 2.0], requires_grad=True)
v.register_hook(lambda grad: grad * 2)
(v * v).sum().backward()
print(v.grad)
print(x.is_leaf, g.is_leaf, (x * 2).is_leaf, x.detach().is_leaf)
with torch.enable_grad():
    print((x * 2).requires_grad)
with torch.inference_mode():
    print((x * 2).requires_grad, torch.is_inference_mode_enabled())
torch.set_grad_enabled(False)
print((x * 2).requires_grad, torch.is_grad_enabled())
torch.set_grad_enabled(True)
print(torch.autograd.functional.jacobian(lambda t: t ** 2, torch.tensor([1., 2.])))
print(torch.autograd.functional.hessian(lambda t: (t ** 3).sum(), torch.tensor([1., 2.])))
