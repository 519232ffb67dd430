"""The op table: every tensor operation is one `Op` entry holding a pure JAX function.

Nothing else in tapegrad knows calculus: the eager forward, the recorded tape,
the compiled backward and gradient checks are all derived from `Op.fn` with
`jax.jit` and `jax.vjp` (from `Op.reverse_fn`, for the few ops whose PyTorch backward is not
their forward's derivative).
"""


# Dtype rules, PyTorch's names for how an op picks its computation dtype.
SAME = "same"          # promote all tensor/scalar inputs to a common dtype (add, mul, where...)
FLOAT = "float"        # as SAME, then integers and bool become the default float dtype (div, exp, sin...)
COMPARE = "compare"    # as SAME for computing; the result is bool (eq, lt...)
KEEP = "keep"          # no promotion: the function sees inputs as they are (views, reductions, indexing)

ALL_INPUTS = "all"     # Op.elements_from: every array input is a source


class Op:
    """One table entry.

    name        PyTorch's op name; the backward node prints as f"{node}Backward0" unless an overload
                below matches the call.
    fn          pure function of positional arrays (or Python scalars) and keyword statics.
    dtype_rule  one of SAME, FLOAT, COMPARE, KEEP.
    diff        positions of inputs that can carry gradients (None: every input).
    view        True when PyTorch returns a view sharing storage with input 0.
    saves_output True when PyTorch's backward reads the result (exp, tanh...): modifying the
                result in place then makes backward fail, as in PyTorch. For an op of several
                outputs, True saves them all, a tuple the outputs at those positions.
    saves_inputs positions of the inputs PyTorch's backward saves (derivatives.yaml), whose in-place
                change makes backward fail; None: those the JAX VJP reads. Kept values are
                the VJP's in any case, plus these. A dict {position: guard} where PyTorch saves some only
                for one gradient: a value that one input's formula alone reads is saved when that input
                requires grad (guard: its position), one that several formulas read always (guard None).
    nout        number of outputs (fn returns a tuple when > 1).
    result_backward PyTorch's backward formula in terms of the result, for ops whose derivatives.yaml entry
                reads `result` (exp: grad * result): f(grad, result, *args, **static) -> the gradient of
                argument 0 (implies saves_output). A backward recorded with create_graph computes it on the
                result, so the gradient's graph goes through the op's node again, as PyTorch's: its version,
                retained grad and hooks take part. Other backwards use the JAX VJP (same values).
    fused_backward True when PyTorch's backward is a kernel that takes the input as a recorded argument
                (relu's threshold_backward): a gradient recorded through it (create_graph) depends on the
                input, with a zero derivative, and so requires grad where JAX's formula would not. A
                function of the node's kept arrays when that holds for some calls only (prod).
    backward_name the node PyTorch records for the op's backward kernel under create_graph
                (NativeLayerNormBackwardBackward0), which the gradients recorded through it print (else the
                name of their formula's last op: autograd._backward_names). True: where fused_backward holds,
                the op's own node's name with "Backward" twice, as PyTorch names an x_backward kernel's node
                (AvgPool3DBackward0: AvgPool3DBackwardBackward0).
    tie_undefined with fused_backward: PyTorch's double backward formula gives an input that a gradient does
                not depend on no gradient at all (an undefined tensor, not zeros: the normalisations' weight
                from the weight's own gradient), so .grad stays None and autograd.grad calls it unused.
    no_double_backward (exception type, message) for an op whose backward kernel PyTorch cannot differentiate
                (derivatives.yaml's not_implemented for _pdist_backward, hardsigmoid_backward ...): a gradient
                recorded through the kernel (create_graph; implies fused_backward) raises it when it is
                differentiated toward an input whose path crosses the kernel (see autograd._higher._tied).
    reverse_fn  fn with the same values whose VJP is PyTorch's backward, for the ops whose backward is not the
                derivative of their forward (embedding's padding_idx and scale_grad_by_freq, the repeated
                indices of index_put, put, index_copy and scatter): the backward walk and reverse-mode transforms
                differentiate it, forward-mode AD differentiates fn, as PyTorch's forward-mode formulas do.
    custom      for the op of an autograd.Function's node: how its backward runs (see autograd._function_node),
                None for table entries, whose backward is jax.vjp of fn.
    value_view  for a view whose elements are not a selection of the input's (a bitcast, the real part of
                complex numbers): (write, positions). write(x, new, **static) is x with the view's elements
                replaced by new; positions(p, **static) maps the storage positions of x's elements (in x's
                element size) to the view's (in its own), as PyTorch's strides and offsets count them.
    stride_rule for a view: PyTorch's rule for its result's strides (_ops._stride_rules), a function (static
                dict, input shape list, input strides list) -> (shape, strides) lists, or None for a call it
                has no rule for. _view_layout follows a recipe through them for the strides of size-1 dims,
                which storage positions cannot show; a view without one leaves those as positions say.
    scalar_opmath True when PyTorch's CPU kernel takes a Python scalar in float32 (its "opmath") with a float16
                or bfloat16 tensor and rounds the result once (mul, div): such a call computes in float32 and
                casts its result (_op_functions.Opmath); add, sub and pow round the scalar to the tensor's dtype.
    wraps_scalars True when PyTorch wraps a Python scalar argument into a tensor input (add, sub,
                mul, div), so it appears in grad_fn.next_functions as (None, 0).
    node_wraps  the input whose producing node PyTorch's node runs inside itself (CopySlices wraps the
                in-place op on the view): next_functions lists that node's inputs past the first instead.
    pointwise   True for the ops PyTorch computes with TensorIterator: their result takes the memory order
                of their inputs (_pointwise_layout); or a function of the call's arguments telling whether
                this call's does. Set where the family is defined.
    result_order for the ops whose PyTorch kernel leaves its result in another memory order than a new
                contiguous tensor (LAPACK's column-major matrices, rot90's transposed buffer): a function
                (static dict, output shapes) -> one dims order per output (outermost first; None where the
                output is contiguous), applied as the result is made (_pointwise_layout.lay_out_in_order).
                Set where the family is defined.
    elements_from which inputs every element of the result is taken from (views that select elements,
                copies, reorderings, joins): a tuple of positions, ALL_INPUTS, or None (the result holds
                computed values). Index and offset arguments are never sources. Value checks use it: a
                result taken from checked arrays needs no check of its own (_value_checks). Set where the
                family is defined; a view without value_view takes its input's.
    several_views True for the ops of a PyTorch function returning several views (unbind, split): their
                results refuse in-place changes (PyTorch's MULTI_OUTPUT_NODE views, _view_info).
    hands_grad  how PyTorch's backward formula hands the incoming gradient to an input, which decides what
                autograd.grad returns (the seed itself, a view of it, or a fresh tensor): a tuple of the
                positions that get it as it is (where no broadcast or cast is undone), or a function
                (statics as a dict, the input's shape, the output's shape) -> the Tensor-method steps that
                view it, or None for a fresh tensor (one marked `by_position = True` takes the statics, every
                input's shape and the input's position instead: cat, stack); None: always a fresh tensor. Set
                where the family is defined.
    no_derivative for ops PyTorch records but cannot differentiate (unique, scatter with reduce): a function
                of the statics giving (exception type, message) for the calls whose backward raises it, or
                None; or {input position: (exception type, message)} where the error depends on which input
                is differentiated (the first of those the backward differentiates raises). The node is
                recorded (its output requires grad); reaching it in backward raises.
    no_kernel_for for ops whose CPU kernel PyTorch has no version of for some dtypes: {"complex": text, "half":
                text, "bool": text} (half: float16 and bfloat16), the text of its NotImplementedError with {} where the
                computation dtype's name goes (missing_kernel), raised when a call computes in such a dtype
                (checked once per call signature: _dispatch); or a function (statics as a dict, input kinds) ->
                that text, where PyTorch's kernel depends on the call. JAX would order, round or compare complex
                values, compute where PyTorch refuses, or refuse with its own error.
    recorded_saves positions of the inputs PyTorch's backward formula saves when it is recorded (create_graph), whose
                in-place change since then fails the later backward, where they differ from those JAX's recorded
                formula reads: log1p's `grad / (self + 1)` saves none; abs's `grad * self.sgn()` saves the
                input, which JAX's formula reads through a comparison only. None: those JAX's formula reads, or
                with fused_backward=True every input the kernel takes. Set where the family is defined.
    no_derivative_at for ops whose derivative PyTorch implements for some inputs only (igamma's input, zeta's
                order): {input position: (exception type, message)}; a backward that differentiates one of
                those inputs raises it, one that differentiates only the others runs.
    """

    __slots__ = ("name", "fn", "dtype_rule", "diff", "view", "saves_output", "saves_inputs", "nout",
                 "node_name", "node_class", "wraps_scalars", "overloads", "_node_classes", "fused_backward",
                 "custom", "value_view", "stride_rule", "no_derivative", "no_derivative_at", "result_backward",
                 "pointwise", "result_order", "elements_from", "several_views", "hands_grad", "reverse_fn",
                 "scalar_opmath", "backward_name", "tie_undefined", "no_double_backward", "no_kernel_for",
                 "recorded_saves", "__weakref__")

    def __init__(self, name, fn, dtype_rule=SAME, diff=None, view=False, saves_output=False, nout=1,
                 node=None, node_name=None, wraps_scalars=False, overloads=(), saves_inputs=None,
                 fused_backward=False, value_view=None, stride_rule=None, no_derivative=None, node_wraps=None,
                 result_backward=None, reverse_fn=None, no_derivative_at=None, scalar_opmath=False,
                 backward_name=None, tie_undefined=False, no_double_backward=None, no_kernel_for=None):
        self.name = name
        self.fn = fn
        self.scalar_opmath = scalar_opmath
        self.reverse_fn = reverse_fn
        self.dtype_rule = dtype_rule
        self.diff = diff
        self.view = view
        self.saves_output = saves_output or result_backward is not None
        self.result_backward = result_backward
        self.saves_inputs = saves_inputs
        self.fused_backward = fused_backward or no_double_backward is not None
        self.no_double_backward = no_double_backward
        self.no_kernel_for = no_kernel_for
        self.backward_name = backward_name
        self.tie_undefined = tie_undefined
        self.custom = None
        self.value_view = value_view
        self.stride_rule = stride_rule
        self.no_derivative = no_derivative
        self.no_derivative_at = no_derivative_at
        self.pointwise = False
        self.result_order = None
        self.elements_from = (0,) if view and value_view is None else None
        self.several_views = False
        self.hands_grad = None
        self.recorded_saves = None
        self.nout = nout
        self.wraps_scalars = wraps_scalars
        self.node_name = node_name or _camel(node or name) + "Backward0"
        from ..autograd._node import node_class
        self.node_class = node_class(self.node_name, wraps=node_wraps, saves_result=self.saves_output)
        self.overloads = tuple((o, node_class(o.node_name, o.optional, saves_result=self.saves_output
                                              if o.saves_output is None else o.saves_output))
                               for o in overloads)
        self._node_classes = {}

    def node_class_for(self, static, kinds):
        """The Node class PyTorch's overload for this call signature prints (cached per signature)."""
        if not self.overloads:
            return self.node_class
        key = (static, kinds)
        cls = self._node_classes.get(key)
        if cls is None:
            cls = next((c for o, c in self.overloads if o.matches(static, kinds)), self.node_class)
            self._node_classes[key] = cls
        return cls

    def saves_inputs_for(self, static, kinds, diff):
        """saves_inputs for this call signature, differentiated at the positions `diff`: its PyTorch
        overload's where that one says (reflection padding saves its input, constant padding does not);
        asked when a signature is first analysed."""
        found = next((o.saves_inputs for o, _ in self.overloads if o.saves_inputs is not None
                      and o.matches(static, kinds)), None)
        return guarded_saves(self.saves_inputs if found is None else found, diff)

    def __repr__(self):
        return f"Op({self.name})"


