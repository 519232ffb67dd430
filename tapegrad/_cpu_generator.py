"""PyTorch's CPU random stream: for one seed, the numbers torch's CPU generator draws.

PyTorch's CPU generator is a 32-bit Mersenne Twister (mt19937) seeded with the low 32 bits of the seed
as its reference implementation seeds it, which is what NumPy's legacy seeding does: NumPy's MT19937
produces the same words. Each distribution turns words into values as ATen's CPU kernels do:

- uniform: 24 random bits per float (53 per double, from two words, the first high) times 2^-24
  (2^-53), then `x * (to - from) + from`; half precision draws a float and rounds it (to `from` where
  it would round up to `to`).
- normal: at least 16 contiguous values are filled with uniforms, then Box-Muller over blocks of 16
  (the first 8 with cos, the last 8 with sin), and a ragged end recomputes the last 16 from fresh
  uniforms. Fewer values, or a strided tensor, draw one double at a time from a Box-Muller pair whose
  second value the generator keeps for the next draw.
- exponential, cauchy, geometric: -1 / lambda * log1p(-u), median + sigma * tan(pi (u - 1/2)) and
  ceil(log(u) / log1p(-p)) of a uniform double u; log_normal: exp of the one-at-a-time normal.
  Multinomial draws Exp(1) values without replacement (the Gumbel trick), and with replacement one
  uniform double per sample, searched in the normalised cumulative distribution.
- gamma and poisson: PyTorch's rejection samplers, value by value (their number of draws depends on
  the values).
- bernoulli (and dropout's noise): a uniform double per element compared with p (a uniform of p's dtype
  for a tensor p).
- integers in [from, to): a word (two words when the range needs more than 32 bits) modulo the range.
- permutations: Fisher-Yates swaps, position i with i + word % (n - i).

Which draws take this stream (CPU tensors, eagerly or as tapegrad.compile program inputs) and which
take jax.random keys is tapegrad.random's business.
"""
import math
import struct

import numpy as np

MASK64 = (1 << 64) - 1
_STATE_N = 624
_STATE_BYTES = 5056         # sizeof(CPUGeneratorImplState): what torch.get_rng_state() returns
# CPUGeneratorImplState: the_initial_seed (u64), left (i32), seeded (i32), next (u64), state (624 x u64),
# normal_x, normal_y, normal_rho (f64), normal_is_valid (i32, padded), next_float_normal_sample (f32),
# its valid flag (bool, padded).
_HEAD = struct.Struct("<QiiQ")
_TAIL = struct.Struct("<dddi4xf?3x")
_TAIL_AT = _HEAD.size + 8 * _STATE_N

_HALF = ("float16", "bfloat16")
_F0331 = float(np.float32(0.0331))   # the gamma sampler's float constants, as doubles
_THIRD = np.float32(1) / np.float32(3)


