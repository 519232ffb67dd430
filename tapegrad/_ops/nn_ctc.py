"""CTC loss (Graves et al., 2006) as one kernel: each sample's negative log-likelihood of its target over
all alignments of its input, by the alpha recursion in log space (a lax.scan over time).

Inputs: log_probs (T, N, C); targets padded (N, S) or concatenated (sum of target lengths,), int64;
input_lengths (N,) and target_lengths (N,), int64. Statics: blank, zero_infinity, and width, the longest
target (S for padded targets). The lengths are inputs, not statics, so one kernel serves every batch of
the same shapes. Output: (N,) losses, inf where no alignment exists.

PyTorch's backward (ctc_loss_backward_cpu_template) is not the derivative of this value: it is
(exp(log_probs) - the posterior of each class) * grad, the gradient of the logits under a log_softmax,
which the chain through log_softmax gives only for normalized inputs. The reverse form computes it as
PyTorch does, from alpha and beta, with its NaN where no alignment exists and zeros past each input's
length (all zeros for an infinite loss with zero_infinity).
"""
import functools

import jax
import jax.numpy as jnp
from jax import lax

from ._registry import defop, KEEP


def _log(s):
    # log, whose derivative at 0 (a state no path reaches, -inf) is 0 rather than 0 / 0: forward mode and a
    # backward's own derivative stay finite there
    zero = s == 0
    return jnp.where(zero, jnp.full((), -jnp.inf, s.dtype), jnp.log(jnp.where(zero, jnp.ones((), s.dtype), s)))


def _log_add3(a, b, c):
    # PyTorch's log(exp(a - m) + exp(b - m) + exp(c - m)) + m, with m = 0 where all three are -inf
    m = jnp.maximum(jnp.maximum(a, b), c)
    m = jnp.where(m == -jnp.inf, jnp.zeros((), m.dtype), m)
    return _log(jnp.exp(a - m) + jnp.exp(b - m) + jnp.exp(c - m)) + m


def _shift(x, k, fill):
    """x along its last axis moved by k places (k > 0: toward higher indices), `fill` in the places it left."""
    n = x.shape[-1]
    k_abs = min(abs(k), n)
    pad = jnp.full(x.shape[:-1] + (k_abs,), fill, x.dtype)
    return jnp.concatenate([pad, x[..., :n - k_abs]], -1) if k > 0 else jnp.concatenate([x[..., k_abs:], pad], -1)


def _extended(log_probs, targets, target_lengths, blank, width):
    """The extended targets l' (blank, t1, blank, t2, ..., blank; (N, 2 width + 1)), the log-probabilities
    of their labels (T, N, 2 width + 1), NaN for a label outside [0, C) (PyTorch reads memory there), and
    where a state may be reached from two states back (a label unlike the one two states before)."""
    n, classes = log_probs.shape[1], log_probs.shape[2]
    if targets.ndim == 1:   # concatenated: sample b's target starts after the targets before it
        starts = jnp.cumsum(target_lengths) - target_lengths
        at = jnp.clip(starts[:, None] + jnp.arange(width), 0, max(targets.shape[0] - 1, 0))
        labels = jnp.take(targets, at) if targets.shape[0] else jnp.full((n, width), blank, targets.dtype)
    else:
        labels = targets[:, :width]
    ext = jnp.full((n, 2 * width + 1), blank, jnp.int64).at[:, 1::2].set(labels.astype(jnp.int64))
    valid = (ext >= 0) & (ext < classes)
    picked = jnp.take_along_axis(log_probs, jnp.broadcast_to(jnp.where(valid, ext, 0), (log_probs.shape[0],) +
                                                             ext.shape), axis=2)
    lp_ext = jnp.where(valid, picked, jnp.full((), jnp.nan, log_probs.dtype))
    skip = ext != _shift(ext, 2, blank)   # (the first two states have nothing two states back: blank == blank)
    skip = skip.at[:, :2].set(False)
    return ext, lp_ext, skip


def _alphas(lp_ext, skip, target_lengths):
    """log alpha (T, N, 2 width + 1): alpha_0 is the blank and the first label, then eq. (6) and (7)."""
    neg = jnp.full((), -jnp.inf, lp_ext.dtype)
    s = jnp.arange(lp_ext.shape[2])
    first = jnp.where((s == 0) | ((s == 1) & (target_lengths[:, None] > 0)), lp_ext[0], neg)

    def step(prev, lp_t):
        new = _log_add3(prev, _shift(prev, 1, neg), jnp.where(skip, _shift(prev, 2, neg), neg)) + lp_t
        return new, new

    _, rest = lax.scan(step, first, lp_ext[1:])
    return jnp.concatenate([first[None], rest], 0)


def _nll(alphas, input_lengths, target_lengths):
    """-log of the last two alphas' sum at each input's last step, eq. (8): -alpha of the blank alone for an
    empty target; 0 (-0.0, as PyTorch negates it) or inf for an empty input."""
    n = alphas.shape[1]
    last = alphas[jnp.clip(input_lengths - 1, 0), jnp.arange(n)]           # (N, 2 width + 1)
    end = 2 * target_lengths
    l1 = jnp.take_along_axis(last, end[:, None], axis=1)[:, 0]
    l2 = jnp.take_along_axis(last, jnp.clip(end - 1, 0)[:, None], axis=1)[:, 0]
    m = jnp.maximum(l1, l2)
    m = jnp.where(m == -jnp.inf, jnp.zeros((), m.dtype), m)
    both = _log(jnp.exp(l1 - m) + jnp.exp(l2 - m)) + m
    likelihood = jnp.where(target_lengths == 0, last[:, 0], both)
    empty = jnp.where(target_lengths == 0, jnp.zeros((), alphas.dtype), jnp.full((), -jnp.inf, alphas.dtype))
    return -jnp.where(input_lengths == 0, empty, likelihood)


