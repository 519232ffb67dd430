"""Interop: tensors as jax.Arrays, DLPack with NumPy and PyTorch, JAX functions as ops, modules as JAX functions."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapegrad
from conftest import assert_close, from_torch, to_torch, torch_dtype
from xla_events import counting

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]


def _pair(torch, dtype, shape=(3, 4)):
    """The same data in both libraries."""
    t = torch.arange(int(np.prod(shape)), dtype=torch.float64).reshape(shape).sub(5).to(getattr(torch, dtype))
    return from_torch(t), t


# ---- jax.Array in and out -----------------------------------------------------------------------

def test_jax_returns_the_value_without_a_copy_and_computes_views():
    a = jnp.arange(6.0).reshape(2, 3)
    t = tapegrad.from_jax(a)
    assert t.jax() is a and jnp.asarray(t) is a and t.dtype is tapegrad.float64 and not t.requires_grad
    view = (t * 2)[:, 1:]   # pending and a view: computed on demand
    np.testing.assert_array_equal(view.jax(), np.asarray(a * 2)[:, 1:])
    assert isinstance(view.jax(), jax.Array)
    np.testing.assert_array_equal(jnp.ones(3) + t[0], [1.0, 2.0, 3.0])   # jax arithmetic takes a tensor


def test_an_array_handed_out_does_not_see_later_in_place_ops():
    t = tapegrad.zeros(3)
    before = t.jax()
    t.add_(1)
    t[0] = 5
    np.testing.assert_array_equal(before, [0, 0, 0])
    np.testing.assert_array_equal(t.jax(), [5, 1, 1])


def test_from_jax_rejects_other_objects():
    with pytest.raises(TypeError, match="expected jax.Array"):
        tapegrad.from_jax(np.ones(3))


# ---- DLPack -----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_dlpack_both_ways_with_torch(torch, dtype):
    ours, theirs = _pair(torch, dtype)
    assert_close(tapegrad.from_dlpack(theirs), theirs)
    back = torch.from_dlpack(ours)
    assert back.dtype == theirs.dtype and torch.equal(back, theirs)
    # non-contiguous views either way
    assert torch.equal(torch.from_dlpack(ours.t()), theirs.t())
    assert torch.equal(torch.from_dlpack(ours[:, ::2]), theirs[:, ::2])
    assert_close(tapegrad.from_dlpack(theirs.t()), theirs.t())
    assert_close(tapegrad.from_dlpack(theirs[1:, ::2]), theirs[1:, ::2])


@pytest.mark.parametrize("dtype", [d for d in DTYPES if d != "bfloat16"])
def test_dlpack_with_numpy(torch, dtype):
    ours, theirs = _pair(torch, dtype)
    np.testing.assert_array_equal(np.from_dlpack(ours), np.from_dlpack(theirs))
    np.testing.assert_array_equal(np.from_dlpack(ours.t()), np.from_dlpack(theirs.t()))
    array = theirs.numpy()
    assert_close(tapegrad.from_dlpack(array), torch.from_dlpack(array))
    assert_close(tapegrad.from_dlpack(array.T), torch.from_dlpack(array.T))


def test_dlpack_bfloat16_with_numpy_fails_as_torchs(torch):
    ours, theirs = _pair(torch, "bfloat16")
    with pytest.raises(Exception) as mine:
        np.from_dlpack(ours)
    with pytest.raises(Exception) as expected:
        np.from_dlpack(theirs)
    assert type(mine.value) is type(expected.value) and str(mine.value) == str(expected.value)


def test_zero_dim_and_empty(torch):
    for theirs in (torch.tensor(2.5), torch.tensor(3), torch.zeros(0, 3)):
        ours = from_torch(theirs)
        assert_close(tapegrad.from_dlpack(theirs), theirs)
        assert torch.equal(torch.from_dlpack(ours), theirs)
        assert np.from_dlpack(ours).shape == tuple(theirs.shape)


def test_dlpack_device_is_torchs(torch):
    ours, theirs = _pair(torch, "float32")
    assert tuple(map(int, ours.__dlpack_device__())) == tuple(map(int, theirs.__dlpack_device__()))
    assert tuple(map(int, ours[:, 1].__dlpack_device__())) == (1, 0)


def test_requires_grad_tensors_are_not_exported(torch):
    for lib in (tapegrad, torch):
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        for export in (lambda t: t.__dlpack__(), np.from_dlpack):
            for t in (x, y):
                with pytest.raises(BufferError, match=r"Can't export tensors that require gradient, use "
                                                      r"tensor\.detach\(\)"):
                    export(t)
        np.testing.assert_array_equal(np.from_dlpack(y.detach()), [2.0, 2.0, 2.0])
        # to_dlpack exports the data of a tensor that requires grad (PyTorch's does)
        assert torch.equal(torch.utils.dlpack.from_dlpack(lib.utils.dlpack.to_dlpack(y)), torch.full((3,), 2.0))
    with pytest.raises(BufferError, match="require gradient"):
        torch.from_dlpack(tapegrad.ones(3, requires_grad=True))
    with pytest.raises(BufferError, match="require gradient"):
        tapegrad.from_dlpack(tapegrad.ones(3, requires_grad=True))


def test_capsules_of_utils_dlpack(torch):
    ours, theirs = _pair(torch, "float32")
    assert torch.equal(torch.utils.dlpack.from_dlpack(tapegrad.utils.dlpack.to_dlpack(ours)), theirs)
    assert_close(tapegrad.utils.dlpack.from_dlpack(torch.utils.dlpack.to_dlpack(theirs)), theirs)
    assert_close(tapegrad.utils.dlpack.from_dlpack(theirs.t()), theirs.t())
    capsule = torch.utils.dlpack.to_dlpack(theirs)
    tapegrad.utils.dlpack.from_dlpack(capsule)
    with pytest.raises(RuntimeError, match="consumed only once"):
        tapegrad.utils.dlpack.from_dlpack(capsule)


def test_from_dlpack_of_a_tensor_shares_its_data_as_torchs(torch):
    for lib in (tapegrad, torch):
        x = lib.zeros(3)
        y = lib.from_dlpack(x)
        y.add_(1)
        x[0] = 5
        assert y.tolist() == [5.0, 1.0, 1.0] and x.tolist() == [5.0, 1.0, 1.0]
        assert not y.requires_grad
    assert_close(tapegrad.from_dlpack(jnp.arange(3)), torch.arange(3))


def test_from_dlpack_rejects_other_objects(torch):
    for lib in (tapegrad, torch):
        with pytest.raises(RuntimeError):
            lib.from_dlpack([1, 2])


# ---- a JAX function as a tapegrad op --------------------------------------------------------------

def _mlp_jax(params, x):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    return {"y": h @ params["w2"], "h": h}


def _mlp_torch(params, x):
    h = (x @ params["w1"] + params["b1"]).tanh()
    return {"y": h @ params["w2"], "h": h}


def _mlp_params(lib):
    rng = np.random.default_rng(0)
    return {k: lib.tensor(rng.normal(size=s), dtype=lib.float64, requires_grad=True)
            for k, s in (("w1", (3, 4)), ("b1", (4,)), ("w2", (4, 2)))}


def test_from_jax_function_values_and_gradients_match_torch(torch):
    mlp = tapegrad.func.from_jax(_mlp_jax)
    results = []
    for lib, f in ((tapegrad, mlp), (torch, _mlp_torch)):
        params = _mlp_params(lib)
        x = lib.tensor(np.random.default_rng(1).normal(size=(5, 3)))
        out = f(params, x)
        (out["y"].sum() + (out["h"] ** 2).sum()).backward()
        results.append((out["y"], out["h"], *(params[k].grad for k in ("w1", "b1", "w2"))))
    for a, b in zip(*results):
        assert_close(a, b)


def test_from_jax_records_one_node_with_a_sensible_name():
    mlp = tapegrad.func.from_jax(_mlp_jax)
    params = _mlp_params(tapegrad)
    out = mlp(params, tapegrad.ones(5, 3, dtype=tapegrad.float64))
    node = out["y"].grad_fn
    assert type(node).__name__ == "MlpJaxBackward" and node.name() == "MlpJaxBackward"
    assert out["h"].grad_fn is node and (out["h"].output_nr, out["y"].output_nr) == (0, 1)   # leaves sorted by key
    # the inputs' accumulators are the node's direct next functions: one op, whatever jnp does inside
    leaves = {id(n.variable) for n, _ in node.next_functions if n is not None}
    assert leaves == {id(p) for p in params.values()}
    named = tapegrad.func.from_jax(lambda x: x * 2, name="double")
    assert type(named(params["b1"]).grad_fn).__name__ == "DoubleBackward"


def test_from_jax_under_no_grad_and_with_integer_results():
    f = tapegrad.func.from_jax(lambda x: (jnp.sin(x), jnp.argmax(x)))
    x = tapegrad.tensor([0.5, 2.0, 1.0], requires_grad=True)
    with tapegrad.no_grad():
        y, i = f(x)
    assert not y.requires_grad and y.grad_fn is None
    y, i = f(x)
    assert y.requires_grad and not i.requires_grad and i.dtype is tapegrad.int64 and i.item() == 1


def test_from_jax_arguments_arrays_and_constants():
    f = tapegrad.func.from_jax(lambda x, w, scale, mode="sum": getattr(jnp, mode)(x * w) * scale)
    x = tapegrad.tensor([1.0, 2.0], requires_grad=True)
    y = f(x, jnp.array([3.0, 4.0], jnp.float32), 2.0, mode="mean")
    assert y.item() == 11.0
    y.backward()
    assert x.grad.tolist() == [3.0, 4.0]
    np_w = f(x, np.array([1.0, 1.0], np.float32), 1.0)
    assert np_w.item() == 3.0
    class Options:
        __hash__ = None
    with pytest.raises(TypeError, match="must be hashable"):
        f(x, x, Options())


def test_from_jax_gradcheck_first_and_second_order():
    f = tapegrad.func.from_jax(lambda x, w: jnp.sin(x @ w) * jnp.exp(-w.sum()))
    x = tapegrad.randn(3, 4, dtype=tapegrad.float64, requires_grad=True)
    w = tapegrad.randn(4, 2, dtype=tapegrad.float64, requires_grad=True)
    assert tapegrad.autograd.gradcheck(f, (x, w))
    assert tapegrad.autograd.gradgradcheck(f, (x, w))


def test_from_jax_step_compiles_once_into_one_program(fresh_program_caches, no_program_rent):
    mlp = tapegrad.func.from_jax(_mlp_jax)
    params = _mlp_params(tapegrad)
    x = tapegrad.randn(5, 3, dtype=tapegrad.float64)

    def step():
        out = mlp(params, x)
        (out["y"] ** 2).mean().backward()
        with tapegrad.no_grad():
            for p in params.values():
                p -= 0.1 * p.grad
                p.grad.zero_()

    with counting() as xla:
        for _ in range(4):
            step()
        settled = (xla.compiles, xla.executions)
        info = tapegrad.autograd.backward_cache_info()
        for _ in range(5):
            step()
    assert xla.compiles == settled[0], "the steady step compiled again"
    assert xla.executions - settled[1] == 5, "a steady step is one program"
    assert tapegrad.autograd.backward_cache_info()["hits"] - info["hits"] == 5


def test_from_jax_under_func_grad_and_compile():
    mlp = tapegrad.func.from_jax(_mlp_jax)
    x = tapegrad.randn(5, 3, dtype=tapegrad.float64)
    eager, compiled = _mlp_params(tapegrad), _mlp_params(tapegrad)
    (mlp(eager, x)["y"] ** 2).sum().backward()
    grads = tapegrad.func.grad(lambda p: (mlp(p, x)["y"] ** 2).sum())({k: v.detach() for k, v in eager.items()})
    for k in eager:
        np.testing.assert_allclose(grads[k].numpy(), eager[k].grad.numpy(), rtol=1e-12)

    def step(params, opt):
        opt.zero_grad()
        loss = (mlp(params, x)["y"] ** 2).sum()
        loss.backward()
        opt.step()
        return loss
    opts = {id(p): tapegrad.optim.SGD(p.values(), lr=0.05) for p in (eager, compiled)}
    for p in eager.values():
        p.grad = None
    compiled_step = tapegrad.compile(step)
    for _ in range(3):
        a, b = step(eager, opts[id(eager)]), compiled_step(compiled, opts[id(compiled)])
        np.testing.assert_allclose(a.item(), b.item(), rtol=1e-12)


# ---- a module as a JAX function ---------------------------------------------------------------

def _model():
    nn = tapegrad.nn
    tapegrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 8), nn.BatchNorm1d(8), nn.Tanh(), nn.Linear(8, 2))
    with tapegrad.no_grad():
        model[1].running_mean.uniform_(-0.5, 0.5)
        model[1].running_var.uniform_(0.5, 2.0)
    return model.eval().double()


def test_to_jax_forward_and_gradients_equal_tapegrads():
    model = _model()
    fn, params, buffers = tapegrad.func.to_jax(model)
    assert set(params) | set(buffers) == set(model.state_dict())
    assert set(buffers) == {"1.running_mean", "1.running_var", "1.num_batches_tracked"}
    assert params["0.weight"] is model[0].weight._value   # no copy
    x = np.random.default_rng(2).normal(size=(6, 3))

    y = jax.jit(fn)(params, buffers, jnp.asarray(x))
    ours = model(tapegrad.tensor(x))
    np.testing.assert_allclose(y, ours.detach().numpy(), rtol=1e-12)

    def loss(p, x):
        return (fn(p, buffers, x) ** 2).mean()
    grads = jax.jit(jax.grad(loss))(params, jnp.asarray(x))
    (ours ** 2).mean().backward()
    for name, p in model.named_parameters():
        np.testing.assert_allclose(grads[name], p.grad.numpy(), rtol=1e-10, atol=1e-14)
    assert all(p.requires_grad for p in model.parameters())   # the module is left as it was


def test_to_jax_trains_with_a_hand_written_sgd_as_tapegrad_does():
    model = _model()
    fn, params, buffers = tapegrad.func.to_jax(model)
    rng = np.random.default_rng(3)
    x, target = rng.normal(size=(16, 3)), rng.normal(size=(16, 2))

    @jax.jit
    def sgd_step(params, x, target):
        def loss(p):
            return ((fn(p, buffers, x) - target) ** 2).mean()
        value, grads = jax.value_and_grad(loss)(params)
        return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), value

    opt = tapegrad.optim.SGD(model.parameters(), lr=0.1)
    xt, tt = tapegrad.tensor(x), tapegrad.tensor(target)
    for _ in range(3):
        params, jax_loss = sgd_step(params, jnp.asarray(x), jnp.asarray(target))
        opt.zero_grad()
        loss = ((model(xt) - tt) ** 2).mean()
        loss.backward()
        opt.step()
        np.testing.assert_allclose(jax_loss, loss.item(), rtol=1e-12)
    for name, p in model.named_parameters():
        np.testing.assert_allclose(params[name], p.detach().numpy(), rtol=1e-10, atol=1e-14)
