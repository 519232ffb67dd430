"""Ops whose PyTorch CPU kernels have no complex (or half-precision, or integer, or bool) version refuse such input
with PyTorch's error (JAX would order, round or select the values and return something, or raise its own TypeError):
the type and PyTorch's text, which tapegrad's message contains (it adds what to do). TABLE_CASES are the refusals the
op table holds (Op.no_kernel_for), reached every way: function, method, in-place method, nn.functional,
torch.special, a module."""
import pytest

import tapegrad
from conftest import require

CASES = """x.max() x.min() x.max(0) x.min(0) x.amin() x.amax(0) x.aminmax() x.median() x.median(0) x.nanmedian()
x.mode() x.mode(0) x.argmin() x.argmax() x.argmax(0) x.sort() x.argsort() x.msort() x.topk(1) x.kthvalue(1)
x.cummax(0) x.cummin(0) x.unique() x.unique(dim=0) x.unique_consecutive() x.clamp(0,1) x.clamp(min=0)
x.clamp_(0,1) x.maximum(x) x.minimum(x) x.fmax(x) x.fmin(x) x.round() x.round(decimals=1) x.round_()
x.logit() x.floor() x.ceil() x.trunc() x.frac() x.frac_() x.erf() x.erfc() x.erfinv() x.lgamma() x.digamma()
x.sign() x//2 x%2 x.floor_divide(2) x.remainder(2) x.fmod(2)""".split()


