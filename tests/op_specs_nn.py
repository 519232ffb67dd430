"""Specs for the nn kernels (tapegrad/_ops/nn.py); see op_specs.py for the format."""
from op_specs import A, D, F, I, Case, cases


def _f(lib):
    return lib.nn.functional


def _grid_sample(**kw):
    return lambda lib, x, g: _f(lib).grid_sample(x, g, **kw)


def _act(name, **kw):
    return cases(Case(lambda lib, x: getattr(_f(lib), name)(x, **kw), F(3, 4)))


SPECS = {
    # in place: PyTorch's leaky_relu_ kernel (LeakyReluBackward1, saving the result)
    "leaky_relu": _act("leaky_relu", negative_slope=0.2) + cases(
        Case(lambda lib, x: _f(lib).leaky_relu_(x * 1, 0.3), F(3, 4))),
    "elu": cases(Case(lambda lib, x: _f(lib).elu(x, 0.7), F(3, 4)), Case(lambda lib, x: _f(lib).selu(x), F(5)),
                 # celu's own node, and the in-place kernels' (EluBackward1, CeluBackward1)
                 Case(lambda lib, x: _f(lib).celu(x, 1.5), F(3, 4)),
                 Case(lambda lib, x: _f(lib).elu(x * 1, 0.7, inplace=True), F(3, 4)),
                 Case(lambda lib, x: _f(lib).selu_(x * 1), F(5)),
                 Case(lambda lib, x: lib.celu_(x * 1, 2.0), F(5))),
    "gelu": cases(Case(lambda lib, x: _f(lib).gelu(x), F(3, 4)),
                  Case(lambda lib, x: _f(lib).gelu(x, approximate="tanh"), F(6))),
    "silu": _act("silu"),
    "mish": _act("mish"),
    "softplus": cases(Case(lambda lib, x: _f(lib).softplus(x, beta=2.0, threshold=3.0), F(3, 4, low=-3, high=3))),
    "hardtanh": cases(Case(lambda lib, x: _f(lib).hardtanh(x, -0.5, 1.0), F(3, 4))),
    "threshold": cases(Case(lambda lib, x: _f(lib).threshold(x, 0.1, 20.0), F(3, 4)),
                       Case(lambda lib, x: _f(lib).threshold_(x * 1, 0.1, 20.0), F(3, 4)),
                       Case(lambda lib, x: _f(lib).threshold(x, 0.1, -1.0), A([0.1, 0.0, 0.5], "float64"), fd=False)),
    "hardsigmoid": cases(Case(lambda lib, x: _f(lib).hardsigmoid(x), F(3, 4, low=-5, high=5)),
                         Case(lambda lib, x: _f(lib).hardsigmoid(x), A([-3.0, 3.0, 0.0], "float64"), fd=False)),
    "hardswish": cases(Case(lambda lib, x: _f(lib).hardswish(x), F(3, 4, low=-5, high=5)),
                       Case(lambda lib, x: _f(lib).hardswish(x), A([-3.0, 3.0, 0.0], "float64"), fd=False)),
    "softshrink": cases(Case(lambda lib, x: _f(lib).softshrink(x, 0.6), F(3, 4)),
                        Case(lambda lib, x: _f(lib).softshrink(x), A([-0.5, 0.5, 0.0], "float64"), fd=False)),
    "hardshrink": cases(Case(lambda lib, x: _f(lib).hardshrink(x, 0.6), F(3, 4)),
                        Case(lambda lib, x: _f(lib).hardshrink(x), A([-0.5, 0.5, 0.0], "float64"), fd=False)),
    "rrelu": cases(Case(lambda lib, x: _f(lib).rrelu(x, 0.1, 0.3), F(3, 4)),
                   Case(lambda lib, x: _f(lib).rrelu_(x * 1, 0.1, 0.3), F(3, 4)),
                   Case(lambda lib, x: _f(lib).rrelu(x, training=True), F(3, 4), grad=False, fd=False,
                        compare=False)),
    "logsigmoid": _act("logsigmoid"),
    "glu": cases(Case(lambda lib, x: _f(lib).glu(x, 0), F(4, 3))),
    "prelu": cases(Case(lambda lib, x, w: _f(lib).prelu(x, w), F(2, 3, 4), F(3)),
                   Case(lambda lib, x, w: _f(lib).prelu(x, w), F(5), F(1))),
    "softmax": cases(Case(lambda lib, x: _f(lib).softmax(x, dim=1), F(3, 4, 2))),
    "log_softmax": cases(Case(lambda lib, x: _f(lib).log_softmax(x, dim=-1), F(3, 4))),
    "trilinear": cases(Case(lambda lib, a, b, w, c: _f(lib).bilinear(a, b, w, c), F(3, 2), F(3, 4), F(5, 2, 4), F(5)),
                       Case(lambda lib, a, b, w: _f(lib).bilinear(a, b, w), F(2, 3, 2), F(2, 3, 4), F(5, 2, 4))),
    "conv": cases(Case(lambda lib, x, w, b: _f(lib).conv2d(x, w, b, stride=2, padding=1), F(2, 3, 6, 5), F(4, 3, 3, 3),
                       F(4)),
                  Case(lambda lib, x, w: _f(lib).conv1d(x, w, dilation=2, groups=2), F(1, 4, 9), F(2, 2, 3))),
    "conv_transpose": cases(Case(lambda lib, x, w, b: _f(lib).conv_transpose2d(x, w, b, stride=2, output_padding=1),
                                 F(1, 2, 3, 4), F(2, 3, 3, 2), F(3)),
                            # without a bias: PyTorch's node lists it all the same (`Tensor? bias`)
                            Case(lambda lib, x, w: _f(lib).conv_transpose1d(x, w, groups=2), F(1, 4, 5), F(4, 1, 2))),
    "max_pool": cases(Case(lambda lib, x: _f(lib).max_pool2d(x, 3, 2, 1, ceil_mode=True), F(2, 2, 7, 6)),
                      Case(lambda lib, x: _f(lib).max_pool1d(x, 2, dilation=2), F(2, 7))),
    "avg_pool": cases(Case(lambda lib, x: _f(lib).avg_pool2d(x, 3, 2, 1, count_include_pad=False), F(2, 2, 7, 6)),
                      Case(lambda lib, x: _f(lib).avg_pool1d(x, 2), F(1, 2, 7))),
    "adaptive_avg_pool": cases(Case(lambda lib, x: _f(lib).adaptive_avg_pool2d(x, (3, 2)), F(2, 2, 7, 5))),
    "adaptive_max_pool": cases(Case(lambda lib, x: _f(lib).adaptive_max_pool2d(x, 3), F(1, 2, 7, 5))),
    # pooling_indices.py: where the maxima are (ties and NaNs: tests/test_pool_indices.py), their values, unpooling
    "max_pool_indices": cases(Case(lambda lib, x: _f(lib).max_pool3d(x, 2, 1, 1, return_indices=True)[1],
                                   F(2, 3, 4, 5), grad=False)),
    "max_pool_with_indices": cases(Case(lambda lib, x: _f(lib).max_pool2d(x, 3, 2, 1, ceil_mode=True,
                                                                           return_indices=True), F(2, 2, 7, 6)),
                                   Case(lambda lib, x: _f(lib).max_pool1d(x, 2, dilation=2, return_indices=True),
                                        F(2, 7))),
    "adaptive_max_pool_with_indices": cases(Case(lambda lib, x: _f(lib).adaptive_max_pool2d(x, (3, 4),
                                                                                             return_indices=True),
                                                 F(1, 2, 7, 5))),
    "fractional_max_pool_indices": cases(Case(lambda lib, x: _f(lib).fractional_max_pool2d(
        x, 2, output_size=(3, 4), return_indices=True, _random_samples=lib.tensor([[[0.3, 0.7], [0.9, 0.1]]],
                                                                                   dtype=x.dtype))[1],
        F(1, 2, 6, 7), grad=False)),
    "fractional_max_pool_with_indices": cases(Case(lambda lib, x: _f(lib).fractional_max_pool3d(
        x, (1, 2, 2), output_size=(2, 3, 2), _random_samples=lib.tensor([[[0.2, 0.5, 0.8]]], dtype=x.dtype)),
        F(1, 1, 3, 5, 4))),
    "max_unpool": cases(Case(lambda lib, x: _f(lib).max_unpool2d(*_f(lib).max_pool2d(x, 2, return_indices=True), 2,
                                                                 output_size=(5, 7)), F(2, 2, 5, 7))),
    "batch_norm_train": cases(Case(lambda lib, x, w, b: _f(lib).batch_norm(x, None, None, w, b, training=True),
                                   F(4, 3, 5), F(3), F(3))),
    "batch_norm_eval": cases(Case(lambda lib, x, w, b: _f(lib).batch_norm(
        x, lib.tensor([0.1, -0.2, 0.3], dtype=x.dtype), lib.tensor([0.5, 1.0, 2.0], dtype=x.dtype), w, b),
        F(4, 3), F(3), F(3))),
    "layer_norm": cases(Case(lambda lib, x, w, b: _f(lib).layer_norm(x, (3, 4), w, b), F(2, 3, 4), F(3, 4), F(3, 4))),
    "group_norm": cases(Case(lambda lib, x, w, b: _f(lib).group_norm(x, 2, w, b), F(3, 4, 5), F(4), F(4))),
    # native_dropout: the fused kernel PyTorch's CUDA dropout records (NativeDropoutBackward0); its CPU
    # dropout multiplies by a noise tensor (the mul spec)
    "dropout": cases(Case(lambda lib, x: lib.native_dropout(x, 0.5, True)[0], F(3, 4), grad=False, compare=False),
                     Case(lambda lib, x: lib.native_dropout(x, 0.3, False), F(3, 4))),
    "embedding": cases(Case(lambda lib, w, i: _f(lib).embedding(i, w), F(5, 3), I(2, 4, high=5)),
                       # the padding row gets no gradient by design, so finite differences disagree there
                       Case(lambda lib, w, i: _f(lib).embedding(i, w, padding_idx=1), F(5, 3), I(2, 4, high=5),
                            fd=False),
                       # each lookup's gradient over its row's count: not the derivative, by design
                       Case(lambda lib, w, i: _f(lib).embedding(i, w, scale_grad_by_freq=True), F(5, 3),
                            I(2, 4, high=5), fd=False)),
    "embedding_bag": cases(Case(lambda lib, w, i, o: _f(lib).embedding_bag(i, w, o), F(5, 3), I(6, high=5),
                                A([0, 2, 2])),
                           Case(lambda lib, w, i: _f(lib).embedding_bag(i, w, mode="sum"), F(5, 3), I(2, 3, high=5))),
    # PyTorch's fused CPU kernel (4-d inputs; ScaledDotProductFlashAttentionForCpuBackward0)
    "attention": cases(Case(lambda lib, q, k, v: _f(lib).scaled_dot_product_attention(q, k, v, is_causal=True),
                            F(2, 2, 4, 8), F(2, 2, 4, 8), F(2, 2, 4, 8)),
                       Case(lambda lib, q, k, v: _f(lib).scaled_dot_product_attention(
                           q, k, v, attn_mask=lib.tensor([[True, False, True, True, False]] * 3), scale=0.3),
                            F(1, 2, 3, 4), F(1, 2, 5, 4), F(1, 2, 5, 4)),
                       Case(lambda lib, q, k, v: _f(lib).scaled_dot_product_attention(q, k, v, enable_gqa=True),
                            F(2, 4, 3, 4), F(2, 2, 5, 4), F(2, 2, 5, 4))),
    # ... and its math path elsewhere (3-d inputs, value head dim of its own...), whose softmax is _safe_softmax
    # (a row masked throughout is 0)
    "safe_softmax": cases(Case(lambda lib, q, k, v: _f(lib).scaled_dot_product_attention(q, k, v, is_causal=True),
                               F(2, 4, 8), F(2, 4, 8), F(2, 4, 3)),
                          Case(lambda lib, q, k, v: _f(lib).scaled_dot_product_attention(
                              q, k, v, attn_mask=lib.tensor([[True] * 5, [False] * 5, [False, True, True, False, True]])),
                               F(2, 3, 4), F(2, 5, 4), F(2, 5, 4)),
                          Case(lambda lib, q, k, v: _f(lib).scaled_dot_product_attention(q, k, v, scale=-0.5),
                               F(2, 2, 3, 4), F(2, 2, 5, 4), F(2, 2, 5, 3))),
    "pad": cases(Case(lambda lib, x: _f(lib).pad(x, (1, 2, 0, -1)), F(2, 3, 4)),
                 Case(lambda lib, x: _f(lib).pad(x, (2, 1), mode="reflect"), F(2, 3, 4)),
                 Case(lambda lib, x: _f(lib).pad(x, (1, 2, 0, 1, 2, -1), mode="replicate"), F(1, 2, 3, 4, 3)),
                 Case(lambda lib, x: _f(lib).pad(x, (2, -1, 1, 2), mode="reflect"), F(3, 4, 5))),
    "interpolate": cases(Case(lambda lib, x: _f(lib).interpolate(x, scale_factor=2, mode="bilinear"), F(1, 2, 3, 4)),
                         Case(lambda lib, x: _f(lib).interpolate(x, size=5, mode="nearest"), F(1, 2, 3)),
                         Case(lambda lib, x: _f(lib).interpolate(x, size=(4, 7), mode="bicubic", align_corners=True),
                              F(1, 2, 3, 5)),
                         Case(lambda lib, x: _f(lib).interpolate(x, size=(3, 2), mode="bilinear", antialias=True),
                              F(1, 2, 7, 5)),
                         Case(lambda lib, x: _f(lib).interpolate(x, scale_factor=(1.5, 0.5, 2), mode="trilinear"),
                              F(1, 1, 2, 4, 3)),
                         # the gradient follows PyTorch's backward indices, not the forward's: no finite differences
                         Case(lambda lib, x: _f(lib).interpolate(x, scale_factor=1.1, mode="nearest"), F(1, 2, 7),
                              fd=False)),
    "interpolate_fixed_point": cases(Case(lambda lib, x: _f(lib).interpolate(x, size=(3, 7), mode="bicubic"),
                                          D("uint8", 1, 3, 5, 4, low=0, high=256), grad=False)),
    "one_hot": cases(Case(lambda lib, i: _f(lib).one_hot(i, 4), I(5, high=4), grad=False)),
    "affine_grid": cases(Case(lambda lib, t: _f(lib).affine_grid(t, (2, 1, 3, 4), align_corners=False), F(2, 2, 3)),
                         Case(lambda lib, t: _f(lib).affine_grid(t, (1, 1, 2, 3, 2), align_corners=True), F(1, 3, 4))),
    "grid_sample_2d": cases(
        Case(lambda lib, x, g: _f(lib).grid_sample(x, g, align_corners=False), F(1, 2, 4, 5), F(1, 3, 3, 2, low=-1.2, high=1.2)),
        Case(lambda lib, x, g: _f(lib).grid_sample(x, g, padding_mode="border", align_corners=True), F(2, 1, 3, 3),
             F(2, 2, 4, 2, low=-1.1, high=1.1)),
        Case(lambda lib, x, g: _f(lib).grid_sample(x, g, mode="nearest", padding_mode="reflection", align_corners=False),
             F(1, 1, 4, 4), F(1, 2, 2, 2, low=-0.9, high=0.9), fd=False),
        Case(_grid_sample(mode="bicubic", align_corners=False), F(1, 2, 4, 5), F(1, 3, 3, 2, low=-1.2, high=1.2)),
        Case(_grid_sample(mode="bicubic", padding_mode="border", align_corners=True), F(2, 1, 3, 4),
             F(2, 2, 3, 2, low=-1.3, high=1.3)),
        Case(_grid_sample(mode="bicubic", padding_mode="reflection", align_corners=False), F(1, 1, 4, 4),
             F(1, 2, 3, 2, low=-1.5, high=1.5))),
    "grid_sample_3d": cases(
        Case(_grid_sample(align_corners=False), F(1, 2, 3, 4, 3), F(1, 2, 3, 2, 3, low=-1.2, high=1.2)),
        Case(_grid_sample(padding_mode="border", align_corners=True), F(2, 1, 2, 3, 3),
             F(2, 2, 2, 2, 3, low=-1.1, high=1.1)),
        Case(_grid_sample(padding_mode="reflection", align_corners=True), F(1, 1, 3, 3, 2),
             F(1, 2, 2, 2, 3, low=-1.6, high=1.6)),
        Case(_grid_sample(mode="nearest", padding_mode="reflection", align_corners=False), F(1, 1, 3, 3, 3),
             F(1, 2, 2, 2, 3, low=-0.9, high=0.9), fd=False),
        Case(_grid_sample(mode="nearest", align_corners=True), F(1, 2, 2, 3, 4), F(1, 2, 3, 2, 3, low=-1.3, high=1.3),
             fd=False)),
}
