"""tests/test_distributed.py's fully_shard run: one process with four simulated CPU devices (JSON on stdout)."""
import json
import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"

import numpy as np  # noqa: E402

import tapegrad as torch  # noqa: E402
from tapegrad.distributed.fsdp import fully_shard, memory_per_device  # noqa: E402


def main():
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((12, 6)), dtype=torch.float32)
    y = torch.tensor(rng.standard_normal((12, 4)), dtype=torch.float32)
    model = torch.nn.Sequential(torch.nn.Linear(6, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)) * 0.5, dtype=torch.float32))
    before = memory_per_device(model)
    fully_shard(model)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    print(json.dumps({
        "losses": losses, "params": [p.tolist() for p in model.parameters()],
        "before": before, "after": memory_per_device(model), "with_optimizer": memory_per_device(model, opt),
        "param_specs": [str(p._value.sharding.spec) for p in model.parameters()],
        "grad_specs": [str(p.grad._value.sharding.spec) for p in model.parameters()],
        "state_specs": [str(v._value.sharding.spec) for p in model.parameters() for v in opt.state[p].values()
                        if v.dim()]}))


if __name__ == "__main__":
    main()
