"""Which JAX backends this process can start (probed once: backends do not appear later)."""
import functools
import importlib.util

import jax


@functools.lru_cache(maxsize=None)
def has_devices(platform):
    try:
        return len(jax.devices(platform)) > 0
    except RuntimeError:
        return False


def has_plugin(*modules):
    """Whether one of JAX's plugin packages is installed (it may still find no device)."""
    for name in modules:
        try:
            if importlib.util.find_spec(name) is not None:
                return True
        except (ImportError, ValueError):
            continue
    return False
