"""einsum as PyTorch computes it: operands aligned by permute/unsqueeze/diagonal, then contracted a pair
at a time by sums, permutes, reshapes and bmm (ATen's sumproduct_pair), so grad_fn reads as PyTorch's.

With three or more operands PyTorch contracts them in opt_einsum's order (its default strategy,
"auto"); opt_einsum is one of JAX's own dependencies, so the same path is computed here.
"""
from .._autocast import policy
from .._tensor import Tensor

_LETTERS = 26


def _subscript(label):
    return ord(label) - ord("A") if label.isupper() else ord(label) - ord("a") + _LETTERS


def _label(subscript):
    return chr(ord("A") + subscript) if subscript < _LETTERS else chr(ord("a") + subscript - _LETTERS)


ELLIPSIS = 2 * _LETTERS


def _parse_operands(lhs, num_ops):
    labels, current, seen_ellipsis, i = [[] for _ in range(num_ops)], 0, False, 0
    while i < len(lhs):
        c = lhs[i]
        if c == ".":
            if seen_ellipsis:
                raise RuntimeError(f"einsum(): found '.' for operand {current} for which an ellipsis was already "
                                   "found")
            if lhs[i:i + 3] != "...":
                raise RuntimeError(f"einsum(): found '.' for operand {current} that is not part of any ellipsis")
            labels[current].append(ELLIPSIS)
            seen_ellipsis, i = True, i + 2
        elif c == ",":
            current += 1
            if current >= num_ops:
                raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
            seen_ellipsis = False
        elif c != " ":
            if not (c.isascii() and c.isalpha()):
                raise RuntimeError(f"einsum(): invalid subscript given at index {i} in the equation string, "
                                   "subscripts must be in [a-zA-Z]")
            labels[current].append(_subscript(c))
        i += 1
    if current != num_ops - 1:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return labels


@policy("einsum")
def einsum(equation, *operands):
    if isinstance(equation, Tensor):   # einsum(op1, sublist1, op2, sublist2, ..., [sublist_out])
        equation, operands = _sublist_equation((equation,) + operands)
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    path = _opt_einsum_path(equation, operands) if len(operands) > 2 else None
    return _einsum(equation, list(operands), path)


def _opt_einsum_path(equation, operands):
    import opt_einsum
    shapes = [tuple(o.shape) for o in operands]
    try:
        steps = opt_einsum.contract_path(equation, *shapes, optimize="auto", shapes=True)[0]
    except ValueError as e:
        raise RuntimeError(f"einsum(): {e}") from None
    return [i for step in steps for i in step]


