"""tapegrad.fft, the window functions, stft and istft against PyTorch: dtypes, shapes, errors, factories'
values, out=, warnings. Values and gradients of the transforms are checked through tests/op_specs_fft.py."""
import warnings

import numpy as np
import pytest

import tapegrad
from conftest import require

torch = require("torch")

X = np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32)
SPECTRUM = np.random.default_rng(1).standard_normal((5, 11, 2)).astype(np.float32)


def _real(lib):
    return lib.tensor(X)


def _complex(lib):
    return lib.tensor(X + 0.5j * X[::-1])


def _spectrum(lib):
    return lib.view_as_complex(lib.tensor(SPECTRUM))


def _outcome(lib, fn):
    """What fn(lib) gives: ('ok', dtype, shape, requires_grad) or (error type, first line of the message)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(lib)
    except Exception as e:  # noqa: BLE001  the outcome is compared with PyTorch's
        return type(e).__name__, str(e).split("\n")[0]
    return "ok", str(r.dtype).split(".")[-1], tuple(r.shape), r.requires_grad


def _assert_same_outcome(fn, key_phrase_only=False):
    ours, theirs = _outcome(tapegrad, fn), _outcome(torch, fn)
    if key_phrase_only and ours[0] == theirs[0] != "ok":
        assert ours[1].startswith(theirs[1]), (ours, theirs)
    else:
        assert ours == theirs


FFT_CASES = {
    # dtypes: integers and bool promoted to the default float, real to complex where the transform needs it
    "int fft": lambda L: L.fft.fft(L.arange(4)),
    "bool fft": lambda L: L.fft.fft(L.tensor([True, False, True])),
    "int irfft": lambda L: L.fft.irfft(L.arange(4)),
    "int hfft2": lambda L: L.fft.hfft2(L.arange(12).view(3, 4)),
    "double ihfftn": lambda L: L.fft.ihfftn(_real(L).double(), dim=(1, 0)),
    "fftn 0-d": lambda L: L.fft.fftn(L.tensor(1.5)),
    "fftn no dims": lambda L: L.fft.fftn(_real(L), dim=()),
    "s with -1": lambda L: L.fft.fftn(_real(L), s=(-1, 3)),
    "irfftn s": lambda L: L.fft.irfftn(_complex(L), s=(4, -1)),
    "irfftn one point": lambda L: L.fft.irfftn(_complex(L), s=(4, 1)),
    "hfft one point": lambda L: L.fft.hfft(_complex(L), n=1),
    "rfft of nothing, padded": lambda L: L.fft.rfft(L.ones(3, 0), n=4),
    "requires grad": lambda L: L.fft.rfft2(_real(L).requires_grad_()),
    # errors
    "rfft complex": lambda L: L.fft.rfft(_complex(L)),
    "ihfft complex": lambda L: L.fft.ihfft(_complex(L)),
    "rfftn complex": lambda L: L.fft.rfftn(_complex(L)),
    "ihfft2 complex": lambda L: L.fft.ihfft2(_complex(L)),
    "n = 0": lambda L: L.fft.fft(_real(L), n=0),
    "irfft n = 0": lambda L: L.fft.irfft(_complex(L), n=0),
    "irfft of one bin": lambda L: L.fft.irfft(L.ones(3, 1, dtype=L.complex64)),
    "empty dim": lambda L: L.fft.fft(L.ones(3, 0)),
    "dim out of range": lambda L: L.fft.fft(_real(L), dim=5),
    "dim of a 0-d": lambda L: L.fft.fft(L.tensor(1.0)),
    "fft2 of 1-d": lambda L: L.fft.fft2(L.ones(4)),
    "rfftn 0-d": lambda L: L.fft.rfftn(L.tensor(1.0)),
    "irfftn no dims": lambda L: L.fft.irfftn(_complex(L), dim=()),
    "hfftn no dims": lambda L: L.fft.hfftn(_complex(L), dim=()),
    "ihfftn no dims": lambda L: L.fft.ihfftn(_real(L), dim=()),
    "norm": lambda L: L.fft.fft(_real(L), norm="foo"),
    "norm is case sensitive": lambda L: L.fft.rfftn(_real(L), norm="Ortho"),
    "half": lambda L: L.fft.fft(_real(L).half()),
    "bfloat16": lambda L: L.fft.rfft(_real(L).bfloat16()),
    "duplicate dims": lambda L: L.fft.fftn(_real(L), dim=(1, -1)),
    "s and dim lengths": lambda L: L.fft.fftn(_real(L), s=(2, 3), dim=(0,)),
    "s too long": lambda L: L.fft.fftn(_real(L), s=(2, 3, 4)),
    "s of 0": lambda L: L.fft.fftn(_real(L), s=(0, 3)),
    "s of -2": lambda L: L.fft.fftn(_real(L), s=(-2, 3)),
    # out=
    "out": lambda L: L.fft.rfft2(_real(L), out=L.empty(0, dtype=L.complex64)),
    "out of irfft": lambda L: L.fft.irfft(_complex(L), out=L.empty(0)),
    "out of ihfft2": lambda L: L.fft.ihfft2(_real(L), out=L.empty(0, dtype=L.complex64)),
    "out real for a complex result": lambda L: L.fft.rfft(_real(L), out=L.empty(0)),
    "out complex for a real result": lambda L: L.fft.irfft(_complex(L), out=L.empty(0, dtype=L.complex64)),
    "out of fftn": lambda L: L.fft.fftn(_complex(L), out=L.empty(0)),
    "out with grad": lambda L: L.fft.fft(_real(L).requires_grad_(), out=L.empty(0, dtype=L.complex64)),
    "out with grad c2r": lambda L: L.fft.hfftn(_complex(L).requires_grad_(), out=L.empty(0)),
    # frequencies and shifts
    "fftfreq integer dtype": lambda L: L.fft.fftfreq(5, dtype=L.int64),
    "fftfreq complex dtype": lambda L: L.fft.fftfreq(5, dtype=L.complex64),
    "fftfreq negative": lambda L: L.fft.fftfreq(-1),
    "rfftfreq negative": lambda L: L.fft.rfftfreq(-1),
    "fftfreq requires grad": lambda L: L.fft.fftfreq(4, 0.5, requires_grad=True),
    "fftshift dim": lambda L: L.fft.fftshift(_real(L), dim=3),
    "fftshift 0-d": lambda L: L.fft.fftshift(L.tensor(1.0)),
}


@pytest.mark.parametrize("name", sorted(FFT_CASES))
def test_fft_dtypes_shapes_and_errors_are_pytorchs(name):
    _assert_same_outcome(FFT_CASES[name])


def test_fft_module_has_pytorchs_functions():
    names = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn", "irfftn",
             "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]
    assert all(callable(getattr(tapegrad.fft, n)) for n in names)
    # Tensor methods only where PyTorch has them
    for name in names + ["stft", "istft", "hann_window", "kaiser_window"]:
        assert hasattr(tapegrad.Tensor, name) == hasattr(torch.Tensor, name), name


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_frequencies_are_pytorchs(dtype):
    for n, d in ((5, 0.3), (6, 2), (1, 1.0), (0, 1.0), (4, 0.0)):
        for name in ("fftfreq", "rfftfreq"):
            ours = getattr(tapegrad.fft, name)(n, d, dtype=getattr(tapegrad, dtype))
            theirs = getattr(torch.fft, name)(n, d, dtype=getattr(torch, dtype))
            np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    out = tapegrad.empty(0)
    assert tapegrad.fft.rfftfreq(6, out=out) is out and out.shape == (4,)


def test_shifts_are_pytorchs():
    for fn in (lambda L, x: L.fft.fftshift(x), lambda L, x: L.fft.ifftshift(x, dim=(0, -1)),
               lambda L, x: L.fft.ifftshift(x, dim=1)):
        ours, theirs = fn(tapegrad, tapegrad.tensor(X[:3, :5])), fn(torch, torch.tensor(X[:3, :5]))
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_ifft_of_a_real_signal_is_a_conjugate_view_as_pytorchs():
    ours, theirs = tapegrad.fft.ifft(_real(tapegrad)), torch.fft.ifft(_real(torch))
    assert ours.is_conj() and theirs.is_conj()
    np.testing.assert_allclose(ours.resolve_conj().numpy(), theirs.resolve_conj().numpy(), rtol=1e-5, atol=1e-6)


# ---- windows --------------------------------------------------------------------------------------------

WINDOWS = {"hann_window": (), "hamming_window": (0.3, 0.25), "blackman_window": (), "bartlett_window": (),
           "kaiser_window": (5.5,)}


@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_windows_are_pytorchs(name):
    # (half and bfloat16 ones to a couple of units in the last place: see _functional/_windows.py)
    for dtype, tolerance in (("float32", 1e-6), ("float64", 1e-12), ("float16", 2e-3), ("bfloat16", 1.6e-2)):
        for n in (0, 1, 2, 7, 16):
            for periodic in (True, False):
                ours = getattr(tapegrad, name)(n, periodic, *WINDOWS[name], dtype=getattr(tapegrad, dtype))
                theirs = getattr(torch, name)(n, periodic, *WINDOWS[name], dtype=getattr(torch, dtype))
                assert str(ours.dtype).split(".")[-1] == dtype and tuple(ours.shape) == tuple(theirs.shape)
                np.testing.assert_allclose(ours.float().numpy(), theirs.float().numpy(), rtol=tolerance,
                                           atol=tolerance if ours.dtype.itemsize == 2 else 0)
    window = getattr(tapegrad, name)(8, requires_grad=True)
    assert window.is_leaf and window.requires_grad and window.dtype is tapegrad.float32


@pytest.mark.parametrize("name", sorted(WINDOWS))
def test_window_errors_are_pytorchs(name):
    for call in (lambda L: getattr(L, name)(-1), lambda L: getattr(L, name)(4, dtype=L.int64),
                 lambda L: getattr(L, name)(4, dtype=L.complex64), lambda L: getattr(L, name)(4.0),
                 lambda L: getattr(L, name)(4, layout=L.sparse_coo)):
        _assert_same_outcome(call)


# ---- stft and istft -------------------------------------------------------------------------------------

STFT_CASES = {
    "return_complex required": lambda L: L.stft(_real(L)[0], 4),
    "integer signal": lambda L: L.stft(L.arange(10), 4, return_complex=True),
    "3-d signal": lambda L: L.stft(L.ones(2, 2, 10), 4, return_complex=True),
    "n_fft past the signal": lambda L: L.stft(L.ones(10), 16, center=False, return_complex=True),
    "n_fft 0": lambda L: L.stft(L.ones(10), 0, return_complex=True),
    "hop 0": lambda L: L.stft(L.ones(10), 4, hop_length=0, return_complex=True),
    "win_length past n_fft": lambda L: L.stft(L.ones(10), 4, win_length=5, return_complex=True),
    "window size": lambda L: L.stft(L.ones(10), 4, window=L.ones(3), return_complex=True),
    "onesided complex": lambda L: L.stft(L.ones(10, dtype=L.complex64), 4, onesided=True, return_complex=True),
    "align_to_window with center": lambda L: L.stft(L.ones(10), 4, align_to_window=True, return_complex=True),
    "align_to_window": lambda L: L.stft(L.ones(20), 8, hop_length=3, win_length=4, window=L.ones(4), center=False,
                                        align_to_window=True, return_complex=True),
    "reflection past the signal": lambda L: L.stft(L.ones(3), 8, return_complex=True),
    "complex window": lambda L: L.stft(L.ones(10), 4, window=L.ones(4, dtype=L.complex64)),
    "complex window, real view": lambda L: L.stft(L.ones(10), 4, window=L.ones(4, dtype=L.complex64),
                                                  return_complex=False),
    "window of another dtype": lambda L: L.stft(L.ones(10, dtype=L.float64), 4, window=L.ones(4),
                                                return_complex=True),
    "half": lambda L: L.stft(L.ones(10).half(), 4, return_complex=True),
    "istft of a real tensor": lambda L: L.istft(L.ones(5, 5, 2), 8),
    "istft frequency size": lambda L: L.istft(_spectrum(L), 10, window=L.ones(10)),
    "istft hop": lambda L: L.istft(_spectrum(L), 8, hop_length=9),
    "istft window shape": lambda L: L.istft(_spectrum(L), 8, win_length=6, window=L.ones(5)),
    "istft win_length": lambda L: L.istft(_spectrum(L), 8, win_length=9),
    "istft onesided complex": lambda L: L.istft(_spectrum(L), 8, window=L.ones(8), return_complex=True),
    "istft 1-d": lambda L: L.istft(L.ones(5, dtype=L.complex64), 8),
    "istft empty": lambda L: L.istft(L.ones(5, 0, dtype=L.complex64), 8),
    "istft 5-d": lambda L: L.istft(L.ones(2, 2, 5, 3, dtype=L.complex64), 8),
    "istft zero window": lambda L: L.istft(L.ones(5, 3, dtype=L.complex64), 8, window=L.zeros(8)),
    "istft complex window": lambda L: L.istft(L.ones(5, 3, dtype=L.complex64), 8, window=L.ones(8, dtype=L.complex64)),
    "istft window of another dtype": lambda L: L.istft(L.ones(8, 3, dtype=L.complex64), 8,
                                                       window=L.ones(8, dtype=L.float64), return_complex=True),
    "istft length short": lambda L: L.istft(L.ones(5, 3, dtype=L.complex64), 8, center=False, length=3),
    "istft length long": lambda L: L.istft(L.ones(5, 3, dtype=L.complex128), 8, center=False, length=30),
    "istft of a conjugate": lambda L: L.istft(_spectrum(L).conj(), 8, window=L.hann_window(8) + 0.1),
}


@pytest.mark.parametrize("name", sorted(STFT_CASES))
def test_stft_dtypes_shapes_and_errors_are_pytorchs(name):
    # (tapegrad's padding error adds a hint after PyTorch's message)
    _assert_same_outcome(STFT_CASES[name], key_phrase_only=True)


def test_stft_then_istft_gives_the_signal_back_as_pytorchs():
    def run(lib):
        signal = lib.tensor(X.astype(np.float64))
        window = lib.hann_window(4, dtype=lib.float64)
        spectrum = signal.stft(4, hop_length=1, window=window, return_complex=True)
        return spectrum, spectrum.istft(4, hop_length=1, window=window, length=6)

    (spectrum, signal), (their_spectrum, their_signal) = run(tapegrad), run(torch)
    np.testing.assert_allclose(spectrum.numpy(), their_spectrum.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(signal.numpy(), their_signal.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(signal.numpy(), X, rtol=1e-6)


def test_stft_warnings_are_pytorchs():
    from tapegrad._functional import _stft
    _stft._warned.clear()
    for call in (lambda L: L.stft(L.ones(10), 4, return_complex=True),
                 lambda L: L.stft(L.ones(10), 4, window=L.ones(4), return_complex=False),
                 lambda L: L.istft(L.ones(3, 5, dtype=L.complex64), 4, center=False),
                 lambda L: L.istft(L.ones(3, 5, dtype=L.complex64), 4, window=L.ones(4), center=False, length=30)):
        with warnings.catch_warnings(record=True) as ours:
            warnings.simplefilter("always")
            call(tapegrad)
            call(tapegrad)   # once per process, as PyTorch's TORCH_WARN_ONCE
        assert len(ours) == 1 and ours[0].category is UserWarning
        key = str(ours[0].message)[:60]
        with warnings.catch_warnings(record=True) as theirs:
            warnings.simplefilter("always")
            _stft._warned.clear()
            call(torch)
        assert not theirs or str(theirs[0].message).startswith(key)
