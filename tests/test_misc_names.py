"""Smaller PyTorch modules and names: torch.testing, torch.version, torch.hub and model_zoo, pin_memory,
accelerator device index, cuda.amp / cuda.nccl, torch.classes, torch.ops.profiler, nn.modules paths,
empty_strided; each against PyTorch's own behaviour."""
import ctypes
import os
import shutil
import subprocess
import warnings

import numpy as np
import pytest

import tapegrad
from conftest import assert_close, from_torch, raised


# ---- testing.assert_close --------------------------------------------------------------------------



def _cases(lib):
    t = lib.tensor
    nan = float("nan")
    tc = lib.testing.assert_close
    return [
        lambda: tc(t([1., 2., 3.]), t([1., 2.5, 3.])),
        lambda: tc(t([1, 2, 3]), t([1, 4, 3])),
        lambda: tc(t([[1., 2.], [3., 4.]]), t([[1., 2.], [3., 5.]])),
        lambda: tc(t([1., 2.]), t([1., 2.], dtype=lib.float64)),
        lambda: tc(t([1., 2.]), t([1., 2., 3.])),
        lambda: tc(t([1., nan]), t([1., nan])),
        lambda: tc(t([1., nan]), t([1., nan]), equal_nan=True),
        lambda: tc(1.0, 1.5),
        lambda: tc(1, 2),
        lambda: tc(1, 1.0),
        lambda: tc(True, False),
        lambda: tc(None, 1),
        lambda: tc([t(1.), t(2.)], [t(1.), t(3.)]),
        lambda: tc({"a": t(1.)}, {"a": t(3.)}),
        lambda: tc({"a": t(1.)}, {"b": t(1.)}),
        lambda: tc(t([1., 2.]), t([1., 2.1]), rtol=0.1),
        lambda: tc(t([1., 2.]), t([1., 2.1]), rtol=0.1, atol=0),
        lambda: tc(t([1., 2.]), t([1., 2.5]), msg="custom"),
        lambda: tc(t([1., 2.]), t([1., 2.5]), msg=lambda m: "X" + m),
        lambda: tc([t([1., 2.])], [t([1., 2.5])], msg=lambda m: "X" + m),
        lambda: tc(t([1., 2.]), t([1, 2]), check_dtype=False),
        lambda: tc(t([1., 2.]), t([1, 3]), check_dtype=False),
        lambda: tc(t([True, False]), t([True, True])),
        lambda: tc(t([1., 0.]), t([1., 1e-20])),
        lambda: tc(t([0., 0.]), t([1., 1.])),
        lambda: tc(t([1., 2.]), t([1., 0.])),
        lambda: tc(t([1., 2.]), [1., 2.]),
        lambda: tc([1., 2.], [1., 2., 3.]),
        lambda: tc(t([1., 2.]).requires_grad_(), t([1., 2.])),
        lambda: tc(t([1. + 1j]), t([1. + 2j])),
        lambda: tc(t(1.), t(2.)),
        lambda: tc(t([1, 2, 7]), t([4, 1, 2])),
        lambda: tc(t([1., float("inf")]), t([1., float("inf")])),
        lambda: tc(t([1., float("inf")]), t([1., -float("inf")])),
        lambda: tc(t([1., 2.], dtype=lib.float16), t([1., 2.002], dtype=lib.float16)),
        lambda: tc(t([1., 2.], dtype=lib.bfloat16), t([1., 2.5], dtype=lib.bfloat16)),
        lambda: tc(t([1., 2.], dtype=lib.float64), t([1., 2. + 1e-6], dtype=lib.float64)),
        lambda: tc(t([[1., 2.], [3., 4.]]).t(), t([[1., 3.], [2., 4.]]), check_stride=True),
        lambda: tc(np.array([1., 2.]), np.array([1., 3.])),
        lambda: tc(t([1., 2.]), np.array([1., 2.])),
        lambda: tc(t([1., 2.]), t([1.00001, 2.])),
    ]


