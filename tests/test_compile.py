"""tapegrad.compile: a whole stateful training step as one program, checked against eager runs.

Compiled and eager runs start from the same seed and draw dropout masks from the same generator, so
losses and parameters agree to float tolerance. The MLP runs are also checked against PyTorch.
Models are tiny: what costs here is compiling, so each test compiles few programs.
"""
import math
import warnings

import numpy as np
import pytest

import tapegrad
from conftest import to_torch
from tapegrad import nn
from tapegrad._compile import Unsupported
from tapegrad._compile._function import _EAGER
from tapegrad._recompiles import RecompileWarning

info = tapegrad.autograd.backward_cache_info


def _same(a, b, rtol=1e-5, atol=1e-6):
    """Two tapegrad tensors (or a tapegrad and a torch tensor) with the same dtype and close values."""
    a = a.detach()
    b = b.detach()
    assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1]
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=rtol, atol=atol)


def _mlp(lib, seed=0):
    lib.manual_seed(seed)
    return lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 2))


def _train_mlp(model, opt, x, y, compile_it, steps=50, lib=tapegrad):
    def step(x, y):
        opt.zero_grad()
        loss = lib.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss
    run = tapegrad.compile(step) if compile_it else step
    return [float(run(x, y)) for _ in range(steps)], run


@pytest.mark.parametrize("opt_name,kwargs", [("SGD", dict(lr=0.05, momentum=0.9)), ("Adam", dict(lr=0.01))])
def test_mlp_50_steps_compiled_matches_pytorch(torch, opt_name, kwargs):
    x, y = tapegrad.randn(6, 4), tapegrad.randn(6, 2)
    model = _mlp(tapegrad)
    opt = getattr(tapegrad.optim, opt_name)(model.parameters(), **kwargs)
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    theirs.load_state_dict({k: to_torch(v) for k, v in model.state_dict().items()})
    topt = getattr(torch.optim, opt_name)(theirs.parameters(), **kwargs)
    losses, run = _train_mlp(model, opt, x, y, True)
    torch_losses, _ = _train_mlp(theirs, topt, to_torch(x), to_torch(y), False, lib=torch)
    np.testing.assert_allclose(losses, torch_losses, rtol=1e-4, atol=1e-5)
    for p, q in zip(model.parameters(), theirs.parameters()):
        _same(p, q, rtol=1e-4, atol=1e-5)
        for k, v in topt.state[q].items():
            _same(opt.state[p][k], v, rtol=1e-4, atol=1e-5)
    assert run._compiled.compiled == 1


class _CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 3, 3)
        self.bn = nn.BatchNorm2d(3)
        self.drop = nn.Dropout(0.25)
        self.fc = nn.Linear(3 * 4 * 4, 2)

    def forward(self, x):
        return self.fc(self.drop(self.bn(self.conv(x)).relu()).flatten(1))


def _cnn_run(compile_it, steps=6):
    tapegrad.manual_seed(0)
    model = _CNN()
    opt = tapegrad.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x, y = tapegrad.randn(4, 1, 6, 6), tapegrad.tensor([0, 1, 1, 0])

    def step(x, y):
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss
    run = tapegrad.compile(step) if compile_it else step
    return [float(run(x, y)) for _ in range(steps)], model, run


def test_cnn_batchnorm_dropout_compiled_matches_eager():
    eager_losses, eager, _ = _cnn_run(False)
    losses, model, run = _cnn_run(True)
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-5, atol=1e-6)
    for (name, a), (_, b) in zip(model.state_dict().items(), eager.state_dict().items()):
        _same(a, b), name
    assert int(model.bn.num_batches_tracked) == 6
    assert run._compiled.compiled == 1


