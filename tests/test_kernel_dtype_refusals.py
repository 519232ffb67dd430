"""Inputs of a dtype PyTorch's CPU kernel has no version of: PyTorch's NotImplementedError (or its RuntimeError)
and its words, never a computed result (JAX orders, rounds or compares complex values, shifts bools) nor JAX's own
TypeError. For complex and half-precision values the op table says it once per op (Op.no_kernel_for), so every way
in refuses alike: the function, the method, the in-place method, nn.functional and torch.special. Bool and integer
inputs: the few kernels found computing what PyTorch refuses, and isclose of bools, which PyTorch computes."""
import numpy as np
import pytest
import torch

import tapegrad as tg

X = [[1 + 2j, -0.5 + 0.3j], [0.2 - 1j, 2 + 0j]]


def _z(L, dtype="complex64"):
    return L.tensor(X, dtype=getattr(L, dtype))


def _r(L):
    return L.tensor([[0.5, -1.0], [2.0, 0.25]])


F = lambda L: L.nn.functional   # noqa: E731
CALLS = {
    # comparisons and ordering
    "lt": lambda L: _z(L) < _z(L).flip(0),
    "le_scalar": lambda L: _z(L) <= 1,
    "gt_method": lambda L: _z(L).gt(_z(L)),
    "ge_inplace": lambda L: _z(L).ge_(_z(L)),
    "real_lt_complex_scalar": lambda L: _r(L) < 1j,
    "searchsorted": lambda L: L.searchsorted(_z(L)[0], _z(L)[1]),
    "bucketize": lambda L: L.bucketize(_z(L)[0], _z(L)[1]),
    # clamps
    "relu": lambda L: L.relu(_z(L)),
    "relu_": lambda L: F(L).relu_(_z(L)),
    "relu6": lambda L: F(L).relu6(_z(L)),
    "hardtanh": lambda L: F(L).hardtanh(_z(L)),
    "clamp": lambda L: _z(L).clamp(0, 1),
    "clamp_min_scalar": lambda L: L.clamp_min(_z(L), 0),
    "clamp_min_tensor": lambda L: L.clamp_min(_z(L), _z(L)),
    "clamp_max_tensor_inplace": lambda L: _z(L).clamp_max_(_z(L)),
    "hinge_embedding_loss": lambda L: F(L).hinge_embedding_loss(_z(L), _z(L)),
    # binary elementwise
    "atan2": lambda L: L.atan2(_z(L), _z(L)),
    "arctan2": lambda L: L.arctan2(_z(L), _z(L)),
    "hypot": lambda L: L.hypot(_z(L), _z(L)),
    "xlogy": lambda L: L.xlogy(_z(L), _z(L)),
    "xlogy_": lambda L: _z(L).xlogy_(_z(L)),
    "copysign": lambda L: L.copysign(_z(L), _z(L)),
    "nextafter": lambda L: L.nextafter(_z(L), _z(L)),
    "logaddexp2": lambda L: L.logaddexp2(_z(L), _z(L)),
    "div_floor": lambda L: L.div(_z(L), _z(L), rounding_mode="floor"),
    "div_trunc": lambda L: L.div(_z(L), _z(L), rounding_mode="trunc"),
    "igamma": lambda L: L.igamma(_z(L), _z(L)),
    "gammaincc": lambda L: L.special.gammaincc(_z(L), _z(L)),
    # unary
    "i0": lambda L: L.i0(_z(L)),
    "i0_": lambda L: _z(L).i0_(),
    "erf": lambda L: _z(L).erf(),
    "erfinv_double": lambda L: _z(L, "complex128").erfinv(),
    "digamma": lambda L: L.digamma(_z(L)),
    "polygamma_1": lambda L: L.polygamma(1, _z(L)),
    "polygamma_3": lambda L: L.polygamma(3, _z(L)),
    "mvlgamma": lambda L: L.mvlgamma(_z(L), 1),
    "logit": lambda L: _z(L).logit(),
    "frac": lambda L: _z(L).frac(),
    "floor": lambda L: _z(L).floor(),
    "trunc_": lambda L: _z(L).trunc_(),
    "round": lambda L: _z(L).round(),
    "round_decimals": lambda L: _z(L).round(decimals=1),
    "sign": lambda L: _z(L).sign(),
    # torch.special
    "special_i0e": lambda L: L.special.i0e(_z(L)),
    "special_i1": lambda L: L.special.i1(_z(L)),
    "special_ndtri": lambda L: L.special.ndtri(_z(L)),
    "special_log_ndtr": lambda L: L.special.log_ndtr(_z(L)),
    "special_erfcx": lambda L: L.special.erfcx(_z(L)),
    "special_entr": lambda L: L.special.entr(_z(L)),
    "special_xlog1py": lambda L: L.special.xlog1py(_z(L), _z(L)),
    "special_zeta": lambda L: L.special.zeta(_z(L), _z(L)),
    "special_bessel_j0": lambda L: L.special.bessel_j0(_z(L)),
    "special_modified_bessel_k1": lambda L: L.special.modified_bessel_k1(_z(L)),
    "special_scaled_modified_bessel_k0": lambda L: L.special.scaled_modified_bessel_k0(_z(L)),
    "special_spherical_bessel_j0": lambda L: L.special.spherical_bessel_j0(_z(L)),
    "special_airy_ai": lambda L: L.special.airy_ai(_z(L)),
    "special_chebyshev_polynomial_t": lambda L: L.special.chebyshev_polynomial_t(_z(L), _z(L)),
    "special_hermite_polynomial_h": lambda L: L.special.hermite_polynomial_h(_z(L), 2),
    # activations
    "elu": lambda L: F(L).elu(_z(L)),
    "elu_": lambda L: F(L).elu_(_z(L)),
    "celu": lambda L: F(L).celu(_z(L)),
    "selu": lambda L: F(L).selu(_z(L)),
    "gelu": lambda L: F(L).gelu(_z(L)),
    "glu": lambda L: F(L).glu(_z(L)),
    "hardshrink": lambda L: F(L).hardshrink(_z(L)),
    "softshrink": lambda L: F(L).softshrink(_z(L)),
    "hardsigmoid": lambda L: F(L).hardsigmoid(_z(L)),
    "hardswish": lambda L: F(L).hardswish(_z(L)),
    "logsigmoid": lambda L: F(L).logsigmoid(_z(L)),
    "mish": lambda L: F(L).mish(_z(L)),
    "softplus": lambda L: F(L).softplus(_z(L)),
    "threshold": lambda L: F(L).threshold(_z(L), 0.1, 0.0),
    "threshold_": lambda L: F(L).threshold_(_z(L), 0.1, 0.0),
    "leaky_relu": lambda L: F(L).leaky_relu(_z(L)),
    "rrelu": lambda L: F(L).rrelu(_z(L)),
    "prelu": lambda L: F(L).prelu(_z(L), L.tensor([0.1 + 0j])),
    "module_relu": lambda L: L.nn.ReLU()(_z(L)),
    "module_gelu": lambda L: L.nn.GELU()(_z(L)),
    # losses and dropout
    "mse_loss": lambda L: F(L).mse_loss(_z(L), _z(L)),
    "smooth_l1_loss": lambda L: F(L).smooth_l1_loss(_z(L), _z(L)),
    "huber_loss": lambda L: F(L).huber_loss(_z(L), _z(L)),
    "binary_cross_entropy": lambda L: F(L).binary_cross_entropy(_z(L), _z(L)),
    "binary_cross_entropy_mixed": lambda L: F(L).binary_cross_entropy(_z(L), _r(L)),
    "binary_cross_entropy_with_logits": lambda L: F(L).binary_cross_entropy_with_logits(_z(L), _z(L)),
    "multilabel_soft_margin_loss": lambda L: F(L).multilabel_soft_margin_loss(_z(L), _z(L)),
    "kl_div": lambda L: F(L).kl_div(_r(L), _z(L), reduction="batchmean"),
    "dropout": lambda L: F(L).dropout(_z(L)),
    "dropout_inplace": lambda L: F(L).dropout(_z(L), inplace=True),
    "dropout2d": lambda L: F(L).dropout2d(_z(L)[None]),
    "alpha_dropout": lambda L: F(L).alpha_dropout(_z(L), training=True),
    "feature_alpha_dropout": lambda L: F(L).feature_alpha_dropout(_z(L)[None], training=True),
    "module_dropout": lambda L: L.nn.Dropout()(_z(L)),
}


