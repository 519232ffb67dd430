"""One rank of tests/test_distributed.py: the same script under tapegrad's launcher and under torchrun.

`DIST_LIB=tapegrad` imports tapegrad as torch, otherwise PyTorch; results go to <out>/rank<r>.json.
"""
import json
import os
import sys

import numpy as np

if os.environ.get("DIST_LIB") == "tapegrad":
    import tapegrad as torch
else:
    import torch
    import torch.distributed  # noqa: F401
dist = torch.distributed
DDP = torch.nn.parallel.DistributedDataParallel
DataLoader, DistributedSampler, TensorDataset = (torch.utils.data.DataLoader, torch.utils.data.DistributedSampler,
                                                 torch.utils.data.TensorDataset)

def collectives(rank, world):
    out = {}
    t = torch.arange(4, dtype=torch.float32) * (rank + 1)
    dist.all_reduce(t)
    out["sum"] = t.tolist()
    for name in ("PRODUCT", "MIN", "MAX"):
        t = torch.tensor([rank + 2, 5 - rank, -rank], dtype=torch.int64)
        dist.all_reduce(t, op=getattr(dist.ReduceOp, name))
        out[name] = [t.tolist(), str(t.dtype)]
    t = torch.tensor([6 + rank, 3], dtype=torch.int32)
    dist.all_reduce(t, op=dist.ReduceOp.BAND)
    out["band"] = t.tolist()
    t = torch.full((2, 3), float(rank))
    dist.broadcast(t, src=1)
    out["broadcast"] = t.tolist()
    t = torch.full((2,), float(rank * 10))
    dist.reduce(t, dst=0)
    out["reduce"] = t.tolist()
    into = [torch.zeros(2) for _ in range(world)] if rank == 1 else None
    dist.gather(torch.full((2,), rank + 7.0), into, dst=1)
    out["gather"] = None if into is None else [g.tolist() for g in into]
    part = torch.zeros(2, dtype=torch.int64)
    dist.scatter(part, [torch.full((2,), 5 * i, dtype=torch.int64) for i in range(world)] if rank == 0 else None,
                 src=0)
    out["scatter"] = part.tolist()
    gathered = [torch.zeros(3) for _ in range(world)]
    dist.all_gather(gathered, torch.arange(3, dtype=torch.float32) + rank)
    out["all_gather"] = [g.tolist() for g in gathered]
    big = torch.zeros(world * 2, 2)
    dist.all_gather_into_tensor(big, torch.full((2, 2), rank + 0.5))
    out["all_gather_into_tensor"] = big.tolist()
    part = torch.zeros(2)
    dist.reduce_scatter_tensor(part, torch.arange(2.0 * world) * (rank + 1))
    out["reduce_scatter_tensor"] = part.tolist()
    objs = [None] * world
    dist.all_gather_object(objs, {"rank": rank, "name": "r" * (rank + 1)})
    out["all_gather_object"] = objs
    lst = [rank, f"from {rank}"]
    dist.broadcast_object_list(lst, src=1)
    out["broadcast_object_list"] = lst
    dist.barrier()
    return out


def train(rank, world):
    """A small MLP under DDP: ranks start from different weights (rank 0's are broadcast), take their
    DistributedSampler share of the batches, and the last step accumulates two batches under no_sync."""
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((32, 5)), dtype=torch.float32)
    y = torch.tensor(rng.standard_normal((32, 3)), dtype=torch.float32)
    model = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 3))
    init = np.random.default_rng(100 + rank)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.tensor(init.standard_normal(tuple(p.shape)), dtype=torch.float32))
    ddp = DDP(model)
    opt = torch.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    sampler = DistributedSampler(TensorDataset(x, y), shuffle=False)
    loader = DataLoader(TensorDataset(x, y), batch_size=8, sampler=sampler)
    losses = []
    for epoch in range(2):
        sampler.set_epoch(epoch)
        if epoch == 0:   # a step per batch
            for xb, yb in loader:
                opt.zero_grad()
                loss = torch.nn.functional.mse_loss(ddp(xb), yb)
                loss.backward()
                opt.step()
                losses.append(loss.item())
        else:   # one step over both batches: the first one's gradients stay local (no_sync)
            (xa, ya), (xb, yb) = list(loader)
            opt.zero_grad()
            with ddp.no_sync():
                (0.5 * torch.nn.functional.mse_loss(ddp(xa), ya)).backward()
            loss = 0.5 * torch.nn.functional.mse_loss(ddp(xb), yb)
            loss.backward()
            opt.step()
            losses.append(loss.item())
    grads = [p.grad.tolist() for p in model.parameters()]
    if os.environ.get("DIST_LIB") == "tapegrad":   # the replica spans this process's four devices
        spread = {"params": [len(p._value.sharding.device_set) for p in model.parameters()],
                  "grads": [len(p.grad._value.sharding.device_set) for p in model.parameters()]}
    else:
        spread = None
    return {"spread": spread, "params": [p.tolist() for p in model.parameters()], "grads": grads, "losses": losses,
            "indices": list(sampler), "state_keys": list(ddp.state_dict().keys())}


def main():
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    result = {"rank": rank, "world": world, "initialized": dist.is_initialized(), "backend": dist.get_backend()}
    result.update(collectives(rank, world))
    result["train"] = train(rank, world)
    with open(os.path.join(sys.argv[1], f"rank{rank}.json"), "w") as f:
        json.dump(result, f)
    dist.barrier()   # no rank tears its connections down while another still uses them (gloo aborts then)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
