"""torch.func's checks, with PyTorch's errors: argnums, the arguments a transform differentiates, what a
transformed function returns, and vmap's in_dims/out_dims against the structure of the arguments and
results (PyTorch's pytree rules and the TreeSpec text its messages print).

These run before JAX sees the function, or inside the traced function before JAX checks the same thing, so
that a user meets torch.func's error rather than jax.grad's or jax.vmap's.
"""
import collections
import contextlib

import jax

from . import _faults
from ._equation import next_seq
from .autograd._tracing import TRACER_ERRORS

_DICTS = (dict, collections.OrderedDict, collections.defaultdict)


def _node(tree):
    """(type name, context, children) of a PyTorch pytree node, or None for a leaf (tensors, numbers, None)."""
    kind = type(tree)
    if kind is tuple or kind is list or kind is collections.deque:
        return kind.__name__, None, list(tree)
    if isinstance(tree, tuple) and hasattr(kind, "_fields"):
        return "namedtuple", kind, list(tree)
    if isinstance(tree, _DICTS):
        name = "OrderedDict" if isinstance(tree, collections.OrderedDict) else (
            "defaultdict" if isinstance(tree, collections.defaultdict) else "dict")
        return name, list(tree.keys()), list(tree.values())
    return None


def leaves(tree):
    """The leaves of `tree` in PyTorch's order (dicts in their own key order; None is a leaf)."""
    node = _node(tree)
    if node is None:
        return [tree]
    return [leaf for child in node[2] for leaf in leaves(child)]


def rebuilt(tree, values):
    """`tree` with its leaves (in `leaves`' order) replaced by the next ones of the iterator `values`."""
    node = _node(tree)
    if node is None:
        return next(values)
    kind = type(tree)
    if isinstance(tree, _DICTS):
        out = {k: rebuilt(v, values) for k, v in tree.items()}
        return out if kind is dict else kind(out) if kind is not collections.defaultdict else \
            collections.defaultdict(tree.default_factory, out)
    children = [rebuilt(c, values) for c in tree]
    return kind(*children) if node[0] == "namedtuple" else kind(children)


def spec(tree, indent=0):
    """`tree_flatten(tree)[1]` as PyTorch prints it: TreeSpec(type, context, [children]), leaves as *."""
    node = _node(tree)
    if node is None:
        return "*"
    name, context, children = node
    text = f"TreeSpec({name}, {context}, ["
    if children:
        indent += 2
        text += spec(children[0], indent) + ("," if len(children) > 1 else "")
        text += ",".join("\n" + " " * indent + spec(child, indent) for child in children[1:])
    return text + "])"


def broadcast_leaves(prefix, full):
    """PyTorch's _broadcast_to_and_flatten: one entry of `prefix` per leaf of `full`, a leaf of the prefix
    covering a whole subtree; None when `prefix` is not a prefix of `full`'s structure. (As PyTorch's, the
    entries follow the prefix's order: a dict prefix's keys, not the full tree's.)"""
    out = []

    def walk(p, f):
        pn = _node(p)
        if pn is None:
            out.extend([p] * len(leaves(f)))
            return True
        fn = _node(f)
        if fn is None:
            return False
        dicts = isinstance(p, _DICTS) and isinstance(f, _DICTS)
        if not dicts and (pn[0] != fn[0] or (pn[0] == "namedtuple" and pn[1] is not fn[1])):
            return False
        if len(pn[2]) != len(fn[2]):
            return False
        if dicts:
            if set(p) != set(f):
                return False
            return all(walk(p[k], f[k]) for k in p)
        return all(walk(a, b) for a, b in zip(pn[2], fn[2]))
    return out if walk(prefix, full) else None


def _is_tensor(x):
    from ._tensor import Tensor
    return isinstance(x, Tensor)


# ---- grad, vjp, jacrev, jvp, jacfwd ------------------------------------------------------------------

def argnums(argnums, nargs):
    """PyTorch's _slice_argnums checks; the argnums with negative ones counted from the end."""
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")

    def one(n):
        if not isinstance(n, int):
            raise RuntimeError(f"argnum must be int, got: {type(n)}")
        if not -nargs <= n < nargs:
            raise RuntimeError(f"Got argnum={n}, but only {nargs} positional inputs")
        return n % nargs
    if isinstance(argnums, int):
        return one(argnums)
    wrapped = tuple(one(n) for n in argnums)
    if not wrapped:
        raise RuntimeError("argnums must be non-empty")
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"argnums elements must be unique, got {wrapped}")
    return wrapped