def test_assert_close_matches_pytorch(torch):
    theirs, ours = _cases(torch), _cases(tapegrad)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        got, expected = raised(a), raised(b)
        if expected is None:
            assert got is None, (i, got)
            continue
        assert got is not None and got[0] is expected[0], (i, got, expected)
        # type names differ (tapegrad.Tensor, tapegrad.float32): compare with them spelled as PyTorch's
        text = got[1].replace("tapegrad._tensor.Tensor", "torch.Tensor").replace("tapegrad.", "torch.")
        text = text.replace("tapegrad.Size", "torch.Size")
        assert text == expected[1], (i, text, expected[1])


def test_assert_allclose_deprecated(torch):
    t = tapegrad.tensor
    with pytest.warns(FutureWarning, match=r"`torch.testing.assert_allclose\(\)` is deprecated since 1.12"):
        tapegrad.testing.assert_allclose(t([1., 2.]), [1., 2.00001])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        tapegrad.testing.assert_allclose(t([1., float("nan")]), t([1., float("nan")]))
        tapegrad.testing.assert_allclose(t([1., 2.]), t([1., 2.]).double())
        with pytest.raises(AssertionError) as ours:
            tapegrad.testing.assert_allclose(t([1., 2.]), t([1., 2.5]))
        with pytest.raises(AssertionError) as theirs:
            torch.testing.assert_allclose(torch.tensor([1., 2.]), torch.tensor([1., 2.5]))
    assert str(ours.value) == str(theirs.value)


# ---- hub, model_zoo ----------------------------------------------------------------------------------

_HUBCONF = '''
dependencies = ["numpy"]

import tapegrad


def tiny(n=2, bias=True):
    """A Linear(n, 1) to test hub entry points."""
    return tapegrad.nn.Linear(n, 1, bias=bias)


def _private():
    return None

helper_constant = 3
'''


@pytest.fixture
def served(tmp_path):
    """A local HTTP server over tmp_path/www; yields (folder, base URL)."""
    import functools
    import http.server
    import threading
    root = tmp_path / "www"
    root.mkdir()
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_hub_load_local_like_pytorch(torch, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "hubconf.py").write_text(_HUBCONF)
    model = tapegrad.hub.load(str(repo), "tiny", 3, source="local", bias=False)
    assert isinstance(model, tapegrad.nn.Linear) and model.weight.shape == (1, 3) and model.bias is None
    # the same hubconf through PyTorch's torch.hub raises the same errors
    for call in (lambda hub: hub.load(str(repo), "nope", source="local"),
                 lambda hub: hub.load(str(repo), "helper_constant", source="local"),
                 lambda hub: hub.load(str(repo), 3, source="local"),
                 lambda hub: hub.load(str(repo), "tiny", source="svn")):
        ours, theirs = raised(lambda: call(tapegrad.hub)), raised(lambda: call(torch.hub))
        assert ours == theirs and ours is not None
    (repo / "hubconf.py").write_text(_HUBCONF.replace('["numpy"]', '["numpy", "no_such_package_xyz"]'))
    ours, theirs = (raised(lambda: hub.load(str(repo), "tiny", source="local")) for hub in (tapegrad.hub, torch.hub))
    assert ours == theirs == (RuntimeError, "Missing dependencies: no_such_package_xyz")


def test_hub_dir(torch, tmp_path, monkeypatch):
    monkeypatch.setattr(tapegrad.hub, "_hub_dir", None)
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    monkeypatch.setenv("TORCH_HOME", str(tmp_path / "home"))
    assert tapegrad.hub.get_dir() == torch.hub.get_dir() == str(tmp_path / "home" / "hub")
    tapegrad.hub.set_dir(str(tmp_path / "elsewhere"))
    assert tapegrad.hub.get_dir() == str(tmp_path / "elsewhere")