# half precision (float16 and bfloat16)
def _h(L, dtype="float16"):
    return L.tensor([[0.5, 1.5], [1.0, 2.0]], dtype=getattr(L, dtype))


for _dt in ("float16", "bfloat16"):
    CALLS.update({
        f"special_ndtri_{_dt}": lambda L, d=_dt: L.special.ndtri(_h(L, d) / 4),
        f"special_bessel_j0_{_dt}": lambda L, d=_dt: L.special.bessel_j0(_h(L, d)),
        f"special_erfcx_{_dt}": lambda L, d=_dt: L.special.erfcx(_h(L, d)),
        f"special_log_ndtr_{_dt}": lambda L, d=_dt: L.special.log_ndtr(_h(L, d)),
        f"special_zeta_{_dt}": lambda L, d=_dt: L.special.zeta(_h(L, d), _h(L, d)),
        f"special_legendre_polynomial_p_{_dt}": lambda L, d=_dt: L.special.legendre_polynomial_p(_h(L, d), 2),
        f"special_modified_bessel_i0_{_dt}": lambda L, d=_dt: L.special.modified_bessel_i0(_h(L, d)),
        f"special_spherical_bessel_j0_{_dt}": lambda L, d=_dt: L.special.spherical_bessel_j0(_h(L, d)),
        f"pdist_{_dt}": lambda L, d=_dt: L.pdist(_h(L, d)),
        f"cdist_{_dt}": lambda L, d=_dt: L.cdist(_h(L, d), _h(L, d)),
        f"polar_{_dt}": lambda L, d=_dt: L.polar(_h(L, d), _h(L, d)),
    })
