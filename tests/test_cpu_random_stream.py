"""After the same seed, CPU draws give PyTorch's numbers: creation functions, in-place fills, nn.init,
module initialisation, dropout, data loading, generator state (tapegrad.random, _cpu_generator).

Each test runs the same code under both libraries from the same seed, then checks one more draw from the
default generator: the streams must also have moved on by the same amount.
"""
import warnings

import numpy as np
import pytest

import tapegrad
from conftest import assert_close, both

pytestmark = pytest.mark.usefixtures("torch")

FLOATS = ("float32", "float64", "float16", "bfloat16", "complex64", "complex128")
SIZES = (1, 3, 15, 16, 17, 33, 1000)


def _seeded(seed, build):
    def run(lib):
        lib.manual_seed(seed)
        out = build(lib)
        return out, lib.rand(3)   # where the default stream has got to
    return both(run)


def _same(ours, theirs, rtol=None, atol=None):
    (values, after), (expected, expected_after) = ours, theirs
    for a, b in zip(values, expected):
        assert_close(a, b, rtol=rtol, atol=atol)
    assert_close(after, expected_after)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("fn", ["rand", "randn"])
def test_rand_and_randn(fn, dtype):
    # three calls: the normal sampler keeps the second value of a Box-Muller pair for the next call
    half = dtype in ("float16", "bfloat16")
    for n in SIZES:
        _same(*_seeded(n, lambda lib: [getattr(lib, fn)(n, dtype=getattr(lib, dtype)) for _ in range(3)]),
              rtol=1e-2 if half else 1e-6, atol=1e-2 if half else 1e-6)


@pytest.mark.parametrize("dtype", ["int64", "int32", "int16", "int8", "uint8", "bool", "float32", "float64",
                                   "float16", "bfloat16"])
def test_random_fills_of_every_dtype(dtype):
    def build(lib):
        d = getattr(lib, dtype)
        t = [lib.empty(5, dtype=d).random_(), lib.empty(5, dtype=d).random_(2 if dtype == "bool" else 3)]
        if dtype != "bool":
            t.append(lib.empty(5, dtype=d).random_(0 if dtype == "uint8" else -2, 2))
        return t
    _same(*_seeded(4, build))


def test_integers_permutations_and_normal_with_size():
    def build(lib):
        return [lib.randint(0, 2 ** 40, (4,)), lib.randint(-5, 5, (7,), dtype=lib.float32), lib.randint(3, (4, 4)),
                lib.randint(high=9, size=(3,)), lib.randperm(50), lib.randperm(7, dtype=lib.float32),
                lib.normal(2.0, 3.0, (17,)), lib.normal(2.0, 3.0, (5,)), lib.randint_like(lib.zeros(3), 4),
                lib.normal(lib.zeros(2, 3), 2.0), lib.normal(1.0, lib.ones(20) * 3),
                lib.normal(lib.arange(4.0), lib.ones(4))]
    _same(*_seeded(5, build))


def test_fills_of_strided_tensors_walk_their_memory():
    # a transposed tensor is filled in memory order; a strided one takes the one-at-a-time normal sampler
    def build(lib):
        return [lib.empty(40, 3).t().uniform_(-1, 2), lib.empty(5, 4).t().normal_(1, 2),
                lib.empty(20, 4).normal_(1, 2), lib.empty(3, 4).t().random_(10), lib.empty(8, 6)[:, 1].normal_()]
    _same(*_seeded(6, build))


def test_bernoulli_exponential_and_multinomial():
    # a Python p compares uniform doubles, a tensor p uniforms of its dtype; multinomial without replacement
    # is the Gumbel trick on Exp(1) draws, with replacement a search of the cumulative distribution
    probs = np.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.1, 0.1, 0.3]])

    def build(lib):
        out = []
        for dtype in (lib.float32, lib.float64):
            p = lib.tensor(probs, dtype=dtype)
            out += [lib.empty(2, 4, dtype=dtype).bernoulli_(p), lib.bernoulli(p), lib.bernoulli(lib.ones(7), 0.3),
                    lib.empty(10, dtype=dtype).exponential_(2.0), lib.multinomial(p[0], 2), lib.multinomial(p, 3),
                    lib.multinomial(p, 7, replacement=True), lib.multinomial(p[0], 9, replacement=True),
                    lib.multinomial(p, 1, replacement=True), lib.empty(8, dtype=dtype).geometric_(0.3),
                    lib.empty(4, dtype=dtype).cauchy_(0.5, 2.0), lib.empty(20, dtype=dtype).log_normal_(1.0, 0.5)]
        return out + [lib.empty(6, dtype=lib.int64).geometric_(0.7), lib.empty(5, 4).t().cauchy_()]
    _same(*_seeded(1, build))


