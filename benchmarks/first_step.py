"""One fresh process per measurement: time of the first training steps (compile included).

usage: python -m benchmarks.first_step {mlp,transformer} {tapegrad,torch,jax}
Prints a JSON object with the times of steps 1, 2 and 3 in ms.
"""
import json
import sys
import time


def main(workload, impl):
    times = []
    if impl == "jax":
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_enable_x64", True)  # as under tapegrad, for an equal footing
        from . import jax_models as J, models as M
        import tapegrad as tg
        if workload == "mlp":
            params = [p._value for p in M.mlp_init(tg)]
            x, y = (t._value for t in M.mlp_batch(tg))
            for _ in range(3):
                t0 = time.perf_counter()
                params, loss = J.mlp_step_sgd(params, x, y)
                loss.block_until_ready()
                times.append((time.perf_counter() - t0) * 1e3)
        else:
            model = M.transformer_model(tg)
            p = {k: v._value for k, v in model.state_dict().items()}
            m = {k: jnp.zeros_like(v) for k, v in p.items()}
            v = {k: jnp.zeros_like(x) for k, x in p.items()}
            tok, tgt = (t._value for t in M.transformer_batch(tg))
            t = 0
            for _ in range(3):
                t0 = time.perf_counter()
                p, m, v, t, loss = J.transformer_step_adamw(p, m, v, t, tok, tgt)
                loss.block_until_ready()
                times.append((time.perf_counter() - t0) * 1e3)
    else:
        lib = __import__(impl)
        from . import models as M
        if workload == "mlp":
            params = M.mlp_init(lib)
            x, y = M.mlp_batch(lib)
            for _ in range(3):
                t0 = time.perf_counter()
                M.mlp_step_manual(lib, params, x, y).item()
                times.append((time.perf_counter() - t0) * 1e3)
        else:
            model = M.transformer_model(lib)
            opt = lib.optim.AdamW(model.parameters(), lr=1e-3)
            tok, tgt = M.transformer_batch(lib)
            for _ in range(3):
                t0 = time.perf_counter()
                M.transformer_step(lib, model, opt, tok, tgt).item()
                times.append((time.perf_counter() - t0) * 1e3)
    print(json.dumps({"times_ms": times}))


if __name__ == "__main__":
    main(*sys.argv[1:3])
