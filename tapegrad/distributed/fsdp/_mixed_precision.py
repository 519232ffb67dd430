"""Mixed precision for FSDP: a module's forward run with its floating parameters cast to a lower dtype.

As PyTorch's FSDP, the parameters stay in their own dtype (float32) and the forward sees low-precision
copies: the cast is a recorded op, so the backward computes in the low dtype and each gradient reaches its
parameter cast back to the parameter's dtype. Parameters of nested FSDP modules are cast by those.
"""
from ..._tensor import Tensor
from ..._func_modules import _swapped


def cast_floats(tree, dtype):
    """Floating tensors in (nested tuples, lists, dicts of) tree cast to dtype."""
    if dtype is None:
        return tree
    if isinstance(tree, Tensor):
        return tree.to(dtype) if tree.is_floating_point() else tree
    if isinstance(tree, (list, tuple)) and not hasattr(tree, "_fields"):
        return type(tree)(cast_floats(v, dtype) for v in tree)
    if isinstance(tree, dict):
        return type(tree)((k, cast_floats(v, dtype)) for k, v in tree.items())
    return tree


def own_parameters(module, is_wrapper):
    """(name, parameter) of module, leaving out those under nested modules for which is_wrapper is true."""
    out = []

    def walk(m, prefix):
        for key, p in m._parameters.items():
            if p is not None:
                out.append((prefix + key, p))
        for key, child in m._modules.items():
            if child is not None and not is_wrapper(child):
                walk(child, f"{prefix}{key}.")
    walk(module, "")
    return out


def run_cast(module, forward, param_dtype, is_wrapper):
    """forward() with module's own floating parameters swapped for copies cast to param_dtype."""
    if param_dtype is None:
        return forward()
    cast = {name: p.to(param_dtype) for name, p in own_parameters(module, is_wrapper)
            if p.is_floating_point() and p.dtype != param_dtype}
    with _swapped(module, cast, tie_weights=True, strict=False):
        return forward()
