"""Sliding-block and channel rearrangements: im2col / col2im (nn.Unfold / nn.Fold), channel_shuffle and
pixel_shuffle / pixel_unshuffle.

im2col's result is a selection of (zero-padded) input elements, so it is linear: col2im is its transpose,
summing every block back onto the positions it was read from, and each one's gradient is the other.
"""
import jax
import jax.numpy as jnp

from ._registry import defop, KEEP
from .elementwise import NOT_IMPLEMENTED, _not_implemented


def _blocks(size, kernel, dilation, padding, stride):
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _im2col(x, kernel_size, dilation, padding, stride):
    """(N, C, H, W) -> (N, C * kh * kw, L): each block's elements in (channel, kernel row, kernel col) order."""
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = kernel_size, dilation, padding, stride
    n, c, h, w = x.shape
    oh, ow = _blocks(h, kh, dh, ph, sh), _blocks(w, kw, dw, pw, sw)
    padded = jnp.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    taps = [padded[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh, j * dw:j * dw + sw * (ow - 1) + 1:sw]
            for i in range(kh) for j in range(kw)]
    return jnp.stack(taps, axis=2).reshape(n, c * kh * kw, oh * ow)


def _col2im(cols, output_size, kernel_size, dilation, padding, stride):
    n, ckk, _ = cols.shape
    c = ckk // (kernel_size[0] * kernel_size[1])
    image = jax.ShapeDtypeStruct((n, c) + tuple(output_size), cols.dtype)
    transpose = jax.linear_transpose(lambda x: _im2col(x, kernel_size, dilation, padding, stride), image)
    return transpose(cols)[0]


def _unbatched(fn, batched_rank):
    # PyTorch's kernels take an unbatched input too: run it as a batch of one
    def call(x, **static):
        if x.ndim == batched_rank:
            return fn(x, **static)
        return fn(x[None], **static)[0]
    return call


def _channel_shuffle(x, groups):
    n, c = x.shape[:2]
    rest = x.shape[2:]
    return jnp.swapaxes(x.reshape((n, groups, c // groups) + rest), 1, 2).reshape(x.shape)


im2col = defop("im2col", _unbatched(_im2col, 4), dtype_rule=KEEP)
col2im = defop("col2im", _unbatched(_col2im, 3), dtype_rule=KEEP)
channel_shuffle = defop("channel_shuffle", _channel_shuffle, dtype_rule=KEEP)


def _pixel_shuffle(x, r):
    """(*, C r^2, H, W) -> (*, C, H r, W r)."""
    *lead, c, h, w = x.shape
    n = len(lead)
    x = x.reshape(tuple(lead) + (c // (r * r), r, r, h, w))
    x = jnp.transpose(x, tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2))
    return x.reshape(tuple(lead) + (c // (r * r), h * r, w * r))


def _pixel_unshuffle(x, r):
    """(*, C, H r, W r) -> (*, C r^2, H, W), the inverse of pixel_shuffle."""
    *lead, c, h, w = x.shape
    n = len(lead)
    x = x.reshape(tuple(lead) + (c, h // r, r, w // r, r))
    x = jnp.transpose(x, tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3))
    return x.reshape(tuple(lead) + (c * r * r, h // r, w // r))


# one node each, as PyTorch records them (PixelShuffleBackward0), not the reshapes and permute they are
pixel_shuffle = defop("pixel_shuffle", _pixel_shuffle, dtype_rule=KEEP)
pixel_unshuffle = defop("pixel_unshuffle", _pixel_unshuffle, dtype_rule=KEEP)
# PyTorch records native_channel_shuffle without a derivative: backward through it raises
native_channel_shuffle = defop("native_channel_shuffle", _channel_shuffle, dtype_rule=KEEP, node_name=NOT_IMPLEMENTED,
                               no_derivative=_not_implemented("native_channel_shuffle"))
