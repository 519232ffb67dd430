"""DeviceMesh, DTensor and tensor parallelism: against PyTorch on a one-device mesh (torch.distributed with
gloo, world size 1), and on 8 simulated CPU devices (tests/_dtensor_worker.py, a subprocess) against
PyTorch's unsharded model, with the parameters' jax shardings checked."""
import pathlib

import numpy as np
import pytest
from conftest import assert_close, fold_repr, from_torch, require

import tapegrad as tg
from tapegrad.distributed.device_mesh import init_device_mesh
from tapegrad.distributed.tensor import DTensor, Replicate, Shard, distribute_tensor
from tapegrad.distributed.tensor.parallel import (ColwiseParallel, PrepareModuleInput, RowwiseParallel,
                                                  SequenceParallel, parallelize_module)

from _background_worker import BackgroundWorker  # noqa: E402
from _gloo import one_process_group  # noqa: E402

WORKER = pathlib.Path(__file__).with_name("_dtensor_worker.py")


@pytest.fixture(scope="module")
def pt():
    """PyTorch with a one-process gloo group, and its tensor-parallel names."""
    with one_process_group("torch.distributed.tensor.parallel") as torch:
        from torch.distributed import device_mesh, tensor
        from torch.distributed.tensor import parallel
        yield type("PT", (), dict(torch=torch, mesh=device_mesh, tensor=tensor, parallel=parallel))


def _raises(fn):
    try:
        fn()
    except Exception as e:   # noqa: BLE001 -- the error itself is what is compared
        return type(e).__name__, str(e).split("!")[0]
    return None


def test_device_mesh_as_pytorch(pt):
    ours = init_device_mesh("cpu", (1,), mesh_dim_names=("tp",))
    theirs = pt.mesh.init_device_mesh("cpu", (1,), mesh_dim_names=("tp",))
    for fn in (repr, lambda m: m.size(), lambda m: m.shape, lambda m: m.ndim, lambda m: m.mesh_dim_names,
               lambda m: m.get_local_rank(), lambda m: m.get_coordinate(), lambda m: m.device_type,
               lambda m: repr(m["tp"]), lambda m: m.get_group("tp").size(), lambda m: m.mesh.tolist()):
        assert fn(ours) == fn(theirs)
    assert _raises(lambda: ours["dp"]) == _raises(lambda: theirs["dp"])
    two = init_device_mesh("cpu", (1, 1), mesh_dim_names=("dp", "tp"))
    assert repr(two) == repr(pt.mesh.init_device_mesh("cpu", (1, 1), mesh_dim_names=("dp", "tp")))
    assert repr(two["tp"]) == "DeviceMesh((tp=1), 'cpu', stride=((),))"
    for args, kwargs in [(((2,),), {}), (((1, 1),), {"mesh_dim_names": ("a",)})]:
        ours_err = _raises(lambda: init_device_mesh("cpu", *args, **kwargs))
        assert ours_err is not None and ours_err == _raises(lambda: pt.mesh.init_device_mesh("cpu", *args, **kwargs))


def test_distribute_tensor_as_pytorch(pt):
    torch = pt.torch
    x = torch.randn(4, 6)
    meshes = init_device_mesh("cpu", (1,), mesh_dim_names=("tp",)), pt.mesh.init_device_mesh("cpu", (1,),
                                                                                               mesh_dim_names=("tp",))
    for placements in ([Shard(0)], [Shard(-1)], [Replicate()]):
        ours = distribute_tensor(from_torch(x).requires_grad_(), meshes[0], placements)
        theirs = pt.tensor.distribute_tensor(x.clone().requires_grad_(), meshes[1],
                                             [getattr(pt.tensor, type(p).__name__)(*vars(p).values())
                                              for p in placements])
        assert isinstance(ours, DTensor) and ours.placements == tuple(placements[:0]) + ours.placements
        assert repr(ours.placements) == repr(theirs.placements) and str(ours.placements[0]) == str(
            theirs.placements[0])
        assert ours.device_mesh is meshes[0] and ours.is_leaf and ours.requires_grad
        assert fold_repr(repr(ours)) == fold_repr(repr(theirs))
        assert_close(ours.to_local(), theirs.to_local())
        assert_close(ours.full_tensor(), theirs.full_tensor())
        w = torch.randn(4, 6)
        (ours.redistribute(meshes[0], [Replicate()]).to_local() * from_torch(w)).sin().sum().backward()
        (theirs.redistribute(meshes[1], [pt.tensor.Replicate()]).to_local() * w).sin().sum().backward()
        assert_close(ours.grad, theirs.grad.full_tensor())


