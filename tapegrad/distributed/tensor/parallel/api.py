"""parallelize_module: apply tensor-parallel styles to a module by plan (torch.distributed.tensor.parallel's)."""
import fnmatch

from ...device_mesh import DeviceMesh
from .style import ParallelStyle

__all__ = ["parallelize_module"]


def parallelize_module(module, device_mesh=None, parallelize_plan=None, *, src_data_rank=0):
    """Apply `parallelize_plan` (a ParallelStyle, or {submodule path: style}, paths may hold `*` wildcards)."""
    if device_mesh is None:
        from ...device_mesh import init_device_mesh
        import jax
        device_mesh = init_device_mesh("cpu", (len(jax.local_devices(backend="cpu")),))
    if not isinstance(device_mesh, DeviceMesh):
        raise TypeError(f"parallelize_module expects a DeviceMesh, got {type(device_mesh).__name__}: build one "
                        "with init_device_mesh.")
    if parallelize_plan is None:
        return module
    if isinstance(parallelize_plan, ParallelStyle):
        return parallelize_plan._apply(module, device_mesh)
    if not isinstance(parallelize_plan, dict):
        raise TypeError(f"Expect Union[ParallelStyle, Dict] for parallelize_plan, {type(parallelize_plan)} found!")
    for path, style in parallelize_plan.items():
        head, _, rest = path.partition(".")
        matched = [child for name, child in module.named_children() if fnmatch.fnmatchcase(name, head)]
        if not matched and "*" not in head:
            raise AttributeError(f"{type(module).__name__} has no attribute `{head}`: parallelize_plan names "
                                 "submodules by their path in module.named_modules().")
        for child in matched:
            parallelize_module(child, device_mesh, {rest: style} if rest else style)
    return module


