"""Warm starts: what one run compiled, the next run loads from disk (JAX's persistent compilation cache).

On by default, in a per-user directory: $TAPEGRAD_COMPILATION_CACHE if it names one, else
$XDG_CACHE_HOME/tapegrad/xla (~/.cache/tapegrad/xla). TAPEGRAD_COMPILATION_CACHE=off turns it off. A
cache configured in JAX itself (jax_compilation_cache_dir, JAX_COMPILATION_CACHE_DIR) is left as the
user set it.

Every program is cached, however fast it compiled: tapegrad's first steps compile many small
kernels (about 30 ms each on CPU), which is where a cold start spends its time. So the cache holds
thousands of entries, and JAX's own bound (jax_compilation_cache_max_size) does not suit it: at every
write it reads every entry's access time under a file lock (60-280 ms per write with 3,300 entries,
several times the compile it saves). tapegrad bounds the directory itself instead (`trim`): at a
process's exit, at most once every TRIM_SECONDS, it drops the least recently used entries (by the file
system's access and modification times) until the directory holds at most MAX_BYTES.
"""
import atexit
import os
import time

import jax

MAX_BYTES = 1 << 30
TRIM_SECONDS = 3600
OFF = ("off", "0", "false", "no", "none")
_ENTRY, _ATIME = "-cache", "-atime"   # JAX's names: an executable, and its own eviction's access time
_STAMP = ".tapegrad-trimmed"          # touched by each trim


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
    jax.config.update("jax_compilation_cache_max_size", -1)   # no eviction scan per write: see trim
    atexit.register(trim, path)


def trim(path, max_bytes=MAX_BYTES, every=TRIM_SECONDS):
    """Drop the least recently used entries of the cache in `path` until it holds at most `max_bytes`,
    unless a trim ran in the last `every` seconds. Returns the number of entries removed (None: skipped).
    An entry's access-time file (JAX's own eviction's, left by an earlier version) goes with it."""
    stamp = os.path.join(path, _STAMP)
    try:
        if time.time() - os.stat(stamp).st_mtime < every:
            return None
    except FileNotFoundError:
        pass
    except OSError:
        return None
    entries, total, removed = [], 0, 0
    try:
        with os.scandir(path) as found:
            for entry in found:
                try:
                    if entry.name.endswith(_ENTRY):
                        st = entry.stat()
                        entries.append((max(st.st_atime, st.st_mtime), st.st_size, entry.path))
                        total += st.st_size
                except OSError:   # (another process removed it first)
                    pass
        entries.sort()
        for _, size, entry in entries:
            if total <= max_bytes:
                break
            for name in (entry, entry[:-len(_ENTRY)] + _ATIME):   # (JAX's own eviction reads both)
                try:
                    os.remove(name)
                except OSError:
                    pass
            removed += 1
            total -= size
        with open(stamp, "w"):
            pass
    except OSError:   # a directory gone or read-only: nothing to keep bounded here
        return None
    return removed
