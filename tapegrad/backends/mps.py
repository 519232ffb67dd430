"""tapegrad.backends.mps: Apple GPUs, through JAX's METAL plugin (jax-metal)."""
from ._probe import has_devices, has_plugin


def is_available():
    return has_devices("METAL")


def is_built():
    return is_available() or has_plugin("jax_plugins.metal_plugin")
