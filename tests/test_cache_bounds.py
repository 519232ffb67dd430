"""The program and kernel caches are bounded by entries and by bytes, least recently used first; the
bytes are the resident memory each compile added, and backward_cache_info() reports them."""
import numpy as np
import pytest

import tapegrad
from tapegrad import _program_stats, _programs
from tapegrad._lru import LRU


class Sized:
    def __init__(self, nbytes=0):
        self.bytes, self.owner = nbytes, None


def test_entry_limit_drops_least_recently_used():
    evicted = []
    cache = LRU(2, on_evict=lambda: evicted.append(1))
    cache.put("a", Sized()), cache.put("b", Sized())
    cache.get("a")
    cache.put("c", Sized())
    assert list(cache.entries) == ["a", "c"] and len(evicted) == 1


def test_byte_limit_drops_least_recently_used_when_a_value_grows():
    cache = LRU(10, byte_limit=100)
    a, b, c = cache.put("a", Sized()), cache.put("b", Sized()), cache.put("c", Sized())
    assert a.owner == (cache, "a")
    cache.charge("a", 40)
    cache.charge("b", 40)
    cache.get("a")   # b is now the least recently used
    cache.charge("c", 40)
    assert set(cache.entries) == {"a", "c"} and cache.bytes == 80 == a.bytes + c.bytes


def test_a_value_alone_over_the_byte_limit_stays():
    cache = LRU(10, byte_limit=100)
    cache.put("a", Sized(30))
    cache.put("big", Sized())
    cache.charge("big", 500)
    assert list(cache.entries) == ["big"] and cache.bytes == 500
    cache.charge("gone", 10)   # an evicted value's late compile charges nothing
    assert cache.bytes == 500


def test_replacing_and_clearing_keep_the_byte_count():
    cache = LRU(10, byte_limit=1000)
    cache.put("a", Sized(30))
    cache.put("a", Sized(50))
    assert cache.bytes == 50
    cache.clear()
    assert cache.bytes == 0 and len(cache) == 0


def _step(x, w, n):
    x.grad = w.grad = None
    y = x[:n] @ w
    for _ in range(3):
        y = (y @ w).tanh()
    y.sum().backward()
    return x.grad.numpy().copy(), w.grad.numpy().copy()


@pytest.fixture
def compiled_tier(monkeypatch, fresh_program_caches, no_program_rent):
    monkeypatch.setattr(_programs, "NUMPY_KERNELS", [False])
    monkeypatch.setattr(_program_stats, "_runtime_started", [True])


@pytest.mark.filterwarnings("ignore::tapegrad._recompiles.RecompileWarning")
def test_compiles_are_charged_and_a_small_byte_limit_evicts(compiled_tier, monkeypatch):
    x = tapegrad.randn(16, 8, requires_grad=True)
    w = tapegrad.randn(8, 8, requires_grad=True)
    reference = {n: _step(x, w, n) for n in (3, 4, 5)}   # op by op: nothing whole compiled yet
    for n in (3, 4, 5):
        for _ in range(3):
            _step(x, w, n)
    info = tapegrad.autograd.backward_cache_info()
    programs = list(_programs._programs.entries.values())
    assert info["compiles"] > 0 and info["cache_bytes"] > 0
    assert info["cache_bytes"] == _programs._programs.bytes + _programs._kernels.bytes
    assert _programs._programs.bytes == sum(p.bytes for p in programs)
    assert sum(p.bytes > 0 for p in programs) >= 3   # every compiled step program was charged

    # room for about one step program: every new one evicts the least recently used
    limit = max(p.bytes for p in programs) + 1
    monkeypatch.setattr(_programs._programs, "byte_limit", limit)
    before = tapegrad.autograd.backward_cache_info()["evictions"]
    for n in (6, 7, 3, 4):
        for _ in range(3):
            grads = _step(x, w, n)
        if n in reference:   # evicted, then compiled again: the same gradients
            for ours, theirs in zip(grads, reference[n]):
                np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)
        assert _programs._programs.bytes <= limit or len(_programs._programs) == 1
    assert tapegrad.autograd.backward_cache_info()["evictions"] > before
