"""UninitializedParameter / UninitializedBuffer (lazy modules' placeholders) and Buffer.

An uninitialized tensor holds an empty array of its dtype and device, behind a storage that refuses every op:
`_dispatch.apply` reading it gets a Redirect whose handler raises PyTorch's ValueError. `materialize(shape)`
gives it a real storage and turns it into the class it becomes (Parameter, or a plain Tensor for a buffer).
"""
from .._dispatch import Redirect
from .._tensor import Tensor
from .parameter import Parameter


class _RefusingStorage:
    """The real (empty) storage, whose value apply() may not read."""

    __slots__ = ("_inner", "_cls")

    def __init__(self, inner, cls):
        self._inner, self._cls = inner, cls

    @property
    def _raw(self):
        cls = self._cls

        def refuse(op, args, static):
            raise ValueError(f"Attempted to use an uninitialized parameter in {op.name}. This error happens when you "
                             f"are using a `LazyModule` or explicitly manipulating `torch.nn.parameter.{cls.__name__}` "
                             "objects. When using LazyModules Call `forward` with a dummy batch to initialize the "
                             "parameters before calling torch functions")
        raise Redirect(refuse)

    def __getattr__(self, name):
        return getattr(self._inner, name)


class UninitializedTensorMixin:
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
