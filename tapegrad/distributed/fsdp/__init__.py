"""tapegrad.distributed.fsdp: fully sharded data parallelism over this process's devices.

`fully_shard` (PyTorch's FSDP2) and `FullyShardedDataParallel` (the wrapper class) both split parameters,
gradients and optimizer state along dim 0 over a jax.sharding mesh (see _fully_shard)."""
from . import api, fully_sharded_data_parallel, wrap
from ._fully_shard import (CPUOffloadPolicy, FSDPModule, MixedPrecisionPolicy, OffloadPolicy, fully_shard,
                           memory_per_device)
from .api import (BackwardPrefetch, CPUOffload, FullOptimStateDictConfig, FullStateDictConfig,
                  LocalOptimStateDictConfig, LocalStateDictConfig, MixedPrecision, OptimStateDictConfig,
                  ShardedOptimStateDictConfig, ShardedStateDictConfig, ShardingStrategy, StateDictConfig,
                  StateDictSettings, StateDictType)
from .fully_sharded_data_parallel import FullyShardedDataParallel

__all__ = ["fully_shard", "memory_per_device", "FSDPModule", "MixedPrecisionPolicy", "OffloadPolicy",
           "CPUOffloadPolicy", "FullyShardedDataParallel", "MixedPrecision", "ShardingStrategy", "BackwardPrefetch",
           "CPUOffload", "StateDictType", "StateDictConfig", "FullStateDictConfig", "LocalStateDictConfig",
           "ShardedStateDictConfig", "OptimStateDictConfig", "FullOptimStateDictConfig", "LocalOptimStateDictConfig",
           "ShardedOptimStateDictConfig", "StateDictSettings", "api", "wrap", "fully_sharded_data_parallel"]
