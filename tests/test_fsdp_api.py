"""FSDP's class API (FullyShardedDataParallel, wrap policies, MixedPrecision, state dict types) and fully_shard's
FSDPModule/MixedPrecisionPolicy, against PyTorch's FSDP on one process (gloo, world size 1); on 8 simulated
CPU devices (tests/_fsdp_api_worker.py) training equals PyTorch's unsharded model and parameters are sharded."""
import functools
import pathlib

import numpy as np
import pytest
from conftest import assert_close, fold_repr, from_torch, require

import tapegrad as tg
from tapegrad.distributed import fsdp as tg_fsdp
from tapegrad.distributed.fsdp import wrap as tg_wrap

# PyTorch warns that one process means NO_SHARD, and that state_dict_type is deprecated
pytestmark = pytest.mark.filterwarnings("ignore:.*NO_SHARD", "ignore:FSDP.state_dict_type")
from _background_worker import BackgroundWorker  # noqa: E402
from _gloo import one_process_group  # noqa: E402

WORKER = pathlib.Path(__file__).with_name("_fsdp_api_worker.py")


@pytest.fixture(scope="module")
def torch():
    with one_process_group("torch.distributed.fsdp", "torch.distributed.fsdp.wrap") as torch:
        yield torch


def _mlp(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(6, 16), lib.nn.ReLU(), lib.nn.Sequential(lib.nn.Linear(16, 16),
                                                                                    lib.nn.Tanh()),
                             lib.nn.Linear(16, 3))


def _pair(torch):
    theirs = _mlp(torch)
    ours = _mlp(tg)
    ours.load_state_dict({k: from_torch(v) for k, v in theirs.state_dict().items()})
    return ours, theirs


def _fsdp(lib_fsdp, module, torch_side, **kwargs):
    if torch_side:
        kwargs.update(device_id=__import__("torch").device("cpu"), use_orig_params=True)
    return lib_fsdp.FullyShardedDataParallel(module, **kwargs)


@pytest.mark.parametrize("policy", ["size", "transformer", "module"])
def test_auto_wrap_policies_wrap_as_pytorch(torch, policy):
    ours, theirs = _pair(torch)
    policies = []
    for lib, wrap in ((tg, tg_wrap), (torch, torch.distributed.fsdp.wrap)):
        policies.append({"size": functools.partial(wrap.size_based_auto_wrap_policy, min_num_params=200),
                         "transformer": functools.partial(wrap.transformer_auto_wrap_policy,
                                                          transformer_layer_cls={lib.nn.Linear}),
                         "module": wrap.ModuleWrapPolicy({lib.nn.Sequential})}[policy])
    ours = _fsdp(tg_fsdp, ours, False, auto_wrap_policy=policies[0])
    theirs = _fsdp(torch.distributed.fsdp, theirs, True, auto_wrap_policy=policies[1])
    assert fold_repr(repr(ours)) == fold_repr(repr(theirs))
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert list(ours.state_dict()) == list(theirs.state_dict())


def test_wrap_and_enable_wrap_as_pytorch(torch):
    reprs = []
    for lib, fsdp, side in ((tg, tg_fsdp, False), (torch, torch.distributed.fsdp, True)):
        kwargs = {"device_id": torch.device("cpu"), "use_orig_params": True} if side else {}
        with fsdp.wrap.enable_wrap(wrapper_cls=fsdp.FullyShardedDataParallel, **kwargs):
            model = lib.nn.Sequential(fsdp.wrap.wrap(lib.nn.Linear(2, 3)), lib.nn.ReLU())
        reprs.append(fold_repr(repr(model)))
        assert fsdp.wrap.wrap(lib.nn.ReLU()).__class__.__name__ == "ReLU"   # outside enable_wrap: unchanged
    assert reprs[0] == reprs[1]


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_mixed_precision_computes_in_low_precision_as_pytorch(torch, dtype):
    ours, theirs = _pair(torch)
    mp = [fsdp.MixedPrecision(param_dtype=getattr(lib, dtype), reduce_dtype=lib.float32)
          for lib, fsdp in ((tg, tg_fsdp), (torch, torch.distributed.fsdp))]
    ours = _fsdp(tg_fsdp, ours, False, mixed_precision=mp[0],
                 auto_wrap_policy=functools.partial(tg_wrap.transformer_auto_wrap_policy,
                                                    transformer_layer_cls={tg.nn.Linear}))
    theirs = _fsdp(torch.distributed.fsdp, theirs, True, mixed_precision=mp[1],
                   auto_wrap_policy=functools.partial(torch.distributed.fsdp.wrap.transformer_auto_wrap_policy,
                                                      transformer_layer_cls={torch.nn.Linear}))
    x = torch.randn(5, 6)
    out_o, out_t = ours(from_torch(x)), theirs(x)
    tol = dict(atol=2e-2, rtol=2e-2)
    assert_close(out_o, out_t, **tol)   # dtype too: the output is in param_dtype
    out_o.float().pow(2).sum().backward()
    out_t.float().pow(2).sum().backward()
    for (name, a), b in zip(ours.named_parameters(), theirs.parameters()):
        assert a.dtype == tg.float32 and a.grad.dtype == tg.float32
        assert_close(a.grad, b.grad, atol=5e-2, rtol=5e-2)
    for k, v in theirs.state_dict().items():
        assert_close(ours.state_dict()[k], v)   # the parameters themselves stay float32