def differentiable(trees):
    """The arguments a reverse-mode transform differentiates must be floating or complex tensors (PyTorch
    makes each require grad)."""
    for leaf in leaves(trees):
        if not _is_tensor(leaf):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(leaf)}")
        if not (leaf.dtype.is_floating_point or leaf.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")


def primals(api, trees, what="primals"):
    """jvp's check of its primals or tangents: a non-empty list of tensors."""
    flat = leaves(trees)
    if not flat:
        raise RuntimeError(f"{api}: Expected {what} to contain at least one Tensor.")
    for leaf in flat:
        if not _is_tensor(leaf):
            raise RuntimeError(f"{api}: Expected {what} to only contain Tensors, got {type(leaf)}")


def with_aux(api, out, has_aux):
    """(output, aux) of a function run with has_aux, as PyTorch checks it."""
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    return out


def tensor_aux(aux):
    """torch.func's check of the aux a has_aux function returns: tensors only."""
    for leaf in leaves(aux):
        if not _is_tensor(leaf):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(leaf)}")


def scalar_output(out):
    """grad's check of what the function returns: a tensor with no dimensions."""
    if not _is_tensor(out):
        raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a Tensor, got {type(out)}")
    if out.ndim != 0:
        raise RuntimeError(f"grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got tensor with "
                           f"{out.ndim} dims. Maybe you wanted to use the vjp or jacrev APIs instead?")


def tensor_outputs(api, out):
    """vjp's and jvp's check of what the function returns: tensors, at least one."""
    flat = leaves(out)
    if (len(flat) == 1 and flat[0] is None) or not flat:
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output (got output = {flat})")
    for leaf in flat:
        if not _is_tensor(leaf):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type "
                               f"{type(leaf)}")


def randomness(value):
    if value not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or 'same'. Got {value}")


# ---- vmap ------------------------------------------------------------------------------------------

def name(func):
    """How PyTorch's messages name a function: its __name__, a partial's function, else its repr."""
    import functools
    if hasattr(func, "__name__"):
        return func.__name__
    if isinstance(func, functools.partial):
        return f"functools.partial({name(func.func)}, ...)"
    return repr(func)


def out_dims(dims, func):
    """PyTorch's check that out_dims is an int, None or a structure of them."""
    if isinstance(dims, int):
        return
    for d in leaves(dims):
        if d is not None and not isinstance(d, int):
            raise ValueError(f"vmap({name(func)}, ..., out_dims={dims}): `out_dims` must be an int, None or a python "
                             "collection of ints representing where in the outputs the vmapped dimension should "
                             "appear.")


def in_dims(dims, args, func):
    """PyTorch's _process_batched_inputs: (batch size, in_dims per leaf of args in PyTorch's order, each
    non-negative or None)."""
    label = f"vmap({name(func)}, in_dims={dims}, ...)(<inputs>)"
    if not isinstance(dims, (int, tuple)):
        raise ValueError(f"{label}: expected `in_dims` to be int or a (potentially nested) tuple matching the "
                         f"structure of inputs, got: {type(dims)}.")
    if not args:
        raise ValueError(f"vmap({name(func)})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
                         "trying to vmap over a function with no inputs. The latter is unsupported.")
    flat_args = leaves(args)
    flat = broadcast_leaves(dims, args)
    if flat is None:
        raise ValueError(f"{label}: in_dims is not compatible with the structure of `inputs`. in_dims has structure "
                         f"{spec(dims)} but inputs has structure {spec(args)}.")
    for i, (arg, d) in enumerate(zip(flat_args, flat)):
        if not isinstance(d, int) and d is not None:
            raise ValueError(f"{label}: Got in_dim={d} for an input but in_dim must be either an integer dimension "
                             "or None.")
        if isinstance(d, int) and not _is_tensor(arg):
            raise ValueError(f"{label}: Got in_dim={d} for an input but the input is of type {type(arg)}. We cannot "
                             "vmap over non-Tensor arguments, please use None as the respective in_dim")
        if d is not None:
            n = arg.ndim
            if not -n <= d < n:
                raise ValueError(f"{label}: Got in_dim={d} for some input, but that input is a Tensor of "
                                 f"dimensionality {n} so expected in_dim to satisfy -{n} <= in_dim < {n}.")
            flat[i] = d % n
    sizes = [arg.shape[d] for arg, d in zip(flat_args, flat) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped dimension, got sizes "
                         f"{sizes} for the mapped dimension")
    return sizes[0], flat


def results(out, dims, func):
    """PyTorch's _unwrap_batched checks of the mapped function's results (tensors, as seen inside the map):
    the out_dims per leaf of out."""
    def incompatible():
        return ValueError(f"vmap({name(func)}, ..., out_dims={dims})(<inputs>): out_dims is not compatible with the "
                          f"structure of `outputs`. out_dims has structure {spec(dims)} but outputs has structure "
                          f"{spec(out)}.")
    if _is_tensor(out):
        if isinstance(dims, int) or dims is None:
            flat = [dims]
        elif isinstance(dims, tuple) and len(dims) == 1:
            flat = list(dims)
        else:
            raise incompatible()
    else:
        flat = broadcast_leaves(dims, out)
        if flat is None:
            raise incompatible()
    for value, d in zip(leaves(out), flat):
        if d is None:
            continue
        if not _is_tensor(value):
            raise ValueError(f"vmap({name(func)}, ...): `{name(func)}` must only return Tensors, got type "
                             f"{type(value)}. Did you mean to set out_dims= to None for output?")
        n = value.ndim + 1   # (with the batch dimension)
        if not -n <= d < n:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {d})")
    return flat


