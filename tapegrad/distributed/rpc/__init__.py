"""tapegrad.distributed.rpc: PyTorch's torch.distributed.rpc over TCP sockets, pickle and threads.

    rpc.init_rpc("worker0", rank=0, world_size=2)     # MASTER_ADDR / MASTER_PORT as for PyTorch
    y = rpc.rpc_sync("worker1", torch.add, args=(x, 1))
    rref = rpc.remote("worker1", Model)                # the model lives on worker1
    out = rref.rpc_sync().forward(x)
    rpc.shutdown()

Calls and their results are pickled (functions by reference: they must be importable on the callee, as
with PyTorch); an exception raised by the callee is raised again in the caller with its type and a
message naming the worker and the callee's traceback.
"""
from . import functions
from ._rref import RRef
from .api import get_worker_info, init_rpc, is_available, remote, rpc_async, rpc_sync, shutdown
from .options import (DEFAULT_RPC_TIMEOUT_SEC, BackendType, RpcBackendOptions, TensorPipeRpcBackendOptions,
                      WorkerInfo)

PyRRef = RRef

__all__ = ["init_rpc", "shutdown", "rpc_sync", "rpc_async", "remote", "get_worker_info", "is_available", "RRef",
           "PyRRef", "WorkerInfo", "BackendType", "RpcBackendOptions", "TensorPipeRpcBackendOptions", "functions",
           "DEFAULT_RPC_TIMEOUT_SEC"]
