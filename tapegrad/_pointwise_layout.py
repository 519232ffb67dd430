"""The memory layout of a pointwise op's result, as PyTorch's TensorIterator allocates it.

PyTorch gives the result of an elementwise op (add, exp, where, a comparison, a cast, an activation) the
memory order of its inputs: `x.t() * 2` is transposed (strides (1, n), not contiguous, so `.view(-1)`
fails), and a channels-last input gives a channels-last result. tapegrad computes results as logical
arrays; where PyTorch's would not be contiguous, the result's storage becomes a copy in PyTorch's memory
order, read through a permute, as `_memory_format.keep_format` lays out pooling results. Nothing is
recorded: the result keeps its grad_fn. Only a result with a view among its inputs can need it (every other
tensor is contiguous), which `_dispatch.apply` tells before calling `lay_out`.

The rules (TensorIteratorBase::fast_set_up, compute_strides, reorder_dimensions,
allocate_or_resize_outputs):
1. Operands all of the result's shape: all contiguous, a contiguous result; all channels-last, a
   channels-last one; all non-overlapping and dense with the same strides, those strides.
2. Otherwise the dims are sorted, innermost first, by the operands' strides: the first operand that
   tells two dims apart decides, a broadcast dim (stride 0) tells nothing, and of two dims with equal
   strides the smaller goes inside. The result is contiguous in that order.
A Python scalar that PyTorch wraps into a tensor (add, sub, mul, div: `Op.wraps_scalars`) is an operand
of shape () and takes rule 1 away, as in PyTorch.
"""
from ._tensor import Tensor

_SCALARS = (int, float, bool, complex)
_strides = {}   # (result shape, the operands' layouts: see lay_out) -> the result's strides, None if contiguous
MAX_ENTRIES = 4096


def lay_out(result, args, op):
    """Give `result` (fresh, of `op` on `args`) PyTorch's strides for it."""
    shape = result._peek().shape
    if len(shape) < 2 or (op.pointwise is not True and not op.pointwise(args)) \
            or not all(type(n) is int for n in shape):   # (symbolic sizes, while tapegrad.export traces)
        return
    from ._views import strides   # (here: _views imports _dispatch, which imports this module)
    key = [shape]   # then per operand: a view's (shape, strides), another tensor's shape, None for a scalar
    for a in args:
        if isinstance(a, Tensor):
            key.append((a._peek().shape, strides(a)) if a._view is not None else a._peek().shape)
        elif op.wraps_scalars and type(a) in _SCALARS:
            key.append(None)
    key = tuple(key)
    found = _strides.get(key, False)
    if found is False:
        if len(_strides) >= MAX_ENTRIES:
            _strides.clear()
        operands = [((), ()) if k is None else k if k and type(k[0]) is tuple else (k, _contiguous(k))
                    for k in key[1:]]
        found = _strides[key] = result_strides(operands, shape)
    if found is not None:
        _restride(result, found)


def result_strides(operands, shape):
    """The strides TensorIterator gives an output of `shape` for operands [(shape, strides)], None when
    they are contiguous."""
    if 0 in shape:
        return None   # an empty tensor is contiguous, whatever its strides
    if all(s == shape for s, _ in operands):
        if all(_is_contiguous(s, st) for s, st in operands):
            return None
        if len(shape) == 4 and all(_is_channels_last(s, st) for s, st in operands):
            return _strides_in_order(shape, (0, 2, 3, 1))
        first = operands[0][1]
        if all(st == first for _, st in operands) and _non_overlapping_and_dense(shape, first):
            return None if first == _contiguous(shape) else first
    n = len(shape)
    aligned = [_broadcast_strides(s, st, shape) for s, st in operands]

    def should_swap(d0, d1):
        for strides in aligned:
            s0, s1 = strides[d0], strides[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(n - 1, -1, -1))   # innermost first
    for i in range(1, n):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    if perm == list(range(n - 1, -1, -1)):
        return None
    return _strides_in_order(shape, tuple(reversed(perm)))


def _broadcast_strides(op_shape, op_strides, shape):
    pad = len(shape) - len(op_shape)
    out = [0] * pad
    for i, (size, stride) in enumerate(zip(op_shape, op_strides)):
        out.append(0 if size == 1 and shape[pad + i] != 1 else stride)
    return out


def _contiguous(shape):
    return _strides_in_order(shape, range(len(shape)))


def _strides_in_order(shape, order):
    """Contiguous strides in memory order `order` (dims outermost first)."""
    strides, step = [0] * len(shape), 1
    for d in reversed(order):
        strides[d] = step
        step *= shape[d]
    return tuple(strides)


def _is_contiguous(shape, strides):
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides)):
        if size != 1:
            if stride != expected:
                return False
            expected *= size
    return True


def _is_channels_last(shape, strides):
    if len(shape) != 4:
        return False
    expected = 1
    for d in (1, 3, 2, 0):
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def _non_overlapping_and_dense(shape, strides):
    dims = sorted(range(len(shape)), key=lambda d: (shape[d] < 2, strides[d]))
    expected = 1
    for d in dims:
        if shape[d] < 2:
            return True
        if strides[d] != expected:
            return False
        expected *= shape[d]
    return True


def _restride(out, strides):
    """out with its storage a copy in the memory order of `strides`, read through a permute; nothing
    recorded. (A size-1 dim's stride is a convention in tapegrad: see _memory_format.)"""
    from ._memory_format import _relaid
    _relaid(out, tuple(sorted(range(len(strides)), key=lambda d: (-strides[d], d))))


def lay_out_like(out, input, memory_format=None):
    """`out`, made like `input` (clone, flip, zeros_like, rand_like...), laid out as PyTorch's empty_like lays
    it out: preserve_format (the default) keeps the strides of an input that is non-overlapping and dense and
    keeps the order of any other input's strides (infer_dense_strides: the rules above, for one operand);
    contiguous_format and channels_last(_3d) are what they say."""
    from . import _memory_format as M
    if memory_format is M.contiguous_format or out.ndim < 2 or 0 in out.shape:
        return out
    if memory_format is None or memory_format is M.preserve_format:
        if input._view is not None and all(type(n) is int for n in out.shape):
            from ._views import strides
            shape = tuple(input.shape)
            found = result_strides([(shape, strides(input))], shape)
            if found is not None:
                _restride(out, found)
        return out
    _restride(out, _strides_in_order(tuple(out.shape), M._order(out, memory_format)))
    return out


def lay_out_in_order(results, orders):
    """Each result with its storage in the memory order its op's kernel leaves it (Op.result_order);
    nothing recorded, the version counter kept."""
    from ._memory_format import _relaid
    for out, order in zip(results, orders):
        if order is not None and 0 not in out.shape:
            _relaid(out, order)
