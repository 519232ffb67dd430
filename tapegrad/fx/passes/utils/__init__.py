"""PyTorch's torch.fx.passes.utils."""
