"""The linalg checks as PyTorch's, in its order: the deprecated torch.cholesky (its warning, messages naming
cholesky, cholesky_cpu's refusal of other dtypes), eigh / eigvalsh (UPLO, then the shape, then
linalg_eigh_cpu's dtypes), pinv's single message for too few dims or an unsupported dtype, and half and
bfloat16 input: the CPU kernels' refusals (lu_cpu, triangular_solve_cpu, geqrf_cpu, linalg_svd_cpu) and
inv's, slogdet's, logdet's and matrix_norm's "Low precision dtypes not supported"."""
import subprocess
import sys
import textwrap

import pytest

import tapegrad
from conftest import assert_close, require

torch = require("torch")

_SPD = [[4.0, 2.0], [2.0, 3.0]]
CALLS = {
    "cholesky of long": lambda lib: lib.cholesky(lib.tensor([[1, 0], [0, 1]])),
    "cholesky of bool": lambda lib: lib.cholesky(lib.ones(2, 2, dtype=lib.bool)),
    "cholesky of half": lambda lib: lib.cholesky(lib.eye(2, dtype=lib.float16)),
    "cholesky of a long vector": lambda lib: lib.cholesky(lib.tensor([1, 0])),
    "cholesky of a vector": lambda lib: lib.cholesky(lib.ones(2)),
    "cholesky of a wide matrix": lambda lib: lib.cholesky(lib.ones(2, 3, dtype=lib.long)),
    "cholesky with upper None": lambda lib: lib.cholesky(lib.tensor(_SPD), None),
    "Tensor.cholesky of int": lambda lib: lib.ones(2, 2, dtype=lib.int32).cholesky(True),
    "linalg.cholesky of long": lambda lib: lib.linalg.cholesky(lib.eye(2, dtype=lib.long)),
    "linalg.cholesky of half": lambda lib: lib.linalg.cholesky(lib.eye(2, dtype=lib.float16)),
    "linalg.cholesky of bfloat16": lambda lib: lib.linalg.cholesky(lib.eye(2, dtype=lib.bfloat16)),
    "pinv of a vector": lambda lib: lib.linalg.pinv(lib.ones(3)),
    "pinv of a long vector": lambda lib: lib.linalg.pinv(lib.ones(3, dtype=lib.long)),
    "pinv of a 0-d tensor": lambda lib: lib.linalg.pinv(lib.tensor(1.0)),
    "pinv of an empty vector": lambda lib: lib.linalg.pinv(lib.ones(0)),
    "pinv of a long batch": lambda lib: lib.linalg.pinv(lib.ones(2, 3, 4, dtype=lib.long)),
    "pinv of bool": lambda lib: lib.linalg.pinv(lib.ones(3, 3, dtype=lib.bool)),
    "pinv of half": lambda lib: lib.linalg.pinv(lib.ones(3, 3, dtype=lib.float16)),
    "pinv of a complex vector, hermitian": lambda lib: lib.linalg.pinv(lib.ones(3, dtype=lib.complex128),
                                                                       hermitian=True),
    "pinv of a vector, rtol": lambda lib: lib.linalg.pinv(lib.ones(3), rtol=0.1),
    "pinv of a vector, atol tensor": lambda lib: lib.linalg.pinv(lib.ones(3), atol=lib.tensor(0.1)),
    "pinv of a vector, atol number": lambda lib: lib.linalg.pinv(lib.ones(3), atol=0.1),
    "pinv of a 0-d tensor, atol number": lambda lib: lib.linalg.pinv(lib.tensor(1.0), atol=0.1),
    "pinv of long, atol number": lambda lib: lib.linalg.pinv(lib.ones(2, 2, dtype=lib.long), atol=1),
    "pinv of half, atol tensor": lambda lib: lib.linalg.pinv(lib.ones(2, 2, dtype=lib.half), atol=lib.tensor(1.0)),
    "pinverse of a vector": lambda lib: lib.ones(3).pinverse(),
    # LinAlgError (torch._C._LinAlgError), its text from LAPACK's info: which pivot or minor, which batch element
    "inv of a singular matrix": lambda lib: lib.linalg.inv(lib.tensor([[1.0, 2.0], [2.0, 4.0]])),
    "inv of a batch with a singular matrix": lambda lib: lib.linalg.inv(lib.stack([lib.eye(2), lib.zeros(2, 2)])),
    "Tensor.inverse of zeros": lambda lib: lib.zeros(3, 3).inverse(),
    "solve with a singular A": lambda lib: lib.linalg.solve(lib.zeros(2, 2), lib.ones(2)),
    "solve with a batch of singular A": lambda lib: lib.linalg.solve(lib.stack([lib.eye(2), lib.zeros(2, 2)]),
                                                                     lib.ones(2, 2)),
    "linalg.cholesky of -I": lambda lib: lib.linalg.cholesky(-lib.eye(2)),
    "linalg.cholesky, second minor": lambda lib: lib.linalg.cholesky(lib.tensor([[1.0, 2.0], [2.0, 1.0]])),
    "linalg.cholesky of a batch": lambda lib: lib.linalg.cholesky(lib.stack([lib.eye(3), -lib.eye(3)])),
    "linalg.cholesky upper, reads the upper triangle": lambda lib: lib.linalg.cholesky(
        lib.tensor([[1.0, 5.0], [0.0, 1.0]]), upper=True),
    "cholesky of -I": lambda lib: lib.cholesky(-lib.eye(2, dtype=lib.float64)),
}
for _dt in ("float16", "bfloat16"):
    CALLS.update({
        f"det of {_dt}": lambda lib, d=_dt: lib.linalg.det(lib.eye(2, dtype=getattr(lib, d))),
        f"torch.det of {_dt}": lambda lib, d=_dt: lib.det(lib.eye(2, dtype=getattr(lib, d))),
        f"Tensor.det of a wide {_dt}": lambda lib, d=_dt: lib.ones(2, 3, dtype=getattr(lib, d)).det(),
        f"solve of {_dt}": lambda lib, d=_dt: lib.linalg.solve(lib.eye(2, dtype=getattr(lib, d)),
                                                              lib.ones(2, dtype=getattr(lib, d))),
        f"solve of {_dt} and float": lambda lib, d=_dt: lib.linalg.solve(lib.eye(2, dtype=getattr(lib, d)),
                                                                         lib.ones(2)),
        f"solve of {_dt}, bad shapes": lambda lib, d=_dt: lib.linalg.solve(lib.eye(2, dtype=getattr(lib, d)),
                                                                          lib.ones(3, dtype=getattr(lib, d))),
        f"solve of a wide {_dt}": lambda lib, d=_dt: lib.linalg.solve(lib.ones(2, 3, dtype=getattr(lib, d)),
                                                                     lib.ones(2, dtype=getattr(lib, d))),
        f"solve_triangular of {_dt}": lambda lib, d=_dt: lib.linalg.solve_triangular(
            lib.eye(2, dtype=getattr(lib, d)), lib.ones(2, 2, dtype=getattr(lib, d)), upper=True),
        f"solve_triangular of {_dt} and long": lambda lib, d=_dt: lib.linalg.solve_triangular(
            lib.eye(2, dtype=getattr(lib, d)), lib.ones(2, 2, dtype=lib.long), upper=False),
        f"solve_triangular of {_dt}, bad shapes": lambda lib, d=_dt: lib.linalg.solve_triangular(
            lib.eye(2, dtype=getattr(lib, d)), lib.ones(2, 3, dtype=getattr(lib, d)), upper=True, left=False),
        f"solve_triangular of {_dt}, a vector B": lambda lib, d=_dt: lib.linalg.solve_triangular(
            lib.eye(2, dtype=getattr(lib, d)), lib.ones(2, dtype=getattr(lib, d)), upper=True),
        f"qr of {_dt}": lambda lib, d=_dt: lib.linalg.qr(lib.eye(2, dtype=getattr(lib, d))),
        f"qr of an empty {_dt}": lambda lib, d=_dt: lib.linalg.qr(lib.ones(0, 2, dtype=getattr(lib, d)), "r"),
        f"qr of {_dt}, bad mode": lambda lib, d=_dt: lib.linalg.qr(lib.eye(2, dtype=getattr(lib, d)), "x"),
        f"qr of a {_dt} vector": lambda lib, d=_dt: lib.linalg.qr(lib.ones(2, dtype=getattr(lib, d))),
        f"svd of {_dt}": lambda lib, d=_dt: lib.linalg.svd(lib.eye(2, dtype=getattr(lib, d))),
        f"svd of a {_dt} vector": lambda lib, d=_dt: lib.linalg.svd(lib.ones(2, dtype=getattr(lib, d))),
        f"svdvals of {_dt}": lambda lib, d=_dt: lib.linalg.svdvals(lib.eye(2, dtype=getattr(lib, d))),
        f"torch.svd of {_dt}": lambda lib, d=_dt: lib.svd(lib.eye(2, dtype=getattr(lib, d)), compute_uv=False),
        f"Tensor.svd of {_dt}": lambda lib, d=_dt: lib.eye(2, dtype=getattr(lib, d)).svd(),
        f"inv of {_dt}": lambda lib, d=_dt: lib.linalg.inv(lib.eye(2, dtype=getattr(lib, d))),
        f"inv of an empty {_dt}": lambda lib, d=_dt: lib.linalg.inv(lib.ones(0, 0, dtype=getattr(lib, d))),
        f"inv of a wide {_dt}": lambda lib, d=_dt: lib.linalg.inv(lib.ones(2, 3, dtype=getattr(lib, d))),
        f"Tensor.inverse of {_dt}": lambda lib, d=_dt: lib.eye(2, dtype=getattr(lib, d)).inverse(),
        f"slogdet of {_dt}": lambda lib, d=_dt: lib.linalg.slogdet(lib.eye(2, dtype=getattr(lib, d))),
        f"torch.slogdet of {_dt}": lambda lib, d=_dt: lib.slogdet(lib.eye(2, dtype=getattr(lib, d))),
        f"logdet of {_dt}": lambda lib, d=_dt: lib.logdet(lib.eye(2, dtype=getattr(lib, d))),
        f"Tensor.logdet of {_dt}": lambda lib, d=_dt: lib.eye(2, dtype=getattr(lib, d)).logdet(),
        f"logdet of a wide {_dt}": lambda lib, d=_dt: lib.logdet(lib.ones(2, 3, dtype=getattr(lib, d))),
        f"matrix_norm nuc of {_dt}": lambda lib, d=_dt: lib.linalg.matrix_norm(lib.eye(2, dtype=getattr(lib, d)),
                                                                               "nuc"),
        f"matrix_norm 2 of {_dt}": lambda lib, d=_dt: lib.linalg.matrix_norm(lib.eye(2, dtype=getattr(lib, d)), 2),
        f"matrix_norm -2 of {_dt}, dtype float": lambda lib, d=_dt: lib.linalg.matrix_norm(
            lib.eye(2, dtype=getattr(lib, d)), -2, dtype=lib.float32),
        f"matrix_norm nuc of a {_dt} vector": lambda lib, d=_dt: lib.linalg.matrix_norm(
            lib.ones(2, dtype=getattr(lib, d)), "nuc"),
        f"linalg.norm nuc of {_dt}": lambda lib, d=_dt: lib.linalg.norm(lib.eye(2, dtype=getattr(lib, d)), "nuc"),
        f"torch.norm nuc of {_dt}": lambda lib, d=_dt: lib.norm(lib.eye(2, dtype=getattr(lib, d)), "nuc"),
    })
