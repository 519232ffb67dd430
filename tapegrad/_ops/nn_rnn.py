"""Recurrent layers (RNN, LSTM, GRU) as one kernel each: every layer and direction is a lax.scan.

Inputs: x (T, B, I) time-major, h0 (L*D, B, H), [c0 for LSTM], then per layer and direction
w_ih, w_hh[, b_ih, b_hh][, w_hr (LSTM with proj_size > 0)], then (training with dropout) one mask per layer but the last, then (packed
sequences) a (T, B) bool mask of the steps each sequence really has. Masked steps keep the carry and output
zeros, so h_n is taken at each sequence's length and the reverse direction starts at it; the lengths are
an input, not a static, so one compiled kernel serves every batch of the same padded shape.
Outputs: output (T, B, D*H), h_n[, c_n]. With a projection (`proj`), h is w_hr @ (o * tanh(c)): h0, h_n and
the output have the projection's size, c0 and c_n the hidden size.

Sequence lengths come in buckets: a kernel for T steps pads the input to the bucket's length, runs the
bucket's scan (one jax.jit, so its trace and derivatives serve every length of the bucket) with the padded
steps masked, and keeps the first T outputs. Tracing a scan and its VJP costs tens of milliseconds per new
length, which a loop over sequences of random length paid for each length; it now pays per bucket.
Masked steps keep the carry, so h_n is the last real step's, and the outputs at real steps are computed by
the same operations as without padding.
"""
import functools

import jax
import jax.numpy as jnp
from jax import lax

from ._elementwise_math import sigmoid
from ._registry import defop, KEEP


def _input_gates(x, w):
    """The input's share of every gate at every step, x @ w_ih.T (+ b_ih), one matmul over the whole sequence
    before the scan (as PyTorch's CPU kernels): only the hidden state's share is left to the steps."""
    gi = x @ w[0].T
    return gi + w[2] if len(w) > 3 else gi


def _hidden_gates(h, w):
    gh = h @ w[1].T
    return gh + w[3] if len(w) > 3 else gh


def _cell(mode, nonlinearity, proj=False):
    # (each cell takes the step's input gates, _input_gates, where it took the step's input)
    def rnn(carry, x, w):
        h, = carry
        gi, gh = x, _hidden_gates(h, w)
        # where(), not maximum(): PyTorch's relu gradient at 0 is 0, maximum's is split in half
        act = jnp.tanh if nonlinearity == "tanh" else (lambda v: jnp.where(v <= 0, jnp.zeros((), v.dtype), v))
        h = act(gi + gh)
        return (h,), h

    def lstm(carry, x, w):
        h, c = carry
        w, w_hr = (w[:-1], w[-1]) if proj else (w, None)
        gi, gh = x, _hidden_gates(h, w)
        i, f, g, o = jnp.split(gi + gh, 4, axis=-1)
        c = sigmoid(f) * c + sigmoid(i) * jnp.tanh(g)
        h = sigmoid(o) * jnp.tanh(c)
        if proj:
            h = h @ w_hr.T
        return (h, c), h

    def gru(carry, x, w):
        h, = carry
        gi, gh = x, _hidden_gates(h, w)
        ir, iz, in_ = jnp.split(gi, 3, axis=-1)
        hr, hz, hn = jnp.split(gh, 3, axis=-1)
        r = sigmoid(ir + hr)
        z = sigmoid(iz + hz)
        n = jnp.tanh(in_ + r * hn)
        h = (1 - z) * n + z * h
        return (h,), h

    return {"RNN": rnn, "LSTM": lstm, "GRU": gru}[mode]


def _masked(cell):
    """A cell over (x_t, valid_t): where a sequence has ended, the carry passes through and the output is 0."""
    def step(carry, xs, w):
        x, v = xs
        new, h = cell(carry, x, w)
        return tuple(jnp.where(v, n, c) for n, c in zip(new, carry)), jnp.where(v, h, jnp.zeros_like(h))
    return step