def test_mixed_precision_policy_of_fully_shard_as_pytorch(torch):
    ours, theirs = _pair(torch)
    fsdp = torch.distributed.fsdp
    for m, lib_fsdp, lib in ((ours, tg_fsdp, tg), (theirs, fsdp, torch)):
        lib_fsdp.fully_shard(m[2], mp_policy=lib_fsdp.MixedPrecisionPolicy(param_dtype=lib.bfloat16))
        lib_fsdp.fully_shard(m, mp_policy=lib_fsdp.MixedPrecisionPolicy(param_dtype=lib.bfloat16,
                                                                         output_dtype=lib.float32))
    assert type(ours).__name__ == type(theirs).__name__ == "FSDPSequential"
    assert isinstance(ours, tg_fsdp.FSDPModule) and isinstance(ours, tg.nn.Sequential)
    assert type(ours[2]).__name__ == "FSDPSequential" and not isinstance(ours[0], tg_fsdp.FSDPModule)
    from tapegrad.distributed.tensor import DTensor
    for a, b in zip(ours.parameters(), theirs.parameters()):   # FSDP2's parameters are DTensors, Shard(0)
        assert isinstance(a, DTensor) and isinstance(a, tg.nn.Parameter)
        assert repr(a.placements) == repr(b.placements) and a.device_mesh.ndim == b.device_mesh.ndim
    x = torch.randn(5, 6)
    out_o, out_t = ours(from_torch(x)), theirs(x)
    assert_close(out_o, out_t, atol=3e-2, rtol=3e-2)
    out_o.pow(2).sum().backward()
    out_t.pow(2).sum().backward()
    for a, b in zip(ours.parameters(), theirs.parameters()):
        assert_close(a.grad, b.grad.full_tensor(), atol=1e-1, rtol=5e-2)
    assert ours.unshard() is None and ours.reshard() is None
    ours.set_requires_gradient_sync(False)


def test_state_dict_type_context_as_pytorch(torch):
    ours, theirs = _pair(torch)
    ours, theirs = _fsdp(tg_fsdp, ours, False), _fsdp(torch.distributed.fsdp, theirs, True)
    for m, fsdp in ((ours, tg_fsdp), (theirs, torch.distributed.fsdp)):
        F = fsdp.FullyShardedDataParallel
        with F.state_dict_type(m, fsdp.StateDictType.LOCAL_STATE_DICT):
            assert F.get_state_dict_type(m).state_dict_type == fsdp.StateDictType.LOCAL_STATE_DICT
        settings = F.get_state_dict_type(m)
        assert settings.state_dict_type == fsdp.StateDictType.FULL_STATE_DICT
        with F.state_dict_type(m, fsdp.StateDictType.FULL_STATE_DICT,
                               fsdp.FullStateDictConfig(offload_to_cpu=True, rank0_only=True)):
            assert repr(F.get_state_dict_type(m).state_dict_config) == \
                "FullStateDictConfig(offload_to_cpu=True, rank0_only=True)"
            sd = m.state_dict()
        assert list(sd) == ["0.weight", "0.bias", "2.0.weight", "2.0.bias", "3.weight", "3.bias"]
    sd = ours.state_dict()
    ours.load_state_dict({k: v * 2 for k, v in sd.items()})
    assert_close(ours.state_dict()["3.bias"], theirs.state_dict()["3.bias"] * 2)


