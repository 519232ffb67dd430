"""DeviceMesh and init_device_mesh: PyTorch's n-dimensional arrangement of devices over a jax.sharding.Mesh.

One process drives every device of its mesh (JAX's single-controller SPMD), so a DeviceMesh is a view of
one jax Mesh: the whole mesh, or some of its named dimensions (`mesh["tp"]`). Placing a tensor on a
sub-mesh shards it along those dimensions and replicates it along the others, which is what each rank
of PyTorch's sub-mesh sees. The devices are this process's own (`jax.local_devices`), as everywhere in
tapegrad.distributed: processes hold local tensors, and a mesh spans the devices of one process.
"""
import math

import jax
import numpy as np
from jax.sharding import Mesh

__all__ = ["DeviceMesh", "init_device_mesh"]

_PLATFORMS = {"cpu": "cpu", "cuda": "gpu", "gpu": "gpu", "tpu": "tpu", "xla": None}


class _ProcessGroup:
    """What `DeviceMesh.get_group` returns: tapegrad's default group of processes (a mesh's devices all
    belong to this process, so a mesh dimension spans no other process). Collectives accept it as `group`."""

    def rank(self):
        from . import _group
        return _group.get_rank() if _group.is_initialized() else 0

    def size(self):
        from . import _group
        return _group.get_world_size() if _group.is_initialized() else 1

    def __repr__(self):
        return f"ProcessGroup(rank={self.rank()}, size={self.size()})"


class DeviceMesh:
    """Devices arranged in named dimensions; `mesh["tp"]` is the sub-mesh of one (or several) of them."""

    def __init__(self, device_type, mesh=None, *, mesh_dim_names=None, _jax_mesh=None, _dims=None):
        self.device_type = device_type
        if _jax_mesh is None:   # PyTorch's constructor: an array of ranks (here, indices of local devices)
            ids = np.asarray(mesh.tolist() if hasattr(mesh, "tolist") else mesh)
            devices = _devices(device_type)
            if ids.size and ids.max() >= len(devices):
                raise RuntimeError(f"DeviceMesh: device index {int(ids.max())} is out of range: this process has "
                                   f"{len(devices)} {device_type} device(s). Use indices below that.")
            names = tuple(mesh_dim_names) if mesh_dim_names else tuple(f"dim_{i}" for i in range(ids.ndim))
            _jax_mesh = Mesh(np.array(devices, dtype=object)[ids], names)
            _dims = names
        self._jax_mesh = _jax_mesh
        self._dims = tuple(_dims)
        self._named = bool(mesh_dim_names) or not all(d.startswith("dim_") for d in self._dims)

    # ---- shape ----------------------------------------------------------------------------------
    @property
    def mesh_dim_names(self):
        return self._dims if self._named else None

    @property
    def ndim(self):
        return len(self._dims)

    @property
    def shape(self):
        return tuple(self._jax_mesh.shape[d] for d in self._dims)

    def size(self, mesh_dim=None):
        return math.prod(self.shape) if mesh_dim is None else self.shape[self._dim_index(mesh_dim)]

    @property
    def mesh(self):
        """Device indices along this mesh's dimensions (the slice through the first device of the others)."""
        import tapegrad
        ids = np.vectorize(lambda d: _index_of(d, self.device_type))(self._jax_mesh.devices)
        names = self._jax_mesh.axis_names
        ids = ids.transpose([names.index(d) for d in self._dims] + [i for i, n in enumerate(names)
                                                                      if n not in self._dims])
        ids = ids.reshape(self.shape + (-1,))[..., 0]
        return tapegrad.tensor(ids, dtype=tapegrad.int32)

    # ---- sub-meshes, groups, coordinates --------------------------------------------------------
    def __getitem__(self, names):
        names = (names,) if isinstance(names, str) else tuple(names)
        if self.mesh_dim_names is None:
            raise RuntimeError("Cannot slice a DeviceMesh without mesh_dim_names! Pass mesh_dim_names= to "
                               "init_device_mesh.")
        bad = [n for n in names if n not in self._dims]
        if bad:
            raise KeyError(f"Invalid mesh_dim_names {names} specified. Valid mesh_dim_names are "
                           f"{list(self._dims)}.")
        return DeviceMesh(self.device_type, _jax_mesh=self._jax_mesh, _dims=names)

    def _dim_index(self, mesh_dim):
        if isinstance(mesh_dim, str):
            if mesh_dim not in self._dims:
                raise KeyError(f"Mesh dimension '{mesh_dim}' does not exist. Available mesh dimensions are: "
                               f"mesh_dim_names={list(self._dims)}")
            return self._dims.index(mesh_dim)
        return mesh_dim

    def get_group(self, mesh_dim=None):
        if mesh_dim is None and self.ndim > 1:
            raise RuntimeError(f"Found the DeviceMesh have {self.ndim} dimensions. Optional kwarg `mesh_dim` needs "
                               "to be specified when device_mesh.ndim > 1.")
        if mesh_dim is not None:
            self._dim_index(mesh_dim)
        return _ProcessGroup()

    def get_all_groups(self):
        return [_ProcessGroup() for _ in self._dims]

    def get_rank(self):
        return _ProcessGroup().rank()

    def get_local_rank(self, mesh_dim=None):
        """This process's coordinate along a dimension: 0, as the process drives every device of the mesh."""
        self.get_group(mesh_dim)
        return 0

    def get_coordinate(self):
        return tuple(0 for _ in self._dims)

    @property
    def jax_mesh(self):
        """The jax.sharding.Mesh holding this mesh's devices (a sub-mesh shares its parent's)."""
        return self._jax_mesh

    def __eq__(self, other):
        return isinstance(other, DeviceMesh) and (self._jax_mesh, self._dims) == (other._jax_mesh, other._dims)

    def __hash__(self):
        return hash((self._jax_mesh, self._dims))

    def __repr__(self):
        shape = self.shape
        dims = ", ".join(f"{n}={s}" for n, s in zip(self._dims, shape)) if self._named else \
            ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
        strides = tuple(() if s == 1 else math.prod(shape[i + 1:]) for i, s in enumerate(shape))
        return f"DeviceMesh(({dims}), '{self.device_type}', stride={strides})"


