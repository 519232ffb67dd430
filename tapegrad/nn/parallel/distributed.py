"""DistributedDataParallel: one model replica per process, gradients averaged over processes after backward.

A process with several local devices of the module's platform (device_ids=None) replicates the module over
them and splits each input's batch dimension among them, as DataParallel: XLA sums the per-device
gradients inside the step's program, and the processes then average the results.

As PyTorch's: parameters and buffers are broadcast from rank 0 at construction (and buffers before
each forward), and each parameter's post-accumulate-grad hook marks it ready; when every parameter
expected to get a gradient is ready, all gradients are averaged over the processes in one collective
program (one bucket) and written into `.grad` in place, before `backward()` returns. `no_sync()` skips
that, so gradients accumulate locally until the first backward after it.

It is a Joinable, as PyTorch's: under `Join` (or `ddp.join()`) a process out of inputs shadows each
iteration of the others (the buffer broadcast, whether this backward syncs, and the gradient collective with
zeros), and when all have joined the last joiner's parameters and buffers are broadcast to every process.
"""
import contextlib

from ... import distributed as dist
from ..._grad_mode import is_grad_enabled
from ...distributed._collectives import ReduceOp, broadcast_arrays, reduce_arrays
from ...distributed.algorithms.join import Join, Joinable, JoinHook
from ..modules.module import Module


class _DDPJoinHook(JoinHook):
    """What a joined process does while others still train (main_hook) and once all have joined (post_hook)."""

    def __init__(self, ddp, divide_by_initial_world_size):
        if not isinstance(ddp, DistributedDataParallel):
            raise AssertionError("DDP join hook requires passing in a DistributedDataParallel instance as the "
                                 f"state, got {type(ddp).__name__}")
        self.ddp = ddp
        self.ddp._divide_by_initial_world_size = divide_by_initial_world_size
        super().__init__()

    def main_hook(self):
        """The collectives of one forward and backward of the processes not joined, in their order."""
        ddp = self.ddp
        if ddp._will_sync_module_buffers():
            ddp._sync_module_buffers(ddp._find_common_rank(ddp._distributed_rank, False))
        should_sync_backwards = ddp._check_global_requires_backward_grad_sync(is_joined_rank=True)
        ddp.require_forward_param_sync = should_sync_backwards
        if should_sync_backwards:
            reduce_arrays(ddp._bucket([None] * len(ddp._params)), ReduceOp.SUM)   # zero gradients, none used

    def post_hook(self, is_last_joiner):
        self.ddp._sync_final_model(is_last_joiner)