def test_download_and_load_state_dict_from_url(torch, tmp_path, served):
    import hashlib
    root, base = served
    torch.manual_seed(0)
    state = torch.nn.Linear(3, 2).state_dict()
    torch.save(state, root / "plain.pth")
    digest = hashlib.sha256((root / "plain.pth").read_bytes()).hexdigest()
    named = f"weights-{digest[:8]}.pth"
    (root / named).write_bytes((root / "plain.pth").read_bytes())
    # download_url_to_file: the bytes, a hash prefix checked, PyTorch's error for a wrong one
    tapegrad.hub.download_url_to_file(f"{base}/plain.pth", str(tmp_path / "got.pth"), hash_prefix=digest[:10],
                                      progress=False)
    assert (tmp_path / "got.pth").read_bytes() == (root / "plain.pth").read_bytes()
    ours = raised(lambda: tapegrad.hub.download_url_to_file(f"{base}/plain.pth", str(tmp_path / "bad.pth"),
                                                            hash_prefix="0000", progress=False))
    theirs = raised(lambda: torch.hub.download_url_to_file(f"{base}/plain.pth", str(tmp_path / "bad2.pth"),
                                                           hash_prefix="0000", progress=False))
    assert ours == theirs and ours[0] is RuntimeError
    assert not (tmp_path / "bad.pth").exists() and [p.name for p in tmp_path.glob(".*partial")] == []
    # load_state_dict_from_url (and model_zoo.load_url): cached under model_dir, read by tapegrad.load
    from tapegrad.utils import model_zoo
    for loader, url in ((tapegrad.hub.load_state_dict_from_url, f"{base}/{named}"),
                        (model_zoo.load_url, (root / named).as_uri())):
        got = loader(url, model_dir=str(tmp_path / "ckpt"), check_hash=True, progress=False)
        assert set(got) == set(state)
        for k in state:
            np.testing.assert_array_equal(got[k].numpy(), state[k].numpy())
    assert (tmp_path / "ckpt" / named).exists()
    (root / "weights-deadbeef.pth").write_bytes((root / "plain.pth").read_bytes())
    with pytest.raises(RuntimeError, match='invalid hash value \\(expected "deadbeef"'):
        tapegrad.hub.load_state_dict_from_url(f"{base}/weights-deadbeef.pth", model_dir=str(tmp_path / "c2"),
                                              check_hash=True, progress=False)


def test_hub_github_source_from_an_archive(tmp_path, served, monkeypatch):
    import zipfile
    root, base = served
    with zipfile.ZipFile(root / "repo.zip", "w") as z:
        z.writestr("someone-tinyrepo-abc123/hubconf.py", _HUBCONF)
    monkeypatch.setattr(tapegrad.hub, "_GITHUB_ARCHIVE", base + "/repo.zip?{owner}/{name}/{ref}")
    tapegrad.hub.set_dir(str(tmp_path / "hub"))
    try:
        assert tapegrad.hub.list("someone/tinyrepo:main", trust_repo=True) == ["tiny"]
        assert (tmp_path / "hub" / "someone_tinyrepo_main" / "hubconf.py").exists()
        assert "someone_tinyrepo" in (tmp_path / "hub" / "trusted_list").read_text().split()
        assert tapegrad.hub.help("someone/tinyrepo:main", "tiny") == "A Linear(n, 1) to test hub entry points."
        (root / "repo.zip").unlink()   # cached now: no download
        model = tapegrad.hub.load("someone/tinyrepo:main", "tiny", 4, verbose=False)
        assert model.weight.shape == (1, 4)
    finally:
        monkeypatch.setattr(tapegrad.hub, "_hub_dir", None)


# ---- version, devices, amp aliases, nccl, classes, ops.profiler -----------------------------------------

def test_version(torch):
    assert tapegrad.version.__version__ == tapegrad.__version__
    import importlib.metadata
    try:
        importlib.metadata.version("jax-cuda12-plugin")
    except importlib.metadata.PackageNotFoundError:
        assert tapegrad.version.cuda is None and tapegrad.version.hip is None


def test_pin_memory_and_device_index(torch):
    x = tapegrad.arange(6.).reshape(2, 3)
    assert x.is_pinned() is False
    if tapegrad.accelerator.is_available():
        p = x.pin_memory()
        assert p.is_pinned() and p[0].is_pinned() and not x.is_pinned() and p.pin_memory() is p
        np.testing.assert_array_equal(p.numpy(), x.numpy())
        with tapegrad.accelerator.device_index(0):
            assert tapegrad.accelerator.current_device_index() == 0
        return
    assert not torch.accelerator.is_available()
    for call in (lambda lib, t: t.pin_memory(), lambda lib: lib.accelerator.set_device_index(0),
                 lambda lib: lib.accelerator.device_index(0).__enter__()):
        args = (lambda lib: (lib, lib.zeros(2))) if call.__code__.co_argcount == 2 else (lambda lib: (lib,))
        ours, theirs = raised(lambda: call(*args(tapegrad))), raised(lambda: call(*args(torch)))
        assert ours[0] is theirs[0] is RuntimeError and ours[1].startswith(theirs[1])
    with tapegrad.accelerator.device_index(None):
        pass


