"""Sampling text from the model, one character at a time.

The usual loop (`logits = model(idx[:, -block_size:])`, then `idx = cat([idx, next])`) gives the model a
longer input at every token until the context is full. tapegrad compiles a program per structure, and
every new length is a new structure: each of the first block_size tokens would compile (or run op by op)
afresh. Here the model always sees a fixed-size buffer of block_size tokens instead: the context is
written at the start of the buffer and the rest is padding. Causal attention already serves as the
padding mask (position t attends to positions <= t, so the padding after the last real token is never
seen), and the position whose logits are read is a value, not a shape (`logits[0, pos]` passes pos to
the program as an argument). Every token therefore runs the same program: compiled once, reused after.

The next character is drawn on the host from the probabilities the program returns (NumPy's generator,
seeded): the token has to come back to Python anyway, to be written into the next buffer.
"""
import numpy as np

import tapegrad as torch
import tapegrad.nn.functional as F


def generate(model, vocab, prompt, n_tokens, temperature=0.8, seed=0, device="cpu"):
    """prompt followed by n_tokens sampled characters; the same seed gives the same text."""
    block_size = model.config.block_size
    ids = list(vocab.encode(prompt)) or [0]
    buffer = np.zeros((1, block_size), dtype=np.int64)    # padding: token 0, never attended to
    rng = np.random.default_rng(seed)
    was_training = model.training
    model.eval()
    with torch.no_grad():
        for _ in range(n_tokens):
            context = ids[-block_size:]
            buffer[0, :len(context)] = context
            logits = model(torch.tensor(buffer, device=device))
            pos = len(context) - 1                        # the last real token: its logits predict the next
            probs = F.softmax(logits[0, pos] / temperature, dim=-1).numpy().astype(np.float64)
            ids.append(int(rng.choice(len(probs), p=probs / probs.sum())))
    model.train(was_training)
    return vocab.decode(ids)
