"""Distributed autograd contexts: what each worker sent and received with autograd, and the gradients.

A context id is the same on every worker it reaches (carried in each RPC made inside it). On a worker the
context holds:
- sends: message id -> the tensors that requiring grad left this worker in that message (with their graph);
- recvs: the leaves made on arrival of such tensors (behind a RecvRpc node), with who sent them in
  which message and at which position;
- grads: leaf tensor -> gradient accumulated by backward passes in the context (never written to .grad).

backward on a worker runs the local graph from its roots to its leaves with autograd.grad; gradients
reaching received leaves go back to their senders (an RPC per message), which continue from the tensors
they sent, and so on: the gradient flows back along the path the forward took.
"""
import contextlib
import itertools
import threading

from ...autograd.function import Function
from ...autograd._node import AccumulateGrad
from ..._grad_mode import enable_grad

_contexts = {}
_lock = threading.Lock()
_counter = itertools.count()
_thread = threading.local()


class DistAutogradContext:
    def __init__(self, context_id):
        self.id = context_id
        self.lock = threading.Lock()
        self.sends = {}
        self.recvs = {}   # id(leaf) -> (leaf, sender id, message id, position)
        self.grads = {}
        self.known_workers = set()

    def record_send(self, message_id, tensors):
        with self.lock:
            self.sends[message_id] = list(tensors)

    def accumulate(self, tensor, grad):
        with self.lock:
            old = self.grads.get(tensor)
            self.grads[tensor] = grad if old is None else old + grad


class RecvRpc(Function):
    """The node a tensor received with autograd sits behind (PyTorch's RecvRpcBackward): identity."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad


def _agent():
    from ..rpc import api
    return api._require_agent()


def current():
    return getattr(_thread, "context", None)


@contextlib.contextmanager
def running_in(context):
    old = current()
    _thread.context = context
    try:
        yield
    finally:
        _thread.context = old


def new_context():
    from ..rpc import api
    if api._agent[0] is None:
        raise RuntimeError("Need to initialize distributed autograd using torch.distributed.autograd.init() "
                           "(tapegrad does it in rpc.init_rpc: call that first).")
    agent = api._agent[0]
    if current() is not None:
        raise RuntimeError("Already have an autograd context id for this thread. Leave the current "
                           "dist_autograd.context() before entering another.")
    context = DistAutogradContext((agent.info.id << 48) + next(_counter))
    with _lock:
        _contexts[context.id] = context
    _thread.context = context
    return context


def retrieve(context_id):
    with _lock:
        context = _contexts.get(context_id)
    if context is None:
        raise RuntimeError(f"Could not find autograd context with id: {context_id}. Use the id that "
                           "dist_autograd.context() gave, inside its with block.")
    return context


def received_context(context_id, sender):
    """The context a call arrived in (made here on its first call), or None."""
    if context_id is None:
        return None
    with _lock:
        context = _contexts.get(context_id)
        if context is None:
            context = _contexts[context_id] = DistAutogradContext(context_id)
    context.known_workers.add(sender)
    return context


def release(context_id):
    """Drop the context here and on every worker it reached (each forwards to the workers it knows)."""
    with _lock:
        context = _contexts.pop(context_id, None)
    if context is None:
        return []
    agent = _agent()
    return [agent.call(w, _release_remote, (context_id,), None, 0, None)
            for w in context.known_workers if w != agent.info.id]


def _release_remote(context_id):
    release(context_id)   # the forwarded releases are not waited for: shutdown waits for every call


def receive_tensor(array, context, sender, message_id, position):
    from ..._tensor import _rebuild
    leaf = _rebuild(array, True)
    if context is None:
        return leaf
    with context.lock:
        context.recvs[id(leaf)] = (leaf, sender, message_id, position)
    with enable_grad():
        return RecvRpc.apply(leaf)


# ---- the backward pass -------------------------------------------------------------------------

def _graph_leaves(outputs):
    """Leaf tensors requiring grad that the outputs' graph reaches (outputs that are leaves included)."""
    leaves, seen = {}, set()
    stack = []
    for t in outputs:
        if t.grad_fn is None:
            leaves[id(t)] = t
        else:
            stack.append(t.grad_fn)
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            leaves[id(node.variable)] = node.variable
            continue
        stack.extend(n for n, _ in node.next_functions)
    return list(leaves.values())


def local_backward(context, outputs, grads, retain_graph):
    """Gradients of outputs (seeded with grads) into this worker's leaves; the received leaves' gradients
    sent back to their senders, whose backward runs before this returns."""
    from ...autograd import grad as autograd_grad
    leaves = _graph_leaves(outputs)
    through = [(o, g) for o, g in zip(outputs, grads) if o.grad_fn is not None]
    results = {}
    for o, g in zip(outputs, grads):   # a leaf sent as is: its gradient is the one that came back
        if o.grad_fn is None:
            results[id(o)] = g if id(o) not in results else results[id(o)] + g
    if through:
        with enable_grad():
            found = autograd_grad([o for o, _ in through], leaves, [g for _, g in through],
                                  retain_graph=retain_graph, allow_unused=True)
        for leaf, g in zip(leaves, found):
            if g is not None:
                results[id(leaf)] = g if id(leaf) not in results else results[id(leaf)] + g
    back = {}
    for leaf in leaves:
        g = results.get(id(leaf))
        if g is None:
            continue
        record = context.recvs.get(id(leaf))
        if record is None:
            context.accumulate(leaf, g.detach())
        else:
            _, sender, message_id, position = record
            back.setdefault((sender, message_id), []).append((position, g.detach()))
    agent = _agent()
    futures = [agent.call(sender, _backward_from_send, (context.id, message_id, items, retain_graph), None, 0, None)
               for (sender, message_id), items in back.items()]
    for fut in futures:
        fut.wait()


def _backward_from_send(context_id, message_id, items, retain_graph):
    context = retrieve(context_id)
    with context.lock:
        sent = context.sends[message_id]
    local_backward(context, [sent[i] for i, _ in items], [g for _, g in items], retain_graph)
