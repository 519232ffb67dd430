"""tapegrad.utils: data loading (tapegrad.utils.data), activation checkpointing (tapegrad.utils.checkpoint)."""
from . import checkpoint, data, dlpack  # noqa: F401
