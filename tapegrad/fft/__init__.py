"""tapegrad.fft: PyTorch's torch.fft. Every transform records PyTorch's kernels (_fft_r2c, _fft_c2c,
_fft_c2r in _ops.spectral), so gradients come from the op table like every other op's."""
from ._transforms import (  # noqa: F401
    fft, ifft, rfft, irfft, hfft, ihfft, fft2, ifft2, rfft2, irfft2, hfft2, ihfft2, fftn, ifftn, rfftn, irfftn,
    hfftn, ihfftn)
from ._helpers import fftfreq, rfftfreq, fftshift, ifftshift  # noqa: F401
from .._functional._out import with_out as _with_out

# the factories' out=: the frequencies written into the tensor given
fftfreq = _with_out(fftfreq, "fft_fftfreq()")
rfftfreq = _with_out(rfftfreq, "fft_rfftfreq()")

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2",
           "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
