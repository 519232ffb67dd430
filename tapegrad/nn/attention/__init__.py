"""tapegrad.nn.attention: PyTorch's attention helpers. `varlen` holds variable-length attention over packed
sequences; SDPBackend is the enum tapegrad.backends.cuda keeps (its flags change nothing: XLA fuses attention)."""
from ...backends.cuda import SDPBackend  # noqa: F401
from . import varlen  # noqa: F401  (registers its op-table entry)
