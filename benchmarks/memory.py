"""Resident memory after forward + backward at 200 distinct shapes; one fresh process per side that
imports only its own library, so each process's RSS is what that library costs for the work."""
from . import mlp
from .harness import rss_mib
from .sides import libraries

SMALL = (32, 64, 10)


def run_rss_200_shapes(h):
    n = h.size(200, 10)
    xn, yn = mlp.batch_arrays(n, SMALL)
    for side, lib in libraries(h).items():
        params = [lib.tensor(a, requires_grad=True) for a in mlp.init_arrays(SMALL)]
        X, Y = lib.tensor(xn), lib.tensor(yn)
        before = rss_mib()

        def step(k, lib=lib, params=params, X=X, Y=Y):
            loss = lib.nn.functional.cross_entropy(mlp.forward(lib, params, X[:k + 1]), Y[:k + 1])
            loss.backward()
            params[0].grad[0, 0].item()
            for p in params:
                p.grad = None
        res = h.loop("shapes", side, step, n, unit="shapes")
        if res and res["over_budget"]:
            for measure in ("rss_final", "rss_growth"):
                h.skip(measure, side, f"stopped after {res['completed']} of {n} shapes")
        elif res:
            after = rss_mib()
            h.value("rss_final", side, after, "MiB")
            h.value("rss_growth", side, after - before, "MiB")
