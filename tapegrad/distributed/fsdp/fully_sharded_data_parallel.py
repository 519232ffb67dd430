"""FullyShardedDataParallel: PyTorch's FSDP wrapper class over fully_shard.

The wrapper holds the module as `_fsdp_wrapped_module` and shards its parameters along dim 0 over this
process's devices (`fully_shard`'s placement; NO_SHARD replicates them). There is no flat parameter: the
original parameters stay (PyTorch's `use_orig_params=True`); state_dict names are the module's own,
without `_fsdp_wrapped_module.`, as PyTorch's. `auto_wrap_policy` wraps submodules first.
With `mixed_precision`, forward and backward run with parameters cast to `param_dtype` (gradients arrive
in the parameters' dtype), the root's floating inputs are cast, and buffers are cast to `buffer_dtype`.
Every state dict type returns whole tensors: this process holds every shard.
"""
import contextlib

from ...nn.modules.module import Module
from . import _fully_shard
from ._mixed_precision import cast_floats, run_cast
from .api import (BackwardPrefetch, CPUOffload, FullOptimStateDictConfig, FullStateDictConfig,  # noqa: F401
                  LocalOptimStateDictConfig, LocalStateDictConfig, MixedPrecision, OptimStateDictConfig,
                  ShardedOptimStateDictConfig, ShardedStateDictConfig, ShardingStrategy, StateDictConfig,
                  StateDictSettings, StateDictType)

FSDP_WRAPPED_MODULE = "_fsdp_wrapped_module"
_PREFIX = FSDP_WRAPPED_MODULE + "."

__all__ = ["FullyShardedDataParallel", "FSDP_WRAPPED_MODULE"]


def _clean(name):
    return name.replace(_PREFIX, "")