for _dt in ("long", "int32", "bool"):
    CALLS.update({
        f"solve_triangular of {_dt}": lambda lib, d=_dt: lib.linalg.solve_triangular(
            lib.ones(2, 2, dtype=getattr(lib, d)), lib.ones(2, 2), upper=True),
        f"solve_triangular of a wide {_dt}": lambda lib, d=_dt: lib.linalg.solve_triangular(
            lib.ones(2, 3, dtype=getattr(lib, d)), lib.ones(2, 2), upper=True),
        f"solve of a wide {_dt}": lambda lib, d=_dt: lib.linalg.solve(lib.ones(2, 3, dtype=getattr(lib, d)),
                                                                     lib.ones(2)),
        f"qr of {_dt}, bad mode": lambda lib, d=_dt: lib.linalg.qr(lib.ones(2, 2, dtype=getattr(lib, d)), "x"),
        f"logdet of {_dt}": lambda lib, d=_dt: lib.logdet(lib.ones(2, 2, dtype=getattr(lib, d))),
        f"matrix_norm of a {_dt} vector": lambda lib, d=_dt: lib.linalg.matrix_norm(lib.ones(2, dtype=getattr(lib, d))),
        f"matrix_norm 3 of a {_dt} vector": lambda lib, d=_dt: lib.linalg.matrix_norm(
            lib.ones(2, dtype=getattr(lib, d)), 3),
    })
