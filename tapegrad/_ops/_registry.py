"""The op table: every tensor operation is one `Op` entry holding a pure JAX function.

Nothing else in tapegrad knows calculus: the eager forward, the recorded tape,
the compiled backward and gradient checks are all derived from `Op.fn` with
`jax.jit` and `jax.vjp`.
"""


# Dtype rules, PyTorch's names for how an op picks its computation dtype.
SAME = "same"          # promote all tensor/scalar inputs to a common dtype (add, mul, where...)
FLOAT = "float"        # as SAME, then integers and bool become the default float dtype (div, exp, sin...)
COMPARE = "compare"    # as SAME for computing; the result is bool (eq, lt...)
KEEP = "keep"          # no promotion: the function sees inputs as they are (views, reductions, indexing)


class Op:
    """One table entry.

    name        PyTorch's op name; the backward node prints as f"{node}Backward0".
    fn          pure function of positional arrays (or Python scalars) and keyword statics.
    dtype_rule  one of SAME, FLOAT, COMPARE, KEEP.
    diff        positions of inputs that can carry gradients (None: every input).
    view        True when PyTorch returns a view sharing storage with input 0.
    saves_output True when PyTorch's backward reads the result (exp, tanh...): modifying the
                result in place then makes backward fail, as in PyTorch.
    saves_inputs positions of the inputs PyTorch's backward saves (derivatives.yaml), whose in-place
                change makes backward fail; None: those the JAX VJP reads. Kept values are
                the VJP's in any case, plus these.
    nout        number of outputs (fn returns a tuple when > 1).
    wraps_scalars True when PyTorch wraps a Python scalar argument into a tensor input (add, sub,
                mul, div), so it appears in grad_fn.next_functions as (None, 0).
    """

    __slots__ = ("name", "fn", "dtype_rule", "diff", "view", "saves_output", "saves_inputs", "nout", "node_name",
                 "node_class", "wraps_scalars", "__weakref__")

    def __init__(self, name, fn, dtype_rule=SAME, diff=None, view=False, saves_output=False, nout=1,
                 node=None, node_name=None, wraps_scalars=False, saves_inputs=None):
        self.name = name
        self.fn = fn
        self.dtype_rule = dtype_rule
        self.diff = diff
        self.view = view
        self.saves_output = saves_output
        self.saves_inputs = saves_inputs
        self.nout = nout
        self.wraps_scalars = wraps_scalars
        self.node_name = node_name or _camel(node or name) + "Backward0"
        from ..autograd._node import node_class
        self.node_class = node_class(self.node_name)

    def __repr__(self):
        return f"Op({self.name})"


def _camel(name):
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


OPS = {}


def defop(name, fn, **meta):
    """Add an entry to the op table; returns it."""
    if name in OPS:
        raise ValueError(f"op {name!r} is defined twice")
    op = OPS[name] = Op(name, fn, **meta)
    return op
