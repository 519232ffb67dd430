"""OptimizedModule: what `tapegrad.compile(module)` returns (PyTorch's torch._dynamo OptimizedModule).

The original module is registered as the submodule `_orig_mod`, so `state_dict()` keys, `repr` and
`named_parameters()` carry PyTorch's `_orig_mod.` prefix; attributes the wrapper lacks are read from
the original module; calling it runs the original module's `__call__` (hooks included) compiled.
"""
from ..nn import Module


class OptimizedModule(Module):
    def __init__(self, mod, compiled):
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_compiled", compiled)

    def forward(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self.__dict__["_modules"]["_orig_mod"], name)
