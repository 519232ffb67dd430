"""The globals a weights_only load accepts beyond tensors and plain containers, as PyTorch's
torch.serialization.add_safe_globals / safe_globals / get_safe_globals / clear_safe_globals."""
import pickle

_safe = []   # entries as given: a class or function, or (it, "module.name")


def _check(entries):
    if not isinstance(entries, (list, tuple)):
        raise TypeError(f"safe_globals must be a list of callables or (callable, 'module.name') tuples, "
                        f"but got {type(entries).__name__}.")
    for e in entries:
        if isinstance(e, tuple) and not (len(e) == 2 and isinstance(e[1], str)):
            raise TypeError(f"Expected tuple entries of safe_globals to be (callable, 'module.name'), got {e!r}.")
    return list(entries)


def add_safe_globals(safe_globals):
    """Mark these globals safe for a weights_only load: e.g. add_safe_globals([MyClass])."""
    _safe.extend(_check(safe_globals))


def get_safe_globals():
    return list(_safe)


def clear_safe_globals():
    _safe.clear()


class safe_globals:
    """Context manager: the globals are safe for weights_only loads inside the `with` block only."""

    def __init__(self, safe_globals):
        self._entries = _check(safe_globals)
        self._saved = None

    def __enter__(self):
        self._saved = list(_safe)
        _safe.extend(self._entries)

    def __exit__(self, *exc):
        _safe[:] = self._saved
        return False


def allowed(full_name):
    """The global registered as safe under `module.name`, or None."""
    for e in _safe:
        if isinstance(e, tuple):
            if e[1] == full_name:
                return e[0]
        elif f"{getattr(e, '__module__', '')}.{getattr(e, '__qualname__', '')}" == full_name:
            return e
    return None


def weights_only_error(reason, unsupported_global=None):
    """PyTorch's UnpicklingError for a weights_only load that met something it does not accept."""
    if unsupported_global is not None:
        reason = (f"Unsupported global: GLOBAL {unsupported_global} was not an allowed global by default. Please use "
                  f"`tapegrad.serialization.add_safe_globals([{unsupported_global}])` or the "
                  f"`tapegrad.serialization.safe_globals([{unsupported_global}])` context manager to allowlist this "
                  "global if you trust this class/function.")
    return pickle.UnpicklingError(
        "Weights only load failed. This file can still be loaded, to do so you have two options, do those steps "
        "only if you trust the source of the checkpoint. \n\t(1) Re-running `tapegrad.load` with `weights_only` "
        "set to `False` will likely succeed, but it can result in arbitrary code execution. Do it only if you got "
        "the file from a trusted source.\n\t(2) Alternatively, to load with `weights_only=True` please check the "
        f"recommended steps in the following error message.\n\tWeightsUnpickler error: {reason}\n\nCheck the "
        "documentation of tapegrad.load (as torch.load's) to learn more about types accepted by default with "
        "weights_only.")
