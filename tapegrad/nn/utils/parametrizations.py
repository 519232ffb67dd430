"""PyTorch's torch.nn.utils.parametrizations (weight_norm so far), built on parametrize."""
from ..modules.module import Module
from . import parametrize

__all__ = ["weight_norm"]


def _norm_except_dim(v, dim):
    if dim == -1:
        return v.pow(2).sum().sqrt()
    return v.pow(2).sum([d for d in range(v.ndim) if d != dim], keepdim=True).sqrt()


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return weight_v * (weight_g / _norm_except_dim(weight_v, self.dim))

    def right_inverse(self, weight):
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Reparametrize `name` as magnitude (original0) times direction (original1), as PyTorch's."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    return module
