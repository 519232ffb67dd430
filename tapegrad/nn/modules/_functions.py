"""Autograd Functions behind modules, as PyTorch's torch.nn.modules._functions: CrossMapLRN2d.

CrossMapLRN2d is PyTorch's legacy (Lua Torch) cross-channel normalisation: its running window never drops the
first channel's square once it has slid past it, and its backward is its own formula, not the derivative of its
forward; both are reproduced here as PyTorch computes them."""
import numpy as np

from ..._creation import tensor
from ...autograd.function import Function


def _forward_window(channels, size):
    # PyTorch's running sum: channel c adds the square of c + pre_pad - 1 and drops that of c - pre_pad only
    # for c > pre_pad (so channel 0's square stays in every sum)
    pre_pad = int((size - 1) / 2 + 1)
    window = np.zeros((channels, channels))
    window[0, :min(pre_pad, channels)] = 1
    for c in range(1, channels):
        window[c] = window[c - 1]
        if c < channels - pre_pad + 1:
            window[c, c + pre_pad - 1] += 1
        if c > pre_pad:
            window[c, c - pre_pad] -= 1
    return window


def _backward_window(channels, size):
    # the sum of the ratios over padded positions c .. c + size - 1, the centre starting at size - (size - 1) / 2
    inverse_pre_pad = int(size - (size - 1) / 2)
    window = np.zeros((channels, channels))
    for c in range(channels):
        for i in range(c, c + size):
            if 0 <= i - inverse_pre_pad < channels:
                window[c, i - inverse_pre_pad] = 1
    return window


def _across_channels(window, t):
    # window (C, C) applied over dim 1 of an (N, C, H, W) tensor
    return tensor(window, dtype=t.dtype).matmul(t.transpose(0, 1).reshape(t.shape[1], -1)).reshape(
        t.shape[1], t.shape[0], *t.shape[2:]).transpose(0, 1)


class CrossMapLRN2d(Function):
    @staticmethod
    def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
        if input.ndim != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.ndim}D instead.")
        ctx.size, ctx.alpha, ctx.beta, ctx.k = size, alpha, beta, k
        scale = _across_channels(_forward_window(input.shape[1], size), input * input) * (alpha / size) + k
        output = scale.pow(-beta) * input
        ctx.save_for_backward(input, output, scale)   # (PyTorch keeps scale on ctx)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output, scale = ctx.saved_tensors
        ratios = _across_channels(_backward_window(input.shape[1], ctx.size), grad_output * output / scale)
        grad_input = scale.pow(-ctx.beta) * grad_output - (2 * ctx.alpha * ctx.beta / ctx.size) * input * ratios
        return grad_input, None, None, None, None
