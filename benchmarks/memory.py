"""Resident memory over many MLP steps, one fresh process per implementation.

usage: python -m benchmarks.memory {tapegrad,jax} STEPS
Prints JSON: RSS (MiB) after warm-up (step 50) and the peak RSS over all steps.
"""
import json
import sys


def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def main(impl, steps):
    import tapegrad as tg
    from . import models as M
    params = M.mlp_init(tg)
    x, y = M.mlp_batch(tg)
    if impl == "jax":
        from . import jax_models as J
        params = [p._value for p in params]
        x, y = x._value, y._value

        def step():
            nonlocal params
            params, loss = J.mlp_step_sgd(params, x, y)
            loss.block_until_ready()
    else:
        def step():
            M.mlp_step_manual(tg, params, x, y).item()
    warm, peak = None, 0.0
    for i in range(steps):
        step()
        if i % 10 == 0:
            r = rss_mib()
            peak = max(peak, r)
            if i == 50:
                warm = r
    print(json.dumps({"warm_mib": warm, "peak_mib": peak, "final_mib": rss_mib()}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
