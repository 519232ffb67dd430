"""tapegrad.amp against torch.amp: autocast's output dtypes and values per op, nesting, GradScaler's state machine."""
import warnings

import numpy as np
import pytest

import tapegrad
from conftest import assert_close, both, fold_repr


def _data(lib, *shape, seed=0, dtype=None):
    return lib.tensor(np.random.default_rng(seed).normal(size=shape), dtype=dtype or lib.float32)


def _inputs(lib, dtype=None):
    d = lambda *shape, seed=0: _data(lib, *shape, seed=seed, dtype=dtype)
    return {"x": d(4, 8), "w": d(6, 8, seed=1), "b": d(6, seed=2), "a3": d(2, 4, 8, seed=3), "b3": d(2, 8, 3, seed=4),
            "img": d(1, 3, 6, 6, seed=5), "k": d(4, 3, 3, 3, seed=6), "t": d(4, 8, seed=7),
            "cls": lib.tensor([1, 0, 7, 2]), "c3": d(2, 4, 3, seed=8), "w3": d(3, 8, 8, seed=9)}


F = lambda lib: lib.nn.functional
OPS = {
    # PyTorch's CPU lower-precision list
    "mm": lambda lib, v: lib.mm(v["x"], v["w"].t()),
    "matmul": lambda lib, v: v["x"] @ v["w"].t(),
    "matmul_3d": lambda lib, v: lib.matmul(v["a3"], v["b3"]),
    "bmm": lambda lib, v: v["a3"].bmm(v["b3"]),
    "addmm": lambda lib, v: lib.addmm(v["b"], v["x"], v["w"].t()),
    "baddbmm": lambda lib, v: lib.baddbmm(v["c3"], v["a3"], v["b3"]),
    "linear": lambda lib, v: F(lib).linear(v["x"], v["w"], v["b"]),
    "linear_3d_noncontiguous": lambda lib, v: F(lib).linear(v["a3"].transpose(0, 1), v["w"], v["b"]),
    "conv2d": lambda lib, v: F(lib).conv2d(v["img"], v["k"], v["k"][:, 0, 0, 0], padding=1),
    "conv1d": lambda lib, v: F(lib).conv1d(v["a3"], v["w"][:, :4, None]),
    "conv_transpose2d": lambda lib, v: F(lib).conv_transpose2d(v["img"], v["k"].transpose(0, 1)),
    "prelu": lambda lib, v: F(lib).prelu(v["x"], v["b"][:1]),
    "sdpa": lambda lib, v: F(lib).scaled_dot_product_attention(v["a3"], v["a3"], v["a3"]),
    "einsum": lambda lib, v: lib.einsum("ij,kj->ik", v["x"], v["w"]),
    "tensordot": lambda lib, v: lib.tensordot(v["x"], v["w"], dims=([1], [1])),
    # PyTorch's CPU fp32 list
    "prod": lambda lib, v: v["x"][:2, :3].prod(),
    "cdist": lambda lib, v: lib.cdist(v["x"], v["t"]),
    "trace": lambda lib, v: lib.trace(v["x"][:, :4]),
    "inv": lambda lib, v: lib.linalg.inv(v["x"][:, :4] + 4 * lib.eye(4, dtype=v["x"].dtype)),
    "mse_loss": lambda lib, v: F(lib).mse_loss(v["x"], v["t"]),
    "l1_loss": lambda lib, v: F(lib).l1_loss(v["x"], v["t"]),
    "smooth_l1_loss": lambda lib, v: F(lib).smooth_l1_loss(v["x"], v["t"]),
    "huber_loss": lambda lib, v: F(lib).huber_loss(v["x"], v["t"]),
    "cross_entropy": lambda lib, v: F(lib).cross_entropy(v["x"], v["cls"]),
    "nll_loss": lambda lib, v: F(lib).nll_loss(v["x"], v["cls"]),
    "bce": lambda lib, v: F(lib).binary_cross_entropy(v["x"].sigmoid(), v["t"].sigmoid()),
    "bce_with_logits": lambda lib, v: F(lib).binary_cross_entropy_with_logits(v["x"], v["t"].sigmoid()),
    "kl_div": lambda lib, v: F(lib).kl_div(v["x"], v["t"].softmax(-1), reduction="batchmean"),
    "cosine_embedding_loss": lambda lib, v: F(lib).cosine_embedding_loss(v["x"], v["t"], lib.ones(4)),
    "fft": lambda lib, v: lib.fft.irfft(lib.fft.rfft2(v["x"]) * lib.fft.fft(v["t"])[:, :5]),
    "stft_istft": lambda lib, v: lib.istft(lib.stft(v["x"], 4, window=lib.hann_window(4), return_complex=True), 4,
                                           window=lib.hann_window(4) + 0.5),
    # PyTorch's promote list: the widest floating input's dtype
    "cat_stack": lambda lib, v: lib.cat([v["x"], v["t"]]).sum() + lib.stack([v["x"], v["t"]]).mean(),
    "cat_mixed": lambda lib, v: lib.cat([v["x"], v["t"].float()]),
    # not listed: they run in their inputs' dtype
    "softmax": lambda lib, v: lib.softmax(v["x"], -1),
    "log_softmax": lambda lib, v: F(lib).log_softmax(v["x"], -1),
    "layer_norm": lambda lib, v: F(lib).layer_norm(v["x"], (8,)),
    "relu_add_sum": lambda lib, v: (lib.relu(v["x"]) + v["t"]).sum(),
    "dot_mv": lambda lib, v: lib.dot(v["x"][0], v["x"][1]) + lib.mv(v["x"], v["t"][0]),
    "bilinear": lambda lib, v: F(lib).bilinear(v["x"], v["t"], v["w3"]),
    "pool_gelu": lambda lib, v: F(lib).gelu(F(lib).max_pool2d(v["img"], 2)),
}


