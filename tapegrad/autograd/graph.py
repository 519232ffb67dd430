"""autograd.graph: hooks on the tensors the graph saves for backward (PyTorch's saved_tensors_hooks).

Inside `saved_tensors_hooks(pack, unpack)`, every tensor an op saves for its backward is handed to
`pack(tensor)`, and the node keeps what pack returns instead of the value; each backward that needs it
calls `unpack(packed)` for the tensor to use. tapegrad saves the inputs a gradient formula reads (JAX's
VJP tells which), which for a few ops (exp, tanh, sigmoid) is the input where PyTorch saves the result.
Graphs with packed values run on the general backward path.
"""
import contextlib

from ._node import Node  # noqa: F401  (torch.autograd.graph.Node)

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks", "register_multi_grad_hook",
           "increment_version", "Node"]

_stack = []          # active (pack, unpack) pairs, innermost last
_disabled = [None]   # the error message while saved-tensor hooks are disabled


class saved_tensors_hooks:
    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        if _disabled[0] is not None:
            raise RuntimeError(_disabled[0])
        _stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _stack.pop()


class save_on_cpu(saved_tensors_hooks):
    """Keep saved tensors in host memory, moving them back to their device for the backward."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack(t):
            return t.device, t.cpu()

        def unpack(packed):
            device, t = packed
            return t.to(device)
        super().__init__(pack, unpack)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    prev = _disabled[0]
    _disabled[0] = error_message
    try:
        yield
    finally:
        _disabled[0] = prev


class Packed:
    """What a node keeps for a saved value under saved_tensors_hooks."""

    __slots__ = ("packed", "unpack", "shape", "dtype")

    def __init__(self, tensor, pack, unpack):
        self.packed = pack(tensor)
        self.unpack = unpack
        self.shape, self.dtype = tuple(tensor.shape), tensor.dtype.np


def pack(tensor):
    """The value a node keeps for `tensor` (packed when hooks are active)."""
    hook = _stack[-1]
    return Packed(tensor, *hook)


def unpacked(value):
    """A kept value as the backward reads it: unpacked when it was packed."""
    if type(value) is Packed:
        from .._tensor import Tensor
        t = value.unpack(value.packed)
        if not isinstance(t, Tensor):
            raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor but got result of type "
                            f"{type(t).__name__}")
        return t._peek()
    return value


class SavedTensor:
    """grad_fn._raw_saved_<name>: a value the node saved, whose hooks can be set after the op ran."""

    __slots__ = ("node", "index")

    def __init__(self, node, index):
        self.node, self.index = node, index

    def register_hooks(self, pack_hook, unpack_hook):
        """pack_hook(tensor) now; the node keeps what it returns and unpack_hook(packed) gives the tensor back
        whenever the value is read (the backward, grad_fn._saved_<name>)."""
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("register_hooks(): incompatible function arguments. The following argument types are "
                            "supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: collections.abc."
                            "Callable, arg1: collections.abc.Callable) -> None\n\nInvoked with: "
                            f"{self!r}, {pack_hook!r}, {unpack_hook!r}")
        node = self.node
        if node.kept is None:
            raise RuntimeError("Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
                               "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
                               "retain_graph=True if you need to backward through the graph a second time or if you "
                               "need to access saved variables after calling backward.")
        value = node.kept[self.index]
        if type(value) is Packed:
            raise RuntimeError("Calling register_hooks on a saved tensor whose hooks have already been set. Hint: "
                               "only one pair of hooks is allowed at a time.")
        from .._tensor import Tensor
        node.kept[self.index] = Packed(Tensor._wrap(value), pack_hook, unpack_hook)
        if node.seg is not None:
            node.seg.hooked = True   # the segment's single program would read the value as it was: general path

    def __repr__(self):
        return f"<torch._C._autograd.SavedTensor object at {hex(id(self))}>"


def increment_version(tensor):
    """Bump the version of `tensor` (or of each tensor of an iterable), as an in-place write does."""
    from .._tensor import Tensor
    for t in (tensor,) if isinstance(tensor, Tensor) else tensor:
        t._storage.counter.value += 1


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """mode "all": fn(grads) once per backward pass, after the gradient of every tensor that pass computes
    (None for the others); "any": fn(grad) with the first gradient of one of them in each pass."""
    from ._graph import current_pass
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    tensors = tuple(tensors)
    if mode == "all":
        pending = {}   # pass -> [gradients still to come, the gradients]

        def inner(i):
            def hook(grad):
                graph = current_pass()
                task = graph.task
                state = pending.get(task)
                if state is None:   # (the pass's first: how many of the tensors it reaches)
                    running = set(graph.nodes) | set(graph.leaves)
                    state = pending[task] = [sum(t._edge()[0] in running for t in tensors), [None] * len(tensors)]
                state[1][i] = grad
                state[0] -= 1
                if state[0] <= 0:
                    del pending[task]
                    fn(state[1])
            return hook
        handles = [t.register_hook(inner(i)) for i, t in enumerate(tensors)]
    else:
        last = [None]

        def first(grad):
            task = current_pass().task
            if last[0] != task:
                last[0] = task
                fn(grad)
        handles = [t.register_hook(first) for t in tensors if t.requires_grad]
    return _MultiHandle(handles)


class _MultiHandle:
    def __init__(self, handles):
        self.handles = tuple(handles)

    def remove(self):
        for h in self.handles:
            h.remove()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()
