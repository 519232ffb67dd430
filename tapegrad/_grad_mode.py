"""Grad mode: no_grad, enable_grad, set_grad_enabled, inference_mode (thread-local).

Each works as a context manager and as a decorator, as in PyTorch.
"""
import functools
import inspect
import threading


class _State(threading.local):
    def __init__(self):
        self.grad_enabled = True
        self.inference = False


_state = _State()


class _TracedOff:
    """Grad mode inside a traced function (tapegrad.func's transforms, a custom Function's backward): off for
    the tape, which records nothing there, yet not the user's no_grad, which sets False: the ops under that
    are not differentiated by the transform (torch.func's grad respects a no_grad inside the function)."""
    __slots__ = ()

    def __bool__(self):
        return False

    def __repr__(self):
        return "False"


TRACED_OFF = _TracedOff()


def is_grad_enabled():
    return bool(_state.grad_enabled)


def is_inference_mode_enabled():
    return _state.inference


class _DecoratorContextManager:
    """Base giving every mode both `with mode():` and `@mode()` forms."""

    def __call__(self, fn):
        if inspect.isclass(fn):
            raise TypeError(f"{type(self).__name__} cannot decorate a class; decorate its methods instead")

        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def generator(*args, **kwargs):
                gen = fn(*args, **kwargs)
                try:
                    with self.clone():
                        response = gen.send(None)
                    while True:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with self.clone():
                                gen.close()
                            raise
                        except BaseException as exc:
                            with self.clone():
                                response = gen.throw(exc)
                        else:
                            with self.clone():
                                response = gen.send(request)
                except StopIteration as stop:
                    # The wrapped generator finished: finish too (PEP 479 forbids letting it escape).
                    return stop.value
            return generator

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return type(self)()


class no_grad(_DecoratorContextManager):
    def __init__(self, orig_func=None):
        # PyTorch allows the bare `@no_grad` form only through __new__ tricks; we accept it too.
        self._orig = orig_func

    def __new__(cls, orig_func=None):
        if orig_func is not None and callable(orig_func):
            return cls()(orig_func)
        return super().__new__(cls)

    def __enter__(self):
        self.prev = _state.grad_enabled
        _state.grad_enabled = False

    def __exit__(self, *exc):
        _state.grad_enabled = self.prev


class enable_grad(no_grad):
    def __enter__(self):
        self.prev = _state.grad_enabled
        _state.grad_enabled = True


class set_grad_enabled(_DecoratorContextManager):
    """Sets grad mode on construction (so it also works as a plain function call), restores on exit."""

    def __init__(self, mode):
        self.prev = _state.grad_enabled
        self.mode = bool(mode)
        _state.grad_enabled = self.mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _state.grad_enabled = self.prev

    def clone(self):
        return set_grad_enabled(self.mode)

    def __call__(self, fn):
        _state.grad_enabled = self.prev
        return super().__call__(fn)


class inference_mode(_DecoratorContextManager):
    def __init__(self, mode=True):
        self.mode = bool(mode)

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):
            return cls(True)(mode)
        return super().__new__(cls)

    def __enter__(self):
        self.prev = (_state.grad_enabled, _state.inference)
        # PyTorch: inference_mode(mode) sets grad mode to `not mode`.
        _state.grad_enabled, _state.inference = not self.mode, self.mode

    def __exit__(self, *exc):
        _state.grad_enabled, _state.inference = self.prev

    def clone(self):
        return inference_mode(self.mode)