@pytest.mark.parametrize("input_dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", list(OPS))
def test_output_dtype_and_value_as_pytorch(torch, name, dtype, input_dtype):
    def build(lib):
        v = _inputs(lib, getattr(lib, input_dtype))
        with lib.autocast("cpu", dtype=getattr(lib, dtype)):
            return OPS[name](lib, v)
    try:
        theirs = build(torch)
    except RuntimeError as e:   # float16 autocast refuses bfloat16 inputs to cat and stack
        with pytest.raises(RuntimeError, match=str(e)):
            build(tapegrad)
        return
    assert_close(build(tapegrad), theirs, rtol=5e-2, atol=5e-2)


def test_float64_inputs_are_not_cast(torch):
    def build(lib):
        v = _inputs(lib, lib.float64)
        with lib.autocast("cpu"):
            return lib.mm(v["x"], v["w"].t()), F(lib).mse_loss(v["x"], v["t"])
    for a, b in zip(*both(build)):
        assert_close(a, b)


def test_training_step_grads_are_float32(torch):
    """The casts are recorded: grads reach the float32 parameters in float32, close to PyTorch's."""
    def build(lib):
        model = lib.nn.Sequential(lib.nn.Linear(8, 6), lib.nn.ReLU(), lib.nn.Linear(6, 3))
        for i, p in enumerate(model.parameters()):
            with lib.no_grad():
                p.copy_(_data(lib, *p.shape, seed=10 + i) * 0.3)
        v = _inputs(lib)
        with lib.autocast("cpu"):
            out = model(v["x"])
            loss = F(lib).cross_entropy(out, lib.tensor([0, 2, 1, 1]))
        loss.backward()
        return [out, loss] + [p.grad for p in model.parameters()]
    for a, b in zip(*both(build)):
        assert_close(a, b, rtol=3e-2, atol=3e-2)


