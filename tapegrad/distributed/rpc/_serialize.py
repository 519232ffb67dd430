"""What travels between workers: length-prefixed pickles, with tensors and errors handled as PyTorch's RPC does.

Inside a distributed autograd context a tensor that requires grad is sent as its value plus its position
in the message; the sender keeps the tensor (its "send" record) and the receiver rebuilds it behind a
RecvRpc node (its "recv" record), so a backward on the receiver can hand the gradient back
(tapegrad/distributed/autograd). Outside a context tensors are pickled as usual (values copied,
requires_grad kept).
"""
import io
import pickle
import struct
import sys
import threading
import traceback
import types

import numpy as np

_HEADER = struct.Struct("!Q")
_receiving = threading.local()   # (context, sender id, autograd message id) while a payload is unpickled


def send_frame(sock, obj):
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    sock.sendall(_HEADER.pack(len(data)) + data)


def recv_frame(sock):
    """The next object on the socket, or None when the peer closed it."""
    head = _recv_exact(sock, _HEADER.size)
    if head is None:
        return None
    body = _recv_exact(sock, _HEADER.unpack(head)[0])
    return None if body is None else pickle.loads(body)


def _recv_exact(sock, n):
    buf = bytearray()
    while len(buf) < n:
        try:
            chunk = sock.recv(min(n - len(buf), 1 << 20))
        except OSError:
            return None
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


class _Pickler(pickle.Pickler):
    def __init__(self, file, sends):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.sends = sends

    def reducer_override(self, obj):
        from ..._tensor import Tensor
        if self.sends is not None and isinstance(obj, Tensor) and obj.requires_grad:
            self.sends.append(obj)
            return _received_tensor, (np.asarray(obj.detach()._value), len(self.sends) - 1)
        if isinstance(obj, types.FunctionType) and obj.__module__.startswith("tapegrad") \
                and getattr(sys.modules.get(obj.__module__), obj.__qualname__, None) is not obj:
            # tapegrad.sin & co. are made by factories (and wrapped once tapegrad.fx is imported), so
            # pickle cannot find them where they were defined: sent by their public name
            public = _public_name(obj)
            if public is not None:
                return _public_function, public
        return NotImplemented


_PUBLIC_MODULES = ("tapegrad", "tapegrad.nn.functional", "tapegrad.linalg", "tapegrad.special", "tapegrad.fft")


def _public_name(fn):
    import importlib
    for module in _PUBLIC_MODULES:
        if getattr(importlib.import_module(module), fn.__name__, None) is fn:
            return module, fn.__name__
    return None


def _public_function(module, name):
    import importlib
    return getattr(importlib.import_module(module), name)


def dumps(obj, record_sends):
    """(bytes, tensors sent with autograd) -- the list only when `record_sends` (inside a context)."""
    sends = [] if record_sends else None
    buf = io.BytesIO()
    _Pickler(buf, sends).dump(obj)
    return buf.getvalue(), sends


def loads(data, context=None, sender=None, message_id=None):
    _receiving.state = (context, sender, message_id)
    try:
        return pickle.loads(data)
    finally:
        _receiving.state = None


def _received_tensor(array, index):
    from ..autograd._context import receive_tensor
    context, sender, message_id = getattr(_receiving, "state", None) or (None, None, None)
    return receive_tensor(array, context, sender, message_id, index)


# ---- errors: the callee's exception raised again in the caller, with its type and message ------------

def pack_error(exc, where):
    """(exception type, message) naming the worker and the callee's traceback, as PyTorch's text reads."""
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    text = f"{type(exc).__name__}: On {where}:\n{exc!r}\n{tb}"
    try:
        pickle.dumps(type(exc))
        kind = type(exc)
    except Exception:   # a type the caller cannot import (a local class): RuntimeError carries the text
        kind = RuntimeError
    return kind, text


def unpack_error(kind, text):
    try:
        return kind(text)
    except Exception:   # an exception type whose constructor wants other arguments
        return RuntimeError(text)
