"""Long tapes in bounded chunks.

A structure longer than MAX_PROGRAM_OPS is never compiled whole: XLA's compile time grows faster than the
program, and a 400-step unrolled RNN would take a minute. Seen once, such a tape runs op by op (as every
new structure does). Seen again, it is cut into chunks of CHUNK_MIN..CHUNK_MAX ops, each chunk one
program whose inputs are the values it reads from earlier chunks and whose outputs are the values later
chunks (or the caller) read. A chunk ends where its first op comes back after CHUNK_MIN ops, so the
iterations of a loop fall into identical chunks: the 400-step RNN's middle chunks are one program,
called again and again, as `lax.scan` would run it. Compile time therefore grows with the number of
distinct chunks, at most linearly with the tape.

Chunk programs rent NumPy like every program, and are bought (compiled) when their tape comes
STEADY_STREAK times in a row (`_programs.tape_steady`).
"""
import numpy as np

from . import _programs

CHUNK_MIN = 96
CHUNK_MAX = 192


def cuts(sids, lo=CHUNK_MIN, hi=CHUNK_MAX):
    """[(start, end), ...] covering range(len(sids)): each chunk ends where its first op's signature
    comes back after at least `lo` ops, or after `hi` ops."""
    n = len(sids)
    out = []
    start = 0
    while start < n:
        end = min(start + hi, n)
        first = sids[start]
        for j in range(start + lo, end):
            if sids[j] == first:
                end = j
                break
        out.append((start, end))
        start = end
    return out


def long_and_seen(kind, key, count=True):
    """For a tape over MAX_PROGRAM_OPS: None on first sight (run it op by op), else whether it is steady."""
    if not _programs.seen_before((kind, key), count):
        return None
    return _programs.tape_steady(kind, key)


def run_plan(node_keys, slots, live, inputs, steady):
    """A long plan's (resolved values, {(position, output): value} of `live`) computed chunk by chunk.

    node_keys/slots/live/inputs: as `_lazy.Plan` has them. Each chunk is itself a plan structure whose
    inputs are its own arrays and scalars plus, as arrays, the earlier chunks' values it reads.
    """
    from ._lazy import _SCALAR_DTYPES, _plan_program
    arrays, scalars = inputs
    spans = cuts([k[0] for k in node_keys])
    chunk_of = []
    for c, (a, b) in enumerate(spans):
        chunk_of.extend([c] * (b - a))
    # which outputs each chunk hands on: read by a later chunk, by the caller (slots), or held (live)
    exported = [set() for _ in spans]
    for i, (_, codes) in enumerate(node_keys):
        for code in codes:
            if type(code) is tuple and chunk_of[code[0]] != chunk_of[i]:
                exported[chunk_of[code[0]]].add(code)
    for code in slots:
        if type(code) is tuple:
            exported[chunk_of[code[0]]].add(code)
    for code in live:
        exported[chunk_of[code[0]]].add(code)

    values = {}
    next_array = 0
    next_scalar = dict.fromkeys(scalars, 0)
    for c, (a, b) in enumerate(spans):
        local, chunk_arrays, chunk_scalars = [], [], {}
        for sid, codes in node_keys[a:b]:
            new = []
            for code in codes:
                if code == -1:
                    chunk_arrays.append(arrays[next_array])
                    next_array += 1
                elif type(code) is str:
                    chunk_scalars.setdefault(code, []).append(scalars[code][next_scalar[code]])
                    next_scalar[code] += 1
                elif type(code) is tuple and code[0] < a:
                    chunk_arrays.append(values[code])   # an earlier chunk's value: an input of this one
                    code = -1
                elif code is not None:
                    code = (code[0] - a, code[1])
                new.append(code)
            local.append((sid, tuple(new)))
        outs = sorted(exported[c])
        key = (tuple(local), tuple((p - a, k) for p, k in outs), ())
        program = _programs.lookup(("plan", key), _programs.shapes_of(chunk_arrays),
                                   lambda: (_plan_program(key),), steady=steady)
        packed = {k: np.asarray(v, _SCALAR_DTYPES[k]) for k, v in chunk_scalars.items()}
        resolved, _ = program((chunk_arrays, packed))
        values.update(zip(outs, resolved))

    rest = iter(arrays[next_array:])
    rest_scalars = {k: iter(v[next_scalar[k]:]) for k, v in scalars.items()}

    def slot(code):
        if code == -1:
            return next(rest)
        if type(code) is str:
            return next(rest_scalars[code])
        return None if code is None else values[code]
    return [slot(s) for s in slots], {code: values[code] for code in live}
