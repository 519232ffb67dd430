"""nn.DataParallel: one process, the batch split over this host's devices (see _sharding)."""
from ..._tensor import Tensor
from ..modules.module import Module
from . import _sharding


class DataParallel(Module):
    """PyTorch's DataParallel as one SPMD program instead of per-device replicas and threads.

    Parameters and buffers are replicated over the devices and each input is split along `dim`; the
    module runs once, on the whole batch, and XLA splits the work and sums the gradients across
    devices. Outputs stay split over the devices (reading them gathers them), so `output_device`
    only records PyTorch's argument. With one device the wrapper only calls the module, as
    PyTorch's does on a machine without CUDA.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        platform = _platform(module)
        devices = _sharding.local_devices(platform, device_ids)
        self._mesh = _sharding.batch_mesh(devices) if len(devices) > 1 else None
        if platform == "cpu" and self._mesh is None:
            self.device_ids = []   # PyTorch's attributes on a machine without CUDA
            return
        self.dim = dim
        self.device_ids = [d.id for d in devices]
        self.output_device = output_device if output_device is not None else self.device_ids[0]
        first = next(_states(module), None)
        self.src_device_obj = first.device if first is not None else None
        if self._mesh is not None:
            self._replicate(compute=True)

    def _replicate(self, compute=False):
        sharding = _sharding.replicated(self._mesh)
        for t in _states(self.module):
            _sharding.place_state(t, sharding, compute)

    def forward(self, *inputs, **kwargs):
        if self._mesh is None:
            return self.module(*inputs, **kwargs)
        self._replicate()   # parameters replaced or moved since (load_state_dict, .to)
        shard = lambda x: _map_tensors(x, lambda t: _sharding.shard_batch(t, self._mesh, self.dim))  # noqa: E731
        return self.module(*shard(inputs), **shard(kwargs))


def _platform(module):
    """The JAX platform of the module's parameters: DataParallel splits over devices of that kind."""
    first = next(_states(module), None)
    kind = first.device.type if first is not None else "cpu"
    return {"cuda": "gpu"}.get(kind, kind)


def _states(module):
    yield from module.parameters()
    yield from (b for b in module.buffers() if b is not None)


def _map_tensors(x, fn):
    if isinstance(x, Tensor):
        return fn(x)
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(_map_tensors(v, fn) for v in x)
    if isinstance(x, tuple):   # a namedtuple
        return type(x)(*(_map_tensors(v, fn) for v in x))
    if isinstance(x, dict):
        return type(x)((k, _map_tensors(v, fn)) for k, v in x.items())
    return x