@pytest.mark.parametrize("dtype,call", [("float32", "geometric_(1.5)"), ("float32", "geometric_(0)"),
                                        ("float32", "cauchy_(0, -1)"), ("float32", "log_normal_(1, -2)"),
                                        ("int64", "cauchy_()"), ("int64", "log_normal_()"), ("int16", "cauchy_()"),
                                        ("complex64", "geometric_(0.3)"), ("bool", "geometric_(0.3)"),
                                        ("complex128", "cauchy_()")])
def test_fill_errors_are_pytorchs(dtype, call, torch):
    def fail(lib):
        with pytest.raises(Exception) as caught:
            eval(f"t.{call}", {"t": lib.empty(3, dtype=getattr(lib, dtype))})
        return type(caught.value), str(caught.value)
    (ours, our_text), (theirs, their_text) = both(fail)
    assert ours is theirs and our_text.startswith(their_text.split(" but you specified")[0])
    if "specified" in their_text:
        assert our_text.split("specified ")[1].startswith(their_text.split("specified ")[1])


def test_a_refused_fill_draws_nothing():
    def build(lib):
        w = lib.zeros(3, requires_grad=True)
        for fill in (lambda: w.uniform_(), lambda: w.normal_(), lambda: w.random_(3), lambda: w.bernoulli_(0.5)):
            with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
                fill()
        return []
    _same(*_seeded(2, build))


def test_fill_node_names_are_pytorchs():
    def build(lib):
        x = lib.zeros(3, requires_grad=True)
        names = []
        for method, args in (("geometric_", (0.3,)), ("cauchy_", ()), ("log_normal_", ()), ("exponential_", ()),
                             ("uniform_", ()), ("normal_", ()), ("random_", (5,)), ("bernoulli_", (0.5,))):
            y = x * 1
            getattr(y, method)(*args)
            names.append(y.grad_fn.name())
        return names
    ours, theirs = both(build)
    assert ours == theirs


def test_random_pruning():
    def build(lib):
        import importlib
        prune = importlib.import_module(lib.__name__ + ".nn.utils.prune")
        a, b = lib.nn.Linear(4, 3), lib.nn.Conv2d(4, 6, 3)
        prune.random_unstructured(a, "weight", amount=0.5)
        prune.random_structured(b, "weight", amount=0.5, dim=0)
        return [a.weight_mask, b.weight_mask]
    _same(*_seeded(20, build))


def test_gamma_and_poisson_samplers():
    # PyTorch's rejection samplers, value by value (thousands of draws: rejections happen)
    def build(lib):
        rates = lib.tensor([0.5, 3.0, 12.0, 40.0, 0.0, 9.9, 150.0])
        return [lib._standard_gamma(lib.tensor([0.3, 0.9, 1.0, 2.5, 7.0, 0.05, 0.0])),
                lib._standard_gamma(lib.full((3000,), 0.5)),
                lib._standard_gamma(lib.full((500,), 4.0, dtype=lib.float64)),
                lib.poisson(rates), lib.poisson(lib.linspace(0, 30, 2000)),
                lib.poisson(rates.double().reshape(7, 1).expand(7, 3))]
    _same(*_seeded(3, build), rtol=0, atol=0)


def test_poisson_rates_outside_its_domain_and_empty_draws():
    # PyTorch's error for a negative or nan rate (before any draw here), its int64 cast of an infinite
    # rate's draw, and empty draws that leave a fresh generator's state as it was
    def build(lib):
        for rate in (float("nan"), -1.0):
            with pytest.raises(RuntimeError, match="invalid Poisson rate, expected rate to be non-negative"):
                lib.poisson(lib.tensor([rate, 3.0]))
        drawn = lib.poisson(lib.tensor([float("inf"), 3.0, 12.0]))
        lib.manual_seed(5)
        lib.poisson(lib.tensor([])), lib._standard_gamma(lib.tensor([]))
        return [drawn, lib.tensor(list(lib.get_rng_state().tolist()))]
    _same(*_seeded(3, build), rtol=0, atol=0)


def test_small_and_strided_normals_are_pytorchs_bit_for_bit():
    # one Box-Muller pair at a time with glibc's log1p, cos and sin, as ATen's serial sampler
    def build(lib):
        return [lib.randn(5, dtype=lib.float64), lib.randn(3), lib.randn(7, dtype=lib.float64),
                lib.empty(4, 6, dtype=lib.float64).t().normal_()]
    for seed in range(40):
        _same(*_seeded(seed, build), rtol=0, atol=0)


