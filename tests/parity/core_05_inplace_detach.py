import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 1
print(y._version, y.grad_fn.name())
y.add_(1)
print(y._version, y.grad_fn.name())
y.mul_(x)
print(y._version, y.grad_fn.name())
y.sum().backward()
print(x.grad)
d = y.detach()
d.zero_()
print(y, y._version, d._version)
w = torch.tensor([1.0, 2.0], requires_grad=True)
with torch.no_grad():
    w.mul_(2)
print(w, w.is_leaf, w._version)
e = w.exp()
e.add_(1)
try:
    e.sum().backward()
except RuntimeError as err:
    print("RuntimeError", "modified by an inplace operation" in str(err))
v = (w * 2).detach_()
print(v.requires_grad, v.is_leaf)
