"""A fuzz program: a list of steps, each one or more lines of Python over a pool of tensors.

A step is its source code. Both libraries run that very code (see `interpreter`), so the program
printed for a failing example is exactly what ran, and pasting it after `import torch` (or
`import tapegrad as torch`) reproduces it.
"""
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Step:
    """One unit of the program: `code` runs as one piece, and an error is reported against it."""
    kind: str
    code: str

    def lines(self):
        return self.code.splitlines()


@dataclass
class Program:
    steps: list = field(default_factory=list)
    # names the readout compares at the end: every pool tensor, optimizer-free
    tensors: list = field(default_factory=list)
    # non-leaf tensors whose .grad the program retained (their .grad is read out too)
    retained: set = field(default_factory=set)

    def source(self):
        return "\n".join(step.code for step in self.steps)

    def __repr__(self):
        body = self.source() or "pass"
        return ("\n# ---- fuzz program (run with `import torch` or `import tapegrad as torch`;\n"
                "# observe(x) records x's value at that point) ----\n" + body + "\n")
