"""stft and istft, composed as PyTorch composes them (torch.functional.stft and SpectralOps' stft, istft):
frames are an as_strided view of the signal, windowed and transformed by the spectral kernels, and istft's
overlap-add is unfold_backward, so gradients and grad_fn nodes follow the recorded ops."""

from .._autocast import policy
from .._dispatch import apply
from .._flags import warn_once
from .._memory_format import contiguous_format
from .._ops import spectral as K
from ._common import SCALAR_NAME
from ._complex import resolve_conj, view_as_complex, view_as_real
from ._splits import _slice
from .._user_frames import warn_user

__all__ = ["stft", "istft"]

_warned = set()


def _warn_once(message):
    # PyTorch's TORCH_WARN_ONCE: once per process
    if warn_once(_warned, message):
        warn_user(message, UserWarning)


_NO_STFT_WINDOW = ("A window was not provided. A rectangular window will be applied,which is known to cause spectral "
                   "leakage. Other windows such as torch.hann_window or torch.hamming_window are recommended to reduce "
                   "spectral leakage.To suppress this warning and use a rectangular window, explicitly set "
                   "`window=torch.ones(n_fft, device=<device>)`.")
_NO_ISTFT_WINDOW = ("A window was not provided. A rectangular window will be applied.Please provide the same window "
                    "used by stft to make the inversion lossless.To suppress this warning and use a rectangular "
                    "window, explicitly set `window=torch.ones(n_fft, device=<device>)`.")


def _type_string(t):
    # Tensor::toString: the legacy type name, which complex types lack
    name = SCALAR_NAME[t.dtype.name]
    return f"CPU{name}Type" if t.dtype.is_complex else f"torch.{name}Tensor"


def _window_string(window):
    return "None" if window is None else f"{_type_string(window)}{{{list(window.shape)}}}"


def _optional(value):
    return "None" if value is None else str(int(value))


