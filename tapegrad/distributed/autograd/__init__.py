"""tapegrad.distributed.autograd: PyTorch's distributed autograd over tapegrad's RPC.

    with dist_autograd.context() as context_id:
        loss = rpc.rpc_sync("ps", forward, args=(x,)).sum()
        dist_autograd.backward(context_id, [loss])
        grads = dist_autograd.get_gradients(context_id)   # {leaf tensor: gradient} on this worker

Tensors that require grad and cross an RPC inside a context carry their autograd link (see _context);
gradients are accumulated in the context on each worker, not in `.grad`.
"""
from . import _context

__all__ = ["context", "backward", "get_gradients"]


class context:
    """A distributed autograd context for this thread; `with` gives its id, and leaving it frees the
    context here and on every worker it reached."""

    def __enter__(self):
        self._context = _context.new_context()
        return self._context.id

    def __exit__(self, *exc):
        _context._thread.context = None
        _context.release(self._context.id)
        return False


def backward(context_id, roots, retain_graph=False):
    """Run the backward from scalar `roots` across every worker the graph spans; returns when done."""
    from ..._tensor import Tensor
    ctx = _context.retrieve(context_id)
    roots = list(roots)
    for i, root in enumerate(roots):
        if not isinstance(root, Tensor):
            raise TypeError(f"dist_autograd.backward(): roots must be a list of Tensors, but element {i} is "
                            f"{type(root).__name__}.")
        if root.numel() != 1:
            raise RuntimeError(f"tensor of shape {list(root.shape)} is not a scalar, all roots need to be scalar. "
                               "Reduce it first (loss.sum() or loss.mean()).")
        if not root.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn. "
                               "The root must depend on tensors that require grad.")
    from ... import ones_like
    _context.local_backward(ctx, roots, [ones_like(r) for r in roots], retain_graph)


def get_gradients(context_id):
    """{tensor: gradient} accumulated on this worker in the context."""
    ctx = _context.retrieve(context_id)
    with ctx.lock:
        return dict(ctx.grads)