def _einsum(equation, operands, path):
    from ._rearrange import diagonal
    from ._shape import permute, unsqueeze, movedim, view
    num_ops = len(operands)
    arrow = equation.find("->")
    lhs = equation if arrow < 0 else equation[:arrow]
    op_labels = _parse_operands(lhs, num_ops)

    label_count = [0] * ELLIPSIS
    ell_num_dim = 0
    for i, (operand, labels) in enumerate(zip(operands, op_labels)):
        nlabels, has_ellipsis = len(labels), ELLIPSIS in labels
        if has_ellipsis:
            nlabels -= 1
            ell_num_dim = max(ell_num_dim, operand.ndim - nlabels)
        for s in labels:
            if s != ELLIPSIS:
                label_count[s] += 1
        if (nlabels > operand.ndim) if has_ellipsis else (nlabels != operand.ndim):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation ({nlabels}) "
                               + ("is more than the number of dimensions (" if has_ellipsis else
                                  "does not match the number of dimensions (")
                               + f"{operand.ndim}) for operand {i}" + ("" if has_ellipsis else
                                                                       " and no ellipsis was given"))

    # Aligned layout: output dims first, then contracted ones.
    perm_of = [-1] * ELLIPSIS
    perm_index = ell_index = 0
    ell_in_output = False
    if arrow < 0:   # implicit output: the ellipsis, then the labels seen once, in order
        perm_index, ell_in_output = ell_num_dim, True
        for s in range(ELLIPSIS):
            if label_count[s] == 1:
                perm_of[s], perm_index = perm_index, perm_index + 1
    else:
        rhs, i = equation[arrow + 2:], 0
        while i < len(rhs):
            c = rhs[i]
            if c == ".":
                if ell_in_output:
                    raise RuntimeError("einsum(): found '.' for output but an ellipsis (...) was already found")
                if rhs[i:i + 3] != "...":
                    raise RuntimeError("einsum(): found '.' for output that is not part of any ellipsis (...)")
                ell_index, perm_index, ell_in_output, i = perm_index, perm_index + ell_num_dim, True, i + 2
            elif c != " ":
                if not (c.isascii() and c.isalpha()):
                    raise RuntimeError(f"einsum(): invalid subscript given at index {len(lhs) + 2 + i} in the "
                                       "equation string, subscripts must be in [a-zA-Z]")
                s = _subscript(c)
                if not (label_count[s] > 0 and perm_of[s] == -1):
                    raise RuntimeError(f"einsum(): output subscript {c}" + (
                        " appears more than once in the output" if perm_of[s] > -1 else
                        " does not appear in the equation for any input operand"))
                perm_of[s], perm_index = perm_index, perm_index + 1
            i += 1
    out_num_dim = perm_index
    if not ell_in_output:
        ell_index, perm_index = perm_index, perm_index + ell_num_dim
    for s in range(ELLIPSIS):
        if label_count[s] > 0 and perm_of[s] == -1:
            perm_of[s], perm_index = perm_index, perm_index + 1

    # Each operand: sizes checked, diagonals of repeated labels, missing dims unsqueezed, permuted.
    label_size, ell_sizes, dim_counts, ops = [1] * ELLIPSIS, [1] * ell_num_dim, [0] * perm_index, []
    for i, (operand, labels) in enumerate(zip(operands, op_labels)):
        op, permutation, dim = operand, [-1] * perm_index, 0
        for s in labels:
            if s == ELLIPSIS:
                covered = operand.ndim - (len(labels) - 1)
                for j in range(ell_num_dim - covered, ell_num_dim):
                    if op.shape[dim] != 1:
                        if ell_sizes[j] not in (1, op.shape[dim]):
                            raise RuntimeError(
                                f"einsum(): dimension {dim} covered by ellipsis in operand {i}has size "
                                f"{op.shape[dim]} which does not broadcast with previously seen ellipsis with size "
                                f"{ell_sizes[j]} for the respective dimension")
                        ell_sizes[j] = op.shape[dim]
                        dim_counts[ell_index + j] += 1
                    permutation[ell_index + j], dim = dim, dim + 1
            elif permutation[perm_of[s]] == -1:
                if op.shape[dim] != 1:
                    if label_size[s] not in (1, op.shape[dim]):
                        raise RuntimeError(f"einsum(): subscript {_label(s)} has size {op.shape[dim]} for operand "
                                           f"{i} which does not broadcast with previously seen size {label_size[s]}")
                    label_size[s] = op.shape[dim]
                    dim_counts[perm_of[s]] += 1
                permutation[perm_of[s]], dim = dim, dim + 1
            else:   # a repeated label: its diagonal
                prev = permutation[perm_of[s]]
                if op.shape[dim] != op.shape[prev]:
                    raise RuntimeError(f"einsum(): subscript {_label(s)} is repeated for operand {i} but the sizes "
                                       f"don't match, {op.shape[dim]} != {op.shape[prev]}")
                op = movedim(diagonal(op, 0, prev, dim), -1, prev)
        for k, value in enumerate(permutation):
            if value == -1:
                op = unsqueeze(op, dim)
                permutation[k], dim = dim, dim + 1
        ops.append(permute(op, tuple(permutation)))   # (a tuple: a 0-d operand permutes by ())

    steps = iter(path or ())
    while len(ops) > 1:
        i, j = 0, 1
        if path is not None:
            i, j = sorted((next(steps), next(steps)))
        a, b = ops[i], ops[j]
        del ops[j], ops[i]
        sum_dims, a_sum, b_sum = [], [], []
        for d in range(out_num_dim, perm_index):
            if a.shape[d] != 1 and b.shape[d] != 1:
                dim_counts[d] -= 1
                if dim_counts[d] == 1:
                    sum_dims.append(d)
                    dim_counts[d] = 0
            elif dim_counts[d] == 1:
                if a.shape[d] != 1:
                    a_sum.append(d)
                    dim_counts[d] = 0
                elif b.shape[d] != 1:
                    b_sum.append(d)
                    dim_counts[d] = 0
        if a_sum:
            a = a.sum(a_sum, True)
        if b_sum:
            b = b.sum(b_sum, True)
        result = _sumproduct_pair(a, b, sum_dims, True)
        if path is not None:
            ops.append(result)
        else:
            ops.insert(0, result)

    if perm_index - out_num_dim > 0:
        if num_ops > 1:   # every contracted dim has size 1 by now
            return view(ops[0], tuple(ops[0].shape[:out_num_dim]))
        return ops[0].sum(list(range(out_num_dim, perm_index)))
    return ops[0]