def test_deprecated_amp_paths(torch):
    from tapegrad.cpu.amp import autocast as cpu_autocast
    from tapegrad.cuda.amp import GradScaler, autocast
    for ours, theirs in ((GradScaler, torch.cuda.amp.GradScaler), (autocast, torch.cuda.amp.autocast),
                         (cpu_autocast, torch.cpu.amp.autocast)):
        with pytest.warns(FutureWarning) as got:
            ours(enabled=False)
        with pytest.warns(FutureWarning) as expected:
            theirs(enabled=False)
        assert str(got[0].message) == str(expected[0].message)


def test_nccl_as_a_build_without_it(torch):
    import tapegrad.cuda.nccl as nccl
    assert nccl is tapegrad.cuda.nccl
    with pytest.raises(AttributeError):
        torch.cuda.nccl.version()
    with pytest.raises(AttributeError, match="tapegrad.distributed"):
        nccl.version()
    with pytest.warns(UserWarning, match="not compiled with NCCL support"):
        assert nccl.is_available([tapegrad.zeros(1)]) is False


def test_classes_lookups_fail_as_in_pytorch(torch):
    ours = raised(lambda: tapegrad.classes.NativeInterpretation.ElementwiseInterpreter())
    theirs = raised(lambda: torch.classes.NativeInterpretation.ElementwiseInterpreter())
    assert ours[0] is theirs[0] is RuntimeError and ours[1].startswith(theirs[1].split(" torch::class_")[0])


def test_load_library_loads_a_shared_library_as_pytorch(torch):
    libm = os.path.realpath(_find_loaded("libm"))
    for ours, theirs in [(tapegrad.ops, torch.ops), (tapegrad.classes, torch.classes)]:
        ours.load_library(libm)
        theirs.load_library(libm)
        assert libm in ours.loaded_libraries and libm in theirs.loaded_libraries
    assert tapegrad.ops.loaded_libraries is tapegrad.classes.loaded_libraries
    missing = "/nonexistent/libnothing.so"
    ours, theirs = raised(lambda: tapegrad.ops.load_library(missing)), raised(lambda: torch.ops.load_library(missing))
    assert ours[0] is theirs[0] is OSError and ours[1].startswith(theirs[1])
    assert missing not in tapegrad.ops.loaded_libraries


def _find_loaded(stem):
    """The path of a library this process has mapped (libm is always there under CPython on Linux)."""
    with open("/proc/self/maps") as maps:
        return next(line.split()[-1] for line in maps if f"/{stem}." in line or f"/{stem}-" in line)


def _compile_library(tmp_path, source):
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:   # a test requirement, as torch is: missing, it fails with how to install it
        pytest.fail("load_library's tests build a small shared library and need a C compiler (cc or gcc), which "
                    "this machine lacks. Install one (for instance `apt-get install gcc`).")
    (tmp_path / "lib.c").write_text(source)
    out = tmp_path / "libtest.so"
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(out), str(tmp_path / "lib.c")], check=True)
    return str(out)


def test_load_library_runs_its_initialisers(tmp_path):
    path = _compile_library(tmp_path, "int tg_state = 0;\n"
                            "__attribute__((constructor)) static void init(void) { tg_state = 42; }\n"
                            "int tg_answer(void) { return tg_state; }\n")
    tapegrad.classes.load_library(path)
    assert ctypes.CDLL(path).tg_answer() == 42 and os.path.realpath(path) in tapegrad.classes.loaded_libraries


def test_load_library_built_against_libtorch_says_how_to_port(tmp_path):
    # a TORCH_LIBRARY extension needs c10's symbols, which only PyTorch's process has
    path = _compile_library(tmp_path, "extern void _ZN3c1010TensorImplD2Ev(void);\n"
                            "void tg_uses_c10(void) { _ZN3c1010TensorImplD2Ev(); }\n")
    with pytest.raises(OSError, match="Could not load this library.*libtorch.*func.from_jax"):
        tapegrad.ops.load_library(path)


