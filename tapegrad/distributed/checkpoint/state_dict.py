"""PyTorch's distributed state-dict helpers: model and optimizer state dicts keyed by parameter names.

Names are the model's own, without wrapper prefixes (`_fsdp_wrapped_module.`, `_orig_mod.`,
`_checkpoint_wrapped_module.`, DDP's `module.` is kept as PyTorch keeps it). The optimizer's state dict
is keyed by those names instead of indices, so it loads into a model sharded differently or an optimizer
built in another order. A fresh optimizer is given its state first (one step at learning rate 0, as
PyTorch does) so that its state dict has every entry a checkpoint load fills. Tensors are the module's
and optimizer's own (whole: this process holds every shard); full_state_dict or cpu_offload gives copies
on one CPU device.
"""
from dataclasses import dataclass

from ..._tensor import Tensor

__all__ = ["StateDictOptions", "get_model_state_dict", "get_optimizer_state_dict", "get_state_dict",
           "set_model_state_dict", "set_optimizer_state_dict", "set_state_dict"]

_WRAPPER_PREFIXES = ("_fsdp_wrapped_module.", "_orig_mod.", "_checkpoint_wrapped_module.")


@dataclass
class StateDictOptions:
    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False
    dsd_fqn_modifiers: str = "_fqn_modifiers"


def _clean(name):
    for prefix in _WRAPPER_PREFIXES:
        name = name.replace(prefix, "")
    return name


def _fqns(model):
    """{id(parameter): its name}"""
    return {id(p): _clean(n) for n, p in model.named_parameters(remove_duplicate=False)}


def _gathered(value, options):
    if not isinstance(value, Tensor) or not (options.full_state_dict or options.cpu_offload):
        return value
    import jax
    import numpy as np
    return Tensor._wrap(jax.device_put(np.asarray(value.detach()._value), jax.local_devices(backend="cpu")[0]))


def _submodule_filter(model, submodules, options):
    if not submodules:
        return None
    prefixes = [_clean(n) + "." for n, m in model.named_modules() if m in set(submodules)]
    return prefixes


def get_model_state_dict(model, *, submodules=None, options=None):
    options = options or StateDictOptions()
    frozen = {_clean(n) for n, p in model.named_parameters() if not p.requires_grad}
    out = {}
    prefixes = _submodule_filter(model, submodules, options)
    for name, value in model.state_dict().items():
        name = _clean(name)
        if options.ignore_frozen_params and name in frozen:
            continue
        if prefixes is not None:
            match = next((p for p in prefixes if name.startswith(p)), None)
            if match is None:
                continue
            if not options.keep_submodule_prefixes:
                name = name[len(match):]
        out[name] = _gathered(value, options)
    return out


def _init_state(optimizer):
    """Give an optimizer without state its state: one step at learning rate 0 on zero gradients."""
    from ..._grad_mode import no_grad
    from ...import zeros_like
    params = [p for g in optimizer.param_groups for p in g["params"] if p.requires_grad]
    if optimizer.state or not params:
        return
    lrs = [g.get("lr") for g in optimizer.param_groups]
    with no_grad():
        for p in params:
            if p.grad is None:
                p.grad = zeros_like(p)
        for g in optimizer.param_groups:
            if "lr" in g:
                g["lr"] = 0.0
        optimizer.step()
    for g, lr in zip(optimizer.param_groups, lrs):
        if lr is not None:
            g["lr"] = lr
    optimizer.zero_grad(set_to_none=True)


def _optimizers(optimizers):
    return list(optimizers) if isinstance(optimizers, (list, tuple)) else [optimizers]


def get_optimizer_state_dict(model, optimizers, *, submodules=None, options=None):
    """{'state': {name: {...}}, 'param_groups': [{..., 'params': [names]}]} of one or several optimizers."""
    options = options or StateDictOptions()
    fqns = _fqns(model)
    state, groups = {}, []
    for optimizer in _optimizers(optimizers):
        _init_state(optimizer)
        sd = optimizer.state_dict()
        names = [fqns[id(p)] for g in optimizer.param_groups for p in g["params"]]
        for index, entry in sd["state"].items():
            state[names[index]] = {k: _gathered(v, options) for k, v in entry.items()}
        for group in sd["param_groups"]:
            groups.append({**group, "params": [names[i] for i in group["params"]]})
    return {"state": state, "param_groups": groups}


def get_state_dict(model, optimizers, *, submodules=None, options=None):
    return (get_model_state_dict(model, submodules=submodules, options=options),
            get_optimizer_state_dict(model, optimizers, submodules=submodules, options=options))


def set_model_state_dict(model, model_state_dict, *, options=None):
    """Load a state dict keyed by clean names into the model (wrapper prefixes put back)."""
    options = options or StateDictOptions()
    names = {_clean(k): k for k in model.state_dict().keys()}
    return model.load_state_dict({names.get(k, k): v for k, v in model_state_dict.items()}, strict=options.strict)


def _to_indexed(model, optimizer, optim_state_dict):
    """The part of a name-keyed optimizer state dict that belongs to `optimizer`, keyed by indices."""
    fqns = _fqns(model)
    names = [fqns[id(p)] for g in optimizer.param_groups for p in g["params"]]
    index = {n: i for i, n in enumerate(names)}
    groups = [g for g in optim_state_dict["param_groups"] if g["params"] and g["params"][0] in index]
    if len(groups) != len(optimizer.param_groups):
        raise ValueError("loaded state dict has a different number of parameter groups: the optimizer's parameters "
                         "are not those of the state dict (build the optimizer over the same model).")
    state = {index[n]: v for n, v in optim_state_dict["state"].items() if n in index}
    return {"state": state, "param_groups": [{**g, "params": [index[n] for n in g["params"]]} for g in groups]}


def set_optimizer_state_dict(model, optimizers, optim_state_dict, *, options=None):
    for optimizer in _optimizers(optimizers):
        optimizer.load_state_dict(_to_indexed(model, optimizer, optim_state_dict))


def set_state_dict(model, optimizers, *, model_state_dict, optim_state_dict, options=None):
    result = set_model_state_dict(model, model_state_dict, options=options)
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return result
