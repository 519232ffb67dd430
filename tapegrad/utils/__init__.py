"""tapegrad.utils: data loading (tapegrad.utils.data), activation checkpointing (tapegrad.utils.checkpoint)."""
from . import benchmark, checkpoint, data, dlpack, tensorboard  # noqa: F401
