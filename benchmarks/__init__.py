"""Side-by-side benchmarks: tapegrad vs PyTorch eager vs hand-written jax.jit (run `python -m benchmarks`)."""
