"""Specs for the spectral kernels of _ops/spectral.py, reached through tapegrad.fft, stft and istft; see
op_specs.py for the format. Complex inputs (C) check PyTorch's gradient convention for complex arguments."""
from op_specs import C, D, F, Case, cases

WINDOW = dict(low=0.5, high=1.0)   # no zero in istft's window envelope

SPECS = {
    # real input: rfft's one-sided spectrum, fft's full one, the inverse transforms' conjugate views
    "fft_r2c": cases(Case(lambda lib, a: lib.fft.rfft(a, n=7), F(3, 5)),
                     Case(lambda lib, a: lib.fft.fft(a, dim=0, norm="ortho"), F(4, 3)),
                     Case(lambda lib, a: lib.fft.ifft(a, n=4), F(5)),
                     Case(lambda lib, a: lib.fft.rfftn(a, s=(3, 6), norm="forward"), F(2, 4, 5)),
                     Case(lambda lib, a: lib.fft.ihfft(a), F(2, 5)),
                     Case(lambda lib, a: lib.fft.rfft(a), D("int64", 6), rtol=1e-5),   # (a float32 result)
                     Case(lambda lib, a, w: lib.stft(a, 8, hop_length=3, window=w, return_complex=True), F(2, 20),
                          F(8, **WINDOW)),
                     Case(lambda lib, a: lib.stft(a, 6, hop_length=2, win_length=4, window=lib.ones(4, dtype=a.dtype),
                                                  center=False, normalized=True, return_complex=False), F(15))),
    "fft_c2c": cases(Case(lambda lib, a: lib.fft.fft(a, n=6), C(2, 5)),
                     Case(lambda lib, a: lib.fft.ifftn(a, s=(3, -1), norm="ortho"), C(2, 4)),
                     Case(lambda lib, a: lib.fft.fft2(a), F(3, 4)),
                     Case(lambda lib, a: lib.fft.ihfft2(a, norm="forward"), F(3, 4)),
                     Case(lambda lib, a, w: a.stft(8, window=w, pad_mode="constant", return_complex=True), C(20),
                          F(8, **WINDOW))),
    # complex input: the mirrored bins' gradients count twice, the self-conjugate bins' imaginary parts none
    "fft_c2r": cases(Case(lambda lib, a: lib.fft.irfft(a), C(3, 4)),
                     Case(lambda lib, a: lib.fft.irfft(a, n=5, dim=0, norm="ortho"), C(3, 4)),
                     Case(lambda lib, a: lib.fft.hfft(a, n=4), C(2, 5)),   # (the bins past n // 2 + 1 unread)
                     Case(lambda lib, a: lib.fft.irfft2(a, s=(3, 6)), C(3, 4)),
                     Case(lambda lib, a: lib.fft.hfftn(a, norm="forward"), C(2, 3, 4)),
                     Case(lambda lib, a: lib.fft.irfft(a), F(2, 4))),
    # istft's overlap-add, of the frames and of the squared window
    "unfold_backward": cases(Case(lambda lib, s, w: lib.istft(s, 8, hop_length=2, window=w), C(5, 11), F(8, **WINDOW)),
                             Case(lambda lib, s, w: lib.istft(s, 8, hop_length=2, window=w, center=False, length=20,
                                                              return_complex=True), C(8, 7), F(8, **WINDOW)),
                             Case(lambda lib, s, w: s.istft(6, hop_length=3, win_length=5, window=w, normalized=True),
                                  C(2, 4, 6), F(5, **WINDOW))),
}
