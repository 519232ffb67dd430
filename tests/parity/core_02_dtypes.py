import torch

for d in [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
          torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128]:
    print(d, d.is_floating_point, d.is_complex, d.itemsize)
print(torch.float, torch.double, torch.half, torch.long, torch.int, torch.short, torch.cfloat)
print(torch.promote_types(torch.uint8, torch.int8), torch.promote_types(torch.float16, torch.bfloat16))
i = torch.tensor([1, 2])
f = torch.tensor([1.0, 2.0])
print((i + 1).dtype, (i * 2.5).dtype, (i / 2).dtype, (i + torch.tensor(1.5, dtype=torch.float64)).dtype)
print((f + torch.tensor(1.0, dtype=torch.float64)).dtype, (f + torch.tensor([1.0], dtype=torch.float64)).dtype)
print((i == 1).dtype, (torch.tensor([True]) + True).dtype, (i.to(torch.uint8) + torch.tensor(1, dtype=torch.int8)).dtype)
print(f.double(), f.half(), f.long(), f.int(), f.bool(), f.to(torch.int16), i.float())
print(f.to(i), f.to("cpu", torch.float64), f.to(dtype=torch.bfloat16))
torch.set_default_dtype(torch.float64)
print(torch.tensor([1.5]), torch.zeros(1).dtype, torch.arange(0.0, 1.0).dtype, torch.get_default_dtype())
torch.set_default_dtype(torch.float32)
print(torch.tensor([1.5]), torch.get_default_dtype())
