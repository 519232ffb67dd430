"""LKJCholesky(dim, concentration): the LKJ distribution over lower Cholesky factors of correlation matrices,
sampled by the onion method (Lewandowski, Kurowicka and Joe, 2009), as PyTorch's."""
import math

from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import _tg, broadcast_all, finfo

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        tg = _tg()
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        event_shape = tg.Size((dim, dim))
        # The Beta marginals of the onion method's squared row norms, one per row (row 0's is unused)
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = tg.arange(self.dim - 1, dtype=self.concentration.dtype, device=self.concentration.device)
        offset = tg.cat([offset.new_zeros((1,)), offset])
        beta_conc1 = offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)
        super().__init__(batch_shape, event_shape, validate_args)

    def expand(self, batch_shape, _instance=None):
        shape = _tg().Size(batch_shape)
        return self._expanded(LKJCholesky, shape, _instance, dim=self.dim,
                              concentration=self.concentration.expand(shape),
                              _beta=self._beta.expand(shape + (self.dim,)))

    def sample(self, sample_shape=()):
        # Row i's off-diagonal part is sqrt(y_i) times a uniform direction; the diagonal completes its unit norm.
        tg = _tg()
        with tg.no_grad():
            y = self._beta.sample(sample_shape).unsqueeze(-1)
            u_normal = tg.randn(self._extended_shape(sample_shape), dtype=y.dtype, device=y.device).tril(-1)
            u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
            # row 0 is 0 / 0: zeros, as PyTorch fills it
            first_row = tg.arange(self.dim, device=y.device).unsqueeze(-1) == 0
            u_hypersphere = tg.where(first_row, 0.0, u_hypersphere)
            w = y.sqrt() * u_hypersphere
            eps = float(finfo(w.dtype).tiny)   # clamp for numerical stability
            diag_elems = (1 - (w ** 2).sum(dim=-1)).clamp(min=eps).sqrt()
            return w + tg.diag_embed(diag_elems)

    def log_prob(self, value):
        # The density of L L^T is det ** (concentration - 1) = prod L_ii ** (2 concentration - 2); the Jacobian of
        # L -> L L^T adds prod L_ii ** (D - i): together prod L_ii ** order_i, normalised as in the paper.
        if self._validate_args:
            self._validate_sample(value)
        tg = _tg()
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = tg.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = (order * diag_elems.log()).sum(dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = alpha.lgamma() * dm1
        numerator = tg.mvlgamma(alpha - 0.5, dm1)
        # the paper's pi term is D (D - 1) / 4 log(pi), mvlgamma's (D - 1) (D - 2) / 4 log(pi): add the rest
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        normalize_term = pi_constant + numerator - denominator
        return unnormalized_log_pdf - normalize_term