def test_from_local_is_differentiable_as_pytorch(pt):
    torch = pt.torch
    x = torch.randn(3, 4, requires_grad=True)
    y = from_torch(x).requires_grad_()
    ours = DTensor.from_local(y, init_device_mesh("cpu", (1,)), [Shard(1)])
    theirs = pt.tensor.DTensor.from_local(x, pt.mesh.init_device_mesh("cpu", (1,)), [pt.tensor.Shard(1)])
    assert repr(ours.placements) == repr(theirs.placements) and not ours.is_leaf
    ours.full_tensor().exp().sum().backward()
    theirs.full_tensor().exp().sum().backward()
    assert_close(y.grad, x.grad)


def _block(lib):
    nn = lib.nn

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
            return self.out(h + self.w2(lib.relu(self.w1(h))))
    return Block()


def _plan(lib):
    """tests/_dtensor_worker.py's plan, written with lib's style and placement classes."""
    p, t = lib.parallel, lib.tensor
    return {"tok": p.RowwiseParallel(input_layouts=t.Replicate(), output_layouts=t.Shard(1)),
            "norm": p.SequenceParallel(use_local_output=True),
            "w1": p.ColwiseParallel(input_layouts=t.Shard(1)),
            "w2": p.RowwiseParallel(output_layouts=t.Shard(1)),
            "out": p.ColwiseParallel(input_layouts=t.Shard(1), output_layouts=t.Replicate())}


class _Ours:
    from tapegrad.distributed.tensor import parallel  # noqa: F401
    import tapegrad.distributed.tensor as tensor  # noqa: F401


def _train(torch, model, x, steps):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    outs, grads = [], []
    for _ in range(steps):
        opt.zero_grad()
        out = model(x)
        out.logsumexp(-1).sum().backward()
        outs.append(out.detach())
        grads.append({n: p.grad.clone() for n, p in model.named_parameters()})
        opt.step()
    return outs, grads


def _local(t):
    return t.full_tensor() if hasattr(t, "full_tensor") else t


def test_tensor_parallel_block_as_pytorch(pt):
    torch = pt.torch
    torch.manual_seed(0)
    theirs = _block(torch)
    ours = _block(tg)
    ours.load_state_dict({k: from_torch(v) for k, v in theirs.state_dict().items()})
    parallelize_module(ours, init_device_mesh("cpu", (1,), mesh_dim_names=("tp",)), _plan(_Ours))
    pt.parallel.parallelize_module(theirs, pt.mesh.init_device_mesh("cpu", (1,), mesh_dim_names=("tp",)),
                                   _plan(pt))
    for (name, a), b in zip(ours.named_parameters(), theirs.parameters()):
        assert isinstance(a, DTensor) and isinstance(a, tg.nn.Parameter), name
        assert repr(a.placements) == repr(b.placements), name
    ids = torch.randint(0, 40, (2, 8))
    (o_out, o_grad), (t_out, t_grad) = _train(tg, ours, from_torch(ids), 2), _train(torch, theirs, ids, 2)
    for a, b in zip(o_out, t_out):
        assert_close(a, _local(b), atol=1e-5, rtol=1e-5)
    for ga, gb in zip(o_grad, t_grad):
        for name in gb:
            assert_close(ga[name], _local(gb[name]), atol=1e-5, rtol=1e-5)


