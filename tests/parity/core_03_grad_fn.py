import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
for y in [x + w, x * w, x - 1, x / 2, -x, x ** 2, x.exp(), x.log(), x.sum(), x.mean(), x[0], x[1:],
          x.view(3, 1), x.unsqueeze(0), x.clone(), x.double(), x.relu(), x.tanh(), x.sigmoid(), x.abs(),
          x.sqrt(), x.expand(2, 3), x.unsqueeze(0).t()]:
    print(y.grad_fn.name(), y.requires_grad, y.is_leaf)
z = (x * w + x).sum()
print(z)
print(z.grad_fn)
print([f.name() for f, _ in z.grad_fn.next_functions])
print([[(f.name() if f is not None else None, i) for f, i in n.next_functions]
       for n, _ in z.grad_fn.next_functions])
print(x.grad_fn, x.is_leaf, x.requires_grad)
d = z.detach()
print(d.requires_grad, d.grad_fn, d.is_leaf)
