"""The steady call's guard: the arguments are walked, the rest of the state is checked by identity.

A full walk (`_walk`) is Python per object reached, every call. But the state a step reaches besides
its arguments -- its closure and globals, a module, an optimizer -- holds the same objects from call
to call; only what the program itself puts there changes (a new `.grad` tensor each step). So after a
full walk whose key has a program, a Guard keeps that part of the walk (objects by position, storages,
lifted learning rates, views) and a flat snapshot of the shallow contents of everything in it: each
dict's and object's keys and values, each list's items, each tensor's storage, view, grad_fn,
requires_grad and grad, each function's code and roots, and the emptiness of the empty containers.
A later call walks its arguments alone and compares the snapshot by identity in a few C-level passes
(no recursion, no tokens). When every entry is the same object, a full walk would give the same key
and the same positions, so the program runs on the kept walk. Any difference (a value equal but not
the same object included) means one full walk, and a new guard when its key has a program.

After the program has committed, the tensors it created and stored take the places of the ones they
replace (a step's new grads where the old grads were), and the snapshot is taken again. That is done
only where a full walk of the new state would give the same key: the program replaces tensors by
tensors of the same shape, dtype and requires_grad, each reached once, and writes storages without
changing their shapes. A program that changes anything else (sets a grad to None, advances a Python
counter) keeps no guard: the next call walks in full.

Identity does not see a storage's value change shape or dtype in place; tapegrad never does that
(`.data =`, `Module.to`/`half()`, and the shape-changing in-place ops such as `t_` and `unsqueeze_`
rebind the tensor to a new storage). A Guard holds the state it checks (as the program's last call
left it) until the next call.
"""
import operator
from itertools import chain

import numpy as np

from .._tensor import Tensor
from ._snapshot import MISSING, resolve
from ._walk import DICT, LIST, OBJECT, TooLarge, Walk, _is_library, function_roots

_is = operator.is_
_values = dict.values   # (an OrderedDict's own order shows in its keys, iterated as it orders them)
_fields = operator.attrgetter("_storage", "_view", "_grad_fn", "_requires_grad", "_grad")
_code = operator.attrgetter("__code__")


class Reached:
    """What a program's run needs of a walk: objects by position, storages, lifted rates, views."""

    __slots__ = ("objects", "storages", "lifted", "views")


def _group_values(group):
    # a lifted rate is a program input: its type is guarded, its value is not
    return [type(v) if k == "lr" else v for k, v in group.items()]


