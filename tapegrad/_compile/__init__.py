"""tapegrad.compile (PyTorch's torch.compile): a stateful function or module as one jitted program.

See `compile` for the behaviour and `tapegrad/README.md` for the design.
"""
import functools

from ._function import CompiledFunction, Unsupported
from ._module import OptimizedModule

__all__ = ["compile", "Unsupported", "OptimizedModule"]


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None,
            disable=False, **unused):
    """Compile a function or an nn.Module: each call runs as one `jax.jit` program.

    A whole training step -- forward, `loss.backward()`, `optimizer.step()`, `zero_grad()`, gradient
    clipping, dropout, BatchNorm's running statistics -- compiles into one program. Every tensor the
    function reaches (through its arguments, closure, the globals it names, its module's attributes,
    an optimizer's state; each tensor's `.grad`) is an input of the program; those it writes, and the
    tensors it creates and keeps (a new `.grad`), are outputs, written back into the same tapegrad
    tensors once the program has succeeded. Written inputs are donated (updated in place). The
    default generator's key and counter are inputs, so dropout draws what the eager function draws.
    Optimizer learning rates are inputs too: a scheduler changing them never recompiles. A view passed
    in (`X[i:i + bs]`) reads its base's storage inside the program with its offsets as inputs, so
    slicing the data at a new place each call runs the same program.

    Guards: the program is traced for the structure the function reaches -- tensor shapes, dtypes,
    requires_grad, whether each `.grad` is None, `training`, grad mode, and every Python value it can
    reach (including those it branches on). A call where any of these differ traces and compiles
    again; after 8 programs for one function, one RecompileWarning, and calls with new guards run
    eagerly. A call that would create new Python state (an optimizer's first step) runs eagerly, as
    does a function returning tensors whose graph is used outside it (a module's forward in training:
    tapegrad's tape compiles that step as one program anyway).

    `dynamic=True` is accepted, but shapes are not symbolic: each new shape (batch size) compiles a
    program of its own, bounded as above. `mode`, `backend` and `options` are accepted and ignored
    (there is one backend, XLA); `disable=True` returns `model` itself.

    Graph breaks: Python code that needs a tensor's value (`.item()`, `.tolist()`, `.numpy()`,
    printing, an `if` on a tensor) cannot be traced. With `fullgraph=False` the function runs
    eagerly from then on, after one warning naming the line; with `fullgraph=True` it raises
    `Unsupported` (a RuntimeError, as torch._dynamo.exc.Unsupported) naming the line.

    A call that fails (an error raised by the function while it is traced, or by the program) leaves
    every tensor, grad and optimizer state as it was. Limits: Python side effects other than changes
    to the reached objects (appending to an outside list, logging) happen once, when the function is
    traced; tensors reached only through other modules' globals are read when it is traced (and
    retraced when they change); the returned tensors carry no graph (requires_grad False); user-made
    Generators are not inputs (their draws are fixed at trace time: use the default generator).
    """
    if model is None:
        return lambda m: compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                                 options=options, disable=disable)
    if disable:
        return model
    from ..nn import Module
    if isinstance(model, Module):
        return OptimizedModule(model, CompiledFunction(model.__call__, fullgraph, dynamic))
    compiled = CompiledFunction(model, fullgraph, dynamic)

    @functools.wraps(model)
    def compiled_function(*args, **kwargs):
        return compiled(*args, **kwargs)
    compiled_function._compiled = compiled
    return compiled_function
