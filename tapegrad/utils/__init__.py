"""tapegrad.utils: data loading (tapegrad.utils.data), activation checkpointing (tapegrad.utils.checkpoint)."""
from . import benchmark, checkpoint, data  # noqa: F401