def guarded_saves(saves, diff):
    """The positions a saves_inputs value saves when the positions `diff` are differentiated."""
    if type(saves) is dict:
        return tuple(i for i, guard in saves.items() if guard is None or guard in diff)
    return saves


def _camel(name):
    # PyTorch's spelling: each part title-cased, so a letter after a digit is upper case (Log1PBackward0).
    return "".join(part.title() for part in name.split("_"))


class overload:
    """PyTorch's node name for the calls of an op that match a pattern.

    args      one code per positional argument: "t" a tensor, "s" a Python scalar, "-" None, "." any,
              or a digit: a tensor of that many dims. Arguments past the pattern are not looked at.
    optional  argument positions PyTorch declares as optional tensors (`Tensor? min`): they appear in
              next_functions as (None, 0) even when absent.
    statics   name=value: the static has that value; name=a type: the static is an instance of it;
              name=a function: it returns True for the static.
    saves_output  whether this overload's backward saves the result (None: as the op says), where
              PyTorch's overloads differ (pow.Tensor_Scalar saves none, pow.Tensor_Tensor its result).
    saves_inputs  likewise for the op's saves_inputs.
    """

    __slots__ = ("node_name", "args", "optional", "statics", "saves_output", "saves_inputs")

    def __init__(self, node_name, args="", optional=(), saves_output=None, saves_inputs=None, **statics):
        self.node_name, self.args, self.optional, self.statics = node_name, args, optional, statics
        self.saves_output, self.saves_inputs = saves_output, saves_inputs

    def matches(self, static, kinds):
        if len(self.args) > len(kinds) or not all(map(_kind_matches, self.args, kinds)):
            return False
        given = dict(static)
        return all(isinstance(given.get(k), v) if isinstance(v, type) else v(given.get(k)) if callable(v)
                   else given.get(k) == v for k, v in self.statics.items())