for _fn in ("eigh", "eigvalsh"):
    CALLS.update({
        f"{_fn} of long": lambda lib, f=_fn: getattr(lib.linalg, f)(lib.ones(2, 2, dtype=lib.long)),
        f"{_fn} of int": lambda lib, f=_fn: getattr(lib.linalg, f)(lib.ones(2, 2, dtype=lib.int32)),
        f"{_fn} of bool": lambda lib, f=_fn: getattr(lib.linalg, f)(lib.ones(2, 2, dtype=lib.bool)),
        f"{_fn} of uint8": lambda lib, f=_fn: getattr(lib.linalg, f)(lib.ones(2, 2, dtype=lib.uint8)),
        f"{_fn} of half": lambda lib, f=_fn: getattr(lib.linalg, f)(lib.ones(2, 2, dtype=lib.float16)),
        f"{_fn} of a long vector": lambda lib, f=_fn: getattr(lib.linalg, f)(lib.ones(2, dtype=lib.long)),
        f"{_fn} of a wide long matrix": lambda lib, f=_fn: getattr(lib.linalg, f)(lib.ones(2, 3, dtype=lib.long)),
        f"{_fn} of a vector": lambda lib, f=_fn: getattr(lib.linalg, f)(lib.ones(2)),
        f"{_fn} with UPLO X": lambda lib, f=_fn: getattr(lib.linalg, f)(lib.ones(2, 2, dtype=lib.long), UPLO="X"),
        f"{_fn} with UPLO LU": lambda lib, f=_fn: getattr(lib.linalg, f)(lib.ones(2, 2), UPLO="LU"),
        f"{_fn} with UPLO None": lambda lib, f=_fn: getattr(lib.linalg, f)(lib.ones(2, 2), UPLO=None),
    })


