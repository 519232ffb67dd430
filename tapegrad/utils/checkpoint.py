"""Activation checkpointing (PyTorch's torch.utils.checkpoint): keep a region's inputs, not its
intermediates, and compute the region again during the backward.

A region that traces (see _checkpoint_region) becomes one op whose VJP is `jax.checkpoint`'s: it
keeps the inputs and recomputes the region inside the compiled backward program. Any other region
(random draws such as dropout, in-place writes, values read in Python) is rerun in Python, as PyTorch
does: its forward runs outside grad mode, so nothing it computes is kept; its node
(CheckpointFunctionBackward, an autograd.Function) keeps the inputs and the random state, and its
backward reruns the region in grad mode with the same random draws and backpropagates through that
fresh graph (parameters get their .grad from it, inputs through the node). That node runs in Python,
node by node.
"""

from .. import random as _random
from .._grad_mode import enable_grad, is_grad_enabled
from ..autograd.function import Function
from . import _checkpoint_region
from .._user_frames import warn_user

__all__ = ["checkpoint", "checkpoint_sequential"]

_NO_REENTRANT_FLAG = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting in PyTorch 2.9, "
    "calling checkpoint without use_reentrant will raise an exception. use_reentrant=False is recommended, but if "
    "you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants.")


class CheckpointFunction(Function):
    _runs_in_python = True   # its backward reruns user code: never traced, no warning

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.rng = _rng_state() if preserve_rng_state else None
        ctx.constants = [None if _is_tensor(a) else a for a in args]
        ctx.save_for_backward(*[a if _is_tensor(a) else None for a in args])
        return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        from ..autograd import backward
        args = [c if t is None else t.detach().requires_grad_(t.requires_grad)
                for c, t in zip(ctx.constants, ctx.saved_tensors)]
        outer = _rng_state()
        try:
            if ctx.rng is not None:
                _set_rng_state(ctx.rng)
            with enable_grad():
                outputs = ctx.run_function(*args)
        finally:
            if ctx.rng is not None:
                _set_rng_state(outer)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads) if _is_tensor(o) and o.requires_grad and g is not None]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not necessary")
        backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(a.grad if _is_tensor(a) else None for a in args)


def _is_tensor(x):
    from .._tensor import Tensor
    return isinstance(x, Tensor)


def _rng_state():
    return _random.default_generator._snapshot()


def _set_rng_state(state):
    _random.default_generator._restore(state)


def checkpoint(function, *args, use_reentrant=None, context_fn=None, determinism_check="default", debug=False,
               preserve_rng_state=True, **kwargs):
    """function(*args, **kwargs), keeping only the inputs for the backward (it reruns the function)."""
    if use_reentrant is None:
        warn_user(_NO_REENTRANT_FLAG, UserWarning)
        use_reentrant = True
    if use_reentrant and (context_fn is not None or debug):
        raise ValueError("Passing `context_fn` or `debug` is only supported when use_reentrant=False.")
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if kwargs:
        bound = function
        function = lambda *a: bound(*a, **kwargs)   # noqa: E731
    if not is_grad_enabled():
        return function(*args)
    if use_reentrant and not any(_is_tensor(a) and a.requires_grad for a in args):
        warn_user("None of the inputs have requires_grad=True. Gradients will be None", UserWarning)
    out = _checkpoint_region.run(function, args)
    if out is not None:
        return out
    # Without reentrance PyTorch's checkpoint records the region even when no input requires grad (its
    # parameters may): the node is made regardless, and its rerun backpropagates to them.
    needs = (False, False) + tuple(_is_tensor(a) and a.requires_grad for a in args)
    return CheckpointFunction._apply((function, preserve_rng_state) + args, needs, force=not use_reentrant)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run a Sequential (or list of modules) in `segments` chunks, each but the last checkpointed."""
    if use_reentrant is None:
        warn_user(_NO_REENTRANT_FLAG, UserWarning)
        use_reentrant = True
    modules = functions
    count = len(list(functions.children())) if hasattr(functions, "children") else len(functions)
    size = count // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(_Segment.of(modules, start, end), input, use_reentrant=use_reentrant, **kwargs)
    return _Segment.of(modules, end + 1, count - 1)(input)


class _Segment:
    """Modules start..stop of a Sequential (or list). A Module keeps its segments (so a traced checkpoint
    region is found again at the next step, and lives as long as the module); a plain list gets new ones."""

    @classmethod
    def of(cls, modules, start, stop):
        made = getattr(modules, "_checkpoint_segments", None)
        if made is None:
            if not hasattr(modules, "children"):
                return cls(modules, start, stop)
            made = {}
            object.__setattr__(modules, "_checkpoint_segments", made)
        seg = made.get((start, stop))
        if seg is None:
            seg = made[(start, stop)] = cls(modules, start, stop)
        return seg

    def __init__(self, modules, start, stop):
        self.modules, self.start, self.stop = modules, start, stop

    def __call__(self, x):
        modules = self.modules
        items = list(modules.children()) if hasattr(modules, "children") else list(modules)
        for f in items[self.start:self.stop + 1]:
            x = f(x)
        return x
