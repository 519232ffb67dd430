"""tapegrad.distributed.tensor: PyTorch's DTensor over jax.sharding (see _dtensor)."""
from . import placement_types
from ._dtensor import DTensor, distribute_module, distribute_tensor
from .placement_types import Partial, Placement, Replicate, Shard
from ..device_mesh import DeviceMesh, init_device_mesh

__all__ = ["DTensor", "DeviceMesh", "distribute_tensor", "distribute_module", "init_device_mesh", "Shard",
           "Replicate", "Partial", "Placement", "placement_types"]
