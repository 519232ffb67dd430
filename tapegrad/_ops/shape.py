"""Shape ops. Those PyTorch returns as views share storage (view=True)."""
import jax.numpy as jnp
import numpy as np

from . import _stride_rules as R
from ._registry import ALL_INPUTS, defop, overload, SAME, KEEP
from .indexing import _getitem


def _diag_embed(a, offset, dim1, dim2):
    n = a.shape[-1] + abs(offset)
    i = jnp.arange(a.shape[-1])
    out = jnp.zeros(a.shape[:-1] + (n, n), a.dtype).at[..., i + max(-offset, 0), i + max(offset, 0)].set(a)
    return jnp.moveaxis(out, (-2, -1), (dim1, dim2))


def _squeeze(a, dim):
    # dim: None (every size-1 dim), an int or a tuple, as PyTorch's squeeze overloads take it.
    if a.ndim == 0:
        return a
    dims = range(a.ndim) if dim is None else (dim,) if isinstance(dim, int) else dim
    return jnp.squeeze(a, tuple(d for d in dims if a.shape[d] == 1))


def _repeat_interleave(a, repeats, dim, total):
    if dim is None:
        a, dim = a.reshape(-1), 0
    return jnp.repeat(a, repeats, axis=dim, total_repeat_length=total)


def _block_diag(*xs):
    # each operand as a matrix (a scalar 1 x 1, a vector one row) on the diagonal of a zero matrix
    mats = [x.reshape((1,) * (2 - x.ndim) + x.shape) for x in xs]
    out = jnp.zeros((sum(m.shape[0] for m in mats), sum(m.shape[1] for m in mats)), mats[0].dtype)
    row = col = 0
    for m in mats:
        out = out.at[row:row + m.shape[0], col:col + m.shape[1]].set(m)
        row, col = row + m.shape[0], col + m.shape[1]
    return out


def _unfold(a, dim, size, step):
    # windows of `size` elements every `step` along dim, as a new last dim (a 0-d input: one of its element)
    if a.ndim == 0:
        return a.reshape(1)[:size]
    count = (a.shape[dim] - size) // step + 1
    windows = np.arange(count)[:, None] * step + np.arange(size)
    return jnp.moveaxis(jnp.take(a, windows, axis=dim), dim + 1, -1)


def strided_positions(size, stride, offset):
    """offset + sum(i_d * stride_d) for every index of `size`: storage positions of a strided layout."""
    index = np.full(tuple(size), offset, np.int64)
    for d, (n, st) in enumerate(zip(size, stride)):
        index += (np.arange(n, dtype=np.int64) * st).reshape((n,) + (1,) * (len(size) - d - 1))
    return index


def _as_strided(a, size, stride, offset, source):
    """The elements of `a` at the storage positions of (size, stride, offset), `a`'s own elements lying at
    those of `source` = (strides, offset): one gather (its VJP sums overlapping elements' gradients). A
    position `a` does not hold reads 0 and its gradient is dropped, as PyTorch's as_strided backward drops
    what lies outside its input's geometry (an older view of a base that as_strided_ shrank since)."""
    have = strided_positions(a.shape, *source).reshape(-1)
    want = strided_positions(size, stride, offset)
    if have.size == 0:
        return jnp.zeros(want.shape, a.dtype)
    order = np.argsort(have, kind="stable")
    index = order[np.minimum(np.searchsorted(have[order], want), have.size - 1)]
    held = have[index] == want
    taken = a.reshape(-1)[index]
    return taken if held.all() else jnp.where(held, taken, jnp.zeros((), a.dtype))


# ---- views --------------------------------------------------------------------------
as_strided = defop("as_strided", _as_strided, dtype_rule=KEEP, view=True, stride_rule=R.as_strided_strides,
                   backward_name="AsStridedBackward0")
view = defop("view", lambda a, shape: jnp.reshape(a, shape), dtype_rule=KEEP, view=True, stride_rule=R.reshape_strides)
expand = defop("expand", lambda a, shape: jnp.broadcast_to(a, shape), dtype_rule=KEEP, view=True,
               stride_rule=R.expand_strides)
transpose = defop("transpose", lambda a, dim0, dim1: jnp.swapaxes(a, dim0, dim1), dtype_rule=KEEP, view=True,
                  stride_rule=R.transpose_strides, backward_name="TransposeBackward0")
t = defop("t", lambda a: a.T, dtype_rule=KEEP, view=True, stride_rule=R.transpose_strides, backward_name="TBackward0")
permute = defop("permute", lambda a, dims: jnp.transpose(a, dims), dtype_rule=KEEP, view=True,
                stride_rule=R.permute_strides)
