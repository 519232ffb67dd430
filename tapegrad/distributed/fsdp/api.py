"""PyTorch's FSDP option types (torch.distributed.fsdp.api): enums and config records.

Options about when gathers happen, prefetching and CPU offload are accepted and stored but change nothing:
XLA schedules the gathers and reduce-scatters of each compiled program itself, and tapegrad keeps every
shard on its device. MixedPrecision does change dtypes (see fully_sharded_data_parallel).
"""
from dataclasses import dataclass, field
from enum import Enum, auto

__all__ = ["ShardingStrategy", "BackwardPrefetch", "CPUOffload", "MixedPrecision", "StateDictType",
           "StateDictConfig", "FullStateDictConfig", "LocalStateDictConfig", "ShardedStateDictConfig",
           "OptimStateDictConfig", "FullOptimStateDictConfig", "LocalOptimStateDictConfig",
           "ShardedOptimStateDictConfig", "StateDictSettings"]


class ShardingStrategy(Enum):
    """FULL_SHARD, SHARD_GRAD_OP and the hybrid ones split parameters along dim 0 over the devices (XLA decides
    when to gather them); NO_SHARD replicates them."""
    FULL_SHARD = auto()
    SHARD_GRAD_OP = auto()
    NO_SHARD = auto()
    HYBRID_SHARD = auto()
    _HYBRID_SHARD_ZERO2 = auto()


class BackwardPrefetch(Enum):
    """Accepted and stored: XLA schedules the gathers of a compiled backward."""
    BACKWARD_PRE = auto()
    BACKWARD_POST = auto()


class StateDictType(Enum):
    FULL_STATE_DICT = auto()
    LOCAL_STATE_DICT = auto()
    SHARDED_STATE_DICT = auto()


@dataclass
class CPUOffload:
    """Accepted and stored: shards stay on their devices."""
    offload_params: bool = False


@dataclass
class MixedPrecision:
    """param_dtype: the dtype parameters are cast to for forward and backward (gradients reach the float32
    parameters as float32); buffer_dtype: buffers are cast once when wrapped; reduce_dtype: stored (the
    gradient sum over devices happens inside the program, in the gradient's dtype)."""
    param_dtype: object = None
    reduce_dtype: object = None
    buffer_dtype: object = None
    keep_low_precision_grads: bool = False
    cast_forward_inputs: bool = False
    cast_root_forward_inputs: bool = True
    _module_classes_to_ignore: tuple = field(default_factory=lambda: _batch_norm_classes())


def _batch_norm_classes():
    from ...nn.modules.normalization import _BatchNorm
    return (_BatchNorm,)


@dataclass
class StateDictConfig:
    offload_to_cpu: bool = False


@dataclass
class FullStateDictConfig(StateDictConfig):
    rank0_only: bool = False


@dataclass
class LocalStateDictConfig(StateDictConfig):
    pass


@dataclass
class ShardedStateDictConfig(StateDictConfig):
    _use_dtensor: bool = False


@dataclass
class OptimStateDictConfig:
    offload_to_cpu: bool = True


@dataclass
class FullOptimStateDictConfig(OptimStateDictConfig):
    rank0_only: bool = False


@dataclass
class LocalOptimStateDictConfig(OptimStateDictConfig):
    offload_to_cpu: bool = False


@dataclass
class ShardedOptimStateDictConfig(OptimStateDictConfig):
    _use_dtensor: bool = False


@dataclass
class StateDictSettings:
    state_dict_type: StateDictType
    state_dict_config: StateDictConfig
    optim_state_dict_config: OptimStateDictConfig
