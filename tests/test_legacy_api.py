"""PyTorch's legacy and device-probing API against real PyTorch: Variable, FloatTensor & co., Tensor.type(),
is_tensor & co., default dtype and print options end to end, torch.cuda, torch.accelerator, torch.backends."""
import os
import warnings

import jax
import numpy as np
import pytest

import tapegrad
from conftest import both, fold_repr, require

torch = require("torch")

CLASSES = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "LongTensor", "IntTensor", "ShortTensor",
           "ByteTensor", "CharTensor", "BoolTensor"]
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64", "complex128"]
HAS_GPU = tapegrad.cuda.is_available()


def _set_torch_deterministic(mode, *, warn_only=False):
    # what torch.use_deterministic_algorithms sets, without the import of Inductor's config it also does (2 s)
    torch._C._set_deterministic_algorithms(mode, warn_only=warn_only)


@pytest.fixture(autouse=True)
def _restore_flags():
    yield
    for lib in (tapegrad, torch):
        lib.set_printoptions(profile="default")
        for name, value in dict(enabled=True, benchmark=False, deterministic=False, allow_tf32=True).items():
            setattr(lib.backends.cudnn, name, value)
    torch.set_float32_matmul_precision("highest")
    tapegrad.use_deterministic_algorithms(False)
    _set_torch_deterministic(False)
    tapegrad.set_float32_matmul_precision("highest")


def outcome(fn):
    """What fn does, comparable across the libraries: its folded repr, or its exception type and message."""
    try:
        return fold_repr(repr(fn()))
    except Exception as e:
        return type(e).__name__, str(e)


def assert_same_outcomes(ours, theirs):
    """Equal results; for errors the same type, and our message starts with PyTorch's (then says how to fix)."""
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if isinstance(b, tuple):
            assert isinstance(a, tuple) and a[0] == b[0], (a, b)
            assert a[1].startswith(b[1].split("\n")[0]), (a, b)
        else:
            assert a == b


# ---- Variable ----------------------------------------------------------------------------------

def test_variable_returns_a_tensor_sharing_data():
    def build(lib):
        Variable = lib.autograd.Variable
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        v = Variable(y)
        w = Variable(y, requires_grad=True)
        plain = lib.tensor([1.0, 2.0])
        alias = Variable(plain)
        alias.add_(1)   # shares plain's storage
        return [repr(v), v.is_leaf, v.grad_fn is None, repr(w), w.is_leaf, Variable(x) is x, repr(Variable()),
                repr(plain), type(v) is lib.Tensor, isinstance(lib.tensor(1), Variable),
                isinstance(lib.nn.Parameter(lib.zeros(1)), Variable), isinstance(1, Variable),
                repr(Variable(lib.tensor([1.0]), True))]

    ours, theirs = both(build)
    assert [fold_repr(o) for o in ours] == [fold_repr(t) for t in theirs]


def test_variable_errors():
    def build(lib):
        Variable = lib.autograd.Variable
        return [outcome(lambda: Variable([1, 2])), outcome(lambda: Variable(1.0)),
                outcome(lambda: Variable(lib.tensor([1, 2]), requires_grad=True)),
                outcome(lambda: Variable(lib.tensor([1.0]), foo=1))]

    assert_same_outcomes(*both(build))
    for lib in (tapegrad, torch):
        with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
            lib.autograd.Variable(lib.tensor([1.0]), volatile=True)


# ---- typed tensor classes ------------------------------------------------------------------------

def test_typed_classes_construct_like_torch():
    def build(lib):
        out = []
        for name in CLASSES:
            cls = getattr(lib, name)
            sized = cls(2, 3)
            out += [repr(cls([1, 0, 2])), repr(cls((2, 3))), repr(cls()), tuple(sized.shape), str(sized.dtype),
                    tuple(cls(lib.Size([1, 2])).shape), cls.__name__, fold_repr(repr(cls)), type(cls).__name__,
                    str(cls.dtype), issubclass(cls, lib.Tensor), type(cls([1])) is lib.Tensor]
        out += [repr(lib.LongTensor([1.5, -2.7])), repr(lib.FloatTensor(np.array([1, 2]))),
                repr(lib.FloatTensor([[1, 2], [3, 4]])), tuple(lib.FloatTensor(np.int64(2)).shape),
                repr(lib.FloatTensor([1.0], device="cpu"))]
        return [fold_repr(o) for o in out]

    ours, theirs = both(build)
    assert ours == theirs


