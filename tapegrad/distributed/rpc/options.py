"""Backend options and worker identities (PyTorch's TensorPipeRpcBackendOptions, WorkerInfo, BackendType)."""
import enum

DEFAULT_RPC_TIMEOUT_SEC = 60.0
DEFAULT_NUM_WORKER_THREADS = 16
DEFAULT_INIT_METHOD = "env://"
UNSET_RPC_TIMEOUT = -1.0


class BackendType(enum.Enum):
    TENSORPIPE = "TENSORPIPE"


class WorkerInfo:
    """A worker's name and id (its rank), as `rpc.get_worker_info()` gives them."""
    __slots__ = ("name", "id")

    def __init__(self, name, id):
        self.name, self.id = name, id

    def __eq__(self, other):
        return isinstance(other, WorkerInfo) and (self.name, self.id) == (other.name, other.id)

    def __hash__(self):
        return hash((self.name, self.id))

    def __reduce__(self):
        return WorkerInfo, (self.name, self.id)

    def __repr__(self):
        return f"WorkerInfo(id={self.id}, name={self.name})"


class TensorPipeRpcBackendOptions:
    """Options of the RPC agent. tapegrad's agent runs over TCP sockets and pickle; `device_maps` and
    `devices` are accepted (tensors travel as host values), transports and channels ignored."""

    def __init__(self, *, num_worker_threads=DEFAULT_NUM_WORKER_THREADS, rpc_timeout=DEFAULT_RPC_TIMEOUT_SEC,
                 init_method=DEFAULT_INIT_METHOD, device_maps=None, devices=None, _transports=None, _channels=None):
        if num_worker_threads < 1:
            raise ValueError(f"num_worker_threads must be positive, got {num_worker_threads}.")
        self.num_worker_threads = int(num_worker_threads)
        self.rpc_timeout = float(rpc_timeout)
        self.init_method = init_method
        self.device_maps = dict(device_maps or {})
        self.devices = list(devices or [])

    def set_device_map(self, to, device_map):
        self.device_maps[to] = dict(device_map)

    def set_devices(self, devices):
        self.devices = list(devices)


RpcBackendOptions = TensorPipeRpcBackendOptions
