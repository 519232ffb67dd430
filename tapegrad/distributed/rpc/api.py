"""init_rpc, shutdown and the calls (rpc_sync, rpc_async, remote, get_worker_info)."""
import os
import threading

from .options import UNSET_RPC_TIMEOUT, BackendType, TensorPipeRpcBackendOptions

__all__ = ["init_rpc", "shutdown", "rpc_sync", "rpc_async", "remote", "get_worker_info", "is_available"]

_agent = [None]
_init_lock = threading.Lock()


def is_available():
    return True


def _require_agent():
    agent = _agent[0]
    if agent is None:
        raise RuntimeError("RPC has not been initialized. Call torch.distributed.rpc.init_rpc first.")
    return agent


def init_rpc(name, backend=None, rank=-1, world_size=None, rpc_backend_options=None):
    """Join the RPC group as worker `name` of rank `rank` among `world_size` (RANK / WORLD_SIZE from the
    environment when not given); returns when every worker has joined."""
    from ._agent import Agent
    if backend is not None and backend != BackendType.TENSORPIPE:
        raise ValueError(f"backend {backend} is not supported: tapegrad's RPC has the TENSORPIPE backend type "
                         "(over TCP sockets).")
    if not isinstance(name, str) or not name:
        raise RuntimeError(f"Worker name must be a non-empty string, got {name!r}.")
    if rank is None or rank < 0:
        rank = int(os.environ["RANK"]) if "RANK" in os.environ else -1
    if world_size is None:
        world_size = int(os.environ["WORLD_SIZE"]) if "WORLD_SIZE" in os.environ else None
    if rank < 0 or world_size is None:
        raise ValueError("init_rpc needs rank and world_size (or the RANK and WORLD_SIZE environment variables).")
    if not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} is out of range for world_size {world_size}.")
    options = rpc_backend_options or TensorPipeRpcBackendOptions()
    with _init_lock:
        if _agent[0] is not None:
            raise RuntimeError("RPC is already initialized. Call rpc.shutdown() before init_rpc again.")
        _agent[0] = Agent(name, rank, world_size, options)


def shutdown(graceful=True, timeout=0):
    """Leave the RPC group. Graceful (the default): wait for this worker's outstanding calls, then for
    every other worker to reach shutdown too, so that no call is left unanswered."""
    agent = _require_agent()
    try:
        if graceful:
            agent.wait_idle()
            agent.barrier()
            agent.wait_idle()
    finally:
        _agent[0] = None
        agent.close()


def get_worker_info(worker_name=None):
    """WorkerInfo (name, id) of `worker_name`, or of this worker."""
    agent = _require_agent()
    return agent.info if worker_name is None else agent.resolve(worker_name)


def _current_context():
    from ..autograd import _context
    return _context.current()


def rpc_async(to, func, args=None, kwargs=None, timeout=UNSET_RPC_TIMEOUT):
    """Run func(*args, **kwargs) on worker `to` (a name, WorkerInfo or id); a Future of its result."""
    return _require_agent().call(to, func, args, kwargs, timeout, _current_context())


def rpc_sync(to, func, args=None, kwargs=None, timeout=UNSET_RPC_TIMEOUT):
    """Run func(*args, **kwargs) on worker `to` and return its result (its exception raised here)."""
    return rpc_async(to, func, args, kwargs, timeout).wait()


def remote(to, func, args=None, kwargs=None, timeout=UNSET_RPC_TIMEOUT):
    """Run func on worker `to`, which keeps the result; an RRef to it, at once."""
    from ._rref import RRef, _create_owned
    agent = _require_agent()
    owner = agent.resolve(to)
    rref_id = (agent.info.id, next(agent.rref_ids))
    created = agent.call(owner, _create_owned, (rref_id, func, tuple(args or ()), dict(kwargs or {})), None,
                         timeout, _current_context())
    return RRef._make(owner, rref_id, created)