def test_option_types_as_pytorch(torch):
    fsdp = torch.distributed.fsdp
    for name in ("ShardingStrategy", "BackwardPrefetch", "StateDictType"):
        assert [repr(v) for v in getattr(tg_fsdp, name)] == [repr(v) for v in getattr(fsdp, name)]
    for make in (lambda f: f.CPUOffload(), lambda f: f.CPUOffload(offload_params=True),
                 lambda f: f.FullStateDictConfig(), lambda f: f.LocalStateDictConfig(),
                 lambda f: f.ShardedStateDictConfig(), lambda f: f.MixedPrecisionPolicy(),
                 lambda f: f.OffloadPolicy(), lambda f: f.CPUOffloadPolicy()):
        assert repr(make(tg_fsdp)) == repr(make(fsdp))
    ours, theirs = tg_fsdp.MixedPrecision(param_dtype=tg.float16), fsdp.MixedPrecision(param_dtype=torch.float16)
    for field in ("reduce_dtype", "buffer_dtype", "keep_low_precision_grads", "cast_forward_inputs",
                  "cast_root_forward_inputs"):
        assert getattr(ours, field) == getattr(theirs, field)
    m = tg_fsdp.FullyShardedDataParallel(tg.nn.Linear(2, 2), backward_prefetch=tg_fsdp.BackwardPrefetch.BACKWARD_POST,
                                         cpu_offload=tg_fsdp.CPUOffload(offload_params=True),
                                         sharding_strategy=tg_fsdp.ShardingStrategy.SHARD_GRAD_OP)
    assert m.backward_prefetch == tg_fsdp.BackwardPrefetch.BACKWARD_POST and m.cpu_offload.offload_params
    assert m.in_features == 2   # attributes of the wrapped module are reached through the wrapper
    from tapegrad.distributed.fsdp.fully_sharded_data_parallel import FullyShardedDataParallel
    assert FullyShardedDataParallel is tg_fsdp.FullyShardedDataParallel
    with pytest.raises(ValueError, match="keep_low_precision_grads"):
        tg_fsdp.FullyShardedDataParallel(tg.nn.Linear(2, 2),
                                         mixed_precision=tg_fsdp.MixedPrecision(keep_low_precision_grads=True))


@pytest.fixture(scope="module", autouse=True)
def _worker():
    """The 8-device run, started with the module's first test so that it runs alongside the others."""
    worker = BackgroundWorker(WORKER)
    yield worker
    worker.stop()


@pytest.fixture(scope="module")
def eight(_worker):
    return _worker.result()


def test_eight_devices_train_as_unsharded_pytorch(eight):
    torch = require("torch")
    model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 16))
    with torch.no_grad():
        for n, p in model.named_parameters():
            p.copy_(torch.tensor(eight["init"][n]))
    x = torch.tensor(eight["x"])
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    for step in range(2):
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        np.testing.assert_allclose(eight["losses"][step], loss.item(), rtol=1e-5)
    for n, p in model.named_parameters():
        np.testing.assert_allclose(eight["final"][n], p.detach().numpy(), rtol=1e-5, atol=1e-6, err_msg=n)


def test_eight_devices_shard_parameters(eight):
    # FullyShardedDataParallel with an auto-wrap policy: every parameter split along dim 0 over 8 devices
    assert eight["specs"] == {"0.weight": "P('shard',)", "0.bias": "P('shard',)", "2.weight": "P('shard',)",
                              "2.bias": "P('shard',)"}
    assert eight["grad_devices"] == [8, 8, 8, 8]
    assert eight["loaded_specs"] == ["P('shard',)"] * 4 and eight["loaded_equal"]   # load_state_dict keeps them so
    # fully_shard over mesh["dp"] after parallelize_module over mesh["tp"]: dim 0 split over both
    assert eight["fsdp_tp_specs"] == ["P(('dp', 'tp'), None)", "P(('dp', 'tp'),)", "P('dp', 'tp')", "P('dp',)"]
    assert eight["fsdp_tp_diff"] < 1e-5
    assert eight["fsdp_tp_placements"][2] == ["Shard(dim=0)", "Shard(dim=1)"]   # ('dp', 'tp') of the row-wise weight
    assert eight["fsdp_class_tp_specs"] == eight["fsdp_tp_specs"] and eight["fsdp_class_tp_diff"] < 1e-5