def test_prepare_module_input_as_pytorch(pt):
    torch = pt.torch
    seen = {}
    for lib, mesh_mod, names, parallel in ((tg, None, _Ours.tensor, _Ours.parallel),
                                           (torch, pt.mesh, pt.tensor, pt.parallel)):
        mesh = (mesh_mod.init_device_mesh if mesh_mod else init_device_mesh)("cpu", (1,))
        m = lib.nn.Identity()
        parallel.parallelize_module(m, mesh, parallel.PrepareModuleInput(
            input_layouts=(names.Shard(0),), desired_input_layouts=(names.Replicate(),),
            input_kwarg_layouts={}, desired_input_kwarg_layouts={}))
        m.register_forward_pre_hook(lambda mod, args, lib=lib: seen.setdefault(lib.__name__, args[0]))
        m(lib.ones(2, 3))
    assert type(seen["tapegrad"]).__name__ == type(seen["torch"]).__name__ == "DTensor"
    assert repr(seen["tapegrad"].placements) == repr(seen["torch"].placements)


def test_errors_as_pytorch(pt):
    two = init_device_mesh("cpu", (1, 1), mesh_dim_names=("dp", "tp"))
    two_pt = pt.mesh.init_device_mesh("cpu", (1, 1), mesh_dim_names=("dp", "tp"))
    ours = _raises(lambda: parallelize_module(tg.nn.Linear(2, 2), two, ColwiseParallel()))
    assert ours is not None and ours == _raises(
        lambda: pt.parallel.parallelize_module(pt.torch.nn.Linear(2, 2), two_pt, pt.parallel.ColwiseParallel()))
    one, one_pt = init_device_mesh("cpu", (1,)), pt.mesh.init_device_mesh("cpu", (1,))
    for ours_p, theirs_p in ((Shard(3), pt.tensor.Shard(3)), (3, 3)):
        ours = _raises(lambda: distribute_tensor(tg.ones(2), one, [ours_p]))
        theirs = _raises(lambda: pt.tensor.distribute_tensor(pt.torch.ones(2), one_pt, [theirs_p]))
        assert ours is not None and ours[0] == theirs[0] and ours[1].startswith(theirs[1].split(":")[0])
    with pytest.raises(NotImplementedError, match="only support nn.Linear and nn.Embedding"):
        parallelize_module(tg.nn.ReLU(), init_device_mesh("cpu", (1,)), ColwiseParallel())
    assert SequenceParallel().sequence_dim == 1 and PrepareModuleInput().use_local_output is False
    assert RowwiseParallel().output_layouts == (Replicate(),)


@pytest.fixture(scope="module", autouse=True)
def _worker():
    """The 8-device run, started with the module's first test so that it runs alongside the others."""
    worker = BackgroundWorker(WORKER)
    yield worker
    worker.stop()


@pytest.fixture(scope="module")
def eight(_worker):
    return _worker.result()


def _torch_run(torch, model, run, x, steps):
    with torch.no_grad():
        for n, p in model.named_parameters():
            p.copy_(torch.tensor(run["init"][n]))
    outs, grads = _train(torch, model, x, steps)
    for step in range(steps):
        np.testing.assert_allclose(run["outs"][step], outs[step].numpy(), rtol=1e-5, atol=1e-5)
        for n, g in grads[step].items():
            np.testing.assert_allclose(run["grads"][step][n], g.numpy(), rtol=1e-5, atol=1e-5, err_msg=n)
    for n, p in model.named_parameters():
        np.testing.assert_allclose(run["final"][n], p.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=n)


def test_eight_devices_train_as_unsharded_pytorch(eight):
    torch = require("torch")
    _torch_run(torch, _block(torch), eight["block"], torch.tensor(eight["ids"]), 2)
    mlp = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 8))
    _torch_run(torch, mlp, eight["mlp"], torch.tensor(eight["x"]), 1)


