"""Runs a fuzz program under one library module (tapegrad or torch) and reads out what it observed.

Each step's code is executed as is, in a namespace where `torch` is the given module; the first step
that raises ends the program (its index, exception and message are kept). Then every tensor of the pool
is read out: value, dtype, shape, requires_grad, is_leaf, and the .grad of leaves and retained tensors.
"""
import functools
import warnings
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Readout:
    dtype: str
    shape: tuple
    requires_grad: bool
    is_leaf: bool
    value: np.ndarray
    grad: object = None          # a Readout of .grad (no grad of its own), or None
    error: tuple = None          # (type, message) where reading the tensor raised


@dataclass
class Outcome:
    error: tuple = None          # (step index, exception, message)
    failed_backward: bool = False   # the step that raised ran a backward
    observed: list = field(default_factory=list)    # (step index, Readout) of each observe()
    tensors: dict = field(default_factory=dict)     # name -> Readout at the end


@functools.lru_cache(maxsize=4096)
def _compiled(code):
    return compile(code, "<fuzz step>", "exec")


def _dtype_name(dtype):
    return str(dtype).rsplit(".", 1)[-1]


def read(t, retained=False):
    """A Readout of tensor t (a library's Tensor); .grad too where t is a leaf or `retained`."""
    try:
        value = np.array(t.detach().tolist(), dtype=np.float64)
        out = Readout(_dtype_name(t.dtype), tuple(t.shape), bool(t.requires_grad), bool(t.is_leaf), value)
        if (out.is_leaf or retained) and t.grad is not None:
            out.grad = read(t.grad)
        return out
    except Exception as e:  # a deferred error surfacing when the value is read
        return Readout(None, None, None, None, None, error=(type(e), str(e)))


def run(program, lib):
    """The Outcome of `program` run with `lib` as `torch`."""
    outcome = Outcome()
    step_index = [0]
    env = {"torch": lib,
           "observe": lambda t: outcome.observed.append((step_index[0], read(t)))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            for i, step in enumerate(program.steps):
                step_index[0] = i
                try:
                    exec(_compiled(step.code), env)
                except Exception as e:
                    outcome.error = (i, e, str(e))
                    outcome.failed_backward = "backward(" in step.code or "autograd.grad(" in step.code
                    break
            for name in program.tensors:
                t = env.get(name)
                if t is not None:
                    outcome.tensors[name] = read(t, retained=name in program.retained)
        finally:
            lib.set_grad_enabled(True)
    return outcome