def test_gamma_sampler_at_alphas_outside_its_domain():
    # nan, infinite, zero and negative alphas: PyTorch's loop and clamp (its draws and where its stream ends)
    def build(lib):
        edges = [float("nan"), float("inf"), 0.0, -1.0, -2 / 3, -0.5, 1 / 3, 2.0]
        return [lib._standard_gamma(lib.tensor(edges)), lib._standard_gamma(lib.tensor(edges, dtype=lib.float64))]
    _same(*_seeded(4, build), rtol=0, atol=0)


def test_gamma_gradient_is_the_implicit_one():
    # JAX's implicit reparameterisation gradient at PyTorch's draws; PyTorch's own is an approximation of it
    def build(lib):
        alpha = lib.tensor([0.3, 0.9, 1.0, 2.5, 7.0, 0.05], requires_grad=True)
        lib._standard_gamma(alpha).sum().backward()
        return [alpha.grad]
    _same(*_seeded(3, build), rtol=1e-3)


def test_distribution_samples():
    def build(lib):
        D = lib.distributions
        made = [D.Normal(lib.zeros(3), lib.ones(3)), D.Uniform(lib.zeros(3), lib.ones(3)),
                D.Categorical(probs=lib.tensor([0.2, 0.3, 0.5])), D.Bernoulli(probs=lib.tensor([0.2, 0.7])),
                D.Exponential(lib.ones(3)), D.MultivariateNormal(lib.zeros(2), lib.eye(2)),
                D.Laplace(lib.zeros(2), lib.ones(2)), D.OneHotCategorical(lib.tensor([0.2, 0.8])),
                D.Gamma(lib.ones(3) * 2, lib.ones(3)), D.Beta(lib.tensor([2.0, 0.5]), lib.ones(2) * 3),
                D.Poisson(lib.ones(2) * 4)]
        return [d.sample((4,)) for d in made]
    _same(*_seeded(3, build), rtol=1e-5, atol=1e-6)


def test_generators_have_their_own_streams():
    def build(lib):
        g = lib.Generator().manual_seed(7)
        return [lib.rand(3, generator=g), lib.randn(20, generator=g), lib.randperm(9, generator=g),
                lib.empty(4).uniform_(generator=g), lib.rand(2)]
    _same(*_seeded(0, build))


@pytest.mark.parametrize("seed", [0, 1, -1, 2 ** 40 + 5, 2 ** 63, 2 ** 64 - 1])
def test_seeds_are_pytorchs(seed, torch):
    ours, theirs = both(lambda lib: (lib.manual_seed(seed).initial_seed(), lib.rand(3)))
    assert ours[0] == theirs[0]
    assert_close(ours[1], theirs[1])
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        tapegrad.manual_seed(2 ** 64)


def test_rng_state_is_pytorchs_bytes(torch):
    def build(lib):
        lib.manual_seed(8)
        fresh = lib.get_rng_state()
        lib.randn(3)           # leaves the second value of a pair for the next draw
        lib.rand(700)          # past one regeneration of the Mersenne Twister's state
        return fresh, lib.get_rng_state()
    ours, theirs = both(build)
    for a, b in zip(ours, theirs):
        assert a.dtype is tapegrad.uint8 and a.numpy().tobytes() == b.numpy().tobytes()
    # PyTorch's state restores tapegrad's stream, and tapegrad's own round-trips
    torch.manual_seed(8)
    torch.randn(3)
    tapegrad.set_rng_state(tapegrad.tensor(torch.get_rng_state().numpy()))
    assert_close(tapegrad.randn(5), torch.randn(5))
    saved = tapegrad.get_rng_state()
    x = tapegrad.randn(7)
    tapegrad.set_rng_state(saved)
    assert_close(tapegrad.randn(7), torch.tensor(x.numpy()))
    with pytest.raises(RuntimeError, match="Expected a CPUGeneratorImplState of size 5056"):
        tapegrad.set_rng_state(tapegrad.zeros(10, dtype=tapegrad.uint8))
    with pytest.raises(TypeError, match="RNG state must be a torch.ByteTensor"):
        tapegrad.set_rng_state(tapegrad.zeros(5056, dtype=tapegrad.int64))


def test_fork_rng_puts_the_stream_back():
    def build(lib):
        inside = []
        with lib.random.fork_rng():
            inside.append(lib.randn(5))
            lib.nn.functional.dropout(lib.ones(8), 0.5)
        with lib.random.fork_rng(enabled=False):
            inside.append(lib.rand(2))
        return inside + [lib.randn(5)]
    _same(*_seeded(9, build))


