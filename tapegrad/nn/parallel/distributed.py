"""DistributedDataParallel: one model replica per process, gradients averaged over processes after backward.

A process with several local devices of the module's platform (device_ids=None) replicates the module over
them and splits each input's batch dimension among them, as DataParallel: XLA sums the per-device
gradients inside the step's program, and the processes then average the results.

As PyTorch's: parameters and buffers are broadcast from rank 0 at construction (and buffers before
each forward), and each parameter's post-accumulate-grad hook marks it ready; when every parameter
expected to get a gradient is ready, all gradients are averaged over the processes in one collective
program (one bucket) and written into `.grad` in place, before `backward()` returns. `no_sync()` skips
that, so gradients accumulate locally until the first backward after it.
"""
import contextlib

from ... import distributed as dist
from ..._grad_mode import is_grad_enabled
from ...distributed._collectives import ReduceOp, broadcast_arrays, reduce_arrays
from ..modules.module import Module


class DistributedDataParallel(Module):
    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True, init_sync=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **options):
        super().__init__()
        group = dist._group.default_group()
        unsupported = sorted(k for k, v in options.items() if v not in (None, False))
        if unsupported:   # mixed precision, device meshes, per-parameter hook placement...: not silently ignored
            raise ValueError(f"DistributedDataParallel: tapegrad does not support {', '.join(unsupported)}; leave "
                             f"them unset (gradients are averaged in one bucket when backward ends).")
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element. Run one process per "
                             "device (python -m tapegrad.distributed.run --nproc-per-node N).")
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't have any parameter "
                               "that requires a gradient.")
        self.module = module
        self.device_ids = None if device_ids is None else [_index(d) for d in device_ids]
        self.output_device = output_device
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self._params = params
        self._world_size = group.world_size
        self._expected = None    # the parameters whose gradients this backward waits for (set by forward)
        self._ready = set()
        if init_sync:
            _broadcast_in_place(list(module.parameters()) + list(module.buffers()))
        self._mesh = None if device_ids is not None else _local_mesh(params[0])
        if self._mesh is not None:
            _place(list(module.parameters()) + list(module.buffers()), self._mesh, None)
        for p in params:
            p.register_post_accumulate_grad_hook(self._grad_ready)

    def forward(self, *inputs, **kwargs):
        if self._expected is not None:
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new one. This error "
                "indicates that your module has parameters that were not used in producing loss. You can enable "
                "unused parameter detection by passing the keyword argument `find_unused_parameters=True` to "
                "`torch.nn.parallel.DistributedDataParallel`, or make sure all `forward` function outputs "
                "participate in calculating loss.")
        if self.broadcast_buffers:
            _broadcast_in_place(list(self.module.buffers()))
        if self._mesh is not None:
            inputs, kwargs = _split_batches((inputs, kwargs), self._mesh, self.dim)
        out = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync:
            self._expected = set(map(id, self._used(out) if self.find_unused_parameters else self._params))
            self._ready = set()
            if not self._expected:
                self._expected = None
        return out

    def _used(self, out):
        """The parameters the graph of `out` reaches (find_unused_parameters walks it, as PyTorch)."""
        from jax.tree_util import tree_leaves
        from ..._tensor import Tensor
        wanted = {id(p): p for p in self._params}
        seen, found, stack = set(), [], [t.grad_fn for t in tree_leaves(out) if isinstance(t, Tensor)]
        while stack:
            fn = stack.pop()
            if fn is None or id(fn) in seen:
                continue
            seen.add(id(fn))
            var = getattr(fn, "variable", None)
            if var is not None and id(var) in wanted:
                found.append(var)
            stack.extend(f for f, _ in fn.next_functions)
        return found

    def _grad_ready(self, param):
        if self._expected is None or id(param) not in self._expected:
            return
        self._ready.add(id(param))
        if self._ready >= self._expected:
            self._expected = None
            self._average_grads()

    def _average_grads(self):
        """All gradients averaged over the processes, in one program; a parameter no process used keeps None."""
        import jax.numpy as jnp
        from ..._tensor import Tensor
        if self._world_size == 1:
            return
        values = [p.grad._value if p.grad is not None else jnp.zeros(tuple(p.shape), p.dtype.np)
                  for p in self._params]
        used = jnp.asarray([p.grad is not None for p in self._params], jnp.float64)
        *averaged, used = reduce_arrays(values + [used], ReduceOp.AVG)
        for p, g, u in zip(self._params, averaged, used.tolist()):
            if p.grad is not None:
                p.grad._set_value(g)
            elif u > 0:
                p.grad = Tensor._wrap(g)

    @contextlib.contextmanager
    def no_sync(self):
        """Backward passes inside accumulate gradients locally; the first backward after averages them."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old


def _index(device):
    return device if isinstance(device, int) else device.index


def _local_mesh(param):
    """A mesh over this process's devices of the parameter's platform, or None when it has one."""
    import jax
    import numpy as np
    devices = jax.local_devices(backend=next(iter(param._value.devices())).platform)
    return jax.sharding.Mesh(np.array(devices), ("batch",)) if len(devices) > 1 else None


def _sharding(mesh, dim, shape):
    """Split along dim when it divides evenly among the devices, else replicated."""
    import jax
    spec = [None] * len(shape)
    if dim is not None and dim < len(shape) and shape[dim] % mesh.size == 0:
        spec[dim] = "batch"
    return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec(*spec))


def _place(tensors, mesh, dim):
    import jax
    for t in tensors:
        t._set_value(jax.device_put(t._value, _sharding(mesh, dim, tuple(t.shape))))


def _split_batches(tree, mesh, dim):
    """Tensor inputs (outside autograd) with their batch dimension split over the mesh."""
    import jax
    from ..._tensor import Tensor

    def split(x):
        if not isinstance(x, Tensor) or x.requires_grad:   # a graph input keeps its place (and its history)
            return x
        return Tensor._wrap(jax.device_put(x._value, _sharding(mesh, dim, tuple(x.shape))))
    return jax.tree_util.tree_map(split, tree)


def _broadcast_in_place(tensors):
    from ..._grad_mode import no_grad
    values = broadcast_arrays([t._value for t in tensors], 0)
    with no_grad():
        for t, v in zip(tensors, values):
            if v is not t._value:
                t._set_value(v)