CALLS["complex_bfloat16"] = lambda L: L.complex(_h(L, "bfloat16"), _h(L, "bfloat16"))
CALLS["complex_half_float"] = lambda L: L.complex(_h(L), _h(L, "float32"))

# bool and integer inputs
CALLS.update({
    "lshift_bools": lambda L: L.tensor([True, False]) << L.tensor([True, True]),
    "rshift_bool_scalar": lambda L: L.tensor([True, False]) >> True,
    "searchsorted_bools": lambda L: L.searchsorted(L.tensor([False, True]), L.tensor([True])),
    "normal_long_mean": lambda L: L.normal(L.tensor([1, 2]), 1.0),
    "normal_bool_std": lambda L: L.normal(1.0, L.tensor([True])),
    "kl_div_long": lambda L: F(L).kl_div(L.tensor([1, 2]), _r(L)[0], reduction="sum"),
    "kl_div_bool_target": lambda L: F(L).kl_div(_r(L)[0], L.tensor([True, False]), reduction="sum"),
    "soft_margin_loss_long": lambda L: F(L).soft_margin_loss(L.tensor([1, -1]), L.tensor([1, 1])),
    "soft_margin_loss_long_double": lambda L: F(L).soft_margin_loss(L.tensor([1, -1]), L.tensor([1.0, 1.0],
                                                                                                dtype=L.float64)),
    "isclose_mixed": lambda L: L.isclose(L.tensor([True]), L.tensor([1])),
})


def _raised(call):
    try:
        call()
    except Exception as e:   # noqa: BLE001 (the error is what is compared)
        return e
    return None


@pytest.mark.parametrize("name", CALLS)
def test_complex_refused_as_torch(name):
    theirs = _raised(lambda: CALLS[name](torch))
    assert theirs is not None, f"PyTorch computes {name} on complex inputs: the case is wrong"
    ours = _raised(lambda: CALLS[name](tg))
    assert ours is not None, f"tapegrad computed {name} on complex inputs"
    assert type(ours).__name__ == type(theirs).__name__, (ours, theirs)
    assert str(theirs).split("\n")[0] in str(ours), (str(ours), str(theirs))


