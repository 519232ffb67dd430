"""Specs for the margin-loss kernels (tapegrad/_ops/nn_margin_loss.py), sliding blocks and channel shuffles
(tapegrad/_ops/nn_patches.py) and pdist; see op_specs.py for the format."""
from op_specs import A, F, I, Case, cases


def _f(lib):
    return lib.nn.functional


SPECS = {
    "soft_margin_loss": cases(Case(lambda lib, x: _f(lib).soft_margin_loss(
        x, lib.tensor([1.0, -1.0, 0.5, 1.0, -1.0], dtype=x.dtype), reduction="none"), F(5))),
    # -1 ends row 0's list; a class listed twice counts twice, as in PyTorch's loop (1-d inputs and the other
    # reductions: tests/test_nn_breadth.py)
    "multilabel_margin_loss": cases(Case(lambda lib, x, t: _f(lib).multilabel_margin_loss(x, t), F(3, 4),
                                         A([[3, 0, -1, 1], [1, 1, 2, 3], [0, 2, 3, 1]]))),
    "multi_margin_loss": cases(Case(lambda lib, x, t: _f(lib).multi_margin_loss(x, t), F(4, 5), I(4, high=5)),
                               Case(lambda lib, x, t: _f(lib).multi_margin_loss(
                                   x, t, p=2, margin=0.5, weight=lib.tensor([0.5, 1.0, 2.0], dtype=x.dtype),
                                   reduction="none"), F(2, 3), I(2, high=3))),
    "im2col": cases(Case(lambda lib, x: _f(lib).unfold(x, (2, 3), dilation=(1, 2), padding=1, stride=(2, 1)),
                         F(2, 2, 4, 5)),
                    Case(lambda lib, x: lib.nn.Unfold(2)(x), F(3, 3, 3))),
    "col2im": cases(Case(lambda lib, x: _f(lib).fold(x, (4, 5), (2, 2), padding=(1, 0), stride=(2, 1)), F(2, 8, 12)),
                    Case(lambda lib, x: lib.nn.Fold((3, 3), 2)(x), F(8, 4))),
    "pixel_shuffle": cases(Case(lambda lib, x: _f(lib).pixel_shuffle(x, 2), F(1, 8, 2, 3)),
                           Case(lambda lib, x: _f(lib).pixel_shuffle(x.transpose(-1, -2), 3), F(9, 2, 2))),
    "pixel_unshuffle": cases(Case(lambda lib, x: _f(lib).pixel_unshuffle(x, 2), F(2, 1, 4, 6)),
                             Case(lambda lib, x: lib.nn.PixelUnshuffle(3)(x.transpose(-1, -2)), F(2, 3, 6))),
    "channel_shuffle": cases(Case(lambda lib, x: _f(lib).channel_shuffle(x, 3), F(2, 6, 2)),
                             Case(lambda lib, x: lib.nn.ChannelShuffle(2)(x), F(1, 4, 2, 2))),
    "native_channel_shuffle": cases(Case(lambda lib, x: _f(lib).native_channel_shuffle(x, 2), F(2, 4, 3),
                                         grad=False, fd=False)),
    # p=inf, the last row a copy of the first (a zero distance: gradient 0 there, and no finite-difference check)
    "pdist": cases(Case(lambda lib, x: _f(lib).pdist(x), F(4, 3)),
                   Case(lambda lib, x: lib.pdist(lib.cat([x, x[:1]]), float("inf")), F(3, 2), fd=False)),
}
