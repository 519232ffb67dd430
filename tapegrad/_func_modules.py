"""tapegrad.func's functions beside the transforms: functional_call (a module called with some of its
parameters and buffers replaced), stack_module_state (copies of one architecture stacked for vmap),
replace_all_batch_norm_modules_, and functionalize and debug_unwrap, which tapegrad's functional core makes
the identity."""
import contextlib
import functools


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *, tie_weights=True,
                    strict=False):
    """Call `module` with some of its parameters and buffers replaced by the given tensors."""
    dicts = parameter_and_buffer_dicts
    if isinstance(dicts, (list, tuple)):
        merged = {}
        for d in dicts:
            for k, v in d.items():
                if k in merged:
                    raise ValueError(f"{k} appeared in multiple dictionaries; behavior of functional call is "
                                     "ambiguous")
                merged[k] = v
        dicts = merged
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    with _swapped(module, dict(dicts), tie_weights, strict):
        return module(*args, **(kwargs or {}))


@contextlib.contextmanager
def _swapped(module, replacements, tie_weights, strict):
    slots = {}   # name -> (table, key) of every parameter and buffer
    by_identity = {}
    for prefix, m in module.named_modules(remove_duplicate=False):
        for table in (m._parameters, m._buffers):
            for key, t in table.items():
                name = f"{prefix}.{key}" if prefix else key
                slots[name] = (table, key)
                if t is not None:
                    by_identity.setdefault(id(t), []).append(name)
    targets = {k: v for k, v in replacements.items() if k in slots}
    if tie_weights:
        for name, value in list(targets.items()):
            table, key = slots[name]
            original = table[key]
            for tied in by_identity.get(id(original), ()) if original is not None else ():
                targets.setdefault(tied, value)
    if strict:
        unexpected = sorted(k for k in replacements if k not in slots)
        missing = sorted(k for k in slots if k not in targets)
        if unexpected or missing:
            lines = [f"Error(s) in reparametrizing for {type(module).__name__}:"]
            if unexpected:
                lines.append("\tUnexpected key(s): " + ", ".join(repr(k) for k in unexpected) + ".")
            if missing:
                lines.append("\tMissing key(s): " + ", ".join(repr(k) for k in missing) + ".")
            raise RuntimeError("\n".join(lines))
    saved = {name: slots[name][0][slots[name][1]] for name in targets}
    try:
        for name, value in targets.items():
            table, key = slots[name]
            table[key] = value
        yield
    finally:
        for name, value in saved.items():
            table, key = slots[name]
            table[key] = value


def stack_module_state(models):
    """(params, buffers) of several copies of one architecture, stacked along a new first dimension."""
    from . import stack
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    params = {k: stack([dict(m.named_parameters())[k].detach() for m in models]).requires_grad_() for k, _ in
              models[0].named_parameters()}
    buffers = {k: stack([dict(m.named_buffers())[k] for m in models]) for k, _ in models[0].named_buffers()}
    return params, buffers


def replace_all_batch_norm_modules_(root):
    """Every BatchNorm module in `root` that tracks running statistics stops (its running mean, variance and
    count become None), so that it can run under vmap; returns root."""
    from .nn.modules.normalization import _BatchNorm
    for module in root.modules():
        if isinstance(module, _BatchNorm) and module.track_running_stats:
            module.running_mean = module.running_var = module.num_batches_tracked = None
            module.track_running_stats = False
    return root


_REMOVE = ("mutations", "mutations_and_views")


def functionalize(func, *, remove="mutations"):
    """func with its in-place ops and views replaced by out-of-place ops, as torch.func.functionalize: every op
    here already is a pure function of arrays under the tape's mutable tensors (PyTorch's functionalization is
    what tapegrad's core does for every function), so func is returned as it computes, input mutations
    included."""
    if remove not in _REMOVE:
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for remove={remove}. Valid options "
            "are:\n     remove='mutations': all inplace and out= operators will be removed from the program, and "
            "replaced with their out-of-place equivalents.\n     remove='mutations_and_views': In addition to the "
            "above, all aliasing operators {view} will be replaced with their non-aliasing counterparts, "
            "{view}_copy.\n")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)
    return wrapper


def debug_unwrap(tensor, *, recurse=True):
    """The tensor a transform wrapped: tapegrad's transforms hand functions plain tensors, so the tensor itself."""
    return tensor