def _raised(call, lib):
    try:
        call(lib)
    except Exception as e:   # the type and the message are what is compared
        return type(e).__name__, str(e)
    return None


@pytest.mark.filterwarnings("ignore:torch.cholesky is deprecated")
@pytest.mark.parametrize("case", sorted(CALLS))
def test_linalg_error_is_pytorchs(case):
    theirs = _raised(CALLS[case], torch)
    assert theirs is not None, "PyTorch accepts this call; the case is wrong"
    ours = _raised(CALLS[case], tapegrad)
    assert ours is not None, f"PyTorch raises {theirs}; tapegrad raises nothing"
    # PyTorch's message, then (for a kernel's refusal) tapegrad's sentence saying how to fix it
    assert ours[0] == theirs[0] and ours[1].startswith(theirs[1]), (ours, theirs)


@pytest.mark.filterwarnings("ignore:torch.cholesky is deprecated")
@pytest.mark.parametrize("call", ["lib.cholesky(a)", "lib.cholesky(a, True)", "lib.cholesky(a, upper=True)",
                                  "a.cholesky()", "a.cholesky(True)", "lib.cholesky(a.unsqueeze(0).expand(3, 2, 2))",
                                  "lib.cholesky(a.to(lib.complex128))", "lib.cholesky(lib.ones(0, 0))"])
