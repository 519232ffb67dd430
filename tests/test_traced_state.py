"""A traced function's cached program follows the state it reads, as PyTorch's eager calls do: a global scalar
changed, an attribute changed, a module's training flag, a global rebound to another tensor. tapegrad.func
transforms and checkpointed regions cache a trace per function; each call's gradients are compared with
PyTorch's for the same sequence of changes."""
import numpy as np

from conftest import assert_close, both

SCALE = 1.0
WEIGHT = None


def _scaled(x):
    return (x.sin() * SCALE).sum()


def _weighted(x):
    return (x * WEIGHT).sum()


def _data(lib, *shape, seed=0):
    return lib.tensor(np.random.default_rng(seed).normal(size=shape), dtype=lib.float64)


def test_func_transforms_read_the_current_globals(torch):
    def build(lib):
        global SCALE, WEIGHT
        x = _data(lib, 4)
        grads = []
        for scale in (1.0, 3.0, 3.0, -0.5):
            SCALE = scale
            grads.append(lib.func.grad(_scaled)(x))
        for seed in (1, 2):
            WEIGHT = _data(lib, 4, seed=seed)   # a global rebound to a new tensor of the same shape
            grads.append(lib.func.grad(_weighted)(x))
        WEIGHT.mul_(2)   # and changed in place
        grads.append(lib.func.grad(_weighted)(x))
        return grads
    for a, b in zip(*both(build)):
        assert_close(a, b)


def test_func_transforms_read_the_current_module_state(torch):
    def build(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Dropout(0.0), lib.nn.Linear(4, 1)).double()
        with lib.no_grad():
            for i, p in enumerate(model.parameters()):
                p.copy_(_data(lib, *p.shape, seed=10 + i))
        params = {k: v.detach() for k, v in model.named_parameters()}
        x = _data(lib, 5, 3)

        def loss(p):
            out = lib.func.functional_call(model, p, (x,))
            out = out.abs() if model.absolute else out.pow(2)   # Python control flow on an attribute
            return out.sum() * model.temperature
        grads = []
        for temperature, absolute in ((1.0, False), (0.25, False), (0.25, True)):
            model.temperature, model.absolute = temperature, absolute
            grads.extend(lib.func.grad(loss)(params).values())
        return grads
    for a, b in zip(*both(build)):
        assert_close(a, b)


def test_checkpointed_region_reads_the_current_state(torch):
    def build(lib):
        from_module = lib.nn.Linear(3, 3).double()
        with lib.no_grad():
            from_module.weight.copy_(_data(lib, 3, 3, seed=3))
            from_module.bias.copy_(_data(lib, 3, seed=4))
        grads = []
        for factor in (1.0, 2.0):
            from_module.factor = factor

            def region(x):
                return (from_module(x) * from_module.factor).tanh()
            x = _data(lib, 2, 3).requires_grad_()
            lib.utils.checkpoint.checkpoint(region, x, use_reentrant=False).sum().backward()
            grads += [x.grad, from_module.weight.grad.clone()]
        return grads
    for a, b in zip(*both(build)):
        assert_close(a, b)


def _scaled_function(lib):
    class Scaled(lib.autograd.Function):   # (setup_context style: func transforms take it)
        @staticmethod
        def forward(x):
            return x * 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, grad):
            return grad * SCALE   # a global read by the backward, not kept on ctx
    return Scaled


def test_custom_function_backward_reads_the_current_globals(torch):
    def build(lib):
        global SCALE
        function = _scaled_function(lib)
        grads = []
        for scale in (1.0, 5.0, 5.0, 0.5):
            SCALE = scale
            x = _data(lib, 3).requires_grad_()
            function.apply(x).sum().backward()
            grads.append(x.grad)
        return grads
    for a, b in zip(*both(build)):
        assert_close(a, b)


def test_function_rules_read_the_current_globals_under_func_and_compile(torch):
    """A Function's backward that reads a global, inside a cached func.grad and a compiled training step: the
    walk that keys them reaches the Function's rules and their globals."""
    def build(lib):
        global SCALE
        function = _scaled_function(lib)
        grads = []
        for scale in (1.0, 5.0):
            SCALE = scale
            grads.append(lib.func.grad(lambda x: function.apply(x).sum())(_data(lib, 3)))
        w = _data(lib, 3).requires_grad_()
        opt = lib.optim.SGD([w], lr=1.0)

        def step():
            opt.zero_grad()
            function.apply(w).sum().backward()
            opt.step()
        compiled = lib.compile(step)
        for scale in (1.0, 1.0, 5.0, 5.0):
            SCALE = scale
            compiled()
        return grads + [w.detach()]
    for a, b in zip(*both(build)):
        assert_close(a, b)
