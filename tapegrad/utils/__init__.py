"""tapegrad.utils: data loading (tapegrad.utils.data)."""
from . import data  # noqa: F401
