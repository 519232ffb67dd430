"""Parameter: a leaf Tensor that a Module registers as one of its parameters; Buffer; and the placeholders of
lazy modules, UninitializedParameter and UninitializedBuffer.

An uninitialized tensor holds an empty array of its dtype and device, behind a storage that refuses every op:
`_dispatch.apply` reading it gets a Redirect whose handler raises PyTorch's ValueError. `materialize(shape)`
gives it a real storage and turns it into the class it becomes (Parameter, or a plain Tensor for a buffer).
"""
from .. import _dtypes
from .._dispatch import Redirect
from .._tensor import PeekedMetadata, Tensor


class Parameter(Tensor):
    """A Tensor that `Module.__setattr__` registers as a parameter; a leaf with requires_grad=True.

    It shares storage (and version counter) with the tensor it wraps, as in PyTorch.
    """

    _is_parameter = True

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from .._creation import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter expects a Tensor as data, but got {type(data).__name__}. "
                            "Wrap it first: nn.Parameter(torch.tensor(data)).")
        if cls is Parameter and hasattr(data, "_placements"):   # nn.Parameter(dtensor) is a DTensor, as PyTorch's
            from ..distributed.tensor._dtensor import to_parameter
            return to_parameter(data, requires_grad)
        return cls._from_tensor(data, requires_grad)

    def __init__(self, data=None, requires_grad=True):
        pass

    @classmethod
    def _from_tensor(cls, data, requires_grad=None):
        p = object.__new__(cls)
        p._storage = data._storage
        p._view = data.detach()._view   # PyTorch's parameter of a view shares its data but is no view
        p._grad_fn = None
        p._out_idx = 0
        p._requires_grad = False
        p._grad = None
        p._retains_grad = False
        p._accumulator = None
        p._inference = data._inference
        p._hooks = None
        p.requires_grad_(data._requires_grad if requires_grad is None else requires_grad)
        return p

    def __reduce_ex__(self, protocol):
        import numpy as np
        return (_rebuild_parameter, (np.asarray(self._value), self._requires_grad))


def _rebuild_parameter(array, requires_grad):
    from .._creation import tensor
    return Parameter(tensor(array), requires_grad)


class _RefusingStorage:
    """The real (empty) storage, whose value apply() may not read."""

    __slots__ = ("_inner", "_cls")

    def __init__(self, inner, cls):
        self._inner, self._cls = inner, cls

    @property
    def _raw(self):
        cls = self._cls

        def refuse(op, args, static):
            raise _refusal(cls, op.name)
        raise Redirect(refuse)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def _refusal(cls, what):
    return ValueError(f"Attempted to use an uninitialized parameter in {what}. This error happens when you are using "
                      f"a `LazyModule` or explicitly manipulating `torch.nn.parameter.{cls.__name__}` objects. When "
                      "using LazyModules Call `forward` with a dummy batch to initialize the parameters before calling "
                      "torch functions")


class UninitializedTensorMixin(PeekedMetadata):
    cls_to_become = None

    def _peek(self):
        storage = self._storage   # dtype and device stay readable
        return storage._inner._raw if type(storage) is _RefusingStorage else storage._raw

    def materialize(self, shape, device=None, dtype=None):
        from .._creation import empty
        device = self.device if device is None else device
        dtype = self.dtype if dtype is None else dtype
        self.data = empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    def to(self, *args, **kwargs):
        # the conversions PyTorch allows (module.double(), .to(device)): a placeholder of that dtype and device
        from .._creation import empty
        converted = empty(0, dtype=self.dtype, device=self.device).to(*args, **kwargs)
        if converted.dtype is self.dtype and converted.device == self.device:
            return self
        return type(self)(self.requires_grad, converted.device, converted.dtype)

    def float(self, memory_format=None):
        return self.to(_dtypes.float32)

    def double(self, memory_format=None):
        return self.to(_dtypes.float64)

    def half(self, memory_format=None):
        return self.to(_dtypes.float16)

    def bfloat16(self, memory_format=None):
        return self.to(_dtypes.bfloat16)

    def cpu(self):
        return self.to("cpu")

    def numel(self):
        raise _refusal(type(self), "numel")

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. This error usually happens "
                           "in `load_state_dict` when trying to load an uninitialized parameter into an initialized "
                           "one. Call `forward` to initialize the parameters before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call `forward` to initialize "
                           "the parameters before calling `module.share_memory()`.")

    def __repr__(self):
        return f"<{type(self).__name__}>"

    def __reduce_ex__(self, proto):
        return (type(self), (self.requires_grad,))

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self.device, self.dtype)
        return memo[id(self)]


def is_lazy(param):
    return isinstance(param, UninitializedTensorMixin)


def _uninitialized(cls, requires_grad, device, dtype):
    from .._creation import empty
    t = Parameter._from_tensor.__func__(cls, empty(0, device=device, dtype=dtype), requires_grad)
    t._storage = _RefusingStorage(t._storage, cls)
    return t


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return _uninitialized(cls, requires_grad, device, dtype)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        t = _uninitialized(cls, requires_grad, device, dtype)
        t.persistent = persistent
        t._is_buffer = True
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None, persistent=True):
        pass


class _BufferMeta(type):
    # isinstance(t, Buffer): a tensor marked as a buffer (Buffer(...) returns a plain Tensor), as PyTorch's
    def __instancecheck__(cls, instance):
        if cls is Buffer and isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False):
            return True
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """A tensor that, assigned to a Module attribute, is registered as a buffer (persistent or not)."""

    def __new__(cls, data=None, *, persistent=True):
        from .._creation import empty
        if data is None:
            data = empty(0)
        t = data.detach().requires_grad_(data.requires_grad)
        t.persistent = persistent
        t._is_buffer = True
        return t
