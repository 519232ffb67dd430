"""tests/test_dist_checkpoint.py's run on 8 simulated CPU devices: save from a fully sharded model, load into a
tensor-parallel one (another sharding). Argument: the checkpoint directory. JSON on stdout."""
import json
import os
import sys

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import tapegrad as torch  # noqa: E402
import tapegrad.distributed.checkpoint as dcp  # noqa: E402
from tapegrad import nn  # noqa: E402
from tapegrad.distributed.checkpoint.state_dict import (get_model_state_dict, get_optimizer_state_dict,  # noqa: E402
                                                        set_model_state_dict, set_optimizer_state_dict)
from tapegrad.distributed.device_mesh import init_device_mesh  # noqa: E402
from tapegrad.distributed.fsdp import fully_shard  # noqa: E402
from tapegrad.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module  # noqa: E402


def mlp():
    return nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))


def spec(t):
    return str(t._value.sharding.spec)


def main(path):
    torch.manual_seed(0)
    saved = fully_shard(mlp())
    opt = torch.optim.Adam(saved.parameters(), lr=0.01)
    x = torch.randn(4, 8)
    saved(x).pow(2).sum().backward()
    opt.step()
    dcp.save({"model": get_model_state_dict(saved), "optim": get_optimizer_state_dict(saved, opt)},
             checkpoint_id=path)
    at_save = {n: p.tolist() for n, p in get_model_state_dict(saved).items()}

    mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("tp",))
    loaded = parallelize_module(mlp(), mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()})
    opt2 = torch.optim.Adam(loaded.parameters(), lr=0.01)
    state = {"model": get_model_state_dict(loaded), "optim": get_optimizer_state_dict(loaded, opt2)}
    dcp.load(state, checkpoint_id=path)
    set_model_state_dict(loaded, state["model"])
    set_optimizer_state_dict(loaded, opt2, state["optim"])
    model_diff = max((a - b).abs().max().item() for a, b in zip(saved.parameters(), loaded.parameters()))
    state_diff = max((opt.state[a][k] - opt2.state[b][k]).abs().max().item()
                     for a, b in zip(saved.parameters(), loaded.parameters()) for k in ("exp_avg", "exp_avg_sq"))
    for o, m in ((opt, saved), (opt2, loaded)):   # one more step each: the same training
        o.zero_grad()
        m(x).pow(2).sum().backward()
        o.step()
    print(json.dumps({
        "saved_specs": [spec(p) for p in saved.parameters()], "loaded_specs": [spec(p) for p in loaded.parameters()],
        "model_diff": model_diff, "state_diff": state_diff,
        "next_diff": max((a - b).abs().max().item() for a, b in zip(saved.parameters(), loaded.parameters())),
        "files": sorted(os.listdir(path)),
        "params": at_save}))


if __name__ == "__main__":
    main(sys.argv[1])
