import torch

x = torch.tensor([1.0, 2.0], requires_grad=True)


@torch.no_grad()
def f(t):
    return t * 2


@torch.enable_grad()
def g(t):
    return t * 2


@torch.no_grad()
def gen():
    yield torch.is_grad_enabled()
    yield (x * 2).requires_grad


print(f(x).requires_grad, torch.is_grad_enabled())
with torch.no_grad():
    print(g(x).requires_grad, torch.is_grad_enabled())
print(list(gen()), torch.is_grad_enabled())
torch.set_grad_enabled(False)
print((x * 2).requires_grad, torch.is_grad_enabled())
torch.set_grad_enabled(True)
with torch.set_grad_enabled(False):
    print(torch.is_grad_enabled())
print(torch.is_grad_enabled())
with torch.inference_mode():
    t = x * 2
    print(torch.is_inference_mode_enabled(), t.requires_grad, t.is_inference())
print(torch.is_inference_mode_enabled(), t.is_inference(), x.is_inference())
try:
    x * t
except RuntimeError as err:
    print("RuntimeError", "Inference tensors cannot be saved for backward" in str(err))
