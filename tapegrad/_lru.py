"""The bounded caches of programs and kernels: least recently used goes first, by entry count and by bytes.

A cached program's size is what compiling it added to the process's resident memory (see
`_program_stats._on_duration`): XLA:CPU gives no code size of its own (`memory_analysis()` reports 0), and the
resident growth across a compile, taken after the allocator has handed the compile's scratch back, is
what a user sees in `top`. Measured here: 0.15-0.5 MB for a one-op kernel, 1-4 MB for a 150-op backward.
A value's bytes are charged when it compiles, which may be long after it was cached (a program compiles
once per set of input shapes); charging may push the cache over its byte limit and evict others.
"""
import collections
import os


class LRU:
    """A dict bounded by entry count and total bytes; reading an entry makes it the most recently used.

    Values that carry bytes have `bytes` and `owner` attributes (Program does); others count as 0 bytes.
    """

    def __init__(self, limit, byte_limit=None, on_evict=None):
        self.limit = limit
        self.byte_limit = byte_limit
        self.bytes = 0
        self.entries = collections.OrderedDict()
        self.on_evict = on_evict   # called once per entry dropped to stay within a limit

    def get(self, key):
        value = self.entries.get(key)
        if value is not None:
            self.entries.move_to_end(key)
        return value

    def put(self, key, value):
        old = self.entries.pop(key, None)
        if old is not None:
            self.bytes -= getattr(old, "bytes", 0)
        self.entries[key] = value
        if hasattr(value, "owner"):
            value.owner = (self, key)
            self.bytes += value.bytes
        self._shrink(keep=key)
        return value

    def charge(self, key, nbytes):
        """The value cached under `key` grew by nbytes (it compiled); evict others until within the limits."""
        value = self.entries.get(key)
        if value is None:   # already evicted: its memory goes with it
            return
        value.bytes += nbytes
        self.bytes += nbytes
        self._shrink(keep=key)

    def _shrink(self, keep):
        while len(self.entries) > self.limit or (self.byte_limit is not None and self.bytes > self.byte_limit):
            key = next(iter(self.entries))
            if key == keep:   # the newest entry alone over the byte limit stays: its caller is running it
                if len(self.entries) == 1:
                    return
                self.entries.move_to_end(key)
                continue
            value = self.entries.pop(key)
            self.bytes -= getattr(value, "bytes", 0)
            if self.on_evict is not None:
                self.on_evict()

    def __len__(self):
        return len(self.entries)

    def clear(self):
        self.entries.clear()
        self.bytes = 0


_STATM = [None]
_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes():
    """The process's resident memory now (Linux; 0 elsewhere, which charges nothing)."""
    fd = _STATM[0]
    if fd is None:
        try:
            fd = os.open("/proc/self/statm", os.O_RDONLY)
        except OSError:
            fd = False
        _STATM[0] = fd
    if fd is False:
        return 0
    return int(os.pread(fd, 64, 0).split()[1]) * _PAGE