def _sumproduct_pair(left, right, sum_dims, keepdim):
    """(left * right).sum(sum_dims) by permutes and bmm, as ATen's sumproduct_pair."""
    from ._arith import mul
    from ._linalg import bmm
    from ._shape import permute, reshape, view
    if not sum_dims:
        return mul(left, right)
    ndim, summed = left.ndim, set(sum_dims)
    lro, lo, ro = [], [], []
    lro_size = lo_size = ro_size = sum_size = 1
    for i in range(ndim):
        sl, sr = left.shape[i] != 1, right.shape[i] != 1
        if i in summed:
            if sl and sr:
                if left.shape[i] != right.shape[i]:
                    raise RuntimeError("non-broadcast dimensions must match")
                sum_size *= left.shape[i]
            elif sl:
                left = left.sum(i, True)
            elif sr:
                right = right.sum(i, True)
        elif sl and sr:
            if left.shape[i] != right.shape[i]:
                raise RuntimeError("non-broadcast dimensions must match")
            lro.append(i)
            lro_size *= left.shape[i]
        elif sl:
            lo.append(i)
            lo_size *= left.shape[i]
        else:
            ro.append(i)
            ro_size *= right.shape[i]
    if lo and ro and ro[-1] < lo[0]:   # bmm then yields the output's own order (no final permute's copy)
        left, right, lo, ro, lo_size, ro_size = right, left, ro, lo, ro_size, lo_size
    out_size = [left.shape[d] for d in lro] + [left.shape[d] for d in lo] + [1] * len(sum_dims) + \
        [right.shape[d] for d in ro]
    opermutation = [-1] * len(out_size)
    for position, d in enumerate(lro + lo + list(sum_dims) + ro):
        opermutation[d] = position
    left = reshape(permute(left, tuple(lro + lo + list(sum_dims) + ro)), lro_size, lo_size, sum_size)
    right = reshape(permute(right, tuple(lro + list(sum_dims) + ro + lo)), lro_size, sum_size, ro_size)
    result = permute(view(bmm(left, right), tuple(out_size)), tuple(opermutation))
    if not keepdim:
        result = view(result, tuple(n for i, n in enumerate(result.shape) if i not in summed))
    return result


def _sublist_equation(args):
    """einsum's sublist format as its equation, with PyTorch's letters: 0-25 are A-Z, 26-51 a-z."""
    def letters(sublist):
        out = []
        for n in sublist:
            if n is Ellipsis:
                out.append("...")
            elif isinstance(n, int) and 0 <= n < ELLIPSIS:
                out.append(_label(n))
            else:
                raise ValueError(f"einsum(): subscript in subscript list is not within the valid range [0, 52), "
                                 f"got {n}")
        return "".join(out)
    operands, inputs = args[0::2], [letters(s) for s in args[1::2]]
    equation = ",".join(inputs[:len(operands)])
    if len(args) % 2:   # a trailing output sublist
        equation += "->" + letters(args[-1])
        operands = operands[:-1]
    return equation, tuple(operands)
