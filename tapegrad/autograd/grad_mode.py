"""PyTorch's module path torch.autograd.grad_mode for the grad-mode context managers (they live in _grad_mode)."""
from .._grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: F401