def _devices(device_type):
    platform = _PLATFORMS.get(str(device_type).split(":")[0])
    if str(device_type).split(":")[0] not in _PLATFORMS:
        raise RuntimeError(f"init_device_mesh: unknown device_type {device_type!r}: use 'cpu' or 'cuda'.")
    try:
        return jax.local_devices(backend=platform)
    except RuntimeError:
        raise RuntimeError(f"init_device_mesh: no {device_type} devices are available to this process. Use "
                           "device_type='cpu'.") from None


def _index_of(device, device_type):
    return _devices(device_type).index(device)


def init_device_mesh(device_type, mesh_shape, *, mesh_dim_names=None, backend_override=None):
    """A DeviceMesh of shape mesh_shape over this process's devices of device_type (all of them are used,
    as PyTorch's mesh covers the whole world: simulate several CPU devices with
    XLA_FLAGS=--xla_force_host_platform_device_count=N)."""
    mesh_shape = tuple(mesh_shape)
    if mesh_dim_names is not None:
        if len(set(mesh_dim_names)) != len(mesh_dim_names):
            raise RuntimeError(f"Each mesh_dim_name must be unique. Found repeated mesh_dim_name in "
                               f"mesh_dim_names {tuple(mesh_dim_names)}")
        if len(mesh_dim_names) != len(mesh_shape):
            raise RuntimeError(f"mesh_shape and mesh_dim_names should have same length! Found "
                               f"len(mesh_dim_names): {len(mesh_dim_names)} and len(mesh_shape):{len(mesh_shape)}.")
    devices = _devices(device_type)
    n = math.prod(mesh_shape)
    if n != len(devices):
        head = (f"Mesh should not be bigger than default world size {len(devices)}, but found {n} ranks!" if
                n > len(devices) else f"Mesh of {n} ranks is smaller than the {len(devices)} devices of this process.")
        raise RuntimeError(f"{head} A mesh spans all {len(devices)} {device_type} device(s) of this process: make its "
                           "shape multiply to that (XLA_FLAGS=--xla_force_host_platform_device_count=N gives N CPU "
                           "devices).")
    return DeviceMesh(device_type, np.arange(n).reshape(mesh_shape), mesh_dim_names=mesh_dim_names)