def test_isinstance_is_a_dtype_check():
    def build(lib):
        tensors = [lib.tensor([0], dtype=getattr(lib, d)) for d in DTYPES] + [lib.nn.Parameter(lib.tensor([0.0])), 3]
        return [[isinstance(t, getattr(lib, name)) for t in tensors] for name in CLASSES]

    ours, theirs = both(build)
    assert ours == theirs


def test_typed_class_of_a_tensor_is_an_alias():
    def build(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a = lib.tensor([1.0, 2.0])
        b = lib.FloatTensor(a)
        b.add_(1)
        return [fold_repr(lib.FloatTensor(x)), b is a, fold_repr(a)]

    ours, theirs = both(build)
    assert ours == theirs


def test_typed_class_errors():
    def build(lib):
        F = lib.FloatTensor
        return [outcome(lambda: F(2.5)), outcome(lambda: F(True)), outcome(lambda: F("a")), outcome(lambda: F(-1)),
                outcome(lambda: F(2, 3.0)), outcome(lambda: F(2, device="cuda")),
                outcome(lambda: F([1.0], requires_grad=True))]

    assert_same_outcomes(*both(build))
    # PyTorch names C++ types in this one (float, long int); the type and the phrase are what match
    for lib in (tapegrad, torch):
        with pytest.raises(TypeError, match=r"^expected TensorOptions\(dtype="):
            lib.FloatTensor(lib.tensor([1, 2]))


# ---- Tensor.type() --------------------------------------------------------------------------------

def test_type_strings():
    ours, theirs = both(lambda lib: [lib.tensor([0], dtype=getattr(lib, d)).type() for d in DTYPES])
    assert ours == theirs


def test_type_conversions_are_differentiable():
    def build(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        results = [x.type(lib.float64), x.type("torch.DoubleTensor"), x.type(lib.DoubleTensor), x.type(lib.LongTensor),
                   x.type("torch.HalfTensor"), x.type(lib.float64, True),
                   x.double().type(lib.Tensor), x.double().type("torch.Tensor")]
        (results[0] * results[1] * results[2]).sum().backward()
        same = [x.type(lib.float32) is x, x.type("torch.FloatTensor") is x, x.type(lib.FloatTensor) is x,
                fold_repr(lib.nn.Linear(1, 1).type(lib.DoubleTensor).weight.dtype)]
        return [fold_repr(r) for r in results] + same + [fold_repr(x.grad)]

    ours, theirs = both(build)
    assert ours == theirs


def test_type_errors():
    def build(lib):
        x = lib.tensor([1.0])
        return [outcome(lambda: x.type("float")), outcome(lambda: x.type("torch.foo")),
                outcome(lambda: x.type("DoubleTensor")), outcome(lambda: x.type(3)), outcome(lambda: x.type(float)),
                outcome(lambda: x.type(lib.float64, foo=1))]

    assert_same_outcomes(*both(build))


# ---- is_tensor & co. -----------------------------------------------------------------------------------

def test_predicates():
    def build(lib):
        tensors = [lib.tensor([[0, 1, 0], [1, 0, 1]], dtype=getattr(lib, d))
                   for d in ("int64", "float32", "complex64", "bool")]
        out = [[lib.is_tensor(t), lib.is_storage(t), lib.is_floating_point(t), lib.is_complex(t), lib.numel(t)]
               for t in tensors]
        out += [lib.is_tensor([1]), lib.is_tensor(lib.nn.Parameter(lib.zeros(1))), lib.is_storage([1])]
        out += [outcome(lambda: lib.is_floating_point(1.0)), outcome(lambda: lib.is_complex(1j)),
                outcome(lambda: lib.numel([1]))]
        return out

    assert_same_outcomes(*both(build))


# ---- default dtype and print options, end to end --------------------------------------------------

def test_default_dtype_float64_end_to_end():
    def build(lib):
        lib.manual_seed(0)
        lib.set_default_dtype(lib.float64)
        made = [lib.tensor([1.0]), lib.tensor([1, 2.5]), lib.tensor(1j), lib.zeros(2), lib.rand(2), lib.ones(1) * 1.5,
                lib.tensor([1]) / 2, lib.FloatTensor([1.5])]
        out = [fold_repr(t.dtype) for t in made] + [fold_repr(made[0]), fold_repr(made[-1])]
        lib.set_default_dtype(lib.float32)
        return out + [fold_repr(lib.tensor([1.5], dtype=lib.float64))]

    ours, theirs = both(build)
    assert ours == theirs


def test_default_dtype_errors_and_legacy_setter():
    def build(lib):
        out = [outcome(lambda: lib.set_default_dtype(float)), outcome(lambda: lib.set_default_dtype(lib.int32))]
        with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated"):
            lib.set_default_tensor_type(lib.DoubleTensor)
        out.append(fold_repr(lib.get_default_dtype()))
        with warnings.catch_warnings():   # PyTorch warns once per process
            warnings.simplefilter("ignore")
            lib.set_default_tensor_type("torch.FloatTensor")
        return out + [fold_repr(lib.get_default_dtype())]

    assert_same_outcomes(*both(build))


@pytest.mark.parametrize("options", [dict(precision=2, sci_mode=True), dict(threshold=5, edgeitems=1, linewidth=30),
                                     dict(profile="short"), dict(profile="full")], ids=str)
def test_printoptions_change_tensor_repr(options):
    values = [np.arange(1200, dtype=np.float32) / 7, np.array([1e-5, 1.0, 123.456789]), np.arange(8).reshape(2, 4)]

    def build(lib):
        lib.set_printoptions(**options)
        return [fold_repr(lib.tensor(v)) for v in values]

    ours, theirs = both(build)
    assert ours == theirs
    assert tapegrad.get_printoptions() == torch._tensor_str.get_printoptions()


# ---- torch.cuda, torch.accelerator ------------------------------------------------------------------------

def test_cuda_module():
    c = tapegrad.cuda
    probe = [c.is_available(), c.device_count(), c.empty_cache(), c.manual_seed(0), c.manual_seed_all(0),
             c.memory_allocated(), c.is_initialized()]
    if not HAS_GPU:   # PyTorch's CPU build is the oracle
        t = torch.cuda
        assert probe == [t.is_available(), t.device_count(), t.empty_cache(), t.manual_seed(0), t.manual_seed_all(0),
                         t.memory_allocated(), t.is_initialized()]
        for name in ("current_device", "synchronize", "get_device_name", "get_device_capability", "initial_seed"):
            assert_same_outcomes([outcome(getattr(c, name))], [outcome(getattr(t, name))])
        assert_same_outcomes([outcome(lambda: c.FloatTensor([1.0]))], [outcome(lambda: t.FloatTensor([1.0]))])
    else:
        gpus = jax.devices("gpu")
        assert probe[:2] == [True, len(gpus)] and c.current_device() == 0
        assert c.get_device_name() == gpus[0].device_kind
        assert c.FloatTensor([1.0]).device.type == "cuda" and isinstance(c.FloatTensor([1.0]), c.FloatTensor)
        c.synchronize()


def test_device_idiom_runs():
    def build(lib):
        device = "cuda" if lib.cuda.is_available() else "cpu"
        x = lib.tensor([1.0, 2.0]).to(device)
        return [str((x + 1).cpu().tolist()), x.type().replace(".cuda", "")]

    ours, theirs = both(build)
    assert ours == theirs


def test_accelerator():
    a = tapegrad.accelerator
    if a.is_available():
        assert a.device_count() == len(jax.devices()) and a.current_accelerator().type in ("cuda", "tpu")
        return

    def build(lib):
        a = lib.accelerator
        return [a.is_available(), a.current_accelerator(), a.device_count(), outcome(a.current_device_index),
                outcome(a.synchronize)]

    assert_same_outcomes(*both(build))


# ---- torch.backends and global flags -----------------------------------------------------------------------

def test_cudnn_flags_are_stored():
    def build(lib):
        cudnn = lib.backends.cudnn
        names = ("enabled", "benchmark", "deterministic", "allow_tf32")
        out = [getattr(cudnn, n) for n in names]
        for n in names:
            setattr(cudnn, n, not getattr(cudnn, n))
        out += [getattr(cudnn, n) for n in names]
        out += [outcome(lambda: setattr(cudnn, n, "x")) for n in names]
        return out + [lib.are_deterministic_algorithms_enabled()]

    assert_same_outcomes(*both(build))


def test_matmul_precision_maps_to_jax():
    def build(lib):
        matmul = lib.backends.cuda.matmul
        out = [lib.get_float32_matmul_precision(), matmul.allow_tf32]
        # (PyTorch refuses to read back allow_tf32 = False after 'high' or 'medium': its legacy and new APIs disagree)
        for step in ("high", "highest", True, False, True, "medium", "highest"):
            if isinstance(step, bool):
                matmul.allow_tf32 = step
            else:
                lib.set_float32_matmul_precision(step)
            out.append([lib.get_float32_matmul_precision(), matmul.allow_tf32])
        out += [outcome(lambda: lib.set_float32_matmul_precision(3)), outcome(lambda: setattr(matmul, "allow_tf32", 1)),
                outcome(lambda: matmul.foo), outcome(lambda: setattr(matmul, "foo", 1)),
                matmul.allow_fp16_reduced_precision_reduction, matmul.allow_bf16_reduced_precision_reduction]
        with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
            lib.set_float32_matmul_precision("low")
        return out + [lib.get_float32_matmul_precision()]

    assert_same_outcomes(*both(build))   # 'highest' on every device, as PyTorch's default
    for ours, jax_name in (("high", "tensorfloat32"), ("medium", "bfloat16"), ("highest", "float32")):
        tapegrad.set_float32_matmul_precision(ours)
        assert jax.config.jax_default_matmul_precision == jax_name
    tapegrad.backends.cuda.matmul.allow_tf32 = True
    assert jax.config.jax_default_matmul_precision == "tensorfloat32"


def test_backend_probes_and_determinism():
    assert tapegrad.backends.mps.is_available() is False and tapegrad.backends.mps.is_built() is False
    assert tapegrad.backends.cudnn.is_available() is HAS_GPU
    assert tapegrad.backends.cuda.is_built() in (True, False) and (tapegrad.backends.cuda.is_built() or not HAS_GPU)

    def build(lib):
        use = lib.use_deterministic_algorithms if lib is tapegrad else _set_torch_deterministic
        out = [lib.are_deterministic_algorithms_enabled(), lib.is_deterministic_algorithms_warn_only_enabled()]
        use(True, warn_only=True)
        out += [lib.are_deterministic_algorithms_enabled(), lib.is_deterministic_algorithms_warn_only_enabled()]
        use(False)
        out += [lib.are_deterministic_algorithms_enabled(), outcome(lambda: use("x"))]
        return out

    ours, theirs = both(build)
    assert ours[:-1] == theirs[:-1] and ours[-1][0] == theirs[-1][0] == "TypeError"
    assert "must be bool, not str" in ours[-1][1] and "must be bool, not str" in theirs[-1][1]


def test_matmul_precision_defaults_to_pytorchs_on_every_device():
    """Importing tapegrad chooses PyTorch's 'highest' (JAX would pick TF32 on a GPU), unless JAX's was chosen."""
    import subprocess
    import sys
    probe = "import tapegrad, jax; print(tapegrad.get_float32_matmul_precision(), jax.config.jax_default_matmul_precision)"
    for env, expected in (({}, "highest float32"), ({"JAX_DEFAULT_MATMUL_PRECISION": "tensorfloat32"},
                                                   "high tensorfloat32")):
        env = {k: v for k, v in os.environ.items() if k != "JAX_DEFAULT_MATMUL_PRECISION"} | env
        out = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
        assert out.stdout.split() == expected.split()