unsqueeze = defop("unsqueeze", lambda a, dim: jnp.expand_dims(a, dim), dtype_rule=KEEP, view=True,
                  stride_rule=R.unsqueeze_strides, backward_name="SqueezeBackward1")
squeeze = defop("squeeze", _squeeze, dtype_rule=KEEP, view=True, stride_rule=R.squeeze_strides,
                overloads=[overload("SqueezeBackward1", dim=int), overload("SqueezeBackward2", dim=tuple)])
# fw_primal: forward AD's unpack_dual(t).primal, PyTorch's Identity node
alias = defop("alias", lambda a, fw_primal=False: a, dtype_rule=KEEP, view=True, stride_rule=R.same_strides,
              overloads=[overload("torch::autograd::Identity", fw_primal=True)])
# reshape of a non-contiguous tensor that strides alone can reshape (PyTorch's _reshape_alias).
reshape_alias = defop("reshape_alias", lambda a, shape: jnp.reshape(a, shape), dtype_rule=KEEP, view=True,
                      node="_reshape_alias", stride_rule=R.reshape_strides)
# Tensor.unfold (PyTorch's nn.functional.unfold is another op)
unfold = defop("unfold_windows", _unfold, dtype_rule=KEEP, view=True, node="unfold", stride_rule=R.unfold_strides,
               backward_name="UnfoldBackwardBackward0")
diagonal = defop("diagonal", lambda a, offset, dim1, dim2: jnp.diagonal(a, offset, dim1, dim2), dtype_rule=KEEP,
                 view=True, stride_rule=R.diagonal_strides, backward_name="DiagonalBackwardBackward0")
# split/chunk/unbind pieces are basic-index views of the input (their own node names).
# with_sizes: split by a list of sizes (PyTorch's split_with_sizes, its own node name).
split = defop("split", lambda a, spec, with_sizes=False: _getitem(a, spec=spec), dtype_rule=KEEP, view=True,
              stride_rule=R.index_strides, overloads=[overload("SplitWithSizesBackward0", with_sizes=True)],
              backward_name="CatBackward0")
unbind = defop("unbind", _getitem, dtype_rule=KEEP, view=True, stride_rule=R.index_strides,
               backward_name="StackBackward0")
split.several_views = unbind.several_views = True

# ---- copies -----------------------------------------------------------------------------
reshape_copy = defop("reshape_copy", lambda a, shape: jnp.reshape(a, shape), dtype_rule=KEEP,
                     node="unsafe_view")
flip = defop("flip", lambda a, dims: jnp.flip(a, dims) if a.ndim else a, dtype_rule=KEEP)   # (0-d: dims (0,))
rot90 = defop("rot90", lambda a, k, dims: jnp.rot90(a, k, dims), dtype_rule=KEEP, backward_name="Rot90Backward0")


def _rot90_order(static, shapes):
    # PyTorch flips into a new tensor and transposes it in place for an odd number of turns: the result
    # reads that buffer with the two dims swapped
    if not static["k"] % 2:
        return (None,)
    order = list(range(len(shapes[0])))
    d0, d1 = static["dims"]
    order[d0], order[d1] = d1, d0
    return (tuple(order),)


rot90.result_order = _rot90_order
# dims None: the flattened tensor is rolled (one node, as PyTorch's).
roll = defop("roll", lambda a, shifts, dims: jnp.roll(a, shifts if dims is not None else shifts[0], dims),
             dtype_rule=KEEP, backward_name="RollBackward0")
tril = defop("tril", lambda a, diagonal: jnp.tril(a, diagonal), dtype_rule=KEEP, backward_name="TrilBackward0")
triu = defop("triu", lambda a, diagonal: jnp.triu(a, diagonal), dtype_rule=KEEP, backward_name="TriuBackward0")
def legacy_empty(shape):
    """A 1-d empty shape ([0]): PyTorch's cat skips such inputs in its shape checks and when it joins; they still
    promote the dtype and are edges of the node (their gradient is empty)."""
    return len(shape) == 1 and shape[0] == 0


def _cat(*xs, dim):
    joined = [x for x in xs if not legacy_empty(x.shape)] or xs[:1]
    return jnp.concatenate(joined, dim)


