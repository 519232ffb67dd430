"""RemoteModule: a module built and kept on another worker, called through RPC (PyTorch's basic API)."""
from ... import nn
from .. import rpc

__all__ = ["RemoteModule"]


def _call(module_rref, method, args, kwargs):
    return getattr(module_rref.local_value(), method)(*args, **kwargs)


def _parameter_rrefs(module_rref, recurse):
    return [rpc.RRef(p) for p in module_rref.local_value().parameters(recurse)]


def _parse_device(remote_device):
    if not isinstance(remote_device, str) or remote_device.count("/") != 1:
        raise ValueError(f"Could not parse remote_device: {remote_device}. The valid format is "
                         "'<workername>/<device>' (as 'worker1/cpu') or 'rank:<rank>/<device>'.")
    worker, device = remote_device.split("/")
    if worker.startswith("rank:"):
        worker = int(worker[len("rank:"):])
    return worker, device


class RemoteModule(nn.Module):
    """RemoteModule("worker1/cpu", nn.Linear, args=(4, 2)): the Linear is built on worker1; forward and
    forward_async run it there; remote_parameters() gives RRefs of its parameters (for DistributedOptimizer)."""

    def __init__(self, remote_device, module_cls, args=None, kwargs=None):
        super().__init__()
        worker, self.device = _parse_device(remote_device)
        self.on = rpc.get_worker_info(worker)
        self.module_rref = rpc.remote(self.on, module_cls, args=tuple(args or ()), kwargs=dict(kwargs or {}))
        self.module_rref._created.wait()   # errors of the constructor surface here, as in PyTorch

    def forward(self, *args, **kwargs):
        return rpc.rpc_sync(self.on, _call, args=(self.module_rref, "forward", args, kwargs))

    def forward_async(self, *args, **kwargs):
        return rpc.rpc_async(self.on, _call, args=(self.module_rref, "forward", args, kwargs))

    def remote_parameters(self, recurse=True):
        return rpc.rpc_sync(self.on, _parameter_rrefs, args=(self.module_rref, recurse))

    def get_module_rref(self):
        return self.module_rref

    def __repr__(self):
        return f"RemoteModule(on={self.on.name}, device={self.device})"
