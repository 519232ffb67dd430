"""What the generator knows about the pool while it writes a program (an abstract model of PyTorch).

The model only steers the generator toward valid programs; it need not be exact, because the
verdict comes from running the program under PyTorch. Where it guesses wrong, a program raises
in both libraries and the fuzzer compares the errors instead of the values.

It also tracks which values both libraries compute to the same bits (`Var.exact`): quarters, and what
adding, multiplying, picking and moving them makes. A value that went through rounding arithmetic
(exp, division, a mean, a gradient, an optimizer's step) may differ in its last bits, which is no bug;
but a discontinuous op (sign, floor, a comparison, a sort, a kink's gradient, a division by something
near zero) turns that last bit into a different answer. Such ops take exact operands only: without that
rule the fuzzer reported `sign()` of a gradient that is zero up to rounding as a difference.
"""
from dataclasses import dataclass, field, replace


FLOATS = ("float32", "float64")


def promote(a, b):
    """PyTorch's result dtype for two tensors (float64, float32, int64, bool): the higher category wins; a 0-d
    tensor does not widen a dimensioned one of its category, and a 0-d float over integers gives float32."""
    rank = {"bool": 0, "int64": 1, "float32": 2, "float64": 2}
    if rank[a.dtype] != rank[b.dtype]:
        high, low = (a, b) if rank[a.dtype] > rank[b.dtype] else (b, a)
        if high.dtype in FLOATS and high.shape == () and low.shape != ():
            return "float32"
        return high.dtype
    if (a.shape == ()) != (b.shape == ()):
        return b.dtype if a.shape == () else a.dtype
    return "float64" if "float64" in (a.dtype, b.dtype) else a.dtype


def floating(dtype):
    """The dtype of a floating function (exp, softmax...) of a tensor of `dtype`: integers give float32."""
    return dtype if dtype in FLOATS else "float32"


@dataclass(frozen=True)
class Var:
    name: str
    shape: tuple
    dtype: str                   # "float32", "float64", or (never requiring grad) "int64", "bool"
    requires_grad: bool
    is_leaf: bool
    root: str                    # the base a view was taken from (itself unless a view)
    is_view: bool = False
    contiguous: bool = True
    overlapping: bool = False    # expand(): several elements share memory, in-place writes fail
    made_in_no_grad: bool = False
    leaves: frozenset = frozenset()   # leaves requiring grad that its graph reaches
    nodes: frozenset = frozenset()    # ids of the recorded ops its graph holds
    exact: bool = True                # both libraries compute it to the same bits (see above)

    def but(self, **changes):
        return replace(self, **changes)


def allowed(templates, kinked, *operands):
    """The templates an op on `operands` may take: a discontinuous one (in `kinked`) needs exact operands."""
    if all(v.exact for v in operands):
        return templates
    return [t for t in templates if t not in kinked]


@dataclass
class State:
    vars: dict = field(default_factory=dict)        # name -> Var, in creation order
    grad_enabled: bool = True
    freed: set = field(default_factory=set)          # op ids whose saved values a backward freed
    with_grad: set = field(default_factory=set)      # leaves whose .grad is (probably) set
    optimizers: dict = field(default_factory=dict)   # name -> parameter names
    adams: set = field(default_factory=set)          # the optimizers that are Adam
    noisy_grads: set = field(default_factory=set)    # leaves whose .grad may be rounding noise (of a rounded root)
    retained: set = field(default_factory=set)
    backward_roots: list = field(default_factory=list)
    counter: int = 0
    op_counter: int = 0

    def fresh(self, prefix="t"):
        name = f"{prefix}{self.counter}"
        self.counter += 1
        return name

    def new_op_id(self):
        self.op_counter += 1
        return self.op_counter

    def add(self, var):
        self.vars[var.name] = var
        return var

    def result(self, name, shape, dtype, inputs, *, view_of=None, contiguous=True, overlapping=False,
               rounds=False):
        """Record the Var an op on `inputs` produces, with PyTorch's grad-mode rules. rounds: the op's
        result may differ in its last bits between libraries even from exact inputs."""
        tracks = self.grad_enabled and any(v.requires_grad for v in inputs)
        op = self.new_op_id()
        leaves = frozenset().union(*(v.leaves for v in inputs)) if tracks else frozenset()
        nodes = (frozenset({op}).union(*(v.nodes for v in inputs))) if tracks else frozenset()
        var = Var(name, tuple(shape), dtype, tracks, not tracks,
                  root=view_of.root if view_of is not None else name,
                  is_view=view_of is not None, contiguous=contiguous, overlapping=overlapping,
                  made_in_no_grad=view_of is not None and not self.grad_enabled
                  and view_of.requires_grad,
                  leaves=leaves, nodes=nodes, exact=not rounds and all(v.exact for v in inputs))
        return self.add(var)

    def write_inplace(self, target, others, rounds=False):
        """An in-place op on `target` (and the tensors sharing its storage) with operands `others`."""
        if rounds or not all(v.exact for v in others) or not target.exact:
            self.rounded(target.root)
        tracks = self.grad_enabled and (target.requires_grad or any(v.requires_grad for v in others))
        if not tracks:
            return
        op = self.new_op_id()
        extra_leaves = frozenset().union(*(v.leaves for v in others)) if others else frozenset()
        extra_nodes = frozenset({op}).union(*(v.nodes for v in others)) if others else frozenset({op})
        for name, var in list(self.vars.items()):
            if var.root == target.root:
                self.vars[name] = var.but(requires_grad=True, is_leaf=var.is_leaf and var.requires_grad,
                                          leaves=var.leaves | extra_leaves,
                                          nodes=var.nodes | extra_nodes)

    def rounded(self, root):
        """The tensors sharing the storage of `root` now hold values rounded by one library's arithmetic."""
        for name, var in list(self.vars.items()):
            if var.root == root:
                self.vars[name] = var.but(exact=False)

    def exact_vars(self, pool):
        return [v for v in pool if v.exact]

    def float_vars(self):
        return list(self.vars.values())

    def grad_vars(self):
        return [v for v in self.vars.values() if v.requires_grad]

    def grad_leaves(self):
        return [v for v in self.vars.values() if v.requires_grad and v.is_leaf]