def test_program_inputs_are_only_what_it_reads():
    """A step that draws nothing is called without the generator's key and counter (flattening the key
    costs every call); a step with dropout on a CPU takes its noise, drawn from PyTorch's CPU stream before
    the call, as its one extra input (not the key), and draws what the eager step draws."""
    def programs(fn):
        return [p for p in fn._compiled.programs.values() if p is not _EAGER]

    x = tapegrad.ones(4, requires_grad=True)

    @tapegrad.compile
    def plain(x):
        (x * 2).sin().sum().backward()
        g, x.grad = x.grad, None
        return g

    @tapegrad.compile
    def dropped(x):
        return nn.functional.dropout(x, 0.5).detach() * 1

    grads = [plain(x).numpy() for _ in range(3)]
    (program,) = programs(plain)
    assert program.rest_read == []
    np.testing.assert_allclose(grads, np.full((3, 4), 2 * np.cos(2.0)), rtol=1e-6)

    tapegrad.manual_seed(3)
    compiled = [dropped(x).numpy() for _ in range(3)]
    tapegrad.manual_seed(3)
    eager = [(nn.functional.dropout(x, 0.5).detach() * 1).numpy() for _ in range(3)]
    (program,) = programs(dropped)
    assert len(program.traced.host_draws) == 1 and len(program.rest_read) == 1   # the noise, not key and counter
    for a, b in zip(compiled, eager):
        np.testing.assert_array_equal(a, b)


def _block(lib, d=8, heads=2):
    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = lib.nn.LayerNorm(d)
            self.attn = lib.nn.MultiheadAttention(d, heads, bias=False, batch_first=True)  # a key bias has no gradient
            self.mlp = lib.nn.Sequential(lib.nn.Linear(d, 2 * d), lib.nn.GELU(), lib.nn.Linear(2 * d, d))

        def forward(self, x):
            h = self.norm(x)
            x = x + self.attn(h, h, h, need_weights=False)[0]
            return x + self.mlp(x)
    return Block()


def _block_run(lib, model, x, compile_it, steps=12):
    opt = lib.optim.AdamW(model.parameters(), lr=0.01)
    sched = lib.optim.lr_scheduler.LambdaLR(opt, lambda e: 0.5 * (1 + math.cos(math.pi * e / steps)))

    def step(x):
        opt.zero_grad()
        loss = (model(x) ** 2).mean()
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        opt.step()
        return loss
    run = tapegrad.compile(step) if compile_it else step
    losses = []
    for _ in range(steps):
        losses.append(float(run(x)))
        sched.step()
    return losses, opt, run


def test_transformer_block_adamw_cosine_lambda_lr_clipping_compiled_matches_pytorch(torch):
    tapegrad.manual_seed(0)
    model = _block(tapegrad)
    theirs = _block(torch)
    theirs.load_state_dict({k: to_torch(v) for k, v in model.state_dict().items()})
    x = tapegrad.randn(2, 5, 8)
    losses, opt, run = _block_run(tapegrad, model, x, True)
    torch_losses, topt, _ = _block_run(torch, theirs, to_torch(x), False)
    np.testing.assert_allclose(losses, torch_losses, rtol=1e-4, atol=1e-5)
    for (name, p), q in zip(model.named_parameters(), theirs.parameters()):
        _same(p, q, rtol=1e-3, atol=1e-4)
    assert opt.param_groups[0]["lr"] == pytest.approx(topt.param_groups[0]["lr"])
    assert type(opt.param_groups[0]["lr"]) is float
    assert run._compiled.compiled == 1   # the learning rate is an input: the schedule never recompiles


def compiled_mse_step(model, opt):
    """A training step (zero_grad, MSE loss, backward, optimizer step) compiled with tapegrad.compile."""
    def step(x, y):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss
    return tapegrad.compile(step)


@pytest.mark.usefixtures("fresh_program_caches")
def test_steady_compiled_step_is_one_program_and_compiles_once():
    model = _mlp(tapegrad)
    opt = tapegrad.optim.Adam(model.parameters(), lr=0.01)
    x, y = tapegrad.randn(6, 4), tapegrad.randn(6, 2)
    step = compiled_mse_step(model, opt)
    step(x, y)   # eager: creates the optimizer state
    before = info()
    step(x, y)   # traced and compiled
    compiled = info()
    for _ in range(5):
        step(x, y)
    after = info()
    assert compiled["compiles"] - before["compiles"] >= 1
    assert after["compiles"] == compiled["compiles"], "the steady step compiled again"
    assert after["executions"] - compiled["executions"] == 5, "a steady step is one program execution"
    assert step._compiled.compiled == 1


