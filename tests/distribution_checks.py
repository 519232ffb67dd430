"""What the distribution tests share: a function of distribution parameters run under tapegrad and under
torch.distributions, its values and its gradients compared."""
import warnings

import numpy as np

import tapegrad
import tapegrad.distributions as TD

from conftest import require

torch = require("torch")
PD = torch.distributions


def run(lib, fn, arrays, dtype=np.float64):
    """(fn's values, each parameter's gradient or None): fn(lib, distributions, *parameters) -> one tensor,
    the parameters made from `arrays` as tensors that require grad (PyTorch's warnings silenced)."""
    tensors = [lib.tensor(np.asarray(a, dtype=dtype), requires_grad=True) for a in arrays]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(lib, TD if lib is tapegrad else PD, *tensors)
    out.sum().backward()
    grads = [None if t.grad is None else t.grad.numpy() for t in tensors]
    return out.detach().numpy(), grads


def same_as_torch(fn, *arrays, rtol=1e-7, dtype=np.float64):
    ours, our_grads = run(tapegrad, fn, arrays, dtype)
    theirs, their_grads = run(torch, fn, arrays, dtype)
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=1e-10)
    for k, (o, t) in enumerate(zip(our_grads, their_grads)):
        assert (o is None) == (t is None), f"input {k}: gradient {o} vs PyTorch's {t}"
        if t is not None:
            np.testing.assert_allclose(o, t, rtol=rtol * 10, atol=1e-9, err_msg=f"gradient of input {k}")


def v(lib, values):
    return lib.tensor(values, dtype=lib.float64)


def flat(lib, *tensors):
    """One vector of everything computed (so that one backward reaches every input)."""
    return lib.cat([t.reshape(-1) for t in tensors])
