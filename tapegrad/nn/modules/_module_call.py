"""Calling a Module: its forward run between the forward hooks, inside the backward hooks' identity Functions
when any are registered; and the hooks' registration. A base of Module."""
import itertools

from ..._grad_mode import is_grad_enabled
from ...autograd._hooks import RemovableHandle
from . import _backward_hooks

_hook_ids = itertools.count()


class _ModuleCall:
    """Module's __call__ and its hook tables' registration (the tables are made by Module.__init__)."""

    def __call__(self, *args, **kwargs):
        if not (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks or self._backward_pre_hooks):
            return self.forward(*args, **kwargs)
        for key, hook in list(self._forward_pre_hooks.items()):
            if key in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(f"forward pre-hook must return None or a tuple of (new_args, "
                                           f"new_kwargs), but got {result}.")
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        legacy = self.__dict__.get("_is_full_backward_hook") is False
        backward_hooked = (self._backward_hooks or self._backward_pre_hooks) and is_grad_enabled() and not legacy
        if backward_hooked:
            args, call = _backward_hooks.wrap_inputs(self, args)
        try:
            output = self.forward(*args, **kwargs)
        except Exception:
            for key, hook in list(self._forward_hooks.items()):   # always_call hooks run on failure too
                if key in self._forward_hooks_always_called:
                    hook(self, args, kwargs, None) if key in self._forward_hooks_with_kwargs else hook(self, args, None)
            raise
        for key, hook in list(self._forward_hooks.items()):
            result = hook(self, args, kwargs, output) if key in self._forward_hooks_with_kwargs \
                else hook(self, args, output)
            if result is not None:
                output = result
        if backward_hooked:
            output = _backward_hooks.wrap_outputs(call, output)
        elif legacy and self._backward_hooks:
            _backward_hooks.hook_last_node(self, args, output)
        return output

    _call_impl = __call__

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        return self._add_hook(self._forward_pre_hooks, self._forward_pre_hooks_with_kwargs, hook, prepend,
                              with_kwargs)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        handle = self._add_hook(self._forward_hooks, self._forward_hooks_with_kwargs, hook, prepend, with_kwargs)
        if always_call:
            self._forward_hooks_always_called.add(handle._key)
        return handle

    @staticmethod
    def _add_hook(table, kwarg_keys, hook, prepend, with_kwargs):
        key = next(_hook_ids)
        table[key] = hook
        if prepend:
            table.move_to_end(key, last=False)
        if with_kwargs:
            kwarg_keys.add(key)
        return RemovableHandle(table, key)

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) -> None or new grad_input, called when the gradients of
        the module's inputs are computed."""
        self._one_kind_of_backward_hook(True)
        return self._add_hook(self._backward_hooks, set(), hook, prepend, False)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) -> None or new grad_output, called before the module's backward."""
        return self._add_hook(self._backward_pre_hooks, set(), hook, prepend, False)

    def register_backward_hook(self, hook):
        """PyTorch's deprecated form: hook(module, grad_input, grad_output) on the node of the forward's last op
        (its inputs' gradients, which may not be the module's; see _backward_hooks.hook_last_node)."""
        self._one_kind_of_backward_hook(False)
        return self._add_hook(self._backward_hooks, set(), hook, False, False)

    def _one_kind_of_backward_hook(self, full):
        if self.__dict__.get("_is_full_backward_hook") is (not full):
            raise RuntimeError("Cannot use both regular backward hooks and full backward hooks on a single Module. "
                               "Please use only one of them.")
        self.__dict__["_is_full_backward_hook"] = full
