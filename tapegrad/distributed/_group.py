"""The default process group: PyTorch's init_process_group over jax.distributed.

A group of several processes is JAX's multi-process runtime: `jax.distributed.initialize` connects
this process to the coordinator (rank 0's MASTER_ADDR:MASTER_PORT), after which every process sees
every process's devices and one jitted program can span them (`_collectives`). A group of one process
starts nothing: its collectives are identities, so a script written for `torchrun` also runs alone.
"""
import datetime
import os
from urllib.parse import urlparse

from ..device import DEVICE_TYPES as _DEVICE_TYPES

_BACKENDS = ("gloo", "nccl", "mpi", "xla")
_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")


class _Group:
    """What init_process_group settled: rank, world size, backend, and whether JAX's runtime was started."""

    def __init__(self, rank, world_size, backend, started_jax):
        self.rank, self.world_size, self.backend, self.started_jax = rank, world_size, backend, started_jax


_default = [None]


class GroupMember:
    WORLD = None   # the default group; PyTorch's collectives take it as group=None too


def is_available():
    return True


def is_initialized():
    return _default[0] is not None


def default_group():
    """The default group, with PyTorch's error when init_process_group was not called."""
    group = _default[0]
    if group is None:
        raise ValueError(_NOT_INITIALIZED)
    return group


def get_rank(group=None):
    return default_group().rank


def get_world_size(group=None):
    return default_group().world_size


def get_backend(group=None):
    return default_group().backend


def _env(name, method="env://"):
    value = os.environ.get(name)
    if value is None:
        raise ValueError(f"Error initializing torch.distributed using {method} rendezvous: environment variable "
                         f"{name} expected, but not set. Start the script with `python -m tapegrad.distributed.run` "
                         f"(which sets it) or set it yourself.")
    return value


def _rendezvous(init_method, rank, world_size):
    """(coordinator address, rank, world size) from PyTorch's init_method: env:// or tcp://host:port."""
    url = urlparse(init_method)
    if url.scheme == "env":
        rank = int(_env("RANK")) if rank < 0 else rank
        world_size = int(_env("WORLD_SIZE")) if world_size < 0 else world_size
        address = f"{_env('MASTER_ADDR')}:{int(_env('MASTER_PORT'))}"
    elif url.scheme == "tcp":
        if rank < 0 or world_size < 0:
            raise ValueError("Error initializing torch.distributed using tcp:// rendezvous: rank and world_size "
                             "must be given. Pass rank= and world_size= to init_process_group.")
        address = f"{url.hostname}:{url.port}"
    else:
        raise ValueError(f"No rendezvous handler for {url.scheme}://: tapegrad supports env:// and tcp://host:port.")
    if not 0 <= rank < world_size:
        raise ValueError(f"Invalid rank {rank} for world_size {world_size}: a rank is 0 <= rank < world_size.")
    return address, rank, world_size


def _backend_name(backend):
    if backend is None:
        return "gloo"
    name = str(backend).lower()
    # PyTorch also accepts per-device lists ("cpu:gloo,cuda:nccl"): the first named backend stands for them.
    name = name.split(",")[0].split(":")[-1]
    if name not in _BACKENDS:
        raise ValueError(f"Unknown backend type {backend}: use one of {', '.join(_BACKENDS)} (or None).")
    return name


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1, store=None,
                       group_name="", pg_options=None, device_id=None):
    """Join the default group. Several processes start JAX's multi-process runtime (before any JAX work)."""
    if _default[0] is not None:
        raise ValueError("trying to initialize the default process group twice! Call destroy_process_group() "
                         "first to start a new one.")
    if store is not None:
        raise ValueError("init_process_group(store=...) is not supported by tapegrad: pass init_method "
                         "('env://' or 'tcp://host:port') instead.")
    name = _backend_name(backend)
    address, rank, world_size = _rendezvous(init_method or "env://", rank, world_size)
    started = world_size > 1
    if started:
        _start_jax(address, rank, world_size, timeout, name)
    _default[0] = _Group(rank, world_size, name, started)


def _start_jax(address, rank, world_size, timeout, backend):
    import jax
    from jax._src import xla_bridge
    if xla_bridge.backends_are_initialized():
        raise RuntimeError("init_process_group must be called before any tensor is created: JAX's multi-process "
                           "runtime can only start before its devices are in use. Move the call to the top of "
                           "the script, right after the imports.")
    seconds = timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else 300
    local_rank = os.environ.get("LOCAL_RANK")
    # CPU collectives between processes go through gloo (or MPI), as PyTorch's CPU backends do.
    jax.config.update("jax_cpu_collectives_implementation", "mpi" if backend == "mpi" else "gloo")
    # With several processes per node (torchrun's layout), each GPU process owns the GPU of its local rank.
    devices = None
    if backend == "nccl" and local_rank is not None and int(os.environ.get("LOCAL_WORLD_SIZE", "1")) > 1:
        devices = [int(local_rank)]
    try:
        jax.distributed.initialize(address, num_processes=world_size, process_id=rank, local_device_ids=devices,
                                   initialization_timeout=int(seconds))
    except Exception as e:   # JAX's errors name its internals: say what failed in the group's terms
        raise RuntimeError(f"init_process_group: rank {rank} of {world_size} (local rank {local_rank}) could not "
                           f"join the coordinator at {address}: {e}. Check MASTER_ADDR/MASTER_PORT and that "
                           f"every rank was started.") from None


def destroy_process_group(group=None):
    group = default_group()
    if group.started_jax:
        import jax
        jax.distributed.shutdown()
    _default[0] = None


def is_gloo_available():
    return True   # JAX's CPU collectives between processes go through gloo


def is_mpi_available():
    return False


def is_nccl_available():
    """Whether GPU collectives (NCCL, through JAX's CUDA plugin) are available; asked without starting JAX's
    devices when they are not in use yet (init_process_group must come first)."""
    import importlib.util
    from jax._src import xla_bridge
    if xla_bridge.backends_are_initialized():
        from ..cuda import _gpus
        return bool(_gpus())
    return any(importlib.util.find_spec(name) is not None for name in ("jax_cuda12_plugin", "jax_cuda13_plugin"))


def get_default_backend_for_device(device):
    """PyTorch's default backend of a device type: 'gloo' for cpu, 'nccl' for cuda."""
    kind = device if isinstance(device, str) else getattr(device, "type", str(device))
    kind = kind.split(":")[0]
    if kind not in _DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of device string: "
                           f"{device}")
    backends = {"cpu": "gloo", "cuda": "nccl", "xla": "xla", "meta": "gloo"}
    if kind not in backends:
        raise RuntimeError(f"Default backend not registered for device : {kind}. tapegrad's backends are gloo "
                           "(cpu) and nccl (cuda).")
    return backends[kind]
