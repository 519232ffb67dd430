"""What a trace changed in the walked objects: put back after the trace, and replayed at every call.

A traced function runs its Python once, on tracers; its effects on Python objects (a grad set to
None and then to a new tensor, a flag set, a scalar counter advanced) must happen at every call of
the program instead, and never on the trace's own values. A Snapshot copies every walked container
(dict, list, object attributes, a tensor's fields, every storage's value and version) before the
trace; `changes()` describes what differs after it in terms of walk positions, so the same changes
apply to another call's objects; `restore()` puts everything back (after the trace, or when it failed).
"""
import numpy as np

from .._tensor import Tensor
from ._walk import DICT, LIST, OBJECT, TENSOR, _SCALARS

_TENSOR_FIELDS = ("_storage", "_grad", "_requires_grad", "_grad_fn", "_out_idx", "_view", "_retains_grad")
MISSING = object()


class Unreplayable(Exception):
    """The trace created Python state a program cannot re-create (new containers or objects): the call
    runs eagerly instead (typically the first step, which creates optimizer state)."""


def _contents(obj, kind):
    if kind == DICT:
        return dict(obj)
    if kind == OBJECT:
        return dict(obj.__dict__)
    if kind == LIST:
        return list(obj)
    return tuple(getattr(obj, f) for f in _TENSOR_FIELDS)


class Snapshot:
    def __init__(self, walk):
        self.walk = walk
        self.copies = [_contents(walk.objects[pos], kind) for pos, kind in walk.containers]
        self.raws = [s._raw for s in walk.storages]
        self.versions = [s.counter.value for s in walk.storages]

    def restore(self):
        objects = self.walk.objects
        for empty in self.walk.empties:
            empty.clear()
        for (pos, kind), copy in zip(self.walk.containers, self.copies):
            obj = objects[pos]
            if kind == DICT or kind == OBJECT:
                d = obj if kind == DICT else obj.__dict__
                if len(d) != len(copy) or any(d.get(k, MISSING) is not v for k, v in copy.items()):
                    d.clear()
                    d.update(copy)
            elif kind == LIST:
                obj[:] = copy
            else:
                for f, v in zip(_TENSOR_FIELDS, copy):
                    setattr(obj, f, v)
        for s, raw, version in zip(self.walk.storages, self.raws, self.versions):
            s._raw = raw
            s.counter.value = version

    def changes(self, new_tensors, skip=()):
        """[(position, kind, key, value spec)] for every changed entry; tensors created by the trace are
        appended to `new_tensors` (value spec ("new", index)). `skip`: (position, key) left out."""
        out = []
        walk = self.walk
        if any(walk.empties):
            raise Unreplayable("an empty container was filled")
        for (pos, kind), copy in zip(walk.containers, self.copies):
            now = _contents(walk.objects[pos], kind)
            if kind == DICT or kind == OBJECT:
                for k in list(copy) + [k for k in now if k not in copy]:
                    old, new = copy.get(k, MISSING), now.get(k, MISSING)
                    if _same(old, new) or (pos, k) in skip:
                        continue
                    out.append((pos, kind, self._spec(k, new_tensors, key=True), self._spec(new, new_tensors)))
            elif kind == LIST:
                if len(now) != len(copy):
                    raise Unreplayable("a list changed length")
                for i, (old, new) in enumerate(zip(copy, now)):
                    if not _same(old, new):
                        out.append((pos, kind, ("const", i), self._spec(new, new_tensors)))
            else:
                for f, old, new in zip(_TENSOR_FIELDS, copy, now):
                    if _same(old, new):
                        continue
                    if f in ("_storage", "_view") or (f == "_grad_fn" and new is not None):
                        raise Unreplayable(f"a tensor's {f} changed")
                    out.append((pos, kind, ("const", f), self._spec(new, new_tensors)))
        return out

    def _spec(self, value, new_tensors, key=False):
        if value is MISSING:
            return ("missing",)
        if _scalar(value):
            return ("const", value)
        pos = self.walk.index.get(id(value))
        if pos is not None:
            return ("object", pos)
        if isinstance(value, Tensor) and not key:
            return ("new", new_tensor(value, new_tensors))
        raise Unreplayable(f"the function created a {type(value).__name__} kept in its state")


def new_tensor(t, new_tensors):
    """The index of tensor t (created by the trace) among the program's new tensors."""
    for i, known in enumerate(new_tensors):
        if known is t:
            return i
    if t._view is not None or t._grad_fn is not None or t._grad is not None:
        raise Unreplayable("the function keeps a view, a grad-carrying tensor or a tensor with a grad it created")
    new_tensors.append(t)
    return len(new_tensors) - 1


def _same(old, new):
    return old is new or (type(old) is type(new) and _scalar(old) and old == new)


def _scalar(value):
    return type(value) in _SCALARS or isinstance(value, np.generic)


def resolve(spec, objects, made):
    """The value a spec stands for on this call's objects (`made`: this call's new tensors)."""
    kind = spec[0]
    if kind == "const":
        return spec[1]
    if kind == "object":
        return objects[spec[1]]
    if kind == "new":
        return made[spec[1]]
    return MISSING


def replay(changes, objects, made, undo=None):
    """Make the trace's changes on this call's objects; `undo` (a list), when given, receives what each
    change replaced, for `put_back` (a call launched before its program is known to succeed)."""
    for pos, kind, key_spec, value_spec in changes:
        obj = objects[pos]
        key = resolve(key_spec, objects, made)
        value = resolve(value_spec, objects, made)
        if kind == DICT or kind == OBJECT:
            d = obj if kind == DICT else obj.__dict__
            if undo is not None:
                undo.append((d, key, d.get(key, MISSING)))
            if value is MISSING:
                d.pop(key, None)
            else:
                d[key] = value
        elif kind == LIST:
            if undo is not None:
                undo.append((obj, key, obj[key]))
            obj[key] = value
        else:
            if undo is not None:
                undo.append((obj, _ATTRIBUTE, (key, getattr(obj, key))))
            setattr(obj, key, value)


_ATTRIBUTE = object()   # an undo entry of an attribute set on an object (not an item of a container)


def put_back(undo):
    """Undo what `replay` recorded in `undo`, newest change first."""
    for target, key, previous in reversed(undo):
        if key is _ATTRIBUTE:
            setattr(target, *previous)
        elif previous is MISSING:
            target.pop(key, None)
        else:
            target[key] = previous
