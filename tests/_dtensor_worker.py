"""tests/test_dtensor.py's run on 8 simulated CPU devices: a tensor-parallel model trained for two steps
(initial parameters, outputs, gradients and shardings as JSON on stdout; the test runs PyTorch's unsharded
model from the same parameters)."""
import json
import os

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"

import tapegrad as torch  # noqa: E402
from tapegrad import nn  # noqa: E402
from tapegrad.distributed.device_mesh import init_device_mesh  # noqa: E402
from tapegrad.distributed.tensor import DTensor, Replicate, Shard, distribute_tensor  # noqa: E402
from tapegrad.distributed.tensor.parallel import (ColwiseParallel, PrepareModuleInput, RowwiseParallel,  # noqa: E402
                                                  SequenceParallel, parallelize_module)


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(40, 16)
        self.norm = nn.LayerNorm(16)
        self.w1 = nn.Linear(16, 32)
        self.w2 = nn.Linear(32, 16)
        self.out = nn.Linear(16, 40, bias=False)

    def forward(self, ids):
        h = self.norm(self.tok(ids))
        return self.out(h + self.w2(torch.relu(self.w1(h))))


PLAN = {"tok": RowwiseParallel(input_layouts=Replicate(), output_layouts=Shard(1)),
        "norm": SequenceParallel(use_local_output=True),
        "w1": ColwiseParallel(input_layouts=Shard(1)),
        "w2": RowwiseParallel(output_layouts=Shard(1)),
        "out": ColwiseParallel(input_layouts=Shard(1), output_layouts=Replicate())}


def spec(t):
    return str(t._value.sharding.spec)


def train(model, x, steps=2):
    """{initial parameters, each step's output and gradients, final parameters} as lists."""
    run = {"init": {n: p.tolist() for n, p in model.named_parameters()}, "outs": [], "grads": []}
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(steps):
        opt.zero_grad()
        out = model(x)
        out.logsumexp(-1).sum().backward()
        run["outs"].append(out.tolist())
        run["grads"].append({n: p.grad.tolist() for n, p in model.named_parameters()})
        opt.step()
    run["final"] = {n: p.tolist() for n, p in model.named_parameters()}
    return run


def main():
    result = {}
    mesh = init_device_mesh("cpu", (8,), mesh_dim_names=("tp",))
    torch.manual_seed(0)
    tp = parallelize_module(Block(), mesh, PLAN)
    ids = torch.randint(0, 40, (2, 8))
    result["ids"] = ids.tolist()
    result["block"] = train(tp, ids)
    result["param_specs"] = {n: spec(p) for n, p in tp.named_parameters()}
    result["placements"] = {n: [repr(q) for q in p.placements] for n, p in tp.named_parameters()}
    result["devices"] = {n: len(p._value.sharding.device_set) for n, p in tp.named_parameters()}
    result["output_type"] = type(tp(ids)).__name__

    # a 2-D mesh: tensor parallel over "tp", replicated over "dp"
    mesh2 = init_device_mesh("cpu", (2, 4), mesh_dim_names=("dp", "tp"))
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 8))
    parallelize_module(mlp, mesh2["tp"], {"0": ColwiseParallel(), "2": RowwiseParallel()})
    x = torch.randn(4, 8)
    result["x"] = x.tolist()
    result["mlp"] = train(mlp, x, steps=1)
    result["mlp_specs"] = [spec(p) for p in mlp.parameters()]

    # DTensor on its own: placements, shardings, values and gradients
    a = torch.randn(8, 16, requires_grad=True)
    d = distribute_tensor(a, mesh2, [Shard(0), Shard(1)])
    full = d.full_tensor()
    loss = (d.redistribute(mesh2, [Replicate(), Shard(0)]).to_local() * torch.arange(16.)).sum()
    loss.backward()
    prep = PrepareModuleInput(input_layouts=(Shard(0),), desired_input_layouts=(Replicate(),))
    seen = {}
    m = nn.Identity()
    parallelize_module(m, mesh, prep)
    m.register_forward_pre_hook(lambda mod, args: seen.setdefault("spec", spec(args[0])))
    m(torch.randn(8, 3))
    result["dtensor"] = {"spec": spec(d), "full_spec": spec(full), "full_equal": bool((full == a).all()),
                         "leaf": d.is_leaf, "requires_grad": d.requires_grad,
                         "grad_ok": bool((d.grad == torch.arange(16.).expand(8, 16)).all()),
                         "is_dtensor": isinstance(d, DTensor), "prepared_spec": seen["spec"]}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
