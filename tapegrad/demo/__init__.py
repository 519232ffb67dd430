"""Training demo: a small character-level transformer language model, written as PyTorch code.

    python -m tapegrad.demo [--steps N] [--device cpu|cuda] [--no-compile]

One job per module:

    data.py      the text (Python's own help pages, shipped with the standard library), characters as tokens
    model.py     the transformer: Embedding, causal self-attention blocks, LayerNorm
    train.py     AdamW, a warm-up + cosine schedule, grad-norm clipping, the step timed eager and compiled
    generate.py  sampling text with a fixed-size context buffer (one program for every token)
    plot.py      the loss curve as a PNG
    cli.py       the command line: train, plot, generate, save, reload and check
"""
from .data import CharVocab, Batches, load_text
from .generate import generate
from .model import GPTConfig, TinyGPT
from .plot import draw_loss, save_loss_curve
from .train import TrainConfig, Trainer, make_train_step

__all__ = ["CharVocab", "Batches", "load_text", "generate", "GPTConfig", "TinyGPT", "draw_loss",
           "save_loss_curve", "TrainConfig", "Trainer", "make_train_step"]