class CpuStream:
    """One generator's mt19937 and its cached normal samples, as ATen's CPUGeneratorImpl keeps them."""

    __slots__ = ("mt", "ints", "fresh", "double_normal", "float_normal")

    def __init__(self, seed):
        self.mt = np.random.MT19937()
        self.mt._legacy_seeding(seed & 0xFFFFFFFF)
        self.ints = np.random.Generator(self.mt)
        self.fresh = True           # nothing drawn since seeding (PyTorch's state then says next = 0)
        self.double_normal = None   # the second value of the last Box-Muller pair of doubles
        self.float_normal = None    # kept in the state only (no CPU kernel draws it)

    def copy(self):
        other = CpuStream.__new__(CpuStream)
        other.mt = np.random.MT19937()
        other.mt.state = self.mt.state
        other.ints = np.random.Generator(other.mt)
        other.fresh, other.double_normal, other.float_normal = self.fresh, self.double_normal, self.float_normal
        return other

    # ---- words ----------------------------------------------------------------------------------

    def words(self, n):
        """n 32-bit words (uint32 array). (NumPy's full-range uint32 integers are the bit generator's words
        as they come, without the 64-bit array of random_raw.)"""
        self.fresh = False
        return self.ints.integers(0, 1 << 32, size=n, dtype=np.uint32)

    def words64(self, n):
        """n 64-bit values, each from two words, the first high (PyTorch's random64)."""
        w = self.words(2 * n).view(np.uint64)   # little-endian: each uint64 is (second << 32) | first
        return (w << np.uint64(32)) | (w >> np.uint64(32))

    # ---- distributions ---------------------------------------------------------------------------

    def uniform(self, n, dtype, low=0.0, high=1.0):
        """n draws from U[low, high) of a real floating dtype (numpy)."""
        if dtype == np.float64:
            w = self.words64(n)
            w &= np.uint64((1 << 53) - 1)
            x = np.multiply(w, 2.0 ** -53, dtype=np.float64, casting="unsafe")   # (53-bit integers: exact)
            x *= float(high) - float(low)
            x += float(low)
            return x
        w = self.words(n)
        w &= np.uint32((1 << 24) - 1)
        x = np.multiply(w, np.float32(2.0 ** -24), dtype=np.float32, casting="unsafe")
        lo, hi = np.float32(low), np.float32(high)
        x *= hi - lo
        x += lo
        out = x.astype(dtype, copy=False)
        if np.dtype(dtype).name in _HALF:   # a float that rounds up to `high` becomes `low`, as in PyTorch
            out[out == np.asarray(high).astype(dtype)] = np.asarray(low).astype(dtype)
        return out

    def normal(self, n, dtype, mean=0.0, std=1.0, contiguous=True):
        """n draws from N(mean, std^2) of a real floating dtype, in the order PyTorch fills them."""
        if n >= 16 and contiguous:
            return self._normal_fill(n, dtype, mean, std)
        return self._normal_serial(n, mean, std).astype(dtype)

    def _normal_fill(self, n, dtype, mean, std):
        # Half precision computes in float and, unlike float and double, draws uniforms for whole blocks
        # only before the recomputed last 16 (PyTorch 2's kernel for reduced floating types).
        half = np.dtype(dtype).name in _HALF
        work = np.float64 if dtype == np.float64 else np.float32
        whole = n - n % 16
        data = self.uniform(whole if half else n, work)
        data[:whole] = _box_muller_16(data[:whole], work, mean, std)
        if n % 16:   # the last 16 again, from fresh uniforms
            if half:
                data = np.concatenate([data, np.empty(n - whole, work)])
            data[n - 16:] = _box_muller_16(self.uniform(16, work), work, mean, std)
        return data.astype(dtype)

    def _normal_serial(self, n, mean, std):
        out = np.empty(n, np.float64)
        k = 0
        if n and self.double_normal is not None:
            out[0], self.double_normal, k = self.double_normal, None, 1
        pairs = (n - k + 1) // 2
        if pairs:
            u = self.uniform(2 * pairs, np.float64)
            u1, u2 = u[0::2], u[1::2]
            # glibc's log1p, as ATen's ::log1p (NumPy's vectorised one differs in the last bit now and then)
            r = np.sqrt(-2.0 * np.array([math.log1p(-v) for v in u2.tolist()]))
            theta = 2.0 * np.pi * u1
            both = np.empty(2 * pairs, np.float64)
            both[0::2], both[1::2] = r * np.cos(theta), r * np.sin(theta)
            out[k:] = both[:n - k]
            if (n - k) % 2:
                self.double_normal = both[-1]
        return out * float(std) + float(mean)

    def exponential(self, n, dtype, lambd):
        """n draws from Exp(lambd): -1 / lambd * log1p(-u) of a uniform double u."""
        return ((-1.0 / float(lambd)) * np.log1p(-self.uniform(n, np.float64))).astype(dtype)

    def cauchy(self, n, dtype, median, sigma):
        """n draws: median + sigma * tan(pi * (u - 0.5)) of a uniform double u."""
        return (float(median) + float(sigma) * np.tan(np.pi * (self.uniform(n, np.float64) - 0.5))).astype(dtype)

    def geometric(self, n, dtype, p):
        """n draws: ceil(log(u) / log1p(-p)) of a uniform double u."""
        return np.ceil(np.log(self.uniform(n, np.float64)) / np.log1p(-float(p))).astype(dtype)

    def log_normal(self, n, dtype, mean, std):
        """n draws: exp of the one-at-a-time double normal (whatever the size)."""
        return np.exp(self._normal_serial(n, mean, std)).astype(dtype)

    def gamma(self, alphas, dtype):
        """Gamma(alpha, 1) draws for each alpha in order: PyTorch's CPU sampler (Marsaglia and Tsang's
        rejection, alpha < 1 boosted by a uniform), in its mix of the alpha's precision and doubles, and its
        clamp to the dtype's smallest normal (which a nan alpha's draw comes out as)."""
        f = np.float64 if np.dtype(dtype) == np.float64 else np.float32
        setups = {}   # per distinct alpha (a batch of draws repeats a few)
        with _Reader(self, 7 * len(alphas)) as r:
            out = []
            for a in alphas.tolist():
                setup = setups.get(a)
                if setup is None:
                    setup = setups[a] = _gamma_setup(f(a), f)
                out.append(_gamma_one(r, *setup))
        out = np.asarray(out, dtype)
        tiny = np.finfo(f).tiny
        return np.where(out > tiny, out, np.asarray(tiny, dtype))

    def poisson(self, rates, dtype):
        """Poisson draws for each rate in order: PyTorch's CPU sampler (Hoermann's transformed rejection from
        rate 10, a product of uniforms below)."""
        if not np.all(rates >= 0):   # (a nan too; checked before the first draw)
            raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
        with _Reader(self, 4 * len(rates) + int(2 * np.sum(np.minimum(rates, 10)))) as r:
            out = [_poisson_one(r, float(lam)) for lam in rates.tolist()]
        return np.asarray(out, dtype)

    def integers(self, n, dtype, low, high):
        """n draws from [low, high) (PyTorch's random_(from, to) and randint), cast to dtype."""
        span = high - low
        wide = span >= 1 << 32 and np.dtype(dtype).name in ("int64", "float64", "float32", "bfloat16")
        w = self.words64(n) if wide else self.words(n)
        v = (w % np.uint64(span) + np.uint64(low & MASK64)).view(np.int64)
        return v.astype(dtype)

    def permutation(self, n):
        """PyTorch's randperm on a CPU: Fisher-Yates with one word per position."""
        perm = list(range(n))
        if n > 1:
            z = (self.words(n - 1) % np.arange(n, 1, -1, dtype=np.uint64)).tolist()
            for i, j in enumerate(z):
                j += i
                perm[i], perm[j] = perm[j], perm[i]
        return np.asarray(perm, np.int64)

    # ---- state -----------------------------------------------------------------------------------

    def state_bytes(self, seed, spare):
        """torch.get_rng_state()'s bytes. `spare` goes where PyTorch writes a zero (normal_x): tapegrad keeps
        its jax.random draw count there, so a state saved and restored restores both streams."""
        st = self.mt.state["state"]
        pos = st["pos"]
        left, nxt = (1, 0 if self.fresh else pos) if pos >= _STATE_N else (_STATE_N + 1 - pos, pos)
        head = _HEAD.pack(seed & MASK64, left, 1, nxt)
        words = np.asarray(st["key"], np.uint64).astype("<u8").tobytes()
        dn, fn = self.double_normal, self.float_normal
        tail = _TAIL.pack(float(spare), 0.0 if dn is None else float(dn), 0.0, dn is not None,
                          0.0 if fn is None else float(fn), fn is not None)
        return head + words + tail

    @classmethod
    def from_bytes(cls, data):
        """(stream, seed, spare) from torch.get_rng_state()'s bytes."""
        if len(data) != _STATE_BYTES:
            raise RuntimeError(f"Expected a CPUGeneratorImplState of size {_STATE_BYTES} but found the input RNG "
                               f"state size to be {len(data)}")
        seed, left, _seeded, nxt = _HEAD.unpack_from(data, 0)
        words = np.frombuffer(data, "<u8", _STATE_N, _HEAD.size).astype(np.uint32)
        spare, normal_y, _rho, normal_valid, float_sample, float_valid = _TAIL.unpack_from(data, _TAIL_AT)
        stream = cls(0)
        stream.fresh = left <= 1 and nxt == 0
        stream.mt.state = {"bit_generator": "MT19937",
                           "state": {"key": words, "pos": _STATE_N if left <= 1 else nxt}}
        stream.double_normal = normal_y if normal_valid else None
        stream.float_normal = float_sample if float_valid else None
        return stream, seed, int(spare)


