import torch


def check(label, fn, phrase):
    try:
        fn()
        print(label, "no error")
    except Exception as e:
        print(label, type(e).__name__, phrase.lower() in str(e).lower())


def twice():
    y = torch.ones(2, requires_grad=True).exp().sum()
    y.backward()
    y.backward()


check("int grad", lambda: torch.tensor([1, 2], requires_grad=True),
      "only Tensors of floating point and complex dtype can require gradients")
check("implicit", lambda: (torch.ones(2, requires_grad=True) * 2).backward(),
      "grad can be implicitly created only for scalar outputs")
check("twice", twice, "backward through the graph a second time")
check("leaf inplace", lambda: torch.ones(2, requires_grad=True).add_(1),
      "a leaf Variable that requires grad is being used in an in-place operation")
check("numpy", lambda: torch.ones(2, requires_grad=True).numpy(), "Can't call numpy() on Tensor that requires grad")
check("no grad", lambda: torch.ones(2).sum().backward(), "does not require grad")
check("non-leaf flag", lambda: (torch.ones(2, requires_grad=True) * 2).requires_grad_(False),
      "you can only change requires_grad flags of leaf variables")
check("item", lambda: torch.ones(2).item(), "cannot be converted to Scalar")
check("bool", lambda: bool(torch.ones(2)), "is ambiguous")
check("float", lambda: float(torch.ones(2)), "only one element tensors")
check("len", lambda: len(torch.tensor(1.0)), "len() of a 0-d tensor")
check("arange", lambda: torch.arange(3, 0), "upper bound and lower bound inconsistent with step sign")
check("ragged", lambda: torch.tensor([[1, 2], [3]]), "expected sequence of length 2 at dim 1 (got 1)")
check("rand int", lambda: torch.rand(2, dtype=torch.int64), "not implemented for 'Long'")