def _kind_matches(code, kind):
    # kind: (shape, dtype) for a tensor, else the Python type of the argument.
    if code == ".":
        return True
    if type(kind) is tuple:
        return code == "t" or (code.isdigit() and len(kind[0]) == int(code))
    return code == ("-" if kind is type(None) else "s")


def named_formula(node_name, formula):
    """A backward formula traced as a call named after the node PyTorch records for it, the name
    autograd._backward_names then gives its gradient: a kernel's (tanh_backward: TanhBackwardBackward0),
    or a last step the traced formula cannot tell apart (a product with a Python scalar: MulBackward1)."""
    def traced(*args, **static):
        import jax

        def call(*arrays):
            return formula(*arrays, **static)
        call.__name__ = node_name
        return jax.jit(call)(*args)
    return traced


def missing_kernel(kernel):
    """Op.no_kernel_for's text for PyTorch's CPU kernel `kernel` that has no version of the dtype."""
    return f'"{kernel}" not implemented for ' + "'{}'"


# PyTorch's clamp kernels (relu's, hardtanh's) refuse complex values with their own words
CLAMP_COMPLEX = "clamp is not supported for complex types"


OPS = {}


def defop(name, fn, **meta):
    """Add an entry to the op table; returns it."""
    if name in OPS:
        raise ValueError(f"op {name!r} is defined twice")
    op = OPS[name] = Op(name, fn, **meta)
    return op


def column_major(shape):
    """The dims order of a batch of column-major matrices (LAPACK's results), None for fewer than 2 dims."""
    n = len(shape)
    return None if n < 2 else tuple(range(n - 2)) + (n - 1, n - 2)