class _Reader:
    """Uniform doubles and Box-Muller normals one at a time, as the rejection samplers take them (how many
    depends on the values), from words drawn in chunks: a Python loop over read words costs a fraction of a
    microsecond where a draw from the generator per value cost tens. On exit the stream stands exactly
    after the words read, with the normal a last Box-Muller pair left over."""

    __slots__ = ("stream", "start", "buf", "pos", "chunk")

    def __init__(self, stream, words):
        self.stream, self.start, self.chunk = stream, (stream.mt.state, stream.fresh), max(words, 64)
        self.buf, self.pos = stream.words(self.chunk).tolist(), 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.pos < len(self.buf):   # rewind to the words read (none read: the stream as it was)
            self.stream.mt.state, fresh = self.start
            if self.pos:
                self.stream.words(self.pos)
            else:
                self.stream.fresh = fresh

    def double(self):
        if self.pos + 2 > len(self.buf):
            self.buf.extend(self.stream.words(self.chunk).tolist())
        hi, lo = self.buf[self.pos], self.buf[self.pos + 1]
        self.pos += 2
        return ((hi << 32 | lo) & _MASK53) * _2_53

    def normal(self):
        cached = self.stream.double_normal
        if cached is not None:
            self.stream.double_normal = None
            return float(cached)
        u1, u2 = self.double(), self.double()
        r, theta = math.sqrt(-2.0 * math.log1p(-u2)), 2.0 * math.pi * u1
        self.stream.double_normal = r * math.sin(theta)
        return r * math.cos(theta)