@pytest.mark.parametrize("name", ["lt", "relu", "atan2", "erf", "special_i0e", "gelu", "mse_loss", "clamp_min_tensor"])
def test_real_inputs_still_compute(name):
    """The refusal looks at the computation dtype only: the same calls on real tensors compute as PyTorch's."""
    real = {"lt": lambda L: _r(L) < _r(L).flip(0), "relu": lambda L: L.relu(_r(L)),
            "atan2": lambda L: L.atan2(_r(L), _r(L).flip(0)), "erf": lambda L: _r(L).erf(),
            "special_i0e": lambda L: L.special.i0e(_r(L)), "gelu": lambda L: F(L).gelu(_r(L)),
            "mse_loss": lambda L: F(L).mse_loss(_r(L), _r(L).flip(0)),
            "clamp_min_tensor": lambda L: L.clamp_min(_r(L), _r(L).flip(0))}[name]
    ours, theirs = real(tg), real(torch)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_refusal_leaves_no_node_and_no_state():
    """A refused call records nothing: the leaf keeps no grad and a later backward of another use runs."""
    z = tg.tensor(X, requires_grad=True)
    with pytest.raises(NotImplementedError):
        tg.relu(z)
    (z * z).abs().sum().backward()
    w = torch.tensor(X, requires_grad=True)
    (w * w).abs().sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), w.grad.numpy(), rtol=1e-6)


@pytest.mark.parametrize("call", [
    lambda L: L.isclose(L.tensor([True, False, True]), L.tensor([True, True, False])),
    lambda L: L.isclose(L.tensor([True, False]), L.tensor([True, True]), atol=2),
    lambda L: L.isclose(L.tensor([True, False]), L.tensor([False, True]), rtol=0.5, atol=0.6),
    lambda L: L.tensor([L.allclose(L.tensor([True, False]), L.tensor([True, False]))]),
    lambda L: L.tensor([True, False]) << 1, lambda L: L.tensor([4, 2]) >> L.tensor([True, False]),
    lambda L: L.searchsorted(L.tensor([1, 2]), L.tensor([True, False])),
])
def test_bool_inputs_pytorch_computes(call):
    ours, theirs = call(tg), call(torch)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert ours.tolist() == theirs.tolist()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("call", [lambda L, d: L.special.i0e(_h(L, d)), lambda L, d: L.special.i1(_h(L, d)),
                                  lambda L, d: L.special.entr(_h(L, d)),
                                  lambda L, d: L.special.gammainc(_h(L, d), _h(L, d))])
def test_half_precision_special_functions_pytorch_computes(call, dtype):
    ours, theirs = call(tg, dtype), call(torch, dtype)
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    # (within two units in the last place: PyTorch's bfloat16 kernels round their intermediates)
    np.testing.assert_allclose(ours.float().numpy(), theirs.float().numpy(), rtol=2e-2 if dtype == "bfloat16" else 2e-3)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_matrix_exp_is_the_float32_one_rounded(dtype):
    """JAX's expm takes no half precision (its TypeError reached the user): computed in float32, rounded once.
    (PyTorch 2.13's CPU kernel returns values like -21072 for exp of [[0.1, 0.2], [0, 0.1]] in float16: not
    compared.)"""
    a = [[0.1, 0.2], [0.0, 0.1]]
    ours = tg.matrix_exp(tg.tensor(a, dtype=getattr(tg, dtype)))
    expected = torch.matrix_exp(torch.tensor(a, dtype=getattr(torch, dtype)).float()).to(getattr(torch, dtype))
    assert str(ours.dtype).split(".")[-1] == dtype
    np.testing.assert_array_equal(ours.float().numpy(), expected.float().numpy())


def test_complex_of_half_tensors_is_refused_plainly():
    """PyTorch makes a complex32 (ComplexHalf) tensor, a dtype JAX and tapegrad do not have: refused with a
    RuntimeError that says so, not JAX's TypeError."""
    with pytest.raises(RuntimeError, match="complex32"):
        tg.complex(_h(tg), _h(tg))
