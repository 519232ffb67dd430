"""NumPy rule for lax's conv_general_dilated: convolutions (and their gradients) on the NumPy tier.

A CNN met with a new batch size would otherwise compile its forward convolutions and both of their
gradients (a transposed convolution, and one grouped by batch for the weights) before its first step.
The rule follows XLA's definition: operands brought to (batch, feature, spatial...) by the dimension
numbers, the input dilated (lhs_dilation: a transposed convolution) and padded (negative padding crops),
windows taken with the kernel's dilation and the strides, then per feature group (or batch group) a
product over the input features. As XLA does, it never multiplies the holes that padding and dilation
make (0 * inf would be nan): it runs tap by tap over the kernel, each tap one product of the input
elements it reads with that tap's weights, added into the outputs that read them.
"""
import numpy as np

from ._numpy_window import tap_rows

RULES = {}


class _NoRule(ValueError):
    """A convolution this rule does not reproduce exactly (the kernel compiles instead)."""


def _conv(params):
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    strides, padding = tuple(params["window_strides"]), tuple(params["padding"])
    lhs_dilation, rhs_dilation = tuple(params["lhs_dilation"]), tuple(params["rhs_dilation"])
    groups, batch_groups = params["feature_group_count"], params["batch_group_count"]
    out_type = params.get("preferred_element_type")
    if groups > 1 and batch_groups > 1:
        raise _NoRule("feature and batch groups together")
    unpermute = tuple(np.argsort(out_spec))

    plans = {}   # (input shape, kernel shape) -> the products that make the output (see _plan)

    def conv(lhs, rhs):
        lhs, rhs = np.asarray(lhs), np.asarray(rhs)
        if lhs.dtype.kind not in "fc" or rhs.dtype != lhs.dtype:
            raise _NoRule("integer or mixed convolution")
        x = np.transpose(lhs, lhs_spec)   # (batch, features, spatial...)
        k = np.transpose(rhs, rhs_spec)   # (out features, in features / groups, kernel spatial...)
        plan = plans.get((x.shape, k.shape))
        if plan is None:
            plan = plans[(x.shape, k.shape)] = _plan(x.shape[2:], k.shape[2:], strides, padding, lhs_dilation,
                                                     rhs_dilation)
        outs, pieces = plan
        n_out, f_out = x.shape[0] // batch_groups, k.shape[0]
        out = np.zeros((n_out, *outs, f_out), np.result_type(x, k))
        split = batch_groups if batch_groups > 1 else groups
        f_in, f_part = k.shape[1], f_out // split
        for written, read, taps, axes in pieces:
            part, weights = x[read], k[taps]
            for g in range(split):
                if batch_groups > 1:   # group g of the batch makes group g of the output features
                    inputs = part[g * n_out:(g + 1) * n_out]
                else:                  # group g of the input features makes group g of the output features
                    inputs = part[:, g * f_in:(g + 1) * f_in]
                out[written + (slice(g * f_part, (g + 1) * f_part),)] += np.tensordot(
                    inputs, weights[g * f_part:(g + 1) * f_part], axes)
        out = np.transpose(np.moveaxis(out, -1, 1), unpermute)
        return out if out_type is None else out.astype(out_type)
    return conv


def _plan(sizes, kernel, strides, padding, lhs_dilation, rhs_dilation):
    """(output spatial shape, [(output index, input index, kernel index, tensordot axes)]): one product
    per kernel tap (every output that tap reads an element for) or, when the outputs are fewer than the
    taps (a weight gradient: the 'kernel' is an activation map), one per output position (every tap that
    reads an element there). Either way a hole of padding or dilation is in no product."""
    every = (slice(None), slice(None))
    dilated = [(s - 1) * d + 1 if s else 0 for s, d in zip(sizes, lhs_dilation)]
    spans = [(t - 1) * d + 1 for t, d in zip(kernel, rhs_dilation)]
    outs = tuple(max(0, (n + lo + hi - span) // st + 1)
                 for n, (lo, hi), span, st in zip(dilated, padding, spans, strides))
    pieces = []
    if int(np.prod(kernel)) <= int(np.prod(outs)):
        for tap in np.ndindex(*kernel):
            rows = [tap_rows(n, o, st, t * d - lo, ld) for n, o, st, t, d, (lo, _), ld
                    in zip(sizes, outs, strides, tap, rhs_dilation, padding, lhs_dilation)]
            if all(r is not None for r in rows):
                pieces.append(((slice(None),) + tuple(r[0] for r in rows), every + tuple(r[1] for r in rows),
                               every + tap, ([1], [1])))
    else:
        n_sp = len(kernel)
        contracted = list(range(1, 2 + n_sp))
        for place in np.ndindex(*outs):
            # the taps t reading position o*stride + t*dilation - low: tap_rows with the roles swapped
            rows = [tap_rows(n, t, d, o * st - lo, ld) for n, t, d, o, st, (lo, _), ld
                    in zip(sizes, kernel, rhs_dilation, place, strides, padding, lhs_dilation)]
            if all(r is not None for r in rows):
                pieces.append(((slice(None),) + place, every + tuple(r[1] for r in rows),
                               every + tuple(r[0] for r in rows), (contracted, contracted)))
    return outs, pieces


RULES["conv_general_dilated"] = _conv