def test_slices_at_new_offsets_are_inputs_of_one_program(torch):
    """`X[i:i + bs]` passed in: the view's recipe is guarded, its offset is an input (no recompile)."""
    X, Y = tapegrad.randn(40, 4), tapegrad.randn(40, 2)
    model = _mlp(tapegrad)
    opt = tapegrad.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
    theirs.load_state_dict({k: to_torch(v) for k, v in model.state_dict().items()})
    topt = torch.optim.SGD(theirs.parameters(), lr=0.05, momentum=0.9)

    def step(lib, model, opt, x, y):
        opt.zero_grad()
        loss = lib.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss
    compiled = tapegrad.compile(step)
    offsets = [0, 3, 11, 17, 24, 5, 30]
    before = info()
    losses = [float(compiled(tapegrad, model, opt, X[i:i + 8], Y[i:i + 8])) for i in offsets]
    tX, tY = to_torch(X), to_torch(Y)
    torch_losses = [float(step(torch, theirs, topt, tX[i:i + 8], tY[i:i + 8])) for i in offsets]
    np.testing.assert_allclose(losses, torch_losses, rtol=1e-5, atol=1e-6)
    for p, q in zip(model.parameters(), theirs.parameters()):
        _same(p, q, rtol=1e-5, atol=1e-6)
    assert compiled._compiled.compiled == 1, "a new offset traced a new program"
    assert info()["executions"] - before["executions"] >= len(offsets) - 1


def test_in_place_write_through_a_view_argument_reaches_its_base():
    Z = tapegrad.zeros(6)
    expected = np.zeros(6, np.float32)

    @tapegrad.compile
    def bump(v, amount):
        v.add_(amount)
        v[0:1].mul_(2)          # a view of the view argument, written too
        return v.sum()
    for i in range(4):
        total = bump(Z[i:i + 2], tapegrad.tensor(1.0))
        expected[i:i + 2] += 1
        expected[i] *= 2
        assert float(total) == pytest.approx(expected[i:i + 2].sum())
    np.testing.assert_array_equal(Z.numpy(), expected)
    assert bump._compiled.compiled == 1


def test_state_reached_through_parameter_defaults_is_walked():
    model = _mlp(tapegrad)
    opt = tapegrad.optim.SGD(model.parameters(), lr=0.1)
    x, y = tapegrad.randn(6, 4), tapegrad.randn(6, 2)

    def step(x, y, model=model, opt=opt):   # state bound as default values, as in a loop of closures
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss
    compiled = tapegrad.compile(step)
    losses = [float(compiled(x, y)) for _ in range(2)]   # grads absent, then present: two guards
    programs = compiled._compiled.compiled
    losses += [float(compiled(x, y)) for _ in range(3)]
    assert losses == sorted(losses, reverse=True)
    assert compiled._compiled.compiled == programs, "the steady step compiled again"
    assert not any(p is _EAGER for p in compiled._compiled.programs.values())


def test_writing_state_the_walk_cannot_see_runs_eagerly_with_a_warning():
    import types
    holder = types.ModuleType("holder")   # a module: opaque to the walk
    holder.w = tapegrad.zeros(3)

    def bump(x):
        holder.w.add_(x)
        return x.sum()
    compiled = tapegrad.compile(bump)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            compiled(tapegrad.ones(3))
    np.testing.assert_array_equal(holder.w.numpy(), [3.0, 3.0, 3.0])
    assert any("graph break" in str(w.message) for w in caught)


def test_guards_recompile_on_batch_size_training_flag_and_grad_presence():
    tapegrad.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Dropout(0.5))
    w = model[0].weight

    @tapegrad.compile
    def forward_sum(x):
        return model(x).sum()

    def eager(x):
        return model(x).sum()
    x3, x5 = tapegrad.randn(3, 3), tapegrad.randn(5, 3)
    with tapegrad.no_grad():
        model.eval()
        for x in (x3, x3, x5, x5):
            _same(forward_sum(x), eager(x))
        assert forward_sum._compiled.compiled == 2      # one program per batch size
        model.train()
        state = tapegrad.random.get_rng_state()
        got = forward_sum(x3)
        tapegrad.random.set_rng_state(state)
        _same(got, eager(x3))                      # the same dropout mask as eager
        assert forward_sum._compiled.compiled == 3      # model.train() is a new guard

    @tapegrad.compile
    def accumulate(x):
        model(x).sum().backward()
    model.eval()
    accumulate(x3)
    first = w.grad.clone()
    accumulate(x3)                                        # grad present now: a new program
    _same(w.grad, 2 * first)
    model.zero_grad()
    accumulate(x3)                                        # grads None again: the first program
    _same(w.grad, first)
    assert accumulate._compiled.compiled == 2


