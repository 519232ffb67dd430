"""tapegrad.utils: data loading (tapegrad.utils.data), activation checkpointing (tapegrad.utils.checkpoint)."""
from . import checkpoint, data  # noqa: F401
