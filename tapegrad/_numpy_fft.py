"""NumPy rule for lax's fft primitive (tapegrad.fft, stft, istft), so a transform of a new shape runs without
compiling a kernel for it. lax transforms the trailing len(fft_lengths) axes; its inverse transforms scale
by 1 / n, as NumPy's default norm does, and its inverse real transform reads the one-sided spectrum as
NumPy's irfftn does (the self-conjugate bins' imaginary parts ignored)."""
import numpy as np

# lax.FftType: FFT, IFFT, RFFT, IRFFT
_TRANSFORMS = (np.fft.fftn, np.fft.ifftn, np.fft.rfftn, np.fft.irfftn)


def _fft(params):
    kind, lengths = int(params["fft_type"]), tuple(params["fft_lengths"])
    transform, axes = _TRANSFORMS[kind], tuple(range(-len(lengths), 0))
    return lambda x: transform(x, s=lengths, axes=axes)


RULES = {"fft": _fft}