def bucket_length(steps):
    """The padded length of a sequence of `steps` steps: a multiple of 8, in at most four buckets per
    doubling (at most 1/4 padding beyond 32 steps)."""
    grain = max(8, 1 << max(0, steps.bit_length() - 3))
    return -(-steps // grain) * grain


def _rnn(x, *args, mode, nonlinearity, num_layers, bidirectional, has_bias, dropout_scale, packed=False,
         proj=False):
    options = dict(mode=mode, nonlinearity=nonlinearity, num_layers=num_layers, bidirectional=bidirectional,
                   has_bias=has_bias, dropout_scale=dropout_scale, proj=proj)
    steps = x.shape[0]
    padded = bucket_length(steps)
    if padded == steps:
        return _bucket_scan(x, *args, packed=packed, **options)
    per, count = _weight_layout(num_layers, bidirectional, has_bias, proj)
    head = (2 if mode == "LSTM" else 1) + per * count    # h0[, c0] and the weights
    # (lax primitives, not jnp.pad and friends: this wrapper is traced for every length)
    pad = lambda a: lax.pad(a, jnp.zeros((), a.dtype), [(0, padded - steps, 0)] + [(0, 0, 0)] * (a.ndim - 1))
    masks = [pad(m) for m in args[head:]]          # dropout masks and the packed mask are time-major
    real = lax.broadcasted_iota(jnp.int32, (padded, x.shape[1]), 0) < steps
    valid = lax.bitwise_and(masks.pop(), real) if packed else real
    outs = _bucket_scan(pad(x), *args[:head], *masks, valid, packed=True, **options)
    return (lax.slice_in_dim(outs[0], 0, steps),) + tuple(outs[1:])


def _weight_layout(num_layers, bidirectional, has_bias, proj):
    """(weights per layer and direction, number of layers times directions) of the kernel's arguments."""
    return (4 if has_bias else 2) + (1 if proj else 0), num_layers * (2 if bidirectional else 1)


@functools.partial(jax.jit, static_argnames=("mode", "nonlinearity", "num_layers", "bidirectional", "has_bias",
                                             "dropout_scale", "packed", "proj"))
def _bucket_scan(x, *args, mode, nonlinearity, num_layers, bidirectional, has_bias, dropout_scale, packed,
                 proj):
    dirs = 2 if bidirectional else 1
    lstm = mode == "LSTM"
    args = list(args)
    h0 = args.pop(0)
    c0 = args.pop(0) if lstm else None
    per, count = _weight_layout(num_layers, bidirectional, has_bias, proj)
    weights = [args[i * per:(i + 1) * per] for i in range(count)]
    masks = args[count * per:]
    valid = masks.pop() if packed else None
    cell = _cell(mode, nonlinearity, proj)
    if packed:
        cell = _masked(cell)
        step_in = lambda gates: (gates, valid[..., None])
    else:
        step_in = lambda gates: gates
    h_n, c_n = [], []
    layer_in = x
    for layer in range(num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            carry = (h0[k], c0[k]) if lstm else (h0[k],)
            w = weights[k]
            gates = _input_gates(layer_in, w)
            carry, ys = lax.scan(lambda c, xt, w=w: cell(c, xt, w), carry, step_in(gates), reverse=d == 1)
            outs.append(ys)
            h_n.append(carry[0])
            if lstm:
                c_n.append(carry[1])
        layer_in = outs[0] if dirs == 1 else jnp.concatenate(outs, axis=-1)
        if masks and layer < num_layers - 1:
            layer_in = layer_in * masks[layer].astype(x.dtype) * jnp.asarray(dropout_scale, x.dtype)
    result = (layer_in, jnp.stack(h_n))
    return result + (jnp.stack(c_n),) if lstm else result


rnn = defop("rnn", _rnn, dtype_rule=KEEP, nout=2, node="rnn")
lstm = defop("lstm", _rnn, dtype_rule=KEEP, nout=3, node="mkldnn_rnn_layer")
