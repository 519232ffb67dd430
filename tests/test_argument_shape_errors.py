"""Arguments of shapes that do not fit raise PyTorch's errors, never JAX's (a ValueError or TypeError about
"incompatible shapes for broadcasting") nor a silently broadcast wrong shape: the normalisations' per-channel
tensors, and the ops that broadcast their tensor arguments inside their kernel."""
import pytest

import tapegrad

CASES = {
    "bn_eval_no_stats": lambda lib, x: lib.nn.functional.batch_norm(x, None, None),
    "bn_eval_no_var": lambda lib, x: lib.nn.functional.batch_norm(x, lib.zeros(6), None),
    "bn_var_size": lambda lib, x: lib.nn.functional.batch_norm(x, lib.zeros(6), lib.ones(2)),
    "bn_weight_size": lambda lib, x: lib.nn.functional.batch_norm(x, lib.zeros(6), lib.ones(6), weight=lib.ones(2)),
    "bn_bias_size_training": lambda lib, x: lib.nn.functional.batch_norm(x, None, None, bias=lib.ones(4),
                                                                        training=True),
    "bn_mean_size_training": lambda lib, x: lib.nn.functional.batch_norm(x, lib.zeros(2), lib.ones(6),
                                                                        training=True),
    "bn_stats_2d": lambda lib, x: lib.nn.functional.batch_norm(x, lib.zeros(6, 1), lib.ones(6)),
    "ln_weight": lambda lib, x: lib.nn.functional.layer_norm(x, (5,), weight=lib.ones(4)),
    "ln_bias_2d": lambda lib, x: lib.nn.functional.layer_norm(x, (5,), bias=lib.ones(1, 5)),
    "ln_int_shape": lambda lib, x: lib.nn.functional.layer_norm(x, 5),
    "gn_weight": lambda lib, x: lib.nn.functional.group_norm(x, 2, weight=lib.ones(4)),
    "gn_bias_alone": lambda lib, x: lib.nn.functional.group_norm(x, 2, bias=lib.ones(5)),
    "gn_bias": lambda lib, x: lib.nn.functional.group_norm(x, 2, weight=lib.ones(6), bias=lib.ones(5)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_errors_as_pytorch(torch, case):
    with pytest.raises(Exception) as theirs:
        CASES[case](torch, torch.zeros(4, 6, 5))
    with pytest.raises(type(theirs.value)) as ours:
        CASES[case](tapegrad, tapegrad.zeros(4, 6, 5))
    assert str(ours.value).startswith(str(theirs.value))


BROADCASTING = {
    "complex": lambda lib: lib.complex(lib.ones(4, 6, 5), lib.ones(4, 6)),
    "polar": lambda lib: lib.polar(lib.ones(4, 6, 5), lib.ones(4, 6)),
    "normal": lambda lib: lib.normal(lib.ones(4, 6, 5), lib.ones(4, 6)),
    "bce_with_logits": lambda lib: lib.binary_cross_entropy_with_logits(lib.ones(4, 6, 5), lib.ones(4, 6)),
    "maximum": lambda lib: lib.maximum(lib.ones(3), lib.ones(2)),
    "add": lambda lib: lib.ones(3, 4) + lib.ones(2, 4),
}


@pytest.mark.parametrize("case", list(BROADCASTING))
def test_broadcasting_errors_as_pytorch(torch, case):
    with pytest.raises(RuntimeError) as theirs:
        BROADCASTING[case](torch)
    with pytest.raises(RuntimeError) as ours:
        BROADCASTING[case](tapegrad)
    if case == "bce_with_logits":   # (PyTorch's composite names the target a, the input b)
        assert str(ours.value).split(") at ")[1] == str(theirs.value).split(") at ")[1]
    else:
        assert str(ours.value) == str(theirs.value)
