"""A differential fuzzer: random PyTorch programs run under tapegrad and torch, outcomes compared.

    program.py      a program: steps of Python code over a pool of tensors; repr prints it as code
    strategy.py     the hypothesis strategy `programs()` that writes mostly valid programs
    state.py        the generator's abstract model of the pool (shapes, grad flags, views)
    interpreter.py  `run(program, lib)`: runs the code with `torch` bound to lib, reads out the state
    compare.py      `differences(ours, theirs)`: values, grads, flags and errors, tolerance by dtype
    __main__.py     `python -m fuzz --examples N --seed S`: explore, group and reduce differences
"""
# Double backward (autograd.grad(..., create_graph=True) then another grad through the result):
# the generator writes such steps unless this is turned off.
HIGHER_ORDER = True

from .compare import differences  # noqa: E402
from .interpreter import run  # noqa: E402
from .program import Program, Step  # noqa: E402
from .strategy import programs  # noqa: E402

__all__ = ["HIGHER_ORDER", "Program", "Step", "differences", "programs", "run"]
