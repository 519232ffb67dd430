"""The 'meta' device against PyTorch's: tensors with a shape and a dtype but no data. Each expression runs under
both libraries; its repr (or its error's type and text) is compared, module names folded."""
import pytest

import tapegrad

from conftest import fold_repr, require

torch = require("torch")

SETUP = """
m = lib.ones(2, 3, device="meta")
p = lib.nn.Parameter(lib.empty(3, device="meta"))
c = lib.ones(2, 3)
"""

EXPRESSIONS = [
    "m", "m.device", "m.is_meta", "m.shape", "m.dtype", "m + 1", "m * m", "(m @ m.t()).shape", "m.sum()", "m.sum(0)",
    "m.double()", "m.int()", "m.to('meta')", "m.to('cpu')", "m.cpu()", "m.numpy()", "m.tolist()", "m.sum().item()",
    "float(m.sum())", "m + c", "c + m", "m + lib.tensor(2.0)", "lib.zeros(2, device='meta')",
    "lib.randn(2, device='meta')", "lib.rand(2, 2, device='meta', dtype=lib.float64)",
    "lib.randint(0, 5, (3,), device='meta')", "lib.randperm(4, device='meta')", "lib.arange(3, device='meta')",
    "lib.eye(3, device='meta')", "lib.full((2,), 3.0, device='meta')", "lib.tensor([1.0, 2.0], device='meta')",
    "lib.empty_like(m)", "lib.zeros_like(c, device='meta')", "lib.rand_like(m)", "m.new_zeros(4)", "m[0]",
    "m.view(3, 2)", "p", "p * 2", "(p * 2).requires_grad", "c.to('meta')", "m.clone()", "lib.cat([m, m])",
    "lib.stack([m, m])", "m.abs_()", "m.zero_()", "m.uniform_()", "m.normal_()", "m == m", "m.mean()",
    "m.softmax(-1)", "m.data_ptr()", "m.sum().backward()",
    "lib.nn.functional.cross_entropy(m, lib.zeros(2, dtype=lib.long, device='meta'))",
]


def _run(lib, code):
    scope = {"lib": lib}
    exec(SETUP, scope)
    try:
        return fold_repr(repr(eval(code, scope)))
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        return type(e).__name__, str(e)


@pytest.mark.parametrize("code", EXPRESSIONS)
def test_meta_tensors_as_torch(code):
    ours, theirs = _run(tapegrad, code), _run(torch, code)
    if type(theirs) is tuple:   # PyTorch's error: its type, and its text first (tapegrad may add how to fix it)
        assert type(ours) is tuple and ours[0] == theirs[0] and ours[1].startswith(theirs[1]), (ours, theirs)
    else:
        assert ours == theirs


def _model(lib, **kwargs):
    nn = lib.nn
    return nn.Sequential(nn.Linear(4, 8, **kwargs), nn.ReLU(), nn.LayerNorm(8, **kwargs), nn.Linear(8, 2, **kwargs))


def test_a_model_built_on_the_meta_device_draws_nothing_and_allocates_on_to_empty():
    """Building on the meta device consumes no random numbers (the next CPU draw is PyTorch's), runs forward on
    shapes only, refuses to copy out, and gets storage with to_empty."""
    def run(lib):
        lib.manual_seed(0)
        with lib.device("meta"):
            model = _model(lib)
            r = lib.randn(3)
        out = model(lib.randn(5, 4, device="meta"))
        drawn = lib.rand(3).tolist()
        try:
            model.to("cpu")
            refused = None
        except NotImplementedError as e:
            refused = str(e)
        model.to_empty(device="cpu")
        return (model[0].weight.is_meta, fold_repr(repr(r)),
                fold_repr(repr(out)), drawn, refused, [p.is_meta for p in model.parameters()],
                [tuple(p.shape) for p in model.parameters()])
    assert run(tapegrad) == run(torch)


def test_a_backward_through_meta_tensors_gives_meta_gradients():
    def run(lib):
        model = lib.nn.Linear(2, 3).to("meta")
        loss = (model(lib.ones(4, 2, device="meta")) ** 2).sum()
        loss.backward()
        (g,) = lib.autograd.grad((model.weight * 2).sum(), [model.weight])
        return fold_repr(repr(model.weight.grad)), fold_repr(repr(model.bias.grad)), fold_repr(repr(g))
    assert run(tapegrad) == run(torch)


def test_functional_call_runs_a_meta_skeleton_on_real_parameters():
    """The model-ensembling pattern: a copy of a model moved to the meta device holds no data, and
    functional_call runs it on stacked real parameters under vmap."""
    def run(lib):
        lib.manual_seed(0)
        models = [lib.nn.Linear(3, 2) for _ in range(4)]
        params, buffers = lib.func.stack_module_state(models)
        import copy
        base = copy.deepcopy(models[0]).to("meta")
        x = lib.randn(5, 3)
        out = lib.func.vmap(lambda p, b, x: lib.func.functional_call(base, (p, b), (x,)), in_dims=(0, 0, None))(
            params, buffers, x)
        return out.detach().tolist()
    ours, theirs = run(tapegrad), run(torch)
    assert tapegrad.allclose(tapegrad.tensor(ours), tapegrad.tensor(theirs), atol=1e-6)


@pytest.mark.parametrize("code", ["m.nonzero()", "m[m > 0]", "lib.unique(m)", "m.masked_select(m > 0)",
                                  "lib.nonzero(m, as_tuple=True)"])
def test_ops_whose_size_depends_on_values_refuse_meta_tensors_as_torch(code):
    """PyTorch's meta kernels have no data-independent size for these: NotImplementedError, in both."""
    for lib in (tapegrad, torch):
        with pytest.raises(NotImplementedError):
            eval(code, {"lib": lib, "m": lib.zeros(3, device="meta")})


def test_to_empty_without_recursion_moves_only_the_modules_own_tensors():
    def run(lib):
        model = lib.nn.Sequential(lib.nn.Linear(2, 3, device="meta"))
        model.register_buffer("scale", lib.ones(3, device="meta"))
        model.to_empty(device="cpu", recurse=False)
        return model.scale.is_meta, model[0].weight.is_meta
    assert run(tapegrad) == run(torch)
