"""Timing harness: interleaved rounds, medians, spread and ratios."""
import statistics
import time


def measure(contestants, steps_per_round, rounds, warmup=3):
    """contestants: {name: step_fn}; each step_fn runs one step and waits for its result.

    Rounds are interleaved (A, B, C, A, B, C, ...) so machine noise hits every contestant alike.
    Returns {name: {"median_ms", "p25_ms", "p75_ms"}} of per-step times.
    """
    for fn in contestants.values():
        for _ in range(warmup):
            fn()
    samples = {name: [] for name in contestants}
    for _ in range(rounds):
        for name, fn in contestants.items():
            t0 = time.perf_counter()
            for _ in range(steps_per_round):
                fn()
            samples[name].append((time.perf_counter() - t0) / steps_per_round * 1e3)
    return {name: summarize(s) for name, s in samples.items()}


def summarize(samples):
    q = statistics.quantiles(samples, n=4) if len(samples) > 1 else [samples[0]] * 3
    return {"median_ms": statistics.median(samples), "p25_ms": q[0], "p75_ms": q[2], "n": len(samples)}
