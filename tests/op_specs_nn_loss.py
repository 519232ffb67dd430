"""Specs for the loss kernels (tapegrad/_ops/nn_loss.py); see op_specs.py for the format."""
from op_specs import A, F, I, Case, cases


def _f(lib):
    return lib.nn.functional


SPECS = {
    "mse_loss": cases(Case(lambda lib, x, y: _f(lib).mse_loss(x, y), F(3, 4), F(3, 4))),
    "smooth_l1_loss": cases(Case(lambda lib, x, y: _f(lib).smooth_l1_loss(x, y, beta=0.5), F(3, 4), F(3, 4))),
    "huber_loss": cases(Case(lambda lib, x, y: _f(lib).huber_loss(x, y, reduction="none", delta=0.7), F(3, 4),
                             F(3, 4))),
    "nll_loss": cases(Case(lambda lib, x, t: _f(lib).nll_loss(x, t, lib.tensor([0.5, 1.0, 2.0], dtype=x.dtype)),
                           F(4, 3), I(4, high=3)),
                      # cross_entropy without label smoothing: nll_loss of log_softmax (nll_loss2d from 3 dims)
                      Case(lambda lib, x, t: _f(lib).cross_entropy(x, t, ignore_index=0), F(2, 3, 5),
                           I(2, 5, high=3)),
                      Case(lambda lib, x, t: _f(lib).cross_entropy(x, t, reduction="none"), F(2, 3, 2, 2),
                           I(2, 2, 2, high=3)),
                      Case(lambda lib, x, t: _f(lib).nll_loss(x, t, reduction="none"), F(2, 3, 4), I(2, 4, high=3)),
                      # ... with label smoothing: PyTorch's composite mixing nll_loss with the smoothed term
                      Case(lambda lib, x, t: _f(lib).cross_entropy(x, t, label_smoothing=0.1), F(4, 3),
                           I(4, high=3)),
                      Case(lambda lib, x, t: _f(lib).cross_entropy(x, t, lib.tensor([0.5, 1.0, 2.0], dtype=x.dtype),
                                                                   ignore_index=1, label_smoothing=0.3),
                           F(2, 3, 4), I(2, 4, high=3))),
    # cross_entropy with class probabilities: PyTorch's composite, its mean a DivBackward1 by the row count
    "div_scalar": cases(Case(lambda lib, x, t: _f(lib).cross_entropy(x, _f(lib).softmax(t, dim=1)), F(4, 3), F(4, 3)),
                        Case(lambda lib, x, t, w: _f(lib).cross_entropy(x, t, weight=w), F(2, 3, 2), F(2, 3, 2), F(3))),
    # ... with label smoothing: the target scaled (MulBackward1) and shifted (AddBackward1)
    "mul_scalar": cases(Case(lambda lib, x, t: _f(lib).cross_entropy(x, _f(lib).softmax(t, dim=0), reduction="sum",
                                                                     label_smoothing=0.2), F(3), F(3)),
                        Case(lambda lib, x, t: _f(lib).cross_entropy(x, t, reduction="none", label_smoothing=0.1),
                             F(2, 3), F(2, 3))),
    "binary_cross_entropy": cases(Case(lambda lib, x, y: _f(lib).binary_cross_entropy(lib.sigmoid(x), y), F(3, 4),
                                       F(3, 4, low=0.0, high=1.0))),
    "binary_cross_entropy_with_logits": cases(Case(
        lambda lib, x, y: _f(lib).binary_cross_entropy_with_logits(
            x, y, pos_weight=lib.tensor([0.5, 1.0, 2.0, 1.5], dtype=x.dtype)), F(3, 4), F(3, 4, low=0.0, high=1.0))),
    # CTC: the gradient is PyTorch's formula, the derivative only through log_softmax (tests/test_ctc_loss.py)
    "ctc_loss": cases(Case(lambda lib, x, t, il, tl: _f(lib).ctc_loss(x.log_softmax(2), t, il, tl, reduction="none"),
                           F(5, 2, 4), A([[1, 2, 2], [3, 1, 0]]), A([5, 4]), A([3, 2])),
                      Case(lambda lib, x, t: _f(lib).ctc_loss(x.log_softmax(1), t, (6,), (3,), blank=3, reduction="sum",
                                                              zero_infinity=True), F(6, 4), A([0, 0, 2]))),
    # cosine_embedding_loss: PyTorch's composite, whose cos - margin is sub.Scalar (SubBackward1)
    "sub_scalar": cases(Case(lambda lib, a, b, y: _f(lib).cosine_embedding_loss(a, b, y, margin=0.2),
                                        F(3, 5), F(3, 5), A([1, -1, 1]))),
}
