"""Training demo: a small character-level transformer language model, written as PyTorch code.

    python -m tapegrad.demo [--steps N] [--device cpu|cuda] [--no-compile]

One job per module:

    data.py      the text (Python's own help pages, shipped with the standard library), characters as tokens
    model.py     the transformer: Embedding, causal self-attention blocks, LayerNorm
    train.py     AdamW, a warm-up + cosine schedule, grad-norm clipping, the step timed eager and compiled
    generate.py  sampling text with a fixed-size context buffer (one program for every token)
    plot.py      the loss curve as a PNG
    cli.py       the command line: train, plot, generate, save, reload and check

The modules are user code of tapegrad's public API (`import tapegrad as torch`), as a PyTorch script
would be; `notebooks/02_training_demo.ipynb` runs them cell by cell.
"""
