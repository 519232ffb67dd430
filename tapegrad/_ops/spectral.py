"""Discrete Fourier transforms: PyTorch's three kernels (_fft_r2c, _fft_c2c, _fft_c2r), which every
tapegrad.fft function, stft and istft record, and the overlap-add istft records (unfold_backward).

`normalization` is PyTorch's fft_norm_mode: 0 no scaling, 1 by 1/sqrt(n), 2 by 1/n (n: the product of
the transformed sizes). The gradients are jax.vjp's, which are PyTorch's: the adjoint transform, and for
c2r the one-sided gradient with the mirrored bins counted twice (fft_c2r_backward).
"""
import jax.numpy as jnp

from ._registry import defop, KEEP

NONE, BY_ROOT_N, BY_N = 0, 1, 2

# jnp.fft's norm names for a transform in each direction
_FORWARD_NORM = {NONE: "backward", BY_ROOT_N: "ortho", BY_N: "forward"}
_INVERSE_NORM = {NONE: "forward", BY_ROOT_N: "ortho", BY_N: "backward"}


def _r2c(x, dim, normalization, onesided):
    if onesided:   # the last transformed dim keeps n // 2 + 1 bins
        return jnp.fft.rfftn(x, axes=dim, norm=_FORWARD_NORM[normalization])
    complex_dtype = jnp.complex64 if x.dtype == jnp.float32 else jnp.complex128
    return jnp.fft.fftn(x.astype(complex_dtype), axes=dim, norm=_FORWARD_NORM[normalization])


def _c2c(x, dim, normalization, forward):
    if forward:
        return jnp.fft.fftn(x, axes=dim, norm=_FORWARD_NORM[normalization])
    return jnp.fft.ifftn(x, axes=dim, norm=_INVERSE_NORM[normalization])


def _c2r(x, dim, normalization, last_dim_size):
    # the one-sided spectrum of a real signal of last_dim_size points along dim[-1] (its bins past
    # last_dim_size // 2 + 1 unread, the imaginary parts of the self-conjugate bins ignored)
    sizes = tuple(x.shape[d] for d in dim[:-1]) + (last_dim_size,)
    return jnp.fft.irfftn(x, s=sizes, axes=dim, norm=_INVERSE_NORM[normalization])


# (PyTorch's r2c backward saves its input, for its size: changing it in place makes backward fail)
fft_r2c = defop("fft_r2c", _r2c, dtype_rule=KEEP, saves_inputs=(0,))
fft_c2c = defop("fft_c2c", _c2c, dtype_rule=KEEP)
fft_c2r = defop("fft_c2r", _c2r, dtype_rule=KEEP)


def _unfold_backward(frames, length, step):
    """Overlap-add of frames (..., n_frames, size) along dim -2 into a signal (..., length): frame k starts
    at k * step. PyTorch's unfold_backward for that layout (the gradient of Tensor.unfold)."""
    n_frames, size = frames.shape[-2:]
    positions = (jnp.arange(n_frames)[:, None] * step + jnp.arange(size)[None, :]).reshape(-1)
    flat = frames.reshape(frames.shape[:-2] + (n_frames * size,))
    out = jnp.zeros(frames.shape[:-2] + (length,), frames.dtype)
    return out.at[..., positions].add(flat)


unfold_backward = defop("unfold_backward", _unfold_backward, dtype_rule=KEEP)
