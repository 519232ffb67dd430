"""NumPy-tier rules for lax's svd, eigh, geqrf and householder_product: the LAPACK routines XLA:CPU calls.

jaxlib's CPU kernels for these primitives call LAPACK's gesdd (gesvd for the QR algorithm), syevd / heevd,
geqrf and orgqr / ungqr from SciPy's LAPACK, on the column-major matrix, with the optimal or the minimal
workspace; SciPy's wrappers call the same routines of the same library, so on the same workspace the
factors come out bit for bit as XLA's. A matrix LAPACK reports a failure for gives all-nan factors, as
XLA's lowering makes them. So a new shape of `linalg.svd`, `svdvals`, `pinv`, `matrix_rank`,
`norm(ord=2)`, `eigh`, `eigvalsh` or `qr` runs without an XLA compile (~130 ms each on 2 cores).
"""
import numpy as np

RULES = {}
_PREFIX = {np.dtype(np.float32): "s", np.dtype(np.float64): "d", np.dtype(np.complex64): "c",
           np.dtype(np.complex128): "z"}


def _lapack(name, dtype):
    from scipy.linalg import lapack   # (imported on first use: SciPy's LAPACK costs ~0.1 s to load)
    prefix = _PREFIX.get(np.dtype(dtype))
    if prefix is None:
        raise ValueError(f"{name} of {dtype}")   # (the kernel compiles)
    if name in ("evd", "gqr"):   # (complex matrices: the Hermitian and unitary routines)
        name = {"evd": "heevd" if prefix in "cz" else "syevd", "gqr": "ungqr" if prefix in "cz" else "orgqr"}[name]
    return getattr(lapack, prefix + name), getattr(lapack, prefix + name + "_lwork", None)


def _batched(a, matrices, outputs):
    """Per matrix of `a`'s batch: `matrices(m)` -> (info, *factors); factors of failed ones all nan."""
    batch = a.shape[:-2]
    results = [np.empty(batch + shape, dtype) for shape, dtype in outputs]
    for index in np.ndindex(*batch):
        info, *factors = matrices(a[index])
        for out, f in zip(results, factors):
            out[index] = f if info == 0 else np.nan
    return results


def _svd(params):
    from jax.lax.linalg import SvdAlgorithm
    if params.get("algorithm") not in (None, SvdAlgorithm.DEFAULT, SvdAlgorithm.DIVIDE_AND_CONQUER, SvdAlgorithm.QR):
        raise ValueError("an SVD algorithm XLA:CPU does not have")
    full, uv = bool(params["full_matrices"]), bool(params["compute_uv"])
    routine = "gesvd" if params.get("algorithm") == SvdAlgorithm.QR else "gesdd"

    def run(a):
        a = np.asarray(a)
        m, n = a.shape[-2:]
        k = min(m, n)
        if params.get("subset_by_index") not in (None, (0, k)) or k == 0:
            raise ValueError("a partial or empty SVD")
        call, size = _lapack(routine, a.dtype)
        lwork = int(np.real(size(m, n, compute_uv=uv, full_matrices=full)[0]))
        real = np.finfo(a.dtype).dtype

        def one(matrix):
            u, s, vt, info = call(matrix, compute_uv=uv, full_matrices=full, lwork=lwork)
            return (info, s, u, vt) if uv else (info, s)
        outputs = [((k,), real)]
        if uv:
            outputs += [((m, m if full else k), a.dtype), ((n if full else k, n), a.dtype)]
        return tuple(_batched(a, one, outputs))
    return run


def _eigh(params):
    if params.get("algorithm") is not None:
        raise ValueError("an eigh algorithm other than LAPACK's")
    lower = bool(params["lower"])

    def run(a):
        a = np.asarray(a)
        n = a.shape[-1]
        if params.get("subset_by_index") not in (None, (0, n)) or n == 0:
            raise ValueError("a partial or empty eigh")
        call, _ = _lapack("evd", a.dtype)

        def one(matrix):
            w, v, info = call(matrix, compute_v=1, lower=int(lower))
            return info, v, w
        return tuple(_batched(a, one, [((n, n), a.dtype), ((n,), np.finfo(a.dtype).dtype)]))
    return run


def _geqrf(params):
    def run(a):
        a = np.asarray(a)
        m, n = a.shape[-2:]
        call, size = _lapack("geqrf", a.dtype)
        lwork = max(int(np.real(size(m, n)[0])), 1)

        def one(matrix):
            qr, tau, _, info = call(matrix, lwork=lwork)
            return info, qr, tau
        return tuple(_batched(a, one, [((m, n), a.dtype), ((min(m, n),), a.dtype)]))
    return run


def _householder_product(params):
    def run(a, taus):
        a, taus = np.asarray(a), np.asarray(taus)
        m, n = a.shape[-2:]
        call, _ = _lapack("gqr", a.dtype)
        if a.size == 0:
            raise ValueError("an empty householder_product")
        batch = a.shape[:-2]
        first = (0,) * len(batch)
        lwork = max(int(np.real(call(a[first], taus[first], lwork=-1)[1][0])), 1)   # (the workspace query)
        out = np.empty(a.shape, a.dtype)
        for index in np.ndindex(*batch):
            q, _, info = call(a[index], taus[index], lwork=lwork)
            out[index] = q
        return out
    return run


RULES["svd"] = _svd
RULES["eigh"] = _eigh
RULES["geqrf"] = _geqrf
RULES["householder_product"] = _householder_product
