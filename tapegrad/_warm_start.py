"""Warm starts: what one run compiled, the next run loads from disk (JAX's persistent compilation cache).

On by default, in a per-user directory: $TAPEGRAD_COMPILATION_CACHE if it names one, else
$XDG_CACHE_HOME/tapegrad/xla (~/.cache/tapegrad/xla). JAX keeps it under MAX_BYTES, dropping the
least recently used programs first. TAPEGRAD_COMPILATION_CACHE=off turns it off. A cache configured
in JAX itself (jax_compilation_cache_dir, JAX_COMPILATION_CACHE_DIR) is left as the user set it.

Every program is cached, however fast it compiled: tapegrad's first steps compile many small
kernels (about 30 ms each on CPU), which is where a cold start spends its time.
"""
import os

import jax

MAX_BYTES = 1 << 30
OFF = ("off", "0", "false", "no", "none")


def cache_dir():
    """Where the cache lives, or None when it is off."""
    setting = os.environ.get("TAPEGRAD_COMPILATION_CACHE", "").strip()
    if setting.lower() in OFF:
        return None
    if setting:
        return os.path.expanduser(setting)
    root = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(root, "tapegrad", "xla")


def enable():
    """Point JAX's persistent cache at tapegrad's directory unless JAX's own is configured."""
    if jax.config.jax_compilation_cache_dir or os.environ.get("JAX_COMPILATION_CACHE_DIR"):
        return
    path = cache_dir()
    if path is None:
        return
    try:
        os.makedirs(path, exist_ok=True)
    except OSError:
        return   # a read-only home: run cold rather than fail at import
    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_compilation_cache_max_size", MAX_BYTES)
