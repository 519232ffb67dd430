"""tests/test_fsdp_api.py's run on 8 simulated CPU devices (JSON on stdout)."""
import functools
import json
import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import tapegrad as torch  # noqa: E402
from tapegrad import nn  # noqa: E402
from tapegrad.distributed.device_mesh import init_device_mesh  # noqa: E402
from tapegrad.distributed.fsdp import FullyShardedDataParallel, fully_shard  # noqa: E402
from tapegrad.distributed.fsdp.wrap import transformer_auto_wrap_policy  # noqa: E402
from tapegrad.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module  # noqa: E402


def spec(t):
    return str(t._value.sharding.spec)


def main():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16))
    result = {"init": {n: p.tolist() for n, p in model.named_parameters()}}
    model = FullyShardedDataParallel(model, auto_wrap_policy=functools.partial(
        transformer_auto_wrap_policy, transformer_layer_cls={nn.Linear}))
    x = torch.randn(16, 8)
    result["x"] = x.tolist()
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    result["losses"] = []
    for _ in range(2):
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        result["losses"].append(loss.item())
    result["final"] = {n: p.tolist() for n, p in model.state_dict().items()}
    result["specs"] = {n: spec(p) for n, p in model.state_dict().items()}
    result["grad_devices"] = [len(p.grad._value.sharding.device_set) for p in model.parameters()]
    # loading a state dict keeps the parameters sharded (copy_ keeps the destination's devices)
    fresh = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16))
    model.load_state_dict(fresh.state_dict())
    result["loaded_specs"] = [spec(p) for p in model.state_dict().values()]
    result["loaded_equal"] = all(bool((a == b).all()) for a, b in zip(model.state_dict().values(),
                                                                     fresh.state_dict().values()))

    # FSDP over "dp" on top of tensor parallelism over "tp" (PyTorch's fsdp_tp_example layout)
    mesh = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
    torch.manual_seed(1)
    mlp = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
    x = torch.randn(4, 8)
    expected = mlp(x).detach()
    parallelize_module(mlp, mesh["tp"], {"0": ColwiseParallel(), "2": RowwiseParallel()})
    fully_shard(mlp, mesh=mesh["dp"])
    result["fsdp_tp_specs"] = [spec(p) for p in mlp.parameters()]
    result["fsdp_tp_placements"] = [[repr(q) for q in p.placements] for p in mlp.parameters()]
    result["fsdp_tp_diff"] = (mlp(x) - expected).abs().max().item()
    torch.manual_seed(1)   # the same with the wrapper class (PyTorch's fsdp_tp_example)
    mlp = parallelize_module(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8)), mesh["tp"],
                             {"0": ColwiseParallel(), "2": RowwiseParallel()})
    wrapped = FullyShardedDataParallel(mlp, device_mesh=mesh["dp"], use_orig_params=True)
    result["fsdp_class_tp_specs"] = [spec(p) for p in wrapped.parameters()]
    result["fsdp_class_tp_diff"] = (wrapped(x) - expected).abs().max().item()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