def test_ops_profiler_range():
    x = tapegrad.randn(4)
    with tapegrad.autograd.profiler.profile() as prof:
        handle = tapegrad.ops.profiler._record_function_enter("my_range")
        tapegrad.relu(x).sum().item()
        tapegrad.ops.profiler._record_function_exit(handle)
    assert "my_range" in prof.key_averages().table()


def test_nn_modules_paths(torch):
    import importlib
    for path in ("activation.MultiheadAttention", "activation.ReLU", "batchnorm.BatchNorm2d", "batchnorm._BatchNorm",
                 "flatten.Flatten", "flatten.Unflatten", "linear.NonDynamicallyQuantizableLinear",
                 "normalization.LayerNorm", "transformer.TransformerEncoderLayer", "container.ModuleList"):
        module, name = path.rsplit(".", 1)
        ours = getattr(importlib.import_module(f"tapegrad.nn.modules.{module}"), name)
        assert getattr(importlib.import_module(f"torch.nn.modules.{module}"), name).__name__ == ours.__name__
        if hasattr(torch.nn, name):
            assert ours is getattr(tapegrad.nn, name)
    from tapegrad.nn.modules.utils import _ntuple, _pair, _single, _triple
    from torch.nn.modules import utils as theirs
    for value in (3, (1, 2), [4, 5, 6]):
        assert (_single(value), _pair(value), _triple(value), _ntuple(4)(value)) == (
            theirs._single(value), theirs._pair(value), theirs._triple(value), theirs._ntuple(4)(value))


def test_empty_strided(torch):
    cases = [((2, 3), (1, 2)), ((2, 3), (4, 1)), ((2, 3, 4), (0, 4, 1)), ((2, 1, 4), (4, 4, 1)), ((), ()),
             ((0, 3), (3, 1)), ((2, 3, 4, 5), (60, 1, 15, 3)), ((2, 3), (2, 6)), ((3, 4), (4, 1))]
    for size, stride in cases:
        for dtype, requires_grad in (("float32", False), ("float64", True)):
            ours = tapegrad.empty_strided(size, stride, dtype=getattr(tapegrad, dtype), requires_grad=requires_grad)
            theirs = torch.empty_strided(size, stride, dtype=getattr(torch, dtype), requires_grad=requires_grad)
            assert (tuple(ours.shape), ours.stride(), str(ours.dtype).split(".")[1], ours.requires_grad,
                    ours.is_leaf, ours.is_contiguous()) == (tuple(theirs.shape), theirs.stride(),
                                                            str(theirs.dtype).split(".")[1], theirs.requires_grad,
                                                            theirs.is_leaf, theirs.is_contiguous()), (size, stride)
    for size, stride in (((2, 3), (1,)), ((2, 3), (-1, 2))):
        ours = raised(lambda: tapegrad.empty_strided(size, stride))
        assert ours == raised(lambda: torch.empty_strided(size, stride)) and ours[0] is RuntimeError
    if not tapegrad.accelerator.is_available():
        ours = raised(lambda: tapegrad.empty_strided((2,), (1,), pin_memory=True))
        assert ours == raised(lambda: torch.empty_strided((2,), (1,), pin_memory=True))
    else:
        assert tapegrad.empty_strided((2, 3), (1, 2), pin_memory=True).is_pinned()


