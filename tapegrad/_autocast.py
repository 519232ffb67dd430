"""Autocast state and PyTorch's per-op casting policy (the public API is tapegrad.amp).

PyTorch's autocast casts the inputs of listed ops before they run: "lower precision" ops (matmuls,
convolutions) to the autocast dtype, "fp32" ops (losses, some reductions and linear algebra) to
float32. Only floating tensors other than float64 are cast. The op itself then runs with autocast
off, so the ops it is made of are not cast again (PyTorch excludes its autocast key the same way).

The public functions carry the policy through `@policy("name")`; the table below is CPU's list in
PyTorch 2.13 for the ops tapegrad has (and its "promote" list: the widest
floating input's dtype), checked against PyTorch by tests/test_amp.py. einsum and
tensordot are not on PyTorch's list, but PyTorch runs them as bmm, so their results are in lower
precision too. Reading the state costs one list lookup per decorated call when autocast is off.
"""
import functools

LOWER = frozenset({
    "mm", "matmul", "bmm", "addmm", "baddbmm", "linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
    "conv_transpose2d", "conv_transpose3d", "prelu", "scaled_dot_product_attention", "einsum", "tensordot"})
FP32 = frozenset({
    "prod", "cdist", "trace", "inv", "cholesky", "pinv", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
    "nll_loss", "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
    "cosine_embedding_loss", "stft", "istft", "fft_fft", "fft_ifft", "fft_fft2", "fft_ifft2", "fft_fftn",
    "fft_ifftn", "fft_rfft", "fft_irfft", "fft_rfft2", "fft_irfft2", "fft_rfftn", "fft_irfftn", "fft_hfft",
    "fft_ihfft"})
PROMOTE = frozenset({"cat", "stack"})

ACTIVE = [False]      # any device type's autocast enabled (the fast check)
STATE = {}            # device type -> (enabled, dtype)
DEFAULT_DTYPES = {"cpu": "bfloat16", "cuda": "float16"}


def enabled(device_type="cuda"):
    return STATE.get(device_type, (False, None))[0]


def dtype(device_type):
    from . import _dtypes as D
    entry = STATE.get(device_type)
    if entry is not None and entry[1] is not None:
        return entry[1]
    return getattr(D, DEFAULT_DTYPES.get(device_type, "bfloat16"))


def set_state(device_type, on, dt):
    STATE[device_type] = (on, dt)
    ACTIVE[0] = any(e for e, _ in STATE.values())


def key():
    """The autocast state as a hashable value (tapegrad.compile guards on it)."""
    return tuple(sorted(((k, v) for k, v in STATE.items() if v[0]), key=lambda kv: kv[0])) if ACTIVE[0] else ()


def policy(name):
    """Decorate the public function `name` with its autocast policy (LOWER, FP32 or PROMOTE)."""
    kind = "lower" if name in LOWER else "fp32" if name in FP32 else "promote" if name in PROMOTE else None
    if kind is None:
        raise ValueError(f"{name!r} has no autocast policy")

    def decorate(fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            if not ACTIVE[0]:
                return fn(*args, **kwargs)
            return _run(fn, kind, args, kwargs)
        return wrapped
    return decorate


def _tensors(args):
    from ._tensor import Tensor
    for a in args:
        if isinstance(a, Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            yield from (x for x in a if isinstance(x, Tensor))


def _eligible(t):
    from . import _dtypes as D
    return t.dtype.is_floating_point and t.dtype is not D.float64


def _promoted(lower, tensors):
    # PyTorch's at::autocast::prioritize: float32 wins; otherwise every input must be the autocast dtype
    from . import _dtypes as D
    current = lower
    for t in tensors:
        if not _eligible(t):
            continue
        if current is D.float32 or t.dtype is D.float32:
            current = D.float32
        elif t.dtype is not current:
            raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return current


def _run(fn, kind, args, kwargs):
    from . import _dtypes as D
    from ._tensor import Tensor
    device = next((t.device.type for t in _tensors(args)), None)
    entry = STATE.get(device)
    if entry is None or not entry[0]:
        return fn(*args, **kwargs)
    if kind == "lower":
        target = dtype(device)
    elif kind == "fp32":
        target = D.float32
    else:
        target = _promoted(dtype(device), _tensors(args))

    def cast(a):
        if isinstance(a, Tensor) and _eligible(a) and a.dtype is not target:
            return a.to(target)
        if isinstance(a, (list, tuple)) and any(isinstance(x, Tensor) for x in a):
            return type(a)(cast(x) for x in a)
        return a
    args = tuple(cast(a) for a in args)
    kwargs = {k: cast(v) for k, v in kwargs.items()}
    saved = dict(STATE)
    STATE.clear()
    ACTIVE[0] = False     # the op's own parts run without autocast
    try:
        return fn(*args, **kwargs)
    finally:
        STATE.update(saved)
        ACTIVE[0] = any(e for e, _ in STATE.values())