def test_recompile_limit_warns_once_and_runs_eagerly():
    w = tapegrad.ones(3)

    @tapegrad.compile
    def scaled(x, k):
        return (x * w * k).sum()
    x = tapegrad.ones(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = [float(scaled(x, k)) for k in range(11)]
    assert results == [3.0 * k for k in range(11)]
    recompiles = [w for w in caught if issubclass(w.category, RecompileWarning)]
    assert len(recompiles) == 1 and "recompile limit" in str(recompiles[0].message)
    assert scaled._compiled.compiled == 8


def test_graph_break_warns_once_names_the_line_and_computes_the_right_result():
    w = tapegrad.tensor([1.0, -2.0, 3.0])

    def f(x):
        y = x * w
        if y.sum() > 0:   # data-dependent Python control flow
            return y * 2
        return y

    compiled = tapegrad.compile(f)
    x = tapegrad.tensor([1.0, 1.0, 1.0])
    with pytest.warns(UserWarning, match=r"control flow on a tensor's value.*test_compile.py:\d+ \(if y.sum\(\) > 0:"):
        _same(compiled(x), f(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _same(compiled(-x), f(-x))   # eager from now on, no second warning

    def printing(x):
        print(x.sum())
        return x + 1
    with pytest.warns(UserWarning, match=r"print\(\)"):
        _same(tapegrad.compile(printing)(x), x + 1)


def test_fullgraph_raises_unsupported_naming_the_line():
    def f(x):
        return x * x.sum().item()
    assert issubclass(Unsupported, RuntimeError)
    with pytest.raises(Unsupported, match=r"test_compile.py:\d+ \(return x \* x.sum\(\).item\(\)\)"):
        tapegrad.compile(f, fullgraph=True)(tapegrad.ones(2))
    with pytest.raises(tapegrad._dynamo.exc.Unsupported):
        tapegrad.compile(fullgraph=True)(f)(tapegrad.ones(2))


def test_a_failing_compiled_step_leaves_parameters_grads_and_optimizer_state_unchanged():
    model = _mlp(tapegrad)
    opt = tapegrad.optim.Adam(model.parameters(), lr=0.01)
    x, y = tapegrad.randn(6, 4), tapegrad.randn(6, 2)

    @tapegrad.compile
    def step(x, y, fail=False):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        if fail:
            raise ValueError("bad batch")
        return loss
    for _ in range(3):
        step(x, y)
    params = [p.detach().clone() for p in model.parameters()]
    grads = [p.grad for p in model.parameters()]
    state = {k: v.clone() for k, v in opt.state[model[0].weight].items()}
    versions = [p._version for p in model.parameters()]
    with pytest.raises(ValueError, match="bad batch"):
        step(x, y, fail=True)
    with pytest.raises(RuntimeError):   # a shape error on a new batch shape, found while tracing
        step(tapegrad.randn(6, 5), y)
    for p, before, g, v in zip(model.parameters(), params, grads, versions):
        _same(p.detach(), before)
        assert p.grad is g and p._version == v
    for k, v in opt.state[model[0].weight].items():
        _same(v, state[k])
    step(x, y)   # and training goes on
    assert not any(bool((p.detach() == b).all()) for p, b in zip(model.parameters(), params))


def test_compiled_module_wrapper_matches_pytorch(torch):
    tapegrad.manual_seed(0)
    mod = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    compiled = tapegrad.compile(mod)
    validating = torch.distributions.Distribution._validate_args
    try:
        theirs = torch.compile(torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.BatchNorm1d(3)))
    finally:   # torch.compile switches off torch.distributions' argument checks for the whole process
        torch.distributions.Distribution.set_default_validate_args(validating)
    assert repr(compiled) == repr(theirs).replace("torch", "tapegrad")
    assert list(compiled.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in compiled.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert type(compiled).__name__ == "OptimizedModule" and compiled._orig_mod is mod
    assert compiled.training is mod.training and compiled._orig_mod[0] is mod[0]
    assert compiled.training and compiled.eval() is compiled and not mod.training

    x = tapegrad.randn(4, 2)
    _same(compiled(x), mod(x))         # eval mode: a compiled forward
    _same(compiled(x), mod(x))
    compiled.train()
    out = compiled(x)                         # training: the caller's backward needs the graph
    out.sum().backward()
    assert mod[0].weight.grad is not None and out.grad_fn is not None
    assert tapegrad.compile(mod, disable=True) is mod
    assert tapegrad.compile(mod, dynamic=True, mode="max-autotune", backend="inductor", options={})._orig_mod is mod


def test_device_and_new_tensors_trace_into_one_program(torch):
    # a traced value has no device of its own: it reports the device of the call's inputs
    def fn(lib, x):
        return ((x * 2).to(x.device) + lib.zeros_like(x) + x.new_zeros(3) + x.new_ones(3)
                + x.new_tensor([1.0, 2.0, 3.0]) + x.new_full((3,), 2.0)).sum()
    x = tapegrad.tensor([0.5, -1.0, 2.0], requires_grad=True)
    xt = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    run = tapegrad.compile(lambda x: fn(tapegrad, x), fullgraph=True)
    for _ in range(3):
        assert run(x).item() == fn(torch, xt).item()
    assert x.new_zeros(2).device == x.device and x.new_tensor([1]).dtype is x.dtype
    assert x.new_empty(2).dtype is x.dtype and x.new_full((1,), 1).dtype is x.dtype


class _SlotHolder:
    __slots__ = ("opt",)   # no __dict__: tapegrad.compile does not walk into it


def test_optimizer_reached_only_through_an_unwalked_object_breaks_and_keeps_its_state():
    # its update reads the state as raw values: the trace must still see (and put back) what it wrote
    w = tapegrad.tensor([1.0, -2.0, 3.0], requires_grad=True)
    holder = _SlotHolder()
    holder.opt = tapegrad.optim.Adam([w], lr=0.1)

    def step():
        holder.opt.zero_grad()
        (w * w).sum().backward()
        holder.opt.step()
    step()   # the state exists before the compiled calls
    run = tapegrad.compile(step)
    with pytest.warns(UserWarning, match="reaches only through something tapegrad.compile does not walk"):
        run()
    run()
    state = holder.opt.state[w]
    for t in [w, w.grad, *[v for v in state.values() if isinstance(v, tapegrad.Tensor)]]:
        assert np.all(np.isfinite(np.asarray(t.detach().numpy())))   # concrete values, not leaked tracers
    assert state["step"].item() == 3


def test_a_step_broken_by_a_read_runs_as_programs_around_it(torch):
    """After a graph break the step runs through the tape: its ops before the read and after it are compiled
    as programs of their own once they repeat (PyTorch compiles the graphs around a break)."""
    results = {}
    for lib in (tapegrad, torch):
        model = _mlp(lib)
        opt = lib.optim.Adam(model.parameters(), lr=0.01)
        x, y = lib.ones(6, 4), lib.zeros(6, 2)
        logged = []

        def step(x, y):
            opt.zero_grad()
            loss = lib.nn.functional.mse_loss(model(x), y)
            logged.append(loss.item())   # the break
            loss.backward()
            opt.step()
            return loss
        run = tapegrad.compile(step) if lib is tapegrad else step
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for _ in range(6):
                run(x, y)
        if lib is tapegrad:
            before = tapegrad.autograd.backward_cache_info()
            for _ in range(5):
                run(x, y)
            after = tapegrad.autograd.backward_cache_info()
            assert after["compiles"] == before["compiles"]
            assert after["executions"] - before["executions"] <= 2 * 5   # the forward's, the backward + update's
        else:
            for _ in range(5):
                run(x, y)
        results[lib] = logged
    np.testing.assert_allclose(results[tapegrad], results[torch], rtol=1e-5)
