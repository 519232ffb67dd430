import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = x * 2
y.retain_grad()
z = (y * y + y.exp()).sum()
z.backward(retain_graph=True)
print(x.grad, y.grad)
g = x.grad
z.backward()
print(g is x.grad, x.grad, y.grad)
x.grad = None
(x * x).backward(torch.tensor([1.0, 0.5, -1.0]))
print(x.grad)
a = torch.tensor([1.0, 2.0], requires_grad=True)
b = torch.tensor([3.0, 4.0], requires_grad=True)
out = (a * b * b).sum()
out.backward(inputs=[b])
print(a.grad, b.grad)
ga, gb = torch.autograd.grad((a.exp() * b).sum(), [a, b])
print(ga, gb, a.grad)
print(torch.autograd.grad((a * 2).sum(), [a, b], allow_unused=True))
torch.autograd.backward([(a * a).sum(), (a * b).sum()])
print(a.grad)
seen = []
h = a * 3
h.register_hook(lambda g: seen.append(g.tolist()))
h.register_hook(lambda g: g * 2)
(h * h).sum().backward()
print(seen, a.grad)