def test_empty_strided_any_strides_hold_what_is_written(torch):
    """Gaps, overlapping and stride-0 layouts: strides as asked, writes through the tensor read back as PyTorch's
    (elements that share an address read the last value written there)."""
    cases = [((2, 2), (5, 2)), ((3, 3), (1, 1)), ((2, 3), (3, 2)), ((4,), (0,)), ((2, 1, 4), (4, 100, 1)),
             ((0, 3), (1, 5)), ((3, 2), (1, 1))]
    for size, stride in cases:
        ours, theirs = tapegrad.empty_strided(size, stride), torch.empty_strided(size, stride)
        assert (tuple(ours.shape), ours.stride(), ours.is_contiguous(), ours._base is None, ours.is_leaf) == (
            tuple(theirs.shape), theirs.stride(), theirs.is_contiguous(), theirs._base is None, theirs.is_leaf)
        if 0 in size:
            continue
        ours.fill_(2.0)
        theirs.fill_(2.0)
        ours[0] = 5.0
        theirs[0] = 5.0
        assert_close(ours, theirs)
        if 0 in stride:
            continue   # copy_ into an expanded layout is refused (internal overlap), checked elsewhere
        src = torch.arange(float(theirs.numel())).reshape(size)
        ours.copy_(from_torch(src))
        theirs.copy_(src)
        assert_close(ours, theirs)
        assert_close(ours * 2, theirs * 2)
    ours, theirs = tapegrad.empty_strided((2, 2), (3, 1)), torch.empty_strided((2, 2), (3, 1))
    ours.fill_(1.5).requires_grad_()
    theirs.fill_(1.5).requires_grad_()
    (ours * ours).sum().backward()
    (theirs * theirs).sum().backward()
    assert_close(ours.grad, theirs.grad)


def test_positive_is_same_size_and_clone_keeps_negative_zero(torch):
    for lib in (tapegrad, torch):
        x = lib.tensor([-0.0, 1.0], requires_grad=True)
        assert lib.positive(x) is x and x.is_same_size(x) and not x.is_same_size(x[:1])
        assert np.signbit(x.clone().detach().numpy()[0])   # clone keeps every bit
    ours = raised(lambda: tapegrad.positive(tapegrad.tensor([True])))
    theirs = raised(lambda: torch.positive(torch.tensor([True])))
    assert ours[0] is theirs[0] and ours[1].startswith(theirs[1])
    for name in ("signbit", "isposinf", "isneginf", "deg2rad", "rad2deg"):
        ours = raised(lambda: getattr(tapegrad, name)(tapegrad.tensor([1 + 1j])))
        theirs = raised(lambda: getattr(torch, name)(torch.tensor([1 + 1j])))
        assert ours[0] is theirs[0] and ours[1].startswith(theirs[1]), name
    for args in [((2,), (2, 3), (4,)), ((5,), (2, 3), (3,)), ((2,), (2, 3, 1), (3,))]:
        ours = raised(lambda: tapegrad.addmv(*(tapegrad.zeros(*s) for s in args)))
        theirs = raised(lambda: torch.addmv(*(torch.zeros(*s) for s in args)))
        assert ours[0] is theirs[0] and ours[1].startswith(theirs[1]), args


def test_default_generator(torch):
    for lib in (tapegrad, torch):
        assert lib.default_generator is lib.random.default_generator
        assert type(lib.default_generator).__name__ == "Generator"
        lib.manual_seed(3)
        assert lib.default_generator.initial_seed() == 3
        state = lib.default_generator.get_state()
        first = lib.rand(2)
        lib.default_generator.set_state(state)
        assert lib.equal(lib.rand(2), first)


def test_deterministic_debug_mode_as_pytorch(torch):
    for lib in (tapegrad, torch):
        try:
            assert lib.get_deterministic_debug_mode() == 0
            for mode, level, on, warn in (("warn", 1, True, True), (2, 2, True, False), ("default", 0, False, False)):
                lib.set_deterministic_debug_mode(mode)
                assert lib.get_deterministic_debug_mode() == level
                assert lib.are_deterministic_algorithms_enabled() is on
                assert lib.is_deterministic_algorithms_warn_only_enabled() is warn
            with pytest.raises(RuntimeError, match="expected one of `default`, `warn`, `error`, but got bad"):
                lib.set_deterministic_debug_mode("bad")
            with pytest.raises(RuntimeError, match="expected 0, 1, or 2, but got 3"):
                lib.set_deterministic_debug_mode(3)
            with pytest.raises(TypeError, match="debug_mode must be str or int"):
                lib.set_deterministic_debug_mode(1.5)
        finally:
            lib.use_deterministic_algorithms(False)


def test_nonzero_static_refuses_a_negative_size_as_pytorch(torch):
    for lib in (tapegrad, torch):
        with pytest.raises(RuntimeError, match="'size' must be an non-negative integer"):
            lib.nonzero_static(lib.ones(3), size=-1)