class DistributedDataParallel(Module, Joinable):
    def __init__(self, module, device_ids=None, output_device=None, dim=0, broadcast_buffers=True, init_sync=True,
                 process_group=None, bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, **options):
        super().__init__()
        Joinable.__init__(self)
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
        self.require_forward_param_sync = True
        self.process_group = process_group   # None: the default group (tapegrad's dist.group.WORLD)
        self.device = params[0].device
        self._divide_by_initial_world_size = True   # Join's divide_by_initial_world_size, set by the join hook
        self._divisor = None   # the processes not joined, counted by this iteration's forward (Join only)
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
        work = Join.notify_join_context(self)
        count = None if work is None or self._divide_by_initial_world_size else work.result()[0]
        self._divisor = None if count is None else int(count.item())
        if self._will_sync_module_buffers():
            # under Join, rank 0 may have joined with stale buffers: the highest rank still training sends
            src = self._find_common_rank(self._distributed_rank, True) if self._join_config.enable else 0
            self._sync_module_buffers(src)
        if self._join_config.enable:
            self._check_global_requires_backward_grad_sync(is_joined_rank=False)
        if self._mesh is not None:
            inputs, kwargs = _split_batches((inputs, kwargs), self._mesh, self.dim)
        out = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync:
            self.require_forward_param_sync = True
            self._expected = set(map(id, self._used(out) if self.find_unused_parameters else self._params))
            self._ready = set()
            if not self._expected:
                self._expected = None
        else:
            self.require_forward_param_sync = False
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
        """All gradients averaged over the processes, in one program; a parameter no process used keeps None.

        As PyTorch's reducer, each gradient is scaled by 1/divisor before the sum: the world size, or under
        Join(divide_by_initial_world_size=False) the number of processes not joined."""
        from ..._tensor import Tensor
        if self._world_size == 1:
            return
        grads = [p.grad._value if p.grad is not None else None for p in self._params]
        *summed, used = reduce_arrays(self._bucket(grads, self._divisor or self._world_size), ReduceOp.SUM)
        for p, g, u in zip(self._params, summed, used.tolist()):
            if p.grad is not None:
                p.grad._set_value(g)
            elif u > 0:
                p.grad = Tensor._wrap(g)

    def _bucket(self, grads, divisor=1):
        """The gradient collective's arrays: each gradient / divisor (zeros for None), then the used flags."""
        import jax.numpy as jnp
        import numpy as np
        factor = np.float64(1.0) / divisor
        values = [jnp.zeros(tuple(p.shape), p.dtype.np) if g is None else g * factor.astype(g.dtype)
                  for p, g in zip(self._params, grads)]
        return values + [jnp.asarray([g is not None for g in grads], jnp.float64)]

    # ---- Join: PyTorch's DDP join protocol ----------------------------------------------------------

    @property
    def _distributed_rank(self):
        return dist.get_rank(self.process_group)

    def _will_sync_module_buffers(self):
        return self.require_forward_param_sync and self.broadcast_buffers and len(list(self.module.buffers())) > 0

    def _sync_module_buffers(self, authoritative_rank):
        _broadcast_in_place(list(self.module.buffers()), authoritative_rank)

    def _find_common_rank(self, input_rank, rank_cond):
        """The highest rank among those where rank_cond holds (an all-reduce MAX over every process)."""
        from ... import tensor
        rank_to_use = tensor([input_rank if rank_cond else -1], device=self.device)
        dist.all_reduce(rank_to_use, op=ReduceOp.MAX, group=self.process_group)
        if rank_to_use.item() == -1:
            raise ValueError("BUG! Expected rank_cond to be true for at least one process. This indicates a bug "
                             "in tapegrad, please report an issue.")
        return rank_to_use.item()

    def _check_global_requires_backward_grad_sync(self, is_joined_rank):
        """Tells joined processes whether this iteration's backward averages gradients (a sum of flags).
        A forward without grad counts as not syncing (PyTorch counts it, and its joined ranks then wait for
        a gradient collective that never comes)."""
        from ... import ones, zeros
        syncing = not is_joined_rank and self.require_backward_grad_sync and is_grad_enabled()
        flag = ones(1, device=self.device) if syncing else zeros(1, device=self.device)
        dist.all_reduce(flag, group=self.process_group)
        return flag.item() != 0 if is_joined_rank else None

    def _sync_final_model(self, is_last_joiner):
        """The last joiner's parameters (and buffers, with broadcast_buffers) on every process; ties go to the
        highest rank."""
        self._authoritative_rank = self._find_common_rank(self._distributed_rank, is_last_joiner)
        states = list(self.module.parameters()) + (list(self.module.buffers()) if self.broadcast_buffers else [])
        _broadcast_in_place(states, self._authoritative_rank)

    def join(self, divide_by_initial_world_size=True, enable=True, throw_on_early_termination=False):
        """Join([self], ...): train on uneven inputs across processes (see Join)."""
        return Join([self], enable, throw_on_early_termination,
                    divide_by_initial_world_size=divide_by_initial_world_size)

    def join_hook(self, **kwargs):
        return _DDPJoinHook(self, divide_by_initial_world_size=kwargs.get("divide_by_initial_world_size", True))

    @property
    def join_device(self):
        return self.device

    @property
    def join_process_group(self):
        return self.process_group

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


def _broadcast_in_place(tensors, src=0):
    from ..._grad_mode import no_grad
    values = broadcast_arrays([t._value for t in tensors], src)
    with no_grad():
        for t, v in zip(tensors, values):
            if v is not t._value:
                t._set_value(v)
