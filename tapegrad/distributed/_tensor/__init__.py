"""PyTorch's earlier path of the DTensor API (torch.distributed._tensor), kept by older scripts."""
from ..tensor import (DeviceMesh, DTensor, Partial, Placement, Replicate, Shard, distribute_module,  # noqa: F401
                      distribute_tensor, init_device_mesh)