# Softmax's kernel is named after the dim (the last one or another); lerp's after its weight (a number or a
# tensor); histc makes its edges (linspace) and, without a range, reads the data's (aminmax) before it counts.
KERNEL_CASES = """x2.softmax(0) x2.softmax(1) x2.log_softmax(0) x2.log_softmax(-1) x0.softmax(0) i.softmax(0)
i.softmax(1) i.log_softmax(0) i0.softmax(0) b.softmax(0) torch.nn.functional.softmin(i,0)
torch.nn.functional.softmin(x2,1)
torch.nn.functional.softmax(f2,0,dtype=torch.int32) i.softmax(5) x2.softmax(5) torch.special.log_softmax(x2,0)
i.lerp(i,0.5) torch.lerp(i,i,i) torch.lerp(i,i,torch.tensor(1)) b.lerp(b,0.5) torch.lerp(b,b,b) i.lerp_(i,0.5)
torch.lerp(c,c,1) b.bincount() torch.bincount(b2) torch.bincount(b,weights=torch.ones(3)) ~f ~x ~h f.__invert__()
torch.histc(b) torch.histc(b,min=0,max=1) torch.histc(x) torch.histc(x,min=0,max=1) torch.histc(i) h.histogram(3)
torch.nn.functional.binary_cross_entropy(f.sigmoid(),f.double().sigmoid())
2-b 2.5-b 1-b[0] torch.rsub(b,2) torch.rsub(2,b) b@b B@B B@b b@B B.mm(B) B[None]@B[None] B.mv(b) torch.addmm(B,B,B)
b.dot(b) b.inner(b) b.vdot(b) torch.einsum('i,i->',b,b) torch.tensordot(B,B,1) B.matrix_power(2)
torch.linalg.vecdot(b,b) torch.linalg.vecdot(i1,f) torch.linalg.vecdot(f,i1) b.topk(1) b.kthvalue(1)
torch.nn.functional.mse_loss(i1,i1) torch.nn.functional.mse_loss(b,b) torch.nn.functional.smooth_l1_loss(i1,i1)
torch.nn.functional.huber_loss(i1,b) torch.nn.functional.normalize(i,dim=0) b.addcmul(b,b) torch.addcmul(b,b,b,value=0)
torch.nn.functional.silu(i) torch.nn.functional.softplus(i) torch.nn.functional.elu(i) torch.nn.functional.mish(i)
i1.clamp_(0.5) i1.clamp_min_(0.5) b.clamp_(0.5) i1.clamp_(f) i1.addcdiv(i1,i1)
torch.nn.functional.binary_cross_entropy_with_logits(i1,f) torch.nn.functional.binary_cross_entropy_with_logits(f,i1)
torch.nn.functional.binary_cross_entropy_with_logits(b,f) torch.nn.functional.binary_cross_entropy_with_logits(f,b)
torch.nn.functional.hardtanh(b) torch.nn.functional.relu6(b) torch.nn.functional.threshold(b,0.5,1.0)
torch.nn.functional.softshrink(i1) torch.nn.functional.softshrink(b) torch.nn.functional.glu(i1)
torch.nn.functional.glu(b)
b.div(b,rounding_mode='floor') b.div(b,rounding_mode='trunc') b.div(True,rounding_mode='floor') b.clamp(min=True)
b.clamp(max=True) b.clamp(True,True) b.clamp(b,b) b.clamp_min(False) b.clamp_max(True) b.clip(False,True)
b.clamp_(min=True) f.mean(dtype=torch.int64) i1.mean() torch.arange(3,dtype=torch.bool) i1.masked_scatter(i1>0,f)
i1.index_put_((torch.tensor([0]),),torch.tensor([9.5])) torch.index_put(f,(torch.tensor([0]),),torch.tensor([9]))
B[None]@I[None] I[None]@B[None] B[None].bmm(f2[None]) B@I B@i1 I@b
torch.nn.functional.dropout(i) torch.nn.functional.dropout(b) torch.nn.functional.dropout2d(i[None])
torch.nn.functional.dropout1d(i)
torch.nn.functional.alpha_dropout(i,training=True) torch.nn.functional.feature_alpha_dropout(i[None],training=True)
torch.nn.functional.nll_loss(I,torch.tensor([0,1])) torch.nn.functional.nll_loss(B,torch.tensor([0,1]))
torch.nn.functional.batch_norm(i,None,None,training=True) torch.nn.functional.batch_norm(I,None,None,training=False)
torch.nn.functional.batch_norm(I,torch.zeros(2),torch.ones(2)) f<<1 f.__ilshift__(1) 1<<f f>>1 f.bitwise_right_shift_(1)
i1<<f f2[torch.tensor([0,1],dtype=torch.int8)] f2[torch.tensor([0],dtype=torch.int16)]
f2.take(torch.tensor([0],dtype=torch.int32)) f2.take(torch.tensor([True]))
b.clone().add_(torch.ones(3,2,dtype=torch.long)) b.clone().add_(i1,alpha=-0.5) i1.clone().add_(i1,alpha=-0.5)
i1.clone().add_(f,alpha=-0.5) i1.clone().sub_(i1,alpha=0.5) i1.clone().mul_(torch.ones(3,2))
b.clone().sub_(i1)""".split()
# x complex, h and g half precision (float16, bfloat16), b bool, i1 integer
TABLE_CASES = """x<x.flip(0) x<=1 x.gt(x) x.clone().ge_(x) f<1j torch.searchsorted(x,x) torch.bucketize(x,x)
torch.relu(x) F.relu_(x.clone()) F.relu6(x) F.hardtanh(x) torch.clamp_min(x,0) torch.clamp_min(x,x)
x.clone().clamp_max_(x) F.hinge_embedding_loss(x,x) torch.atan2(x,x) torch.arctan2(x,x) torch.hypot(x,x)
torch.xlogy(x,x) x.clone().xlogy_(x) torch.copysign(x,x) torch.nextafter(x,x) torch.logaddexp2(x,x)
x.div(x,rounding_mode='floor') x.div(x,rounding_mode='trunc') torch.igamma(x,x) torch.special.gammaincc(x,x)
torch.i0(x) x.clone().i0_() x.to(torch.complex128).erfinv() torch.polygamma(1,x) torch.polygamma(3,x)
x.clone().polygamma_(0) torch.mvlgamma(x,1) x.clone().trunc_() torch.special.i0e(x) torch.special.i1(x)
torch.special.ndtri(x) torch.special.log_ndtr(x) torch.special.erfcx(x) torch.special.entr(x)
torch.special.xlog1py(x,x) torch.special.zeta(x,x) torch.special.bessel_j0(x) torch.special.modified_bessel_k1(x)
torch.special.scaled_modified_bessel_k0(x) torch.special.spherical_bessel_j0(x) torch.special.airy_ai(x)
torch.special.chebyshev_polynomial_t(x,x) torch.special.hermite_polynomial_h(x,2) F.elu(x) F.elu_(x.clone())
F.celu(x) F.selu(x) F.gelu(x) F.glu(x) F.hardshrink(x) F.softshrink(x) F.hardsigmoid(x) F.hardswish(x)
F.logsigmoid(x) F.mish(x) F.softplus(x) F.threshold(x,0.1,0.0) F.threshold_(x.clone(),0.1,0.0) F.leaky_relu(x)
F.rrelu(x) F.prelu(x,x[:1]) torch.nn.ReLU()(x) torch.nn.GELU()(x) F.mse_loss(x,x) F.smooth_l1_loss(x,x)
F.huber_loss(x,x) F.binary_cross_entropy(x,x) F.binary_cross_entropy(x,f) F.binary_cross_entropy_with_logits(x,x)
F.multilabel_soft_margin_loss(x2,x2) F.kl_div(f,x,reduction='sum') F.dropout(x) F.dropout(x.clone(),inplace=True)
F.dropout2d(x2[None]) F.alpha_dropout(x,training=True) F.feature_alpha_dropout(x2[None],training=True)
torch.nn.Dropout()(x) torch.special.ndtri(h/4) torch.special.bessel_j0(h) torch.special.erfcx(g)
torch.special.log_ndtr(h) torch.special.zeta(g,g) torch.special.legendre_polynomial_p(h,2)
torch.special.modified_bessel_i0(g) torch.special.spherical_bessel_j0(h) torch.pdist(h2) torch.cdist(g2,g2)
torch.polar(h,h) torch.polar(g,g) torch.complex(g,g) torch.complex(h,f) b<<b b>>True torch.searchsorted(b,b)
torch.normal(i1,1.0) torch.normal(1.0,b) F.kl_div(i1,f,reduction='sum') F.kl_div(f,b,reduction='sum')
F.soft_margin_loss(i1,i1) F.soft_margin_loss(i1,f.double()) F.soft_margin_loss(b,f) torch.isclose(b,i1)
torch.nn.functional.huber_loss(b,i1) torch.nn.functional.huber_loss(b,b) torch.nn.functional.huber_loss(i1,i1)
torch.special.round(i1,decimals=1) torch.special.round(i1) torch.round(b,decimals=1) i1.round(decimals=0)
x.round(decimals=0)""".split()
# (PyTorch's integer pow of a negative exponent; a bool sum with alpha stays bool, alpha cast to bool)
COMPUTED = """i1**torch.tensor([3,-2]) 2**i1 (-1)**i1 torch.tensor([1,-1,0,2])**torch.tensor([-3,-3,-1,-1])
b.add(b,alpha=2)
b.add(b,alpha=0) b.add(True,alpha=2) torch.addcmul(b,b,i1) i1.add(b,alpha=2) I@I i1@i1
i1.addcmul(i1,i1,value=0.5) i1.addcmul(i1,i1,value=1.9) i1.addcmul(i1,i1,value=-1.9) i1.addcmul_(i1,i1,value=0.5)
b.addcmul(i1,i1,value=0.5) torch.nn.functional.threshold(i1,1,0) b.clamp(min=b) b.clamp(0,1)
b.div(i1,rounding_mode='floor') torch.nn.functional.dropout(i1,1.0) torch.nn.functional.dropout(b,1.0)
i1.__matmul__(i1) I.matmul(I) I[torch.tensor([1,0],dtype=torch.uint8)]
I[:,torch.tensor([0,1],dtype=torch.uint8)] torch.isclose(b,b.flip(0)) torch.isclose(b,b.flip(0),atol=2)
torch.isclose(b,b.flip(0),rtol=0.5,atol=0.6) torch.allclose(b,b) b<<1 i1>>b torch.searchsorted(i1.sort().values,b)
torch.relu(f) torch.atan2(f,f.flip(0)) torch.clamp_min(f,f.flip(0)) F.mse_loss(f,f.flip(0)) torch.round(i1)
i1.round_()""".split()


