import torch

i = torch.tensor([1, 2])
print((i * 0.5).dtype, (i / 2).dtype)
torch.set_default_dtype(torch.float64)
print((i * 0.5).dtype, (i / 2).dtype, (torch.tensor(3) + 1.5).dtype)
torch.set_default_dtype(torch.float16)
print((i * 0.5).dtype, (i / 2).dtype)
torch.set_default_dtype(torch.float32)
print((i * 0.5).dtype, (i / 2).dtype)
