#!/usr/bin/env bash
# The test suite and the benchmarks on an accelerator (a GPU that both JAX and PyTorch see).
#
#   tools/accelerator_run.sh            # tests, then benchmarks; writes benchmarks/results/<gpu name>.json
#
# Expects jax with CUDA support and a CUDA build of torch in the Python on PATH (or $PYTHON), and the test
# extra's other packages. Tests compare against PyTorch on its default device; the benchmarks run every
# side on the GPU (`--device cuda`: PyTorch eager on CUDA, tapegrad and jax.jit on JAX's GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
# several test and benchmark processes share the GPU: none may take most of its memory up front (JAX's default)
export XLA_PYTHON_CLIENT_PREALLOCATE=false
$PY - <<'PYCHECK'
import jax, torch
gpu = jax.default_backend() == "gpu"
print("jax", jax.__version__, jax.devices(), "| torch", torch.__version__, "cuda", torch.cuda.is_available())
raise SystemExit(0 if gpu and torch.cuda.is_available() else "no GPU seen by both JAX and PyTorch")
PYCHECK
TAPEGRAD_COMPILATION_CACHE=off $PY -m pytest -n 4 --dist worksteal tests -q -p no:cacheprovider "$@" || status=$?
$PY -m benchmarks --device cuda
$PY tools/gen_bench_doc.py
exit ${status:-0}