def test_legacy_cholesky_values_gradients_and_node(call):
    def run(lib):
        a = lib.tensor(_SPD, dtype=lib.float64, requires_grad=True)
        out = eval(call, {"lib": lib, "a": a})
        if out.requires_grad:
            out.abs().sum().backward()
        return a, out
    (ours_a, ours), (theirs_a, theirs) = run(tapegrad), run(torch)
    assert_close(ours, theirs.detach())
    assert type(ours.grad_fn).__name__ == type(theirs.grad_fn).__name__
    if theirs_a.grad is not None:
        assert_close(ours_a.grad, theirs_a.grad)


def test_legacy_cholesky_warns_once_per_process_as_pytorch():
    script = textwrap.dedent("""
        import sys, warnings
        lib = __import__(sys.argv[1])
        warnings.simplefilter("always")
        a = lib.tensor([[4.0, 2.0], [2.0, 3.0]])
        with warnings.catch_warnings(record=True) as first:
            warnings.simplefilter("always")
            lib.cholesky(a)
        with warnings.catch_warnings(record=True) as again:
            warnings.simplefilter("always")
            lib.cholesky(a, True)
            a.cholesky()
            lib.linalg.cholesky(a)
        print(repr([(w.category.__name__, str(w.message).split(" (Triggered internally")[0]) for w in first]))
        print(len(again))
    """)
    outputs = [subprocess.run([sys.executable, "-c", script, lib], capture_output=True, text=True, check=True,
                              timeout=120).stdout for lib in ("torch", "tapegrad")]
    assert outputs[1] == outputs[0]
    assert "deprecated in favor of torch.linalg.cholesky" in outputs[0]


@pytest.mark.parametrize("call", ["lib.linalg.det(lib.ones(0, 0, dtype=lib.float16))",
                                  "lib.linalg.det(lib.ones(3, 0, 0, dtype=lib.bfloat16))",
                                  "lib.linalg.solve(lib.ones(0, 0, dtype=lib.float16), lib.ones(0, dtype=lib.float16))",
                                  "lib.linalg.svdvals(lib.ones(0, 2, dtype=lib.float16))",
                                  "lib.linalg.matrix_norm(a, 1)", "lib.linalg.matrix_norm(a, float('inf'))",
                                  "lib.linalg.matrix_norm(a)", "lib.linalg.vector_norm(a)"])
def test_half_linalg_pytorch_accepts(call):
    # (PyTorch calls no kernel for an empty matrix; the elementwise matrix norms take half)
    def run(lib):
        return eval(call, {"lib": lib, "a": lib.tensor([[1.0, -2.0], [3.0, 0.5]], dtype=lib.float16)})
    assert_close(run(tapegrad), run(torch))


@pytest.mark.parametrize("dtypes", [("float32", "float64"), ("float64", "float32"), ("float32", "long")])
def test_solve_triangular_casts_b_to_as_dtype(dtypes):
    def run(lib):
        a = lib.tensor([[2.0, 1.0], [0.0, 4.0]], dtype=getattr(lib, dtypes[0]), requires_grad=True)
        b = lib.tensor([[1, 2], [3, 4]], dtype=getattr(lib, dtypes[1]))
        out = lib.linalg.solve_triangular(a, b, upper=True)
        out.sum().backward()
        return out, a.grad
    (ours, ours_grad), (theirs, theirs_grad) = run(tapegrad), run(torch)
    assert_close(ours, theirs.detach())
    assert_close(ours_grad, theirs_grad)