def test_rng_state_keeps_dropouts_key_draws_too():
    # draws under tapegrad.compile on other devices use jax.random keys: a saved state restores them too
    tapegrad.manual_seed(0)
    gen = tapegrad.random.default_generator
    gen.next_key()
    state = tapegrad.get_rng_state()
    first = np.asarray(tapegrad.random.jax.random.key_data(gen.next_key()))
    tapegrad.set_rng_state(state)
    assert (np.asarray(tapegrad.random.jax.random.key_data(gen.next_key())) == first).all()


def _modules(lib):
    nn = lib.nn
    return {
        "Linear": lambda: nn.Linear(5, 3), "Bilinear": lambda: nn.Bilinear(3, 4, 2),
        "Conv1d": lambda: nn.Conv1d(2, 3, 3), "Conv2d": lambda: nn.Conv2d(3, 4, 3),
        "Conv3d": lambda: nn.Conv3d(2, 2, 2),
        "ConvTranspose2d": lambda: nn.ConvTranspose2d(3, 2, 3), "depthwise": lambda: nn.Conv2d(4, 4, 3, groups=4),
        "Embedding": lambda: nn.Embedding(10, 4, padding_idx=1), "EmbeddingBag": lambda: nn.EmbeddingBag(10, 4),
        "RNN": lambda: nn.RNN(3, 4, 2), "LSTM": lambda: nn.LSTM(3, 4, bidirectional=True, proj_size=2),
        "GRU": lambda: nn.GRU(3, 4, batch_first=True), "LSTMCell": lambda: nn.LSTMCell(3, 4),
        "GRUCell": lambda: nn.GRUCell(3, 4), "RNNCell": lambda: nn.RNNCell(3, 4),
        "MultiheadAttention": lambda: nn.MultiheadAttention(8, 2),
        "MultiheadAttention kv": lambda: nn.MultiheadAttention(8, 2, kdim=3, vdim=5, add_bias_kv=True),
        "TransformerEncoderLayer": lambda: nn.TransformerEncoderLayer(8, 2, 16),
        "TransformerDecoderLayer": lambda: nn.TransformerDecoderLayer(8, 2, 16),
        "Transformer": lambda: nn.Transformer(8, 2, 1, 1, 16),
        "PReLU": lambda: nn.PReLU(3), "norms": lambda: nn.Sequential(nn.LayerNorm(4), nn.BatchNorm2d(3),
                                                                      nn.GroupNorm(2, 4), nn.RMSNorm(4)),
    }


@pytest.mark.parametrize("name", list(_modules(tapegrad)))
def test_module_initialisation_is_pytorchs(name):
    def build(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = _modules(lib)[name]()
        return list(module.state_dict().values())
    _same(*_seeded(11, build), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shape", [(6, 10), (10, 6)])
@pytest.mark.parametrize("init", ["uniform_", "normal_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
                                  "kaiming_normal_", "trunc_normal_", "trunc_normal_ narrow", "orthogonal_",
                                  "sparse_"])
def test_nn_init_is_pytorchs(init, shape):
    calls = {"uniform_": lambda nn, t: nn.init.uniform_(t, -2, 3), "normal_": lambda nn, t: nn.init.normal_(t, 1, 2),
             "xavier_uniform_": lambda nn, t: nn.init.xavier_uniform_(t, gain=2),
             "xavier_normal_": lambda nn, t: nn.init.xavier_normal_(t),
             "kaiming_uniform_": lambda nn, t: nn.init.kaiming_uniform_(t, nonlinearity="relu"),
             "kaiming_normal_": lambda nn, t: nn.init.kaiming_normal_(t, mode="fan_out"),
             "trunc_normal_": lambda nn, t: nn.init.trunc_normal_(t, std=0.02),
             "trunc_normal_ narrow": lambda nn, t: nn.init.trunc_normal_(t, mean=0, std=1, a=0.5, b=0.7),
             "orthogonal_": lambda nn, t: nn.init.orthogonal_(t), "sparse_": lambda nn, t: nn.init.sparse_(t, 0.5)}
    _same(*_seeded(5, lambda lib: [calls[init](lib.nn, lib.empty(*shape))]), rtol=1e-5, atol=1e-6)


def test_dropout_noise_is_pytorchs():
    def build(lib):
        nn, F = lib.nn, lib.nn.functional
        x = lib.ones(4, 6)
        out = [F.dropout(x, 0.3), F.dropout2d(lib.ones(2, 3, 2, 2), 0.5), F.alpha_dropout(x, 0.2, True),
               F.dropout1d(lib.ones(2, 3, 4), 0.5), lib.empty(20).bernoulli_(0.3)]
        mlp = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 2))
        lstm = nn.LSTM(3, 4, num_layers=3, dropout=0.3)
        mha = nn.MultiheadAttention(8, 2, dropout=0.4)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.2)
        h = lib.ones(3, 2, 8)
        signed = lib.randn(4, 5).t()
        return out + [mlp(x), lstm(lib.ones(5, 2, 3))[0], mha(h, h, h)[0], layer(h * lib.arange(8.0)),
                      F.rrelu(signed, training=True), F.rrelu(signed.double(), 0.1, 0.9, training=True),
                      F.gumbel_softmax(signed, tau=0.5), F.gumbel_softmax(signed, hard=True)]
    _same(*_seeded(0, build), rtol=1e-5, atol=1e-6)