def _forward(log_probs, targets, input_lengths, target_lengths, blank, width):
    ext, lp_ext, skip = _extended(log_probs, targets, target_lengths, blank, width)
    alphas = _alphas(lp_ext, skip, target_lengths)
    return _nll(alphas, input_lengths, target_lengths), (ext, lp_ext, skip, alphas)


def _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity, width):
    return _forward(log_probs, targets, input_lengths, target_lengths, blank, width)[0]


# ---- PyTorch's backward -------------------------------------------------------------------------------

def _betas(lp_ext, skip, input_lengths, target_lengths):
    """log beta (T, N, 2 width + 1), eq. (10) and (11): from each input's last step back, -inf past it and
    past each target's last state."""
    neg = jnp.full((), -jnp.inf, lp_ext.dtype)
    s = jnp.arange(lp_ext.shape[2])
    end = 2 * target_lengths[:, None]
    inside = s <= end
    last_two = (s == end) | ((s == end - 1) & (target_lengths[:, None] > 0))
    skip_back = _shift(skip, -2, False)   # state s may come from s + 2 where s + 2 may come from s

    def step(nxt, xs):
        lp_t, t = xs
        rec = _log_add3(nxt, _shift(nxt, -1, neg), jnp.where(skip_back, _shift(nxt, -2, neg), neg)) + lp_t
        last = (t == input_lengths - 1)[:, None]
        before = (t < input_lengths - 1)[:, None]
        new = jnp.where(last, jnp.where(last_two, lp_t, neg), jnp.where(before & inside, rec, neg))
        return new, new

    init = jnp.full(lp_ext.shape[1:], -jnp.inf, lp_ext.dtype)
    _, betas = lax.scan(step, init, (lp_ext, jnp.arange(lp_ext.shape[0])), reverse=True)
    return betas


def _class_logsumexp(values, ext, classes):
    """log sum exp of values (T, N, L) over the states of each class (ext (N, L) gives a state's class):
    (T, N, C), -inf for a class no state has. Each class is scaled by its own maximum."""
    t, n, length = values.shape
    rows = (jnp.arange(t)[:, None, None] * n + jnp.arange(n)[None, :, None]) * classes
    at = (rows + jnp.clip(ext, 0, classes - 1)[None]).reshape(-1)
    flat = values.reshape(-1)
    size = t * n * classes
    top = jax.ops.segment_max(flat, at, size)
    top = jnp.where(top == -jnp.inf, jnp.zeros((), top.dtype), top)
    total = jax.ops.segment_sum(jnp.exp(flat - top[at]), at, size)
    return (_log(total) + top).reshape(t, n, classes)


def _pytorch_grad(log_probs, input_lengths, target_lengths, ext, lp_ext, skip, alphas, nll, g, zero_infinity):
    """PyTorch's gradient: (exp(lp) - exp(lcab + nll - lp)) * grad at the steps before each input's length,
    lcab the log sum of alpha * beta over the states of each class."""
    steps, n, classes = log_probs.shape
    betas = _betas(lp_ext, skip, input_lengths, target_lengths)
    used = (jnp.arange(steps)[:, None] < input_lengths)[:, :, None]                 # (T, N, 1)
    out_of_range = (ext < 0) | (ext >= classes)
    ab = jnp.where(used & ~out_of_range[None], alphas + betas, jnp.full((), -jnp.inf, alphas.dtype))
    lcab = _class_logsumexp(ab, ext, classes)
    grad = (jnp.exp(log_probs) - jnp.exp(lcab + nll[:, None] - log_probs)) * g[:, None]
    if zero_infinity:   # (PyTorch zeroes an infinite loss's gradient before its NaN is computed)
        used = used & (nll != jnp.inf)[None, :, None]
    return jnp.where(used, grad, jnp.zeros((), grad.dtype))


@functools.partial(jax.custom_vjp, nondiff_argnums=(4, 5, 6))
def _ctc_loss_pytorch_vjp(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity, width):
    return _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity, width)


def _vjp_forward(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity, width):
    nll, (ext, lp_ext, skip, alphas) = _forward(log_probs, targets, input_lengths, target_lengths, blank, width)
    return nll, (log_probs, input_lengths, target_lengths, ext, lp_ext, skip, alphas, nll)


def _vjp_backward(blank, zero_infinity, width, saved, g):
    log_probs, input_lengths, target_lengths, ext, lp_ext, skip, alphas, nll = saved
    grad = _pytorch_grad(log_probs, input_lengths, target_lengths, ext, lp_ext, skip, alphas, nll, g,
                         zero_infinity)
    return grad, None, None, None


_ctc_loss_pytorch_vjp.defvjp(_vjp_forward, _vjp_backward)


def _ctc_loss_reverse(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity, width):
    """_ctc_loss differentiated by PyTorch's backward formula."""
    return _ctc_loss_pytorch_vjp(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity, width)


# PyTorch's node keeps its result (result0) and log_probs; the targets and lengths are never differentiable.
ctc_loss = defop("ctc_loss", _ctc_loss, dtype_rule=KEEP, diff=(0,), saves_output=True,
                 reverse_fn=_ctc_loss_reverse, backward_name="torch::autograd::NotImplemented",
                 no_double_backward=(RuntimeError, "derivative for aten::_ctc_loss_backward is not implemented"))
