"""Run by tests/test_data_parallel.py in a subprocess with 8 simulated CPU devices (XLA_FLAGS must be set
before JAX starts); prints one JSON object of results."""
import json
import os
import sys

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import jax  # noqa: E402
import numpy as np  # noqa: E402

import tapegrad as torch  # noqa: E402
from tapegrad import _programs  # noqa: E402

results = {"device_count": jax.device_count()}


def make():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))


X, Y = torch.randn(32, 4), torch.randint(0, 3, (32,))


def train(opt_cls, wrap, compiled=False, steps=4):
    model = make()
    net = torch.nn.DataParallel(model) if wrap else model
    opt = opt_cls(net.parameters(), lr=0.05)

    def step(x, y):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()
        return loss
    step = torch.compile(step) if compiled else step
    losses = [step(X, Y).item() for _ in range(steps)]
    return net, model, opt, losses


def max_diff(a, b):
    return max(float(np.abs(p.detach().numpy() - q.detach().numpy()).max())
               for p, q in zip(a.parameters(), b.parameters()))


# Record every program call (the jitted function and its arguments) to read the compiled HLO afterwards.
calls = []
_run = _programs.Program.run


def recording_run(self, args, wait=False, defer=False):
    calls.append((self.jitted, args))
    return _run(self, args, wait, defer)


for name, compiled in (("SGD", False), ("Adam", False), ("Adam_compiled", True)):
    opt_cls = getattr(torch.optim, name.split("_")[0])
    single, _, _, single_losses = train(opt_cls, False, compiled)
    if name == "SGD":
        _programs.Program.run = recording_run
    net, model, opt, losses = train(opt_cls, True, compiled)
    _programs.Program.run = _run
    results[name] = {
        "max_param_diff": max_diff(single, model),
        "losses": [single_losses, losses],
        "param_specs": sorted({str(p._value.sharding.spec) for p in model.parameters()}),
        "param_devices": sorted({len(p._value.sharding.device_set) for p in model.parameters()}),
        "grad_specs": sorted({str(p.grad._value.sharding.spec) for p in model.parameters()}),
        "state_devices": sorted({len(v._value.sharding.device_set) for s in opt.state.values()
                                 for v in s.values() if isinstance(v, torch.Tensor)}),
    }
    if name == "SGD":
        out = net(X)
        results["output_spec"] = str(out._value.sharding.spec)
        results["keys"] = list(net.state_dict())
        hlo = ""
        for jitted, args in calls:
            try:
                hlo += jitted.lower(*args).compile().as_text()
            except Exception:   # a call that failed for mixed devices and was retried
                pass
        results["all_reduce"] = "all-reduce" in hlo

# The batch dimension may be another one; an input whose size does not divide is replicated.
lin = torch.nn.Linear(3, 2)
dp = torch.nn.DataParallel(lin, dim=1)
x = torch.randn(3, 8, 3)
out = dp(x.transpose(0, 1))
results["dim1"] = float(np.abs(out.detach().numpy() - lin(x.transpose(0, 1)).detach().numpy()).max())
results["uneven"] = float(np.abs(torch.nn.DataParallel(lin)(torch.ones(5, 3)).detach().numpy()
                                 - lin(torch.ones(5, 3)).detach().numpy()).max())
# an input that requires grad gets its gradient back through the split
xg, xs = torch.randn(8, 3, requires_grad=True), None
torch.nn.DataParallel(lin)(xg).pow(2).sum().backward()
xs = xg.detach().clone().requires_grad_()
lin(xs).pow(2).sum().backward()
results["input_grad"] = float(np.abs(xg.grad.numpy() - xs.grad.numpy()).max())
results["device_ids"] = torch.nn.DataParallel(lin).device_ids
results["device_ids_subset"] = torch.nn.DataParallel(lin, device_ids=[0, 1]).device_ids
json.dump(results, sys.stdout)
