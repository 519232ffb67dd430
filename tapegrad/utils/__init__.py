"""tapegrad.utils: data loading (tapegrad.utils.data), activation checkpointing (tapegrad.utils.checkpoint)."""
from . import benchmark, checkpoint, data, tensorboard  # noqa: F401
