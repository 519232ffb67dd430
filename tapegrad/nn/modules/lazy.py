"""Lazy modules: parameters whose shape the first forward call infers (PyTorch's LazyModuleMixin).

A lazy module holds UninitializedParameter / UninitializedBuffer placeholders. A forward pre-hook infers
in_features / in_channels / num_features from the first input, materializes the placeholders, resets them as
the ordinary module would, and turns the module into that module's class (`cls_to_become`). Loading a
state dict materializes them to the loaded shapes first. The lazy classes live beside their ordinary ones
(linear.py, conv.py, normalization.py, instancenorm.py), as in PyTorch.
"""
import itertools

from ..._grad_mode import no_grad
from ..parameter import is_lazy


class LazyModuleMixin:
    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters, with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        # placeholders are saved as they are (detaching one would read it)
        for table, skip in ((self._parameters, ()), (self._buffers, self._non_persistent_buffers_set)):
            for name, value in table.items():
                if value is not None and name not in skip:
                    destination[prefix + name] = value if is_lazy(value) or keep_vars else value.detach()

    def _load_from_state_dict(self, state_dict, prefix, *args, **kwargs):
        for name, value in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and is_lazy(value) and not is_lazy(state_dict[key]):
                with no_grad():
                    value.materialize(state_dict[key].shape)
        return super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for {type(self).__name__}")

    def has_uninitialized_params(self):
        return any(is_lazy(v) for v in itertools.chain(self._parameters.values(), self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        del module._initialize_hook
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with `DataParallel`. Run a dummy "
                           "forward pass to correctly initialize the modules")
