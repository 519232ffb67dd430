"""The demo's command line: train, plot the loss, sample text, save a checkpoint, reload it and check it."""
import argparse
import pathlib
import time

import tapegrad as torch

from .data import Batches, CharVocab, load_text
from .generate import generate
from .model import GPTConfig, TinyGPT
from .plot import save_loss_curve
from .train import TrainConfig, Trainer

PROMPT = "The "


def default_device():
    return "cuda" if torch.cuda.is_available() else "cpu"


def parse_args(argv=None):
    defaults = TrainConfig()
    model_defaults = GPTConfig(vocab_size=0)
    ap = argparse.ArgumentParser(prog="python -m tapegrad.demo",
                                 description="Train a small character-level transformer on Python's help pages.")
    ap.add_argument("--steps", type=int, default=defaults.steps, help="training steps (default %(default)s)")
    ap.add_argument("--device", default=default_device(),
                    help="cpu or cuda (default: cuda when JAX sees a GPU, else cpu; now %(default)s)")
    ap.add_argument("--no-compile", dest="compile", action="store_false",
                    help="run every step eagerly, without tapegrad.compile")
    ap.add_argument("--batch-size", type=int, default=defaults.batch_size)
    ap.add_argument("--block-size", type=int, default=model_defaults.block_size, help="context length")
    ap.add_argument("--n-layer", type=int, default=model_defaults.n_layer)
    ap.add_argument("--n-embd", type=int, default=model_defaults.n_embd)
    ap.add_argument("--n-head", type=int, default=model_defaults.n_head)
    ap.add_argument("--sample-tokens", type=int, default=240, help="characters to generate at the end")
    ap.add_argument("--out", type=pathlib.Path, default=pathlib.Path("demo-output"),
                    help="folder for the loss curve and the checkpoint (default %(default)s)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-progress", dest="progress", action="store_false", help="no progress bar")
    args = ap.parse_args(argv)
    if args.steps < 1:
        ap.error(f"--steps must be at least 1, got {args.steps}")
    if args.n_embd % args.n_head:
        ap.error(f"--n-embd ({args.n_embd}) must be a multiple of --n-head ({args.n_head})")
    return args


def build(args, text=None):
    """The vocabulary, model and trainer the arguments describe."""
    text = load_text() if text is None else text
    vocab = CharVocab(text)
    torch.manual_seed(args.seed)
    model_config = GPTConfig(vocab_size=len(vocab), block_size=args.block_size, n_layer=args.n_layer,
                             n_head=args.n_head, n_embd=args.n_embd)
    model = TinyGPT(model_config).to(args.device)
    batches = Batches(vocab.encode(text), args.batch_size, args.block_size, seed=args.seed, device=args.device)
    trainer = Trainer(model, batches, TrainConfig(steps=args.steps, batch_size=args.batch_size,
                                                  compile=args.compile,
                                                  warmup_steps=min(TrainConfig.warmup_steps, args.steps // 10 + 1)))
    return vocab, model, trainer


def reload_checkpoint(path, config, device):
    """A fresh model with the checkpoint's tensors as its parameters (assign=True: tapegrad never computes
    the fresh random initial values they replace, as they are recorded lazily and nothing reads them)."""
    torch.manual_seed(12345)
    fresh = TinyGPT(config).to(device)
    fresh.load_state_dict(torch.load(path, map_location=device), assign=True)
    return fresh


def _format_times(times):
    parts = [f"{mode} {t['median_s'] * 1e3:.1f} ms (first step {t['first_s']:.2f} s)" for mode, t in times.items()]
    line = "  |  ".join(parts)
    if "eager" in times and "compiled" in times:
        line += f"  ->  compiled is {times['eager']['median_s'] / times['compiled']['median_s']:.2f}x eager"
    return line


def main(argv=None):
    args = parse_args(argv)
    started = time.perf_counter()
    text = load_text()
    vocab, model, trainer = build(args, text)
    n_params = sum(p.numel() for p in model.parameters())
    cfg = model.config
    print(f"text: Python's help pages (pydoc_data.topics), {len(text):,} characters, {len(vocab)} distinct")
    print(f"model: {cfg.n_layer} transformer blocks, {cfg.n_embd} wide, {cfg.n_head} heads, context "
          f"{cfg.block_size} characters, {n_params:,} parameters, on {args.device}")
    print(f"training: {args.steps} steps of {args.batch_size} windows, AdamW, warm-up + cosine schedule, "
          f"grad-norm clipping; " + (f"first {trainer.eager_steps} steps eager, then compiled"
                                     if trainer.compiled_step else "every step eager"))
    losses = trainer.run(progress=args.progress)
    print(f"loss: {losses[0]:.3f} at the first step, {losses[-1]:.3f} at the last")
    print("step time (median after warm-up): " + _format_times(trainer.step_times()))

    args.out.mkdir(parents=True, exist_ok=True)
    curve = save_loss_curve(losses, args.out / "loss.png",
                            trainer.eager_steps if trainer.compiled_step else None)
    print(f"loss curve: {curve}")

    sample = generate(model, vocab, PROMPT, args.sample_tokens, seed=args.seed, device=args.device)
    print("sample:\n" + "-" * 72 + "\n" + sample + "\n" + "-" * 72)

    checkpoint = args.out / "model.pt"
    torch.save(model.state_dict(), checkpoint)
    reloaded = reload_checkpoint(checkpoint, cfg, args.device)
    same = generate(reloaded, vocab, PROMPT, args.sample_tokens, seed=args.seed, device=args.device) == sample
    print(f"checkpoint: {checkpoint} reloaded into a fresh model generates the same text: {'yes' if same else 'NO'}")
    print(f"done in {time.perf_counter() - started:.1f} s")
    if not same:
        raise SystemExit("error: the reloaded checkpoint generated different text")
    return {"model": model, "vocab": vocab, "losses": losses, "sample": sample, "curve": curve, "checkpoint": checkpoint,
            "times": trainer.step_times()}
