"""Training: AdamW, a warm-up + cosine learning-rate schedule, grad-norm clipping, and the step timed
as tapegrad runs it eagerly and compiled as one program (`tapegrad.compile`)."""
import math
import statistics
import time
from dataclasses import dataclass

import tapegrad as torch


@dataclass
class TrainConfig:
    steps: int = 500
    batch_size: int = 32
    lr: float = 3e-3
    weight_decay: float = 0.01
    warmup_steps: int = 30
    min_lr_ratio: float = 0.1     # the cosine ends at this fraction of lr
    max_grad_norm: float = 1.0
    eager_steps: int = 20         # steps run eagerly (and timed) before the compiled step takes over
    compile: bool = True


def warmup_cosine(warmup_steps, total_steps, min_ratio):
    """The lr factor for LambdaLR: linear warm-up, then a half cosine down to min_ratio."""
    def factor(step):
        if step < warmup_steps:
            return (step + 1) / warmup_steps
        progress = min(1.0, (step - warmup_steps) / max(1, total_steps - warmup_steps))
        return min_ratio + (1 - min_ratio) * 0.5 * (1 + math.cos(math.pi * progress))
    return factor


def make_optimizer(model, config):
    # One parameter group: its update is one recorded op (a second group for biases without weight decay
    # would be a second op, and a second program to compile wherever the update runs op by op).
    return torch.optim.AdamW(model.parameters(), lr=config.lr, betas=(0.9, 0.95),
                             weight_decay=config.weight_decay)


def make_train_step(model, optimizer, max_grad_norm):
    """The whole step as a plain function of the batch: forward, backward, clipping, update."""
    def train_step(x, y):
        optimizer.zero_grad()
        _, loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
        optimizer.step()
        return loss
    return train_step


class Trainer:
    """Runs the steps, keeps the loss of each and the wall time of each step by mode (eager, compiled)."""

    def __init__(self, model, batches, config):
        self.model, self.batches, self.config = model, batches, config
        self.optimizer = make_optimizer(model, config)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer, warmup_cosine(config.warmup_steps, config.steps, config.min_lr_ratio))
        self.eager_step = make_train_step(model, self.optimizer, config.max_grad_norm)
        self.compiled_step = torch.compile(self.eager_step) if config.compile else None
        self.eager_steps = min(config.eager_steps, config.steps // 2) if self.compiled_step else config.steps
        self.losses = []
        self.step_seconds = {"eager": [], "compiled": []}

    def run(self, progress=True):
        from tqdm import tqdm
        self.model.train()
        tokens_per_step = self.config.batch_size * self.batches.block_size
        bar = tqdm(range(self.config.steps), desc="training", unit="step", disable=not progress)
        for step in bar:
            mode = "eager" if step < self.eager_steps else "compiled"
            run_step = self.eager_step if mode == "eager" else self.compiled_step
            x, y = self.batches()
            start = time.perf_counter()
            loss = run_step(x, y).item()   # .item() waits for the step: the time is the step's own
            seconds = time.perf_counter() - start
            self.scheduler.step()
            self.losses.append(loss)
            self.step_seconds[mode].append(seconds)
            bar.set_postfix(loss=f"{loss:.3f}", tok_s=f"{tokens_per_step / seconds:,.0f}", step=mode,
                            refresh=False)
        bar.close()
        return self.losses

    def step_times(self):
        """Per mode: the first step's seconds (tracing and compiling) and the median of the later ones."""
        out = {}
        for mode, seconds in self.step_seconds.items():
            if seconds:
                later = seconds[3:] if len(seconds) > 6 else seconds[1:] or seconds
                out[mode] = {"first_s": seconds[0], "median_s": statistics.median(later), "steps": len(seconds)}
        return out