def _outcome(lib, code, values=False):
    """code's error (type, text), or None; with values, what it computed (dtype, values) where it raised none."""
    x = lib.tensor([1 + 2j, 3j])
    names = {"x": x, "x2": x.reshape(1, 2), "x0": x[0], "i": lib.tensor([[1, -2, 3]]), "i0": lib.tensor(1),
             "b": lib.tensor([True, False]), "b2": lib.tensor([[True]]), "f": lib.tensor([1.5, 2.0]),
             "f2": lib.ones(2, 2), "h": lib.tensor([1.0, 2.5], dtype=lib.float16),
             "c": lib.tensor([1], dtype=lib.int8), "i1": lib.tensor([3, -2]), "I": lib.tensor([[1, 2], [3, 4]]),
             "B": lib.tensor([[True, False], [False, True]]), "F": lib.nn.functional,
             "g": lib.tensor([1.0, 2.5], dtype=lib.bfloat16), "h2": lib.ones(2, 2, dtype=lib.float16),
             "g2": lib.ones(2, 2, dtype=lib.bfloat16)}
    try:
        value = eval(code, {"torch": lib, **names})
    except Exception as e:   # noqa: BLE001 - the type and text are what is compared
        return type(e).__name__, str(e).strip()
    if not values:
        return None
    return (str(value.dtype).split(".")[-1], value.tolist()) if hasattr(value, "dtype") else value


