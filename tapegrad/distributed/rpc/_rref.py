"""RRef: a reference to a value owned by one worker (PyTorch's OwnerRRef / UserRRef in one class).

The owner keeps the value (a Future, set once `remote()`'s call has run there) in its agent's table under
the RRef's id; any worker holding the RRef reaches it through RPCs to the owner. Values live until the
owner shuts down: tapegrad keeps no count of the RRef's users (PyTorch deletes the value once the last
user RRef is gone).
"""
from . import api
from ._agent import AsyncResult, is_async

__all__ = ["RRef"]


class RRef:
    """RRef(value) makes a reference owned by this worker; `rpc.remote()` makes one owned by another."""

    def __init__(self, value, type_hint=None):
        agent = api._require_agent()
        self._owner = agent.info
        self._id = (agent.info.id, next(agent.rref_ids))
        self._created = None
        agent.owned_future(self._id).set_result(value)

    def __class_getitem__(cls, item):   # RRef[Tensor] in annotations
        return cls

    @classmethod
    def _make(cls, owner, rref_id, created=None):
        rref = cls.__new__(cls)
        rref._owner, rref._id, rref._created = owner, rref_id, created
        return rref

    def __reduce__(self):
        return _unpickle, (self._owner.name, self._owner.id, self._id)

    def __repr__(self):
        kind = "OwnerRRef" if self.is_owner() else "UserRRef"
        return f"{kind}(RRefId = GloballyUniqueId(created_on={self._id[0]}, local_id={self._id[1]}))"

    def owner(self):
        return self._owner

    def owner_name(self):
        return self._owner.name

    def is_owner(self):
        return api._require_agent().info.id == self._owner.id

    def confirmed_by_owner(self):
        return self._created is None or self._created.done()

    def local_value(self):
        """The value, on its owner."""
        agent = api._require_agent()
        if agent.info.id != self._owner.id:
            raise RuntimeError(f"Cannot call localValue() on a non-OwnerRRef: this RRef is owned by {self._owner}, "
                               "not by this worker. Use to_here() to copy the value here.")
        return agent.owned_future(self._id).wait()

    def to_here(self, timeout=-1.0):
        """A copy of the value fetched from the owner (the value itself on the owner)."""
        if self.is_owner():
            return self.local_value()
        return api.rpc_sync(self._owner, _fetch, (self,), timeout=timeout)

    def rpc_sync(self, timeout=-1.0):
        """`rref.rpc_sync().method(*args)` runs the value's method on the owner and returns its result."""
        return _Proxy(self, api.rpc_sync, timeout)

    def rpc_async(self, timeout=-1.0):
        return _Proxy(self, api.rpc_async, timeout)

    def remote(self, timeout=-1.0):
        return _Proxy(self, api.remote, timeout)

    def _get_type(self, timeout=-1.0, blocking=True):
        value_type = type(self.local_value()) if self.is_owner() else api.rpc_sync(self._owner, _type_of, (self,))
        return value_type


class _Proxy:
    def __init__(self, rref, send, timeout):
        self._rref, self._send, self._timeout = rref, send, timeout

    def __getattr__(self, name):
        def method(*args, **kwargs):
            return self._send(self._rref.owner(), _invoke_method, (self._rref, name, args, kwargs),
                              timeout=self._timeout)
        return method


def _unpickle(owner_name, owner_id, rref_id):
    from .options import WorkerInfo
    return RRef._make(WorkerInfo(owner_name, owner_id), rref_id)


def _fetch(rref):
    return rref.local_value()


def _type_of(rref):
    return type(rref.local_value())


def _invoke_method(rref, name, args, kwargs):
    method = getattr(rref.local_value(), name)
    result = method(*args, **kwargs)
    return AsyncResult(result) if is_async(method) else result


def _create_owned(rref_id, func, args, kwargs):
    """Run on the owner by remote(): the value's Future is set when func's result (or error) is known."""
    agent = api._require_agent()
    owned = agent.owned_future(rref_id)
    try:
        result = func(*args, **kwargs)
    except BaseException as exc:
        owned.set_exception(exc)
        raise
    if is_async(func) or isinstance(result, AsyncResult):
        fut = result.future if isinstance(result, AsyncResult) else result
        fut.add_done_callback(lambda f: owned.set_exception(f._error) if f._error is not None
                              else owned.set_result(f._value))
        return AsyncResult(fut.then(lambda f: None))
    owned.set_result(result)
    return None
