"""jit.trace's TracerWarning against PyTorch's: the same functions warn (or not) with the same phrases."""
import warnings

import pytest

import tapegrad


def _traced(lib, name, **kwargs):
    x = lib.tensor([1.0, -2.0, 3.0])
    functions = {
        "if": lambda x: x * 2 if x.sum() > 0 else x,
        "item": lambda x: x * x.sum().item(),
        "float": lambda x: x * float(x.sum()),
        "int_index": lambda x: x[int(x[0])],
        "complex": lambda x: x * complex(x[0]).real,
        "tolist": lambda x: x * x.tolist()[0],
        "numpy": lambda x: x * x.numpy()[0],
        "len": lambda x: x * len(x),
        "iterate": lambda x: sum(v for v in x),
        "tensor_constant": lambda x: x + lib.tensor([1.0, 2.0, 3.0]),
        # many elements: two runs' masks agree (no mismatch to report) with negligible probability
        "dropout": lambda x: lib.nn.functional.dropout(x.repeat(50), 0.5, training=True),
        "list_output": lambda x: [x, x * 2],
        # no warning in either library
        "shape": lambda x: x * x.shape[0],
        "ops_only": lambda x: (x.sin() * x.size(0)).view(x.size(0), 1),
        "list_index": lambda x: x * [1, 2, 3][x[0].long()],
        "internal_conversions": lambda x: lib.nn.functional.one_hot(x.long().abs()) + lib.arange(x.abs().max() + 1),
    }
    return lib.jit.trace(functions[name], (x,), **kwargs)


def _tracer_warnings(lib, name, **kwargs):
    """(the distinct messages' first sentences, the files they point at) of the TracerWarnings of a trace."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")   # whatever filters the run was started with
        warnings.filterwarnings("ignore", category=DeprecationWarning)
        _traced(lib, name, **kwargs)
    found = [w for w in caught if issubclass(w.category, lib.jit.TracerWarning)]
    return sorted({str(w.message).split(". ")[0].split("!")[0] for w in found}), {w.filename for w in found}


USER_LINE = ["if", "item", "float", "int_index", "complex", "tolist", "numpy", "len", "iterate", "tensor_constant"]
CASES = USER_LINE + ["dropout", "list_output", "shape", "ops_only", "list_index", "internal_conversions"]


@pytest.mark.parametrize("name", CASES)
def test_warns_as_pytorch(torch, name):
    ours, files = _tracer_warnings(tapegrad, name)
    theirs, _ = _tracer_warnings(torch, name)
    assert ours == theirs
    if name in USER_LINE:
        assert files == {__file__}   # the warning points at the user's line, as PyTorch's
        # the whole message is PyTorch's
        with pytest.warns(tapegrad.jit.TracerWarning) as ours_full:
            _traced(tapegrad, name)
        with pytest.warns(torch.jit.TracerWarning) as theirs_full:
            _traced(torch, name)
        text = lambda record: {str(w.message) for w in record if "Tracer" in w.category.__name__}  # noqa: E731
        assert text(ours_full) == text(theirs_full)


@pytest.mark.parametrize("name,kwargs", [("dropout", dict(check_trace=False)), ("list_output", dict(strict=False))])
def test_options_that_silence(torch, name, kwargs):
    assert _tracer_warnings(tapegrad, name, **kwargs)[0] == _tracer_warnings(torch, name, **kwargs)[0] == []


def test_dict_output_refused_when_strict(torch):
    def build(lib, strict):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                lib.jit.trace(lambda x: {"a": x * 2}, (lib.ones(2),), strict=strict)
            except RuntimeError as e:
                return str(e)
    assert build(tapegrad, True) == build(torch, True)
    assert build(tapegrad, True).startswith("Encountering a dict at the output of the tracer")
    assert build(tapegrad, False) is None and build(torch, False) is None


def test_class_and_no_warning_outside_trace(torch):
    assert issubclass(tapegrad.jit.TracerWarning, Warning) and not issubclass(tapegrad.jit.TracerWarning, UserWarning)
    assert [c.__name__ for c in tapegrad.jit.TracerWarning.__mro__] == [c.__name__ for c in
                                                                         torch.jit.TracerWarning.__mro__]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = tapegrad.tensor([1.0, 2.0])
        assert bool(x.sum() > 0) and x.tolist() == [1.0, 2.0] and len(x) == 2
