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
