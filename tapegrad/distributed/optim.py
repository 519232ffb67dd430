"""tapegrad.distributed.optim.DistributedOptimizer: one local optimizer per worker owning parameters,
stepped with the gradients a distributed autograd context holds there (PyTorch's construction)."""
import threading

from . import autograd as dist_autograd
from . import rpc

__all__ = ["DistributedOptimizer"]


class _LocalOptimizer:
    # PyTorch's _LocalOptimizer serializes steps per worker: concurrent trainers share the parameters.
    _lock = threading.Lock()

    def __init__(self, optimizer_class, local_params_rref, *args, **kwargs):
        self._local_params = [rref.local_value() for rref in local_params_rref]
        self.optim = optimizer_class(self._local_params, *args, **kwargs)

    def step(self, autograd_ctx_id):
        grads = dist_autograd.get_gradients(autograd_ctx_id)
        with _LocalOptimizer._lock:
            kept = [param.grad for param in self._local_params]
            for param in self._local_params:
                param.grad = grads.get(param)
            try:
                self.optim.step()
            finally:   # PyTorch's functional optimizers take the gradients as arguments: .grad stays as it was
                for param, grad in zip(self._local_params, kept):
                    param.grad = grad


def _new_local_optimizer(optimizer_class, local_params_rref, *args, **kwargs):
    return rpc.RRef(_LocalOptimizer(optimizer_class, local_params_rref, *args, **kwargs))


def _local_optimizer_step(local_optim_rref, autograd_ctx_id):
    local_optim_rref.local_value().step(autograd_ctx_id)


class DistributedOptimizer:
    """DistributedOptimizer(optim.SGD, [param RRefs...], lr=0.05): `step(context_id)` steps every owner's
    parameters with the gradients of that context, on all owners at once, and returns when all are done."""

    def __init__(self, optimizer_class, params_rref, *args, **kwargs):
        per_worker = {}
        for rref in params_rref:
            per_worker.setdefault(rref.owner(), []).append(rref)
        futures = [rpc.rpc_async(worker, _new_local_optimizer, args=(optimizer_class, rrefs) + args, kwargs=kwargs)
                   for worker, rrefs in per_worker.items()]
        self.remote_optimizers = [fut.wait() for fut in futures]

    def step(self, context_id):
        dist_autograd._context.retrieve(context_id)   # PyTorch's error for an unknown context, raised here
        futures = [rpc.rpc_async(opt.owner(), _local_optimizer_step, args=(opt, context_id))
                   for opt in self.remote_optimizers]
        for fut in futures:
            fut.wait()