class FullyShardedDataParallel(Module):
    def __init__(self, module, process_group=None, sharding_strategy=None, cpu_offload=None, auto_wrap_policy=None,
                 backward_prefetch=BackwardPrefetch.BACKWARD_PRE, mixed_precision=None, ignored_modules=None,
                 param_init_fn=None, device_id=None, sync_module_states=False, forward_prefetch=False,
                 limit_all_gathers=True, use_orig_params=False, ignored_states=None, device_mesh=None,
                 _mesh=None):
        super().__init__()
        if mixed_precision is not None and mixed_precision.keep_low_precision_grads:
            raise ValueError("MixedPrecision(keep_low_precision_grads=True) is not supported by tapegrad: a "
                             "gradient has its parameter's dtype. Leave it False.")
        self.sharding_strategy = sharding_strategy or ShardingStrategy.FULL_SHARD
        self.cpu_offload = cpu_offload or CPUOffload()
        self.backward_prefetch = backward_prefetch
        self.forward_prefetch = forward_prefetch
        self.limit_all_gathers = limit_all_gathers
        self.use_orig_params = use_orig_params
        self.mixed_precision = mixed_precision or MixedPrecision()
        self.process_group = process_group
        self.device_id = device_id
        self._state_dict_settings = StateDictSettings(StateDictType.FULL_STATE_DICT, FullStateDictConfig(),
                                                      FullOptimStateDictConfig())
        self._mesh = _fully_shard.check_mesh(device_mesh if device_mesh is not None else _mesh,
                                             "FullyShardedDataParallel")
        options = dict(sharding_strategy=self.sharding_strategy, cpu_offload=cpu_offload,
                       backward_prefetch=backward_prefetch, mixed_precision=mixed_precision,
                       forward_prefetch=forward_prefetch, use_orig_params=use_orig_params, _mesh=self._mesh)
        if auto_wrap_policy is not None:
            from .wrap import _recursive_wrap
            ignored = set(ignored_modules or ())
            _recursive_wrap(module, auto_wrap_policy, lambda m: FullyShardedDataParallel(m, **options),
                            ignored, only_wrap_children=True)
        if param_init_fn is not None:
            param_init_fn(module)
        dtype = self.mixed_precision.buffer_dtype
        if dtype is not None:
            for b in module.buffers():
                if b.is_floating_point():
                    b.data = b.data.to(dtype)
        self._fsdp_wrapped_module = module
        _fully_shard.shard_states(module, self._mesh, split=self.sharding_strategy != ShardingStrategy.NO_SHARD)

    @property
    def module(self):
        return self._fsdp_wrapped_module

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules[FSDP_WRAPPED_MODULE], name)

    def __getitem__(self, key):
        return self._fsdp_wrapped_module[key]

    def _is_root(self):
        """Whether this wrapper runs outside any other's forward (PyTorch's root casts the inputs)."""
        return not _running[0]

    def forward(self, *args, **kwargs):
        mp = self.mixed_precision
        if mp.param_dtype is not None and (mp.cast_forward_inputs or mp.cast_root_forward_inputs and self._is_root()):
            args, kwargs = cast_floats((args, kwargs), mp.param_dtype)
        _running[0] += 1
        try:
            return run_cast(self._fsdp_wrapped_module, lambda: self._fsdp_wrapped_module(*args, **kwargs),
                            mp.param_dtype, lambda m: isinstance(m, FullyShardedDataParallel))
        finally:
            _running[0] -= 1

    # ---- state dicts name tensors without the wrapper's prefix, as PyTorch's ----------------------
    def state_dict(self, *args, **kwargs):
        out = super().state_dict(*args, **kwargs)
        clean = type(out)()
        for k, v in out.items():
            clean[_clean(k)] = v
        return clean

    def load_state_dict(self, state_dict, strict=True, assign=False):
        names = {_clean(k): k for k in super().state_dict().keys()}
        return super().load_state_dict({names.get(k, k): v for k, v in state_dict.items()}, strict=strict,
                                       assign=assign)

    # ---- state dict types: recorded; every type gives whole tensors ------------------------------
    @staticmethod
    def set_state_dict_type(module, state_dict_type, state_dict_config=None, optim_state_dict_config=None):
        previous = None
        for m in FullyShardedDataParallel.fsdp_modules(module):
            previous = previous or m._state_dict_settings
            config = state_dict_config or {StateDictType.FULL_STATE_DICT: FullStateDictConfig,
                                           StateDictType.LOCAL_STATE_DICT: LocalStateDictConfig,
                                           StateDictType.SHARDED_STATE_DICT: ShardedStateDictConfig}[
                state_dict_type]()
            m._state_dict_settings = StateDictSettings(state_dict_type, config,
                                                       optim_state_dict_config or FullOptimStateDictConfig())
        return previous

    @staticmethod
    def get_state_dict_type(module):
        mods = FullyShardedDataParallel.fsdp_modules(module)
        if not mods:
            raise ValueError("No FSDP modules found in the given module: wrap it with FullyShardedDataParallel.")
        return mods[0]._state_dict_settings

    @staticmethod
    @contextlib.contextmanager
    def state_dict_type(module, state_dict_type, state_dict_config=None, optim_state_dict_config=None):
        previous = FullyShardedDataParallel.set_state_dict_type(module, state_dict_type, state_dict_config,
                                                                optim_state_dict_config)
        try:
            yield
        finally:
            if previous is not None:
                FullyShardedDataParallel.set_state_dict_type(module, previous.state_dict_type,
                                                             previous.state_dict_config,
                                                             previous.optim_state_dict_config)

    @staticmethod
    def fsdp_modules(module, root_only=False):
        mods = [m for m in module.modules() if isinstance(m, FullyShardedDataParallel)]
        return mods[:1] if root_only else mods

    @staticmethod
    def optim_state_dict(model, optim, optim_state_dict=None, group=None):
        """The optimizer's state dict keyed by parameter names (as PyTorch's full optimizer state dict)."""
        from ..checkpoint.state_dict import get_optimizer_state_dict
        return get_optimizer_state_dict(model, optim)

    @staticmethod
    def optim_state_dict_to_load(model, optim, optim_state_dict, is_named_optimizer=False, load_directly=False,
                                 group=None):
        from ..checkpoint.state_dict import _to_indexed
        converted = _to_indexed(model, optim, optim_state_dict)
        if load_directly:
            optim.load_state_dict(converted)
        return converted

    @contextlib.contextmanager
    def no_sync(self):
        """Gradients are summed inside each program; there is no separate synchronisation to skip."""
        yield

    def clip_grad_norm_(self, max_norm, norm_type=2.0):
        from ...nn.utils import clip_grad_norm_
        return clip_grad_norm_(self.parameters(), max_norm, norm_type)

    @staticmethod
    @contextlib.contextmanager
    def summon_full_params(module, recurse=True, writeback=True, rank0_only=False, offload_to_cpu=False,
                           with_grads=False):
        """Parameters are whole tensors already (their shards are gathered where a program needs them)."""
        yield


_running = [0]   # how many FSDP forwards are running: the outermost is the root
