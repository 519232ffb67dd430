"""PyTorch's FSDP wrapping helpers: auto-wrap policies, `wrap` and `enable_wrap`."""
import contextlib

__all__ = ["always_wrap_policy", "lambda_auto_wrap_policy", "transformer_auto_wrap_policy",
           "size_based_auto_wrap_policy", "ModuleWrapPolicy", "enable_wrap", "wrap"]


def always_wrap_policy(*args, **kwargs):
    return True


def lambda_auto_wrap_policy(module, recurse, nonwrapped_numel, lambda_fn):
    return True if recurse else lambda_fn(module)


def transformer_auto_wrap_policy(module, recurse, nonwrapped_numel, transformer_layer_cls):
    """Wrap every module of the given (transformer block) classes."""
    return True if recurse else isinstance(module, tuple(transformer_layer_cls))


def size_based_auto_wrap_policy(module, recurse, nonwrapped_numel, min_num_params=int(1e8), force_leaf_modules=None,
                                exclude_wrap_modules=None):
    """Wrap a module once the parameters not yet wrapped below it number at least min_num_params."""
    from ... import nn
    force_leaf = tuple(force_leaf_modules or (nn.MultiheadAttention,))
    exclude = tuple(exclude_wrap_modules or (nn.ModuleList, nn.ModuleDict))
    large = nonwrapped_numel >= min_num_params
    return large and not isinstance(module, force_leaf if recurse else exclude)


class ModuleWrapPolicy:
    """Wrap every module of the given classes."""

    def __init__(self, module_classes):
        self._module_classes = tuple(module_classes)

    def __call__(self, module, recurse, nonwrapped_numel):
        return True if recurse else isinstance(module, self._module_classes)

    def __repr__(self):
        return f"ModuleWrapPolicy({set(self._module_classes)})"


def _recursive_wrap(module, policy, wrap_fn, ignored_modules, only_wrap_children=False):
    """PyTorch's recursion: (module, number of its parameters now wrapped); children first, then the module
    itself when the policy takes the parameters left over."""
    from .fully_sharded_data_parallel import FullyShardedDataParallel
    if module in ignored_modules or isinstance(module, FullyShardedDataParallel):
        return module, 0
    wrapped_ids = {id(p) for m in module.modules() if isinstance(m, FullyShardedDataParallel) for p in m.parameters()}
    nonwrapped = sum(p.numel() for p in module.parameters() if id(p) not in wrapped_ids)
    if not policy(module=module, recurse=True, nonwrapped_numel=nonwrapped):
        return module, 0
    total = 0
    for name, child in list(module.named_children()):
        if child in ignored_modules:
            continue
        wrapped, count = _recursive_wrap(child, policy, wrap_fn, ignored_modules)
        setattr(module, name, wrapped)
        total += count
    if not only_wrap_children and policy(module=module, recurse=False, nonwrapped_numel=nonwrapped - total):
        return wrap_fn(module), nonwrapped
    return module, total


_wrap_context = []   # (wrapper class, its keyword arguments) of the enable_wrap blocks running


@contextlib.contextmanager
def enable_wrap(*, wrapper_cls, **wrapper_kwargs):
    """Inside, `wrap(module)` wraps with wrapper_cls(module, **wrapper_kwargs)."""
    _wrap_context.append((wrapper_cls, wrapper_kwargs))
    try:
        yield
    finally:
        _wrap_context.pop()


def wrap(module, **wrap_overrides):
    """module wrapped by the innermost enable_wrap's class (overrides win); unchanged outside enable_wrap."""
    if not _wrap_context:
        return module
    cls, kwargs = _wrap_context[-1]
    return cls(module, **{**kwargs, **wrap_overrides})
