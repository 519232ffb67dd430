"""state_dict() and load_state_dict() as PyTorch's: the `_metadata` of module versions that state_dict() saves
and loading reads (a BatchNorm state dict without it, or from before version 2, gets num_batches_tracked 0;
an InstanceNorm's from before 0.4 is told about its running stats), `_load_from_state_dict` with PyTorch's
signature for subclasses to override, shared submodules loaded under each of their names, assign=True keeping
a given Parameter, 1-element tensors for 0-d entries, and the key lists, hooks and errors."""
import copy
import io
import warnings
from collections import OrderedDict

import pytest
import torch

import tapegrad as tg

CASES = [
    "m = nn.Sequential(nn.Linear(2, 2)); m.add_module('b', m[0]); r = m.load_state_dict(m.state_dict())",
    "bn = nn.BatchNorm1d(3); sd = {k: v for k, v in bn.state_dict().items() if 'num_batches' not in k}; "
    "r = bn.load_state_dict(sd)",
    "bn = nn.BatchNorm1d(3); sd = bn.state_dict(); del sd['num_batches_tracked']; r = bn.load_state_dict(sd)",
    "bn = nn.BatchNorm2d(3); sd = bn.state_dict(); sd._metadata[''] = {'version': 1}; "
    "del sd['num_batches_tracked']; r = bn.load_state_dict(sd), bn.num_batches_tracked",
    "m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2)); r = dict(m.state_dict()._metadata)",
    "m = nn.Linear(2, 2); r = m.state_dict(prefix='a.')._metadata",
    "m = nn.Linear(2, 2); d = O(); m.state_dict(destination=d); r = hasattr(d, '_metadata')",
    "m = nn.Sequential(nn.BatchNorm1d(2)); sd = copy.deepcopy(m.state_dict()); r = dict(sd._metadata)",
    "inn = nn.InstanceNorm1d(3); r = inn.load_state_dict({'running_mean': lib.zeros(3), 'running_var': lib.ones(3)})",
    "inn = nn.InstanceNorm1d(3); r = inn.load_state_dict({})",
    "inn = nn.InstanceNorm1d(3, track_running_stats=True); "
    "r = inn.load_state_dict({'running_mean': lib.zeros(3), 'running_var': lib.ones(3)})",
    "m = nn.Linear(2, 2); p = nn.Parameter(lib.zeros(2, 2)); "
    "m.load_state_dict({'weight': p, 'bias': lib.zeros(2)}, assign=True); "
    "r = (m.weight is p, type(m.bias).__name__, m.bias.requires_grad)",
    "m = nn.Linear(2, 2); m.weight.requires_grad_(False); "
    "m.load_state_dict({'weight': lib.ones(2, 2), 'bias': lib.zeros(2)}, assign=True); r = m.weight.requires_grad",
    "m = nn.Module(); m.register_buffer('c', lib.tensor(1.0)); m.load_state_dict({'c': lib.tensor([5.0])}); r = m.c",
    "m = nn.Sequential(nn.Linear(2, 2)); sd = m.state_dict(); sd['0.weight.x'] = 1; sd['x'] = 2; sd['0.w'] = 3; "
    "r = m.load_state_dict(sd, strict=False)",
    "m = nn.Sequential(nn.Linear(2, 2)); sd = m.state_dict(); sd['0.weight.x'] = 1; r = m.load_state_dict(sd)",
    "m = nn.Sequential(nn.Linear(2, 2)); h = m.register_load_state_dict_post_hook(lambda mod, k: "
    "k.missing_keys.clear()); r = m.load_state_dict({})",
    "m = nn.Linear(2, 2); r = m.load_state_dict({'weight': 3, 'bias': lib.zeros(2)})",
    "m = nn.Linear(2, 2); r = m.load_state_dict([1])",
    "m = nn.Linear(2, 2); r = m.load_state_dict(dict(m.state_dict()))",
    "m = nn.Linear(2, 2); r = m.load_state_dict({'weight': lib.zeros(3, 2), 'bias': lib.zeros(2)})",
    "m = nn.Linear(2, 2); b = io.BytesIO(); lib.save(nn.Sequential(nn.BatchNorm1d(2)).state_dict(), b); b.seek(0); "
    "r = lib.load(b)._metadata",
]


def outcome(lib, code):
    env = {"lib": lib, "nn": lib.nn, "O": OrderedDict, "copy": copy, "io": io}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            exec(code, env)
            return "value", repr(env["r"]).replace("tapegrad", "torch")
        except Exception as e:
            return "error", type(e).__name__, str(e).replace("tapegrad", "torch")


@pytest.mark.parametrize("code", CASES)
def test_state_dict_as_torch(code):
    assert outcome(tg, code) == outcome(torch, code)


def test_an_override_of_load_from_state_dict_with_torch_s_signature_is_called_as_torch_calls_it():
    seen = {}
    for lib in (tg, torch):
        class Scaled(lib.nn.Linear):
            def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs):
                seen[lib] = (prefix, dict(local_metadata), strict)
                state_dict[prefix + "weight"] = state_dict[prefix + "weight"] * 2   # a version migration, say
                super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                              unexpected_keys, error_msgs)

        model = lib.nn.Sequential(Scaled(2, 2))
        with lib.no_grad():
            model[0].weight.fill_(1.0)
        sd = model.state_dict()
        model.load_state_dict(sd, assign=True)
        seen[lib] += (model[0].weight.tolist(), sd["0.weight"].tolist())
    assert seen[tg] == seen[torch]


def test_pre_hooks_get_the_saved_metadata():
    calls = {}
    for lib in (tg, torch):
        model = lib.nn.Sequential(lib.nn.BatchNorm1d(2))
        model[0].register_load_state_dict_pre_hook(
            lambda module, sd, prefix, meta, *rest, lib=lib: calls.setdefault(lib, []).append((prefix, dict(meta))))
        model.load_state_dict(model.state_dict())
        model.load_state_dict(dict(model.state_dict()))
    assert calls[tg] == calls[torch]
