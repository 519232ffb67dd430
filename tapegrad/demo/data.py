"""The demo's text and tokens: Python's help pages (`pydoc_data.topics`, part of the standard library, so
the demo needs no download), one token per character, and random training windows."""
import numpy as np

import tapegrad as torch


def load_text():
    """About half a million characters of Python's reference documentation, in a fixed order."""
    from pydoc_data.topics import topics
    return "\n\n".join(topics[name] for name in sorted(topics))


class CharVocab:
    """Characters as token ids: the vocabulary is the set of characters the text uses."""

    def __init__(self, text):
        self.chars = sorted(set(text))
        self._index = {c: i for i, c in enumerate(self.chars)}

    def __len__(self):
        return len(self.chars)

    def encode(self, text):
        unknown = sorted(set(text) - self._index.keys())
        if unknown:
            raise ValueError(f"characters not in the vocabulary: {unknown!r}; use characters of the training text")
        return np.array([self._index[c] for c in text], dtype=np.int64)

    def decode(self, ids):
        return "".join(self.chars[int(i)] for i in ids)


class Batches:
    """Random windows of the token stream (nanoGPT's get_batch): x is a window, y the same window one
    token later. Windows are cut on the host with NumPy, so every batch is a new input of the same shape
    and the compiled step is reused."""

    def __init__(self, tokens, batch_size, block_size, seed=0, device="cpu"):
        if len(tokens) <= block_size + 1:
            raise ValueError(f"the text has {len(tokens)} tokens, fewer than a window of block_size + 1 = "
                             f"{block_size + 1}: use a longer text or a smaller block_size")
        self.tokens, self.batch_size, self.block_size, self.device = tokens, batch_size, block_size, device
        self._rng = np.random.default_rng(seed)
        self._offsets = np.arange(block_size + 1)

    def __call__(self):
        starts = self._rng.integers(0, len(self.tokens) - self.block_size - 1, self.batch_size)
        windows = self.tokens[starts[:, None] + self._offsets]
        return (torch.tensor(windows[:, :-1], device=self.device),
                torch.tensor(windows[:, 1:], device=self.device))