@policy("stft")
def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, pad_mode="reflect",
         normalized=False, onesided=None, return_complex=None, align_to_window=None):
    from ..nn._functional.padding import pad   # (nn loads after the functional API)
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:   # (torch.functional.stft pads the signal in Python, as here)
        signal_dim = input.ndim
        extended = [1] * (3 - signal_dim) + list(input.shape)
        input = pad(input.view(extended), [n_fft // 2, n_fft // 2], pad_mode)
        input = input.view(tuple(input.shape)[-signal_dim:])
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length

    def error(message):
        return RuntimeError(
            f"stft({_type_string(input)}{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
            f"window={_window_string(window)}, normalized={int(normalized)}, onesided={_optional(onesided)}, "
            f"return_complex={_optional(return_complex)}, align_to_window={_optional(align_to_window)}) : {message}")

    if window is None:
        _warn_once(_NO_STFT_WINDOW)
    complex_input = input.dtype.is_complex or (window is not None and window.dtype.is_complex)
    returns_complex = complex_input if return_complex is None else return_complex
    if not returns_complex:
        if return_complex is None:
            raise RuntimeError("stft requires the return_complex parameter be given for real inputs, and will further "
                               "require that return_complex=True in a future PyTorch release.")
        _warn_once("stft with return_complex=False is deprecated. In a future pytorch release, stft will return "
                   "complex tensors for all inputs, and return_complex=False will raise an error.\nNote: you can "
                   "still call torch.view_as_real on the complex output to recover the old return format.")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise error("expected a tensor of floating point or complex values")
    if input.ndim not in (1, 2):
        raise error("expected a 1D or 2D tensor")
    signal = input.unsqueeze(0) if input.ndim == 1 else input
    length = signal.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise error(f"expected 0 < n_fft < {length}, but got n_fft={win}")
    if hop <= 0:
        raise error(f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise error(f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise error(f"expected a 1D window tensor of size equal to win_length={win}, but got window with size "
                    f"{list(window.shape)}")
    left = (n_fft - win) // 2
    padded_window = window
    if win < n_fft:   # the window centred in n_fft points (a copy into zeros: CopySlices)
        from .._creation import zeros
        padded_window = zeros(n_fft, dtype=(window if window is not None else input).dtype)
        if window is not None:
            padded_window.narrow(0, left, win).copy_(window)
        else:
            padded_window.narrow(0, left, win).fill_(1)
    n_frames = 1 + (length - n_fft) // hop
    if align_to_window:   # frames start where the window does, not where its n_fft points do
        n_frames = 1 + (length - win) // hop
        if left:
            signal = pad(signal, [left, left])
    stride = signal.stride()
    frames = signal.as_strided((signal.shape[0], n_frames, n_fft), (stride[0], hop * stride[1], stride[1]))
    if padded_window is not None:
        frames = frames.mul(padded_window)
    complex_fft = frames.dtype.is_complex
    if frames.dtype.itemsize == 2:   # (half and bfloat16: no CPU kernel)
        raise RuntimeError(f"MKL FFT doesn't support tensors of type: {SCALAR_NAME[frames.dtype.name]}")
    one_sided = (not complex_fft) if onesided is None else onesided
    mode = K.BY_ROOT_N if normalized else K.NONE
    if complex_fft:
        if one_sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = apply(K.fft_c2c, frames, dim=(2,), normalization=mode, forward=True)
    else:
        out = apply(K.fft_r2c, frames, dim=(2,), normalization=mode, onesided=one_sided)
    out.transpose_(1, 2)
    if input.ndim == 1:
        out.squeeze_(0)
    return out if returns_complex else view_as_real(out)


@policy("istft")
def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True, normalized=False, onesided=None,
          length=None, return_complex=False):
    from .._creation import ones
    from ..nn._functional.padding import pad
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length

    def error(message, separator=": "):
        return RuntimeError(
            f"istft({_type_string(input)}{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
            f"window={_window_string(window)}, center={int(center)}, normalized={int(normalized)}, "
            f"onesided={_optional(onesided)}, length={'None' if length is None else length}, "
            f"return_complex={int(return_complex)}) {separator}{message}")

    if window is None:
        _warn_once(_NO_ISTFT_WINDOW)
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from stft with "
                           "return_complex=True.")
    parts = view_as_real(resolve_conj(input))
    ndim = parts.ndim
    n_frames, fft_size = parts.size(-2), parts.size(-3)
    expected = n_fft + hop * (n_frames - 1)
    if parts.numel() == 0:
        raise error("input tensor cannot be empty.")
    if ndim not in (3, 4):
        raise error(f"expected a tensor with 3 or 4 dimensions, but got {ndim}")
    one_sided = fft_size != n_fft if onesided is None else onesided
    if one_sided and n_fft // 2 + 1 != fft_size:
        raise error("expected the frequency dimension (3rd to the last) of the input tensor to match n_fft / 2 + 1 "
                    f"when onesided=True, but got {fft_size}")
    if not one_sided and n_fft != fft_size:
        raise error("expected the frequency dimension (3rd to the last) of the input tensor to match n_fft when "
                    f"onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        raise error("expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise error("expected 0 < win_length <= n_fft")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise error("Invalid window shape. window has to be 1D and length of `win_length`")
    full_window = window if window is not None else ones(win, dtype=parts.dtype)
    if win != n_fft:   # centred in n_fft points
        left = (n_fft - win) // 2
        full_window = pad(full_window, [left, n_fft - win - left])
    if ndim == 3:
        parts = parts.unsqueeze(0)
    spectra = _as_complex(parts.transpose(1, 2))   # (channel, n_frames, fft_size)
    mode = K.BY_ROOT_N if normalized else K.BY_N
    if return_complex:
        if one_sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = apply(K.fft_c2c, spectra, dim=(2,), normalization=mode, forward=False)
    else:
        if window is not None and window.dtype.is_complex:
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not one_sided:
            spectra = spectra[..., :n_fft // 2 + 1]
        frames = apply(K.fft_c2r, spectra, dim=(2,), normalization=mode, last_dim_size=n_fft)
    y = apply(K.unfold_backward, frames * full_window.view(1, 1, n_fft), length=expected, step=hop)
    envelope = apply(K.unfold_backward, full_window.pow(2).expand(1, n_frames, n_fft), length=expected, step=hop)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else -(n_fft // 2) if center else expected
    # (PyTorch's slice records a node even over the whole dim)
    stop = min(end if end >= 0 else end + expected, expected)
    y, envelope = _slice(y, 1, start, max(start, stop)), _slice(envelope, 1, start, max(start, stop))
    if bool(envelope.abs().min() < 1e-11):
        raise error("window overlap add min: 1\n[ CPUBoolType{} ]", separator="")
    y = y / envelope
    if ndim == 3:
        y = y.squeeze(0)
    if end > expected:
        _warn_once("The length of signal is shorter than the length parameter. Result is being padded with zeros in "
                   "the tail. Please check your center and hop_length settings.")
        y = pad(y, [0, end - expected])
    return y


def _as_complex(parts):
    """view_as_complex where the real view's strides allow it (even, the last 1), else of a contiguous copy."""
    strides = parts.stride()
    if strides[-1] == 1 and all(s % 2 == 0 for s in strides[:-1]) and parts.storage_offset() % 2 == 0:
        return view_as_complex(parts)
    return view_as_complex(parts.clone(memory_format=contiguous_format))
