"""Tensor.register_hook: hooks live on the tensor's grad_fn output (non-leaf) or the tensor (leaf)."""
import itertools

_ids = itertools.count()


class RemovableHandle:
    def __init__(self, table, key):
        self._table, self._key = table, key

    def remove(self):
        self._table.pop(self._key, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_tensor_hook(tensor, hook):
    key = next(_ids)
    if tensor._grad_fn is None:
        if tensor._hooks is None:
            tensor._hooks = {}
        tensor._hooks[key] = hook
        return RemovableHandle(tensor._hooks, key)
    node = tensor._grad_fn
    if node.seg is not None:
        node.seg.hooked = True
    if node.hooks is None:
        node.hooks = {}
    table = node.hooks.setdefault(tensor._out_idx, {})
    table[key] = hook
    return RemovableHandle(table, key)


# A leaf's post-accumulate-grad hooks share its hook table, under ("post", id) keys: a leaf with either
# kind is "hooked" for the engine, which then writes its .grad itself and calls them after.

def register_post_accumulate_grad_hook(tensor, hook):
    if tensor._grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    if tensor._hooks is None:
        tensor._hooks = {}
    key = ("post", next(_ids))
    tensor._hooks[key] = hook
    return RemovableHandle(tensor._hooks, key)


def gradient_hooks(tensor):
    """The hooks that see (and may replace) a leaf's gradient before it is accumulated."""
    return [h for k, h in (tensor._hooks or {}).items() if type(k) is not tuple]


def through_gradient_hooks(tensor, g):
    """A leaf's gradient g (a Tensor) through its hooks, each seeing the one before's result."""
    for hook in gradient_hooks(tensor):
        out = hook(g)
        if out is not None:
            g = checked_result(hook, g, out)
    return g


def through_leaf_hooks(leaves, results, wrap=None):
    """A backward's results (leaf j's gradient at -1 - j) with each leaf's gradient through its tensor hooks;
    wrap: for results that are arrays, the Tensor they are handed to the hooks as (arrays come back)."""
    results = dict(results)
    for j, leaf in enumerate(leaves):
        g = results.get(-1 - j)
        if g is not None:
            results[-1 - j] = (through_gradient_hooks(leaf.variable, g) if wrap is None else
                               through_gradient_hooks(leaf.variable, wrap(g))._value)
    return results


def run_post_accumulate_hooks(tensor):
    for k, hook in list((tensor._hooks or {}).items()):
        if type(k) is tuple:
            hook(tensor)


def checked_result(hook, old, new):
    """A hook's replacement gradient, refused (as PyTorch) when its size or dtype differs."""
    name = getattr(hook, "__name__", type(hook).__name__)
    if not hasattr(new, "shape"):   # (a tensor, or the array of one, is what a hook may return)
        from .._argument_errors import _tp_name
        raise TypeError(f"expected Variable, but hook returned '{_tp_name(new)}'")
    if tuple(new.shape) != tuple(old.shape):
        raise RuntimeError(f"hook '{name}' has changed the size of value")
    if new.dtype != old.dtype:
        from ._graph import _type_name_of
        raise RuntimeError(f"hook '{name}' has changed the type of value (was {_type_name_of(old.dtype.np)} got "
                           f"{_type_name_of(new.dtype.np)})")
    return new
