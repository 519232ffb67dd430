"""Host draws under tapegrad.compile: the draws from PyTorch's CPU stream a traced function makes become
inputs of its program, drawn from the streams before every call, so a compiled call draws what an eager
one would (PyTorch's numbers).

A function that draws is traced twice (`_trace.trace`): the first trace records each draw (generator,
distribution, arguments) and computes it from a copy of the stream; the second takes the draws, in the
same order, from its inputs. A second trace that draws differently (the count or shapes depend on values)
is a graph break.
"""


class TraceDraws:
    """The host draws of one trace: recorded (and computed from copies of the streams), or, given `inputs`
    and the first trace's specs (`expected`), taken from those inputs."""

    def __init__(self, inputs=None, expected=None):
        self.specs, self.inputs, self.expected, self.copies, self.values = [], inputs, expected, {}, []

    def stream(self, gen):
        return _TracedStream(self, gen)

    def draw(self, gen, method, args):
        i = len(self.specs)
        self.specs.append((gen, method, args))
        if self.inputs is None:
            if gen not in self.copies:
                self.copies[gen] = gen._cpu_stream().copy()
            self.values.append(getattr(self.copies[gen], method)(*args))
            return self.values[-1]
        if i >= len(self.expected) or self.expected[i] != self.specs[i]:
            raise RandomDrawsChanged
        return self.inputs[i]


class RandomDrawsChanged(Exception):
    """A second trace drew other random numbers than the first (the draws depend on values)."""


def draw_specs(specs):
    """The values the recorded draws take now, from each generator's stream in order."""
    return [getattr(gen._cpu_stream(), method)(*args) for gen, method, args in specs]


class _TracedStream:
    """A CpuStream's distributions, drawn through a TraceDraws."""

    def __init__(self, draws, gen):
        self._draws, self._gen = draws, gen

    def __getattr__(self, method):
        return lambda *args: self._draws.draw(self._gen, method, args)