cat = defop("cat", _cat, dtype_rule=SAME)
stack = defop("stack", lambda *xs, dim: jnp.stack(xs, dim), dtype_rule=SAME)
block_diag = defop("block_diag", _block_diag, dtype_rule=SAME)
repeat = defop("repeat", lambda a, repeats: jnp.tile(a, repeats), dtype_rule=KEEP)
flip.elements_from = roll.elements_from = repeat.elements_from = (0,)
cat.elements_from = stack.elements_from = ALL_INPUTS
repeat_interleave = defop("repeat_interleave", _repeat_interleave, dtype_rule=KEEP, diff=(0,),
                          node="index_select")
# PyTorch's diag is diag_embed of a vector, diagonal_copy of a matrix.
diag = defop("diag", lambda a, diagonal: jnp.diag(a, diagonal), dtype_rule=KEEP, node_name="DiagonalBackward0_copy",
             overloads=[overload("DiagEmbedBackward0", "1")])
diag_embed = defop("diag_embed", _diag_embed, dtype_rule=KEEP, backward_name="DiagonalBackward0")


# ---- the inverses of select, slice and diagonal: input with src written where the view would read -----

def _diagonal_scatter(a, src, offset, dim1, dim2):
    moved = jnp.moveaxis(a, (dim1, dim2), (-2, -1))
    i = jnp.arange(src.shape[-1])
    moved = moved.at[..., i + max(-offset, 0), i + max(offset, 0)].set(src)
    return jnp.moveaxis(moved, (-2, -1), (dim1, dim2))


select_scatter = defop("select_scatter", lambda a, src, dim, index: a.at[(slice(None),) * dim + (index,)].set(src),
                       dtype_rule=KEEP)
slice_scatter = defop("slice_scatter", lambda a, src, dim, start, stop, step:
                      a.at[(slice(None),) * dim + (slice(start, stop, step),)].set(src), dtype_rule=KEEP)
diagonal_scatter = defop("diagonal_scatter", _diagonal_scatter, dtype_rule=KEEP)


def _as_strided_scatter(a, src, size, stride, offset, source):
    """a with src written at the storage positions of (size, stride, offset), a's own elements lying at those
    of source = (strides, offset); the caller checks that a holds every position."""
    have = strided_positions(a.shape, *source).reshape(-1)
    order = np.argsort(have, kind="stable")
    index = order[np.searchsorted(have[order], strided_positions(size, stride, offset).reshape(-1))]
    return a.reshape(-1).at[index].set(src.reshape(-1)).reshape(a.shape)


as_strided_scatter = defop("as_strided_scatter", _as_strided_scatter, dtype_rule=KEEP)
select_scatter.elements_from = slice_scatter.elements_from = diagonal_scatter.elements_from = \
    as_strided_scatter.elements_from = ALL_INPUTS


# ---- how PyTorch's backward formulas hand the gradient on (Op.hands_grad) ------------------------------

def _squeeze_back(static, shape, out_shape):
    # unsqueeze_to: the gradient unsqueezed at each squeezed dim of size 1
    dim = static["dim"]
    dims = range(len(shape)) if dim is None else (dim,) if isinstance(dim, int) else dim
    return [("unsqueeze", d) for d in sorted(d % len(shape) for d in dims if shape[d] == 1)]


def _permute_back(static, shape, out_shape):
    dims = [d % len(shape) for d in static["dims"]]
    return [("permute", tuple(dims.index(d) for d in range(len(dims))))]


def _cat_back(static, shapes, position):
    # cat_tensors_backward: each input's gradient narrows the output's (a legacy empty 1-d input: a fresh one)
    shape, dim = shapes[position], static["dim"]
    if legacy_empty(shape):
        return None
    start = sum(s[dim] for s in shapes[:position] if not legacy_empty(s))
    return [("narrow", dim, start, shape[dim])]


_cat_back.by_position = True
cat.hands_grad = _cat_back
# stack_tensors_backward: each input's gradient selects the output's
stack.hands_grad = lambda static, shapes, position: [("select", static["dim"], position)]
stack.hands_grad.by_position = True
alias.hands_grad = (0,)
t.hands_grad = lambda static, shape, out_shape: [("t",)]
transpose.hands_grad = lambda static, shape, out_shape: [("transpose", static["dim0"], static["dim1"])]
permute.hands_grad = _permute_back
unsqueeze.hands_grad = lambda static, shape, out_shape: [("squeeze", static["dim"])]
squeeze.hands_grad = _squeeze_back
view.hands_grad = reshape_alias.hands_grad = reshape_copy.hands_grad = \
    lambda static, shape, out_shape: [("reshape", shape)]
# sum_to of an equal shape is the gradient itself, but for a 0-d one (g.sum())
expand.hands_grad = lambda static, shape, out_shape: [] if tuple(out_shape) == shape != () else None