def test_nesting_decorator_and_state(torch):
    def build(lib):
        x = _data(lib, 3, 3)
        seen = [lib.is_autocast_enabled(), lib.is_autocast_enabled("cpu")]
        with lib.autocast("cpu", dtype=lib.float16):
            seen += [lib.is_autocast_enabled(), lib.is_autocast_enabled("cpu"), lib.get_autocast_dtype("cpu"),
                     (x @ x).dtype]
            with lib.autocast("cpu", enabled=False):
                seen += [lib.is_autocast_enabled("cpu"), (x @ x).dtype]
            with lib.autocast("cpu", dtype=lib.bfloat16):
                seen += [(x @ x).dtype]
            seen += [(x @ x).dtype]
        seen += [lib.is_autocast_enabled("cpu"), (x @ x).dtype, lib.get_autocast_dtype("cpu"),
                 lib.get_autocast_dtype("cuda")]

        @lib.amp.autocast("cpu")
        def f(a):
            return a @ a
        seen += [f(x).dtype, (x @ x).dtype, lib.amp.autocast is lib.autocast]
        return [fold_repr(s) if not isinstance(s, bool) else s for s in seen]
    ours, theirs = both(build)
    assert ours == theirs


def test_device_type_and_dtype_errors(torch):
    for lib in (tapegrad, torch):
        with pytest.raises(ValueError, match="Expected `device_type` of type `str`"):
            lib.autocast(5)
        with pytest.raises(RuntimeError, match="Expected one of cpu, cuda.*device string: xyz"):
            lib.autocast("xyz")
        with pytest.warns(UserWarning, match="In CPU autocast, but the target dtype is not supported"):
            with lib.autocast("cpu", dtype=lib.float64):
                assert not lib.is_autocast_enabled("cpu")
        assert lib.amp.is_autocast_available("cpu")


def test_deprecated_namespaces(torch):
    for lib in (tapegrad, torch):
        with pytest.warns(FutureWarning, match=r"torch.cpu.amp.autocast\(args...\)` is deprecated"):
            with lib.cpu.amp.autocast():
                assert lib.get_autocast_dtype("cpu") == lib.bfloat16
                assert (lib.ones(2, 2) @ lib.ones(2, 2)).dtype == lib.bfloat16
        with pytest.warns(FutureWarning, match=r"torch.cpu.amp.GradScaler\(args...\)` is deprecated"):
            assert isinstance(lib.cpu.amp.GradScaler(), lib.amp.GradScaler)
        assert issubclass(lib.cuda.amp.autocast, lib.amp.autocast)


# ---- GradScaler --------------------------------------------------------------------------------

def _scaler_run(lib, steps, inf_steps, **kwargs):
    """A few scaled SGD steps; the grads of `inf_steps` are poisoned. Returns the trace of the scaler's state."""
    model = lib.nn.Linear(3, 2)
    with lib.no_grad():
        model.weight.copy_(_data(lib, 2, 3))
        model.bias.copy_(_data(lib, 2, seed=1))
    opt = lib.optim.SGD(model.parameters(), lr=0.1)
    scaler = lib.amp.GradScaler("cpu", **kwargs)
    trace = [scaler.state_dict(), scaler.get_scale()]
    x = _data(lib, 5, 3, seed=2)
    for i in range(steps):
        opt.zero_grad()
        loss = model(x).pow(2).mean()
        scaled = scaler.scale(loss)
        trace.append(scaled.item())
        scaled.backward()
        if i in inf_steps:
            with lib.no_grad():
                model.weight.grad[0, 0] = float("inf") if i % 2 else float("nan")
        scaler.unscale_(opt)
        if i not in inf_steps:
            trace += [model.weight.grad.tolist(), model.bias.grad.tolist()]
        scaler.step(opt)
        scaler.update()
        trace += [scaler.get_scale(), scaler.state_dict(), model.weight.tolist()]
    return trace


def test_grad_scaler_steps_as_pytorch(torch):
    # step 0 clean, 1 inf (back off), 2 and 3 clean (grow), 4 NaN (back off)
    ours, theirs = both(lambda lib: _scaler_run(lib, 5, {1, 4}, init_scale=256.0, growth_interval=2))
    np.testing.assert_equal(len(ours), len(theirs))
    for a, b in zip(ours, theirs):
        if isinstance(a, dict) or a is None:
            assert a == b
        else:
            np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-6, atol=1e-7)