_MASK53, _2_53 = (1 << 53) - 1, 2.0 ** -53


def _gamma_setup(alpha, f):
    """(boost exponent or None, d, c) of the sampler for `alpha` (of dtype f), as PyTorch computes them."""
    exponent = None
    if alpha < 1:
        if alpha == 0:
            return None, 0.0, None
        exponent, alpha = float(f(1) / alpha), f(alpha + f(1))
    d = float(alpha - _THIRD)   # (C++'s alpha - 1.0f / 3.0f: float arithmetic for a float alpha, else double)
    c = 1.0 / math.sqrt(9.0 * d) if d > 0 else math.inf if d == 0 else math.nan   # (C++'s 1 / 0 and sqrt(-1))
    return exponent, d, c


def _gamma_one(r, exponent, d, c):
    if c is None:   # alpha 0
        return 0.0
    scale = 1.0 if exponent is None else math.pow(1 - r.double(), exponent)
    while True:
        while True:   # (C++'s `do ... while (v <= 0)`: a nan leaves it)
            x = r.normal()
            y = 1.0 + c * x
            if not y <= 0:
                break
        v, u, xx = y * y * y, 1 - r.double(), x * x
        if u < 1.0 - _F0331 * xx * xx or math.log(u) < 0.5 * xx + d * (1.0 - v + math.log(v)):
            return scale * d * v


def _int64(x):
    """C++'s (int64_t) std::floor(x) on x86-64: out of range or nan gives INT64_MIN (an infinite rate's draw)."""
    return math.floor(x) if -_2_63 <= x < _2_63 else -(1 << 63)


_2_63 = 2.0 ** 63


def _poisson_one(r, lam):
    if lam >= 10:
        slam, loglam = math.sqrt(lam), math.log(lam)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha, vr = 1.1239 + 1.1328 / (b - 3.4), 0.9277 - 3.6224 / (b - 2)
        while True:
            u = r.double() - 0.5
            v = r.double()
            us = 0.5 - abs(u)
            k = _int64((2 * a / us + b) * u + lam + 0.43)
            if us >= 0.07 and v <= vr:
                return k
            if k < 0 or (us < 0.013 and v > us):
                continue
            if math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b) <= \
                    -lam + k * loglam - math.lgamma(k + 1):
                return k
    if lam == 0:
        return 0
    limit, k, prod = math.exp(-lam), 0, 1.0
    while True:
        prod *= r.double()
        if prod <= limit:
            return k
        k += 1


def _box_muller_16(data, work, mean, std):
    """ATen's normal_fill_16 over consecutive blocks of 16 uniforms (a multiple of 16 values), in place."""
    b = data.reshape(-1, 16)
    radius = np.log(work(1) - b[:, :8])
    radius *= work(-2)
    np.sqrt(radius, out=radius)
    theta = b[:, 8:] * work(2 * np.pi)
    mean, std = work(mean), work(std)
    for half, trig in ((b[:, :8], np.cos), (b[:, 8:], np.sin)):
        trig(theta, out=half)
        half *= radius
        half *= std
        half += mean
    return data