@pytest.mark.parametrize("code", CASES + KERNEL_CASES + TABLE_CASES)
def test_input_without_a_kernel_is_refused_as_torch(code):
    torch = require("torch")
    theirs, ours = _outcome(torch, code), _outcome(tapegrad, code)
    assert theirs is not None, "torch ran it"
    ours_text = ours[1].replace("tapegrad.", "torch.") if ours is not None else ""
    assert ours is not None and ours[0] == theirs[0] and theirs[1] in ours_text, (ours, theirs)


@pytest.mark.parametrize("code", ["torch.lerp(i,i,torch.tensor(0.5))", "torch.lerp(i.float(),i.float(),i0)",
                                  "x.softmax(0,dtype=torch.float32)", "h.softmax(0)", "torch.lerp(x,x,0.5)"])
def test_what_torch_computes_is_computed(code):
    torch = require("torch")
    assert _outcome(torch, code) is None and _outcome(tapegrad, code) is None


@pytest.mark.parametrize("code", ["x.float()", "x.to(torch.float64)", "x.softmax(0, dtype=torch.float32)",
                                  "x.double().sum()"])
def test_a_complex_tensor_cast_to_real_keeps_its_real_part_and_warns_as_torch(code, monkeypatch):
    """PyTorch's copy drops the imaginary part with its UserWarning (once per process); JAX's astype would warn
    of its own deprecation instead (and will raise)."""
    import warnings
    from tapegrad import _inplace
    torch = require("torch")
    monkeypatch.setitem(_inplace._warned, "complex_to_real", False)
    results = []
    for lib in (tapegrad, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = eval(code, {"torch": lib, "x": lib.tensor([1 + 2j, -3j])})
        results.append((value.tolist(), [(w.category, str(w.message).split(" (Triggered")[0]) for w in caught]))
    (ours, our_warnings), (theirs, _) = results   # (torch's may have warned already in this process)
    assert ours == theirs
    assert our_warnings == [(UserWarning, "Casting complex values to real discards the imaginary part")]


@pytest.mark.parametrize("code", COMPUTED)
def test_integer_and_bool_arithmetic_as_torch(code):
    torch = require("torch")
    assert _outcome(tapegrad, code, values=True) == _outcome(torch, code, values=True)


def test_matmul_in_place_rebinds_as_torch():
    """PyTorch's Tensor has no __imatmul__: a @= b makes a new tensor a @ b, the old one unchanged."""
    torch = require("torch")
    for lib in (tapegrad, torch):
        a = lib.ones(2, 2)
        before = a
        a @= lib.full((2, 2), 2.0)
        assert a is not before and before.tolist() == [[1.0, 1.0], [1.0, 1.0]] and a.tolist() == [[4.0, 4.0]] * 2
        v = lib.tensor([3, -2])
        v @= v
        assert v.ndim == 0 and v.item() == 13


@pytest.mark.parametrize("code", ["x[m] = 0", "x[m] = torch.tensor(5.)", "x[m] = torch.ones(2, 4)", "x[m, 1:] = 7",
                                  "x[torch.tensor([0, 2], dtype=torch.int8)] = 0"])
def test_writes_through_byte_and_small_integer_indices_as_torch(code):
    """A uint8 index is a mask to PyTorch; alone with a number it fills through masked_fill_, which refuses it."""
    torch = require("torch")

    def outcome(lib):
        x, m = lib.arange(12.).reshape(3, 4), lib.tensor([1, 0, 1], dtype=lib.uint8)
        try:
            exec(code, {"torch": lib, "x": x, "m": m})
        except Exception as e:   # noqa: BLE001 - the type and text are compared
            return type(e).__name__, str(e)
        return x.tolist()
    ours, theirs = outcome(tapegrad), outcome(torch)
    assert ours == theirs or (isinstance(theirs, tuple) and ours[0] == theirs[0] and theirs[1] in ours[1])


def test_a_refused_call_records_nothing():
    """The refusal comes before anything is recorded: the leaf gets no node and a later backward runs as PyTorch's."""
    torch = require("torch")
    grads = []
    for lib in (tapegrad, torch):
        z = lib.tensor([1 + 2j, 3j], requires_grad=True)
        with pytest.raises(NotImplementedError):
            lib.relu(z)
        (z * z).abs().sum().backward()
        grads.append(z.grad.tolist())
    assert grads[0] == pytest.approx(grads[1])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("code", ["torch.special.i0e(h)", "torch.special.i1(h)", "torch.special.entr(h)",
                                  "torch.special.gammainc(h,h)"])
def test_half_precision_special_functions_torch_computes(code, dtype):
    """(within two units in the last place: PyTorch's bfloat16 kernels round their intermediates)"""
    torch = require("torch")
    ours, theirs = (eval(code, {"torch": lib, "h": lib.tensor([0.5, 1.5], dtype=getattr(lib, dtype))})
                    for lib in (tapegrad, torch))
    assert str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1] == dtype
    assert ours.float().tolist() == pytest.approx(theirs.float().tolist(), rel=2e-2 if dtype == "bfloat16" else 2e-3)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_matrix_exp_is_the_float32_one_rounded(dtype):
    """JAX's expm takes no half precision (its TypeError reached the user): computed in float32, rounded once.
    (PyTorch 2.13's CPU kernel returns values like -21072 for exp of [[0.1, 0.2], [0, 0.1]] in float16: not
    compared.)"""
    torch = require("torch")
    a = [[0.1, 0.2], [0.0, 0.1]]
    ours = tapegrad.matrix_exp(tapegrad.tensor(a, dtype=getattr(tapegrad, dtype)))
    expected = torch.matrix_exp(torch.tensor(a, dtype=getattr(torch, dtype)).float()).to(getattr(torch, dtype))
    assert str(ours.dtype).split(".")[-1] == dtype and ours.float().tolist() == expected.float().tolist()


def test_complex_of_half_tensors_says_complex32_is_missing():
    """PyTorch makes a complex32 (ComplexHalf) tensor, a dtype JAX and tapegrad do not have."""
    h = tapegrad.tensor([1.0, 2.5], dtype=tapegrad.float16)
    with pytest.raises(RuntimeError, match="complex32"):
        tapegrad.complex(h, h)