def test_eight_devices_params_are_sharded(eight):
    assert eight["param_specs"] == {"tok.weight": "P('tp', None)", "norm.weight": "P()", "norm.bias": "P()",
                                    "w1.weight": "P('tp', None)", "w1.bias": "P('tp',)", "w2.weight": "P(None, 'tp')",
                                    "w2.bias": "P()", "out.weight": "P('tp', None)"}
    assert set(eight["devices"].values()) == {8}
    assert eight["placements"]["w2.weight"] == ["Shard(dim=1)"] and eight["placements"]["norm.bias"] == ["Replicate()"]
    assert eight["output_type"] == "Tensor"   # use_local_output=True: a plain tensor, as PyTorch's
    # the 2-D mesh: sharded over 'tp', replicated over 'dp'
    assert eight["mlp_specs"] == ["P('tp', None)", "P('tp',)", "P(None, 'tp')", "P()"]
    d = eight["dtensor"]
    assert d["spec"] == "P('dp', 'tp')" and d["full_spec"] == "P(None, None)" and d["full_equal"]
    assert d["leaf"] and d["requires_grad"] and d["grad_ok"] and d["is_dtensor"]
    assert d["prepared_spec"] == "P(None, None)"   # PrepareModuleInput moved Shard(0) to Replicate


def test_backend_helpers_and_join_as_pytorch(pt):
    import tapegrad.distributed as tg_dist
    from tapegrad.distributed.algorithms import Join, JoinHook, Joinable
    dist = pt.torch.distributed
    assert tg_dist.is_nccl_available() == dist.is_nccl_available()   # no GPU here
    assert tg_dist.is_gloo_available() == dist.is_gloo_available()
    for device in ("cpu", "cuda", "cuda:1", pt.torch.device("cpu")):
        assert tg_dist.get_default_backend_for_device(str(device)) == \
            dist.distributed_c10d.get_default_backend_for_device(device)
    ours = _raises(lambda: tg_dist.get_default_backend_for_device("foo"))
    assert ours == _raises(lambda: dist.distributed_c10d.get_default_backend_for_device("foo"))
    assert _raises(lambda: Join([])) == ("ValueError", "The join context manager requires at least one joinable")

    calls = []

    class Hook(JoinHook):
        def post_hook(self, is_last_joiner):
            calls.append(is_last_joiner)

    class Counter(Joinable):
        def __init__(self):
            super().__init__()

        def join_hook(self, **kwargs):
            return Hook()

        join_device = property(lambda self: "cpu")
        join_process_group = property(lambda self: None)
    # Join asks the group for this process's rank, as PyTorch's does: without init_process_group, the same error
    # (tests/test_join.py runs Join in groups of one and of two processes against PyTorch)
    assert _raises(lambda: Join([Counter()])) == _raises(tg_dist.get_rank)
    assert calls == []


def test_parameter_of_a_dtensor_is_a_dtensor_as_pytorch(pt):
    ours = tg.nn.Parameter(distribute_tensor(tg.ones(2, 2), init_device_mesh("cpu", (1,)), [Shard(0)]))
    theirs = pt.torch.nn.Parameter(pt.tensor.distribute_tensor(pt.torch.ones(2, 2), pt.mesh.init_device_mesh(
        "cpu", (1,)), [pt.tensor.Shard(0)]))
    assert isinstance(ours, DTensor) and isinstance(ours, tg.nn.Parameter) and ours.requires_grad
    assert isinstance(theirs, pt.tensor.DTensor) and isinstance(theirs, pt.torch.nn.Parameter)
    assert repr(ours.placements) == repr(theirs.placements)
    from tapegrad.distributed._tensor import Shard as OldShard   # PyTorch's earlier module path
    assert OldShard is Shard


def test_compiled_tensor_parallel_step_equals_eager():
    """tapegrad.compile traces the styles' moves as sharding constraints in its program."""
    mesh = init_device_mesh("cpu", (1,))
    x = tg.randn(6, 4)
    losses = []
    for compiled in (False, True):
        tg.manual_seed(0)
        model = tg.nn.Sequential(tg.nn.Linear(4, 8), tg.nn.ReLU(), tg.nn.Linear(8, 4))
        parallelize_module(model, mesh, {"0": ColwiseParallel(), "2": RowwiseParallel()})
        opt = tg.optim.SGD(model.parameters(), lr=0.1)

        def step(model=model, opt=opt):
            opt.zero_grad()
            loss = model(x).pow(2).sum()
            loss.backward()
            opt.step()
            return loss
        step = tg.compile(step) if compiled else step
        losses.append([step().item() for _ in range(3)])
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-6)