def test_grad_scaler_state_dict_errors_and_disabled(torch):
    def build(lib):
        out = []
        scaler = lib.amp.GradScaler("cpu", init_scale=8.0)
        scaler.load_state_dict({"scale": 4.0, "growth_factor": 3.0, "backoff_factor": 0.25, "growth_interval": 5,
                                "_growth_tracker": 2})
        out += [scaler.state_dict(), scaler.get_scale(), scaler.is_enabled()]
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([p], lr=1.0)
        loss = scaler.scale((p * 3).sum())
        out += [loss.item(), scaler.scale(lib.ones(2, dtype=lib.bfloat16)).dtype.__repr__()]
        loss.backward()
        scaler.unscale_(opt)
        for action in (lambda: scaler.unscale_(opt), lambda: scaler.step(opt, closure=None)):
            try:
                action()
            except RuntimeError as e:
                out.append(str(e))
        scaler.step(opt)
        try:
            scaler.step(opt)
        except RuntimeError as e:
            out.append(str(e))
        scaler.update(16.0)
        out += [scaler.state_dict(), p.tolist()]
        off = lib.amp.GradScaler("cpu", enabled=False)
        x = lib.ones(2)
        out += [off.scale(x) is x, off.get_scale(), off.state_dict(), off.is_enabled()]
        try:
            lib.amp.GradScaler("cpu", growth_factor=0.5)
        except AssertionError as e:
            out.append(str(e))
        try:
            lib.amp.GradScaler("cpu").load_state_dict({})
        except RuntimeError as e:
            out.append(str(e))
        return [fold_repr(o) if isinstance(o, str) else o for o in out]
    ours, theirs = both(build)
    assert ours == theirs


def test_compile_guards_on_autocast(torch):
    def build(lib):
        lin = lib.nn.Linear(4, 3)
        with lib.no_grad():
            lin.weight.copy_(_data(lib, 3, 4))
            lin.bias.copy_(_data(lib, 3, seed=1))
        forward = lambda x: lin(x).relu()
        step = lib.compile(forward) if lib is tapegrad else forward   # (PyTorch's inductor takes minutes here)
        x = _data(lib, 2, 4, seed=2)
        with lib.no_grad():
            plain = step(x)
            with lib.autocast("cpu"):
                cast = step(x)
            again = step(x)
        return plain, cast, again
    for a, b in zip(*both(build)):
        assert_close(a, b, rtol=2e-2, atol=2e-2)


def test_custom_fwd_and_bwd(torch):
    def build(lib):
        seen = []

        class Square(lib.autograd.Function):
            @staticmethod
            @lib.amp.custom_fwd(device_type="cpu", cast_inputs=lib.float32)
            def forward(ctx, a, b):
                seen.append((a.dtype, lib.is_autocast_enabled("cpu")))
                ctx.save_for_backward(a, b)
                return a @ b

            @staticmethod
            @lib.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g):
                a, b = ctx.saved_tensors
                return g @ b.t(), a.t() @ g

        class Plain(lib.autograd.Function):
            @staticmethod
            @lib.amp.custom_fwd(device_type="cpu")
            def forward(ctx, a):
                return a @ a

            @staticmethod
            @lib.amp.custom_bwd(device_type="cpu")
            def backward(ctx, g):
                return g @ g

        a = _data(lib, 3, 3).bfloat16().requires_grad_()
        b = _data(lib, 3, 3, seed=1).requires_grad_()
        with lib.autocast("cpu"):
            out = Square.apply(a, b)
            plain = Plain.apply(_data(lib, 3, 3, seed=2))
        out.sum().backward()
        return [fold_repr(s) for s in seen] + [out, plain, a.grad, b.grad]
    ours, theirs = both(build)
    assert ours[0] == theirs[0]
    for x, y in zip(ours[1:], theirs[1:]):
        assert_close(x, y, rtol=2e-2, atol=2e-2)
