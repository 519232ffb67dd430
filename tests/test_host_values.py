"""Values handed from kernel to kernel in host memory during an op-by-op run (tapegrad/_host_values.py).

On first sight a graph runs op by op, mostly on NumPy, and a NumPy kernel's output goes on to the next
kernel without a trip through the device. These tests hold the rule that makes this safe: such a value
never escapes its run. Every tensor, gradient and saved value a user can reach is a device array, a
compiled kernel meets its arguments as the same committed arrays either way (no second compile), and the
results match PyTorch, on short graphs and on graphs long enough to run in chunks.
"""
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tapegrad
from tapegrad import _host_values, _programs
from tapegrad._host_values import HostArray

from conftest import assert_close, from_torch
from xla_events import counting

pytestmark = pytest.mark.usefixtures("fresh_program_caches")


def _is_device_array(v):
    return isinstance(v, jax.Array) and type(v) is not HostArray


def _unrolled(lib, W, x, steps):
    h = x[0]
    hs = []
    for t in range(steps):
        h = lib.tanh(h @ W + x[t])
        hs.append(h)
    hs[steps // 2].retain_grad()
    loss = h.pow(2).sum() + hs[1].mean()
    loss.backward()
    return loss, hs


@pytest.mark.parametrize("steps", [5, _programs.MAX_PROGRAM_OPS // 3 + 10])   # one program, or chunks
def test_a_first_sight_backward_matches_torch_and_leaves_only_device_arrays(torch, steps):
    rng = np.random.default_rng(0)
    Wn = (rng.standard_normal((6, 6)) / 3).astype(np.float32)
    xn = rng.standard_normal((steps, 4, 6)).astype(np.float32)
    results = []
    for lib in (tapegrad, torch):
        W = lib.tensor(Wn, requires_grad=True)
        loss, hs = _unrolled(lib, W, lib.tensor(xn), steps)
        results.append((loss, hs, W))
    (loss, hs, W), (tloss, ths, tW) = results
    assert_close(loss, tloss)
    assert_close(W.grad, tW.grad, rtol=1e-4, atol=1e-5)
    assert_close(hs[steps // 2].grad, ths[steps // 2].grad, rtol=1e-4, atol=1e-5)
    assert_close(hs[-1], ths[-1], rtol=1e-5, atol=1e-6)
    for t in (loss, W.grad, hs[steps // 2].grad, hs[-1], hs[1]):
        assert _is_device_array(t._value)
    assert _is_device_array(W.grad._peek())


def test_a_forward_run_op_by_op_memoises_values_that_become_device_arrays_when_read():
    x = tapegrad.randn(3, 4)
    with tapegrad.no_grad():
        a = x.exp()
        b = (a * 2).sum(0)
        c = b.tanh()
        c.tolist()   # runs the pending plan op by op (first sight)
    for t in (a, b, c):
        assert _is_device_array(t._value)
    np.testing.assert_allclose(np.asarray(c._value), np.tanh((np.exp(np.asarray(x._value)) * 2).sum(0)),
                               rtol=1e-6)


def test_saved_values_read_through_grad_fn_after_a_first_sight_backward_are_device_arrays(torch):
    xn = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    outs = []
    for lib in (tapegrad, torch):
        x = lib.tensor(xn, requires_grad=True)
        y = x.exp().sin()
        y.sum().backward(retain_graph=True)
        outs.append((y.grad_fn._saved_self, x.grad))
    (saved, grad), (tsaved, tgrad) = outs
    assert _is_device_array(saved._value) and _is_device_array(grad._value)
    assert_close(saved, tsaved)
    assert_close(grad, tgrad)


def test_a_numpy_kernels_output_stays_in_host_memory_only_inside_a_run_and_is_read_only():
    tanh = _programs.kernel(("test-host-values", "tanh"), lambda: jnp.tanh)
    x = jnp.ones((3,), jnp.float32)
    with _host_values.op_by_op():
        inside = tanh(x)
    outside = tanh(x)
    assert type(inside) is HostArray and not inside.flags.writeable
    assert _is_device_array(outside)
    np.testing.assert_array_equal(np.asarray(inside), np.asarray(outside))


def test_a_weakly_typed_output_goes_to_the_device_at_once():
    # A NumPy array has no weak type: keeping this one on the host would make float16 maths widen.
    add = _programs.kernel(("test-host-values", "add"), lambda: jnp.add)
    with _host_values.op_by_op():
        out = add(1.5, 2.0)
    assert _is_device_array(out) and out.weak_type


def test_a_compiled_kernel_meets_host_and_device_arguments_with_one_compile(monkeypatch):
    monkeypatch.setattr(_programs, "NUMPY_KERNELS", [False])   # XLA from the first call
    double = _programs.kernel(("test-host-values", "double"), lambda: lambda v: v * 2)
    host = np.arange(4, dtype=np.float32).view(HostArray)
    with counting() as xla:
        with _host_values.op_by_op():
            first = double(host)
        second = double(_host_values.on_device(host))
        third = double(tapegrad.arange(4.0)._value)
    assert xla.compiles == 1 and xla.executions == 3
    for out in (first, second, third):
        np.testing.assert_array_equal(np.asarray(out), np.arange(4, dtype=np.float32) * 2)


def test_a_value_computed_op_by_op_then_fed_to_a_compiled_step_does_not_recompile_it(no_program_rent):
    # A step's program is compiled for committed device arrays; a parameter whose value was last
    # computed op by op (here by a first-sight update) must reach it as one.
    w = tapegrad.randn(8, requires_grad=True)
    x = tapegrad.randn(8)

    def step():
        loss = (w * x).tanh().sum()
        loss.backward()
        with tapegrad.no_grad():
            w.sub_(0.1 * w.grad)
        w.grad = None
        return loss.item()

    with counting() as xla:
        for _ in range(4):
            step()
        settled = xla.compiles
        for _ in range(5):
            step()
    assert settled >= 1 and xla.compiles == settled


def test_an_op_by_op_run_that_makes_inf_and_nan_warns_no_more_than_torch(torch):
    # NumPy's floating-point warnings are off for the whole run (lax, like PyTorch, gives inf/nan silently)
    def build(lib):
        x = lib.tensor([0.0, 1.0, -1.0], requires_grad=True)
        y = (x.log() * x.sqrt()).exp() / x
        y.sum().backward()
        return y, x.grad
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ours, theirs = build(tapegrad), build(torch)
    assert_close(ours[0], theirs[0])
    assert_close(ours[1], theirs[1])