def test_a_compiled_step_draws_what_the_eager_step_draws():
    # tapegrad.compile takes CPU draws as program inputs, drawn before each call: the same numbers
    def step(x):
        return tapegrad.nn.functional.dropout(x, 0.5) + tapegrad.rand(4) + tapegrad.empty(4).normal_()
    compiled = tapegrad.compile(step)
    x = tapegrad.ones(4)
    runs = []
    for fn in (compiled, step):
        tapegrad.manual_seed(2)
        runs.append([fn(x).numpy() for _ in range(3)] + [tapegrad.rand(2).numpy()])
    for a, b in zip(*runs):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert compiled._compiled.compiled == 1


def test_a_failed_compiled_call_puts_the_stream_back():
    # state is committed only when a program succeeds: the draws a failing call made are undone
    @tapegrad.compile
    def step(x, index):
        return tapegrad.nn.functional.dropout(x, 0.5)[index].sum()
    x = tapegrad.ones(4)
    step(x, tapegrad.tensor([0, 1]))
    step(x, tapegrad.tensor([2, 3]))
    tapegrad.manual_seed(5)
    expected = tapegrad.rand(3).numpy()
    tapegrad.manual_seed(5)
    with pytest.raises(IndexError):
        step(x, tapegrad.tensor([0, 9]))
    np.testing.assert_array_equal(tapegrad.rand(3).numpy(), expected)


def test_data_loading_visits_pytorchs_order():
    def build(lib):
        from importlib import import_module
        data = import_module(lib.__name__ + ".utils.data")
        ds = data.TensorDataset(lib.arange(10.0), lib.arange(10))
        out = [lib.tensor(data.random_split(ds, [7, 3])[0].indices)]
        for _ in range(2):   # each epoch draws a fresh order (and a base seed, with or without workers)
            out += [y for _, y in data.DataLoader(ds, batch_size=4, shuffle=True)]
        out += [y for _, y in data.DataLoader(ds, batch_size=4)]
        out.append(lib.tensor(list(data.RandomSampler(range(50), replacement=True, num_samples=40))))
        out.append(lib.tensor(list(data.SubsetRandomSampler([3, 4, 5, 6]))))
        out.append(lib.tensor(list(data.RandomSampler(range(5), num_samples=12))))
        out.append(lib.tensor(list(data.WeightedRandomSampler([0.1, 0.9, 0.5], 6))))
        out.append(lib.tensor(list(data.WeightedRandomSampler([0.1, 0.9, 0.5, 2.0], 3, replacement=False))))
        g = lib.Generator().manual_seed(3)
        out += [y for _, y in data.DataLoader(ds, batch_size=5, shuffle=True, generator=g)]
        return out
    _same(*_seeded(0, build))


def test_a_seeded_training_run_prints_pytorchs_losses():
    # the promise of the random stream: a seeded script prints the same numbers, dropout and shuffling too
    def build(lib):
        from importlib import import_module
        data = import_module(lib.__name__ + ".utils.data")
        nn = lib.nn
        x, y = lib.randn(64, 8), lib.randint(0, 3, (64,))
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Dropout(0.2), nn.Linear(16, 3))
        opt = lib.optim.SGD(model.parameters(), lr=0.1)
        losses = []
        for _ in range(2):
            for xb, yb in data.DataLoader(data.TensorDataset(x, y), batch_size=16, shuffle=True):
                opt.zero_grad()
                loss = nn.functional.cross_entropy(model(xb), yb)
                loss.backward()
                opt.step()
                losses.append(loss.detach())
        return [lib.stack(losses)]
    _same(*_seeded(42, build), rtol=1e-4, atol=1e-5)