# ---- values read in Python while a transform traces ---------------------------------------------------

# The transforms running now, outermost first: a value read in Python inside a vmap is vmap's error.
_RUNNING = []
# Graphs that a backward inside a transform ran without retain_graph: a transform traces its function more
# than once (to find what it reads, then to compile it), where PyTorch runs it once; their saved values are
# freed when the outermost transform returns.
_FREED_AFTER = []
_STARTED_AT = [0]            # the sequence number of the first op the outermost running transform may record
OUTSIDE_BACKWARDS = [0]      # backwards run inside a transform over a graph recorded before it


def free_after_transforms(graph):
    """Whether a transform is running, then `graph` is freed when the outermost one returns. A graph recorded
    before the transform is counted: its saved values are constants of the trace, so a trace that runs one
    cannot be kept for another call (autograd._tracing.discover)."""
    if not _RUNNING:
        return False
    if any(n.seq < _STARTED_AT[0] for n in graph.nodes):
        OUTSIDE_BACKWARDS[0] += 1
    _FREED_AFTER.append(graph)
    return True


class ReadsValues(RuntimeError):
    """A transformed function read a value in Python (grad runs it eagerly instead: _func_eager)."""


@contextlib.contextmanager
def explained(kind):
    """Run a transform of `kind`; a value read in Python while it traces becomes PyTorch's error (the outermost
    transform raises it, vmap's own where a vmap was running)."""
    if not _RUNNING:
        _STARTED_AT[0] = next_seq()
    _RUNNING.append(kind)
    try:
        yield
    except TRACER_ERRORS as e:
        kinds = getattr(e, "_tapegrad_transforms", ()) + (kind,)   # innermost first
        if len(_RUNNING) > 1:   # (an enclosing transform raises it)
            e._tapegrad_transforms = kinds
            raise
        if "vmap" in kinds and hasattr(e, "op"):   # (a result whose size the values decide: _common.sized_by)
            raise RuntimeError(_dynamic_shape_message(e.op)) from None
        if "vmap" in kinds:   # (a tensor of another transform's, over a batch, has PyTorch's combined message)
            data = type(e) is jax.errors.TracerArrayConversionError
            message = _VMAP_READS.get(type(e) if data or kinds[0] == "vmap" else "wrapped",
                                      _VMAP_READS[jax.errors.ConcretizationTypeError])
            raise RuntimeError(message) from None
        raise ReadsValues(
            "tapegrad.func transforms trace the function: it cannot read tensor values in Python (.item(), "
            ".tolist(), .numpy(), bool() or a data-dependent if). Compute with tensor ops instead (torch.where)."
        ) from e
    except Exception as e:   # (the user's function raised it, through JAX's transform)
        _faults.drop_jax_note(e)
        raise
    finally:
        _RUNNING.pop()
        while not _RUNNING and _FREED_AFTER:
            _FREED_AFTER.pop().release()


def _dynamic_shape_message(op):
    if op == "masked_select":
        return ("vmap: Attempted to vmap over `mask` in torch.masked_select(self, mask) We cannot support this because "
                "for each batch this would return a differently shaped Tensor. Please file an issue at "
                "https://github.com/pytorch/pytorch/issues if you need this feature.")
    if op == "nonzero_numpy":
        return "Batching rule not implemented for aten::nonzero_numpy. We could not generate a fallback."
    if op == "index_mask":
        return ("vmap: We do not support batching operators that can support dynamic shape. Attempting to batch over "
                "indexing with a boolean mask.")
    return (f"vmap: We do not support batching operators that can output dynamic shape. Attempted to vmap over "
            f"aten::{op}. Please file an issue at https://github.com/pytorch/pytorch/issues if you need this feature.")


_VMAP_READS = {
    "wrapped":
        "vmap: It looks like you're either (1) calling .item() on a Tensor or (2) attempting to use a Tensor in some "
        "data-dependent control flow or (3) encountering this error in PyTorch internals. For (1): we don't support "
        "vmap over calling .item() on a Tensor, please try to rewrite what you're doing with other operations. For "
        "(2): we don't support data-dependent control flow in vmap yet, please file an issue at "
        "https://github.com/pytorch/pytorch/issues . For (3): please file an issue.",
    jax.errors.TracerBoolConversionError:
        "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. We don't "
        "support that yet, please file an issue at https://github.com/pytorch/pytorch/issues .",
    jax.errors.TracerArrayConversionError: "Cannot access data pointer of Tensor that doesn't have storage",
    jax.errors.ConcretizationTypeError:
        "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling .item() on a "
        "Tensor, please try to rewrite what you're doing with other operations. If error is occurring somewhere "
        "inside PyTorch internals, please file a bug report.",
}