class Guard:
    @classmethod
    def make(cls, walk, traced, program, extra, roots):
        """A Guard for the state `walk` found, or None where a steady call cannot be recognised."""
        cut = walk.cut
        n, ns = cut["objects"], cut["storages"]
        # The kept part may not lead back into the arguments' part (positions would depend on them).
        if any(p < n for p in walk.revisits[cut["revisits"]:]) or any(s < ns for s in walk.shared[cut["shared"]:]):
            return None
        plan = _plan(walk, traced)
        if plan is None:
            return None
        guard = cls()
        guard.program, guard.extra, guard.dynamic = program, extra, walk.dynamic
        guard.key_args = walk.key[:cut["tokens"]]
        guard.roots = roots[2:]
        guard.objects = walk.objects[n:]
        guard.storages = walk.storages[ns:]
        guard.lifted = walk.lifted[cut["lifted"]:]
        guard.views = walk.views[cut["views"]:]
        guard.empties = walk.empties[cut["empties"]:]
        guard.sets = walk.sets[cut["sets"]:]
        guard.functions = walk.functions[cut["functions"]:]
        guard.user_functions = [f for f in guard.functions if not _is_library(f.__module__)]
        groups = {pos for pos, _ in walk.lifted}
        guard.dicts, guard.objs, guard.lists, guard.tensors, guard.groups = [], [], [], [], []
        slot = {}
        for pos, kind in walk.containers[cut["containers"]:]:
            obj = walk.objects[pos]
            if pos in groups:
                guard.groups.append(obj)
            elif kind == DICT:
                guard.dicts.append(obj)
            elif kind == OBJECT:
                guard.objs.append(obj)
            elif kind == LIST:
                guard.lists.append(obj)
            else:
                slot[pos] = len(guard.tensors)
                guard.tensors.append(obj)
        # (kept position, kept storage index, tensor slot, new tensor index): what the commit replaces
        guard.plan = [(q - n, si - ns, slot[q], k) for q, si, k in plan if q >= n]
        guard.ids = set(map(id, guard.objects))
        guard.storage_ids = set(map(id, guard.storages))
        guard.lengths, entries = guard._now()
        guard.snapshot = list(entries)
        # where the commit's replacements show in the snapshot: the entry that held the old tensor (a
        # grad field, a dict value), and the old tensor's own fields (the snapshot's last entries)
        fields = len(guard.snapshot) - 5 * len(guard.tensors)
        entries = {id(guard.objects[q]): [] for q, _, _, _ in guard.plan}
        for j, e in enumerate(guard.snapshot):
            if id(e) in entries:
                entries[id(e)].append(j)
        guard.patches = []
        for q, _, ti, _ in guard.plan:
            at = entries[id(guard.objects[q])]
            if len(at) != 1:
                return None
            guard.patches.append((at[0], fields + 5 * ti))
        return guard

    def _now(self):
        """(lengths, entries): the lengths compare by value; when they are equal the entries line up."""
        dicts = self.dicts + list(map(vars, self.objs))
        roots = list(map(function_roots, self.user_functions))
        lengths = list(map(len, chain(dicts, self.lists, self.groups, roots)))
        return lengths, chain(
            chain.from_iterable(dicts), chain.from_iterable(map(_values, dicts)),
            chain.from_iterable(self.lists),
            chain.from_iterable(self.groups), chain.from_iterable(map(_group_values, self.groups)),
            map(_code, self.functions), chain.from_iterable(roots),
            chain.from_iterable(map(_fields, self.tensors)))   # last: `advance` rewrites these in place

    def reach(self, roots, extra):
        """The walk of this call (its arguments walked, the rest kept), or None where a full walk is needed."""
        kept = roots[2:]
        if extra != self.extra or len(kept) != len(self.roots) or not all(map(_is, kept, self.roots)):
            return None
        try:
            walk = Walk(roots[:2], dynamic=self.dynamic)
        except TooLarge:
            return None
        if walk.grad_fns or walk.key != self.key_args or not self.ids.isdisjoint(walk.index) \
                or not self.storage_ids.isdisjoint(walk.storage_index):
            return None
        lengths, now = self._now()
        if lengths != self.lengths or not all(map(_is, now, self.snapshot)) or any(self.empties) \
                or not all(self.sets):
            return None
        reached = Reached()
        reached.objects = walk.objects + self.objects
        reached.storages = walk.storages + self.storages
        reached.lifted = walk.lifted + self.lifted
        reached.views = walk.views + self.views
        return reached

    def advance(self, made):
        """After a commit: the new tensors where the old ones were, in the kept walk and in the snapshot
        (nothing else in it changed: `_plan`)."""
        snapshot = self.snapshot
        for (q, si, ti, k), (entry, fields) in zip(self.plan, self.patches):
            old, new = self.objects[q], made[k]
            snapshot[entry] = new
            snapshot[fields:fields + 5] = _fields(new)
            self.ids.discard(id(old))
            self.storage_ids.discard(id(old._storage))
            self.objects[q] = self.tensors[ti] = new
            self.storages[si] = new._storage
            self.ids.add(id(new))
            self.storage_ids.add(id(new._storage))


def _plan(walk, traced):
    """[(position, storage index, new tensor index)] of the tensors the program's commit replaces, or None
    where the commit changes the key (anything but same-shaped tensors replaced, or reshaped storages)."""
    avals = traced.jaxpr.out_avals
    for j, i in enumerate(traced.written):
        raw = walk.storages[i]._raw
        if avals[j].shape != raw.shape or avals[j].dtype != raw.dtype:
            return None
    if any(kind == "const" and not isinstance(value, (float, np.floating))
           for _, kind, value in traced.lr_outputs):
        return None
    revisited, shared = set(walk.revisits), set(walk.shared)
    objects, nw = walk.objects, len(traced.written)
    plan, used = [], set()
    for pos, kind, key_spec, value_spec in traced.changes:
        if value_spec[0] != "new" or value_spec[1] in used:
            return None
        k = value_spec[1]
        used.add(k)
        obj, key = objects[pos], resolve(key_spec, objects, ())
        if kind == DICT:
            old = obj.get(key, MISSING)
        elif kind == OBJECT:
            old = obj.__dict__.get(key, MISSING)
        elif kind == LIST:
            old = obj[key]
        else:
            old = getattr(obj, key)
        if type(old) is not Tensor:
            return None
        q = walk.index.get(id(old))
        si = walk.storage_index.get(id(old._storage))
        raw, aval = old._storage._raw, avals[nw + k]
        if q is None or q in revisited or si in shared or old._view is not None or old._grad is not None \
                or old._grad_fn is not None or old._requires_grad != traced.new[k] \
                or raw.shape != aval.shape or raw.dtype != aval.dtype:
            return None
        plan.append((q, si, k))
    return plan
