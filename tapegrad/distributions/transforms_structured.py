"""The transforms of PyTorch's torch.distributions.transforms that act on whole events (vectors, matrices, slices)
rather than elementwise: onto the simplex, onto Cholesky factors and positive definite matrices, reshapes, and
the combinators (Independent, Cat, Stack) and a distribution's cdf. `transforms` re-exports them.
"""
import math

from . import constraints
from .transforms import Transform
from .utils import _sum_rightmost, _tg, finfo, lazy_property, tril_matrix_to_vec, vec_to_tril_matrix

__all__ = ["CatTransform", "CorrCholeskyTransform", "CumulativeDistributionTransform", "IndependentTransform",
           "LowerCholeskyTransform", "PositiveDefiniteTransform", "ReshapeTransform", "SoftmaxTransform",
           "StackTransform", "StickBreakingTransform"]


def _pad(x, before, after, value=1.0):
    return _tg().nn.functional.pad(x, [before, after], value=value)


def _clipped_sigmoid(x):
    f = finfo(x.dtype)
    return x.sigmoid().clamp(min=float(f.tiny), max=1.0 - float(f.eps))


def _at_least_one_dim(shape):
    if len(shape) < 1:
        raise ValueError("Too few dimensions on input")


class IndependentTransform(Transform):
    """A transform whose `reinterpreted_batch_ndims` rightmost batch dims are taken as event dims (their
    log |det J| summed)."""

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims, cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain, self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain, self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y), self.reinterpreted_batch_ndims)

    def __repr__(self):
        return f"{self.__class__.__name__}({self.base_transform!r}, {self.reinterpreted_batch_ndims})"

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshapes the rightmost dims from in_shape to out_shape (volume preserving: log |det J| is 0)."""
    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        Size = _tg().Size
        self.in_shape, self.out_shape = Size(in_shape), Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        return x.reshape(x.shape[:x.dim() - len(self.in_shape)] + self.out_shape)

    def _inverse(self, y):
        return y.reshape(y.shape[:y.dim() - len(self.out_shape)] + self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        return x.new_zeros(x.shape[:x.dim() - len(self.in_shape)])

    @staticmethod
    def _swap_tail(shape, tail, new_tail):
        if len(shape) < len(tail):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(tail)
        if shape[cut:] != tail:
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {tail}")
        return shape[:cut] + new_tail

    def forward_shape(self, shape):
        return self._swap_tail(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._swap_tail(shape, self.out_shape, self.in_shape)


class SoftmaxTransform(Transform):
    """Unconstrained vectors onto the simplex by softmax: not bijective (its inverse is the log, one of the
    many preimages), so it has no log |det J|."""
    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    def _call(self, x):
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        _at_least_one_dim(shape)
        return shape

    def inverse_shape(self, shape):
        _at_least_one_dim(shape)
        return shape


def _stick_offset(x):
    # K - k for the k-th of K coordinates, so that x = 0 maps to the simplex's centre
    return x.shape[-1] + 1 - x.new_ones(x.shape[-1]).cumsum(-1)


class StickBreakingTransform(Transform):
    """R^K onto the (K + 1)-simplex by stick breaking: each coordinate's sigmoid breaks off its share of
    what is left."""
    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    def _call(self, x):
        z = _clipped_sigmoid(x - _stick_offset(x).log())
        return _pad(z, 0, 1) * _pad((1 - z).cumprod(-1), 1, 0)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        offset = y.shape[-1] - y.new_ones(y_crop.shape[-1]).cumsum(-1)
        # kept positive where y[-1] ~ 0 or y[:-1].sum() ~ 1 rounds it to 0 or below
        sf = (1 - y_crop.cumsum(-1)).clamp(min=float(finfo(y.dtype).tiny))
        return y_crop.log() - sf.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        x = x - _stick_offset(x).log()
        # 1 - sigmoid(x) = exp(-x) sigmoid(x)
        return (-x + _tg().nn.functional.logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        _at_least_one_dim(shape)
        return shape[:-1] + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        _at_least_one_dim(shape)
        return shape[:-1] + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Square matrices onto lower triangular ones with positive diagonal: the strict lower triangle kept, the
    diagonal exponentiated (not bijective: the upper triangle is dropped)."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Square matrices onto positive definite ones: L L^T of the LowerCholeskyTransform's L."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    def _call(self, x):
        x = LowerCholeskyTransform()(x)
        return x @ x.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(_tg().linalg.cholesky(y))


class CorrCholeskyTransform(Transform):
    """Vectors of D (D - 1) / 2 reals onto Cholesky factors of D x D correlation matrices: tanh into (-1, 1),
    then stick breaking on the squares of each row (as Stan's)."""
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        tg = _tg()
        x = x.tanh()
        eps = float(finfo(x.dtype).eps)
        r = vec_to_tril_matrix(x.clamp(min=-1 + eps, max=1 - eps), diag=-1)
        # y = sign(r) sqrt(z * prod(1 - z)) = r sqrt(prod(1 - z)) for z = r ** 2
        z1m_cumprod_sqrt = (1 - r ** 2).sqrt().cumprod(-1)
        r = r + tg.eye(r.shape[-1], dtype=r.dtype, device=r.device)   # (the diagonal is 1)
        return r * _pad(z1m_cumprod_sqrt[..., :-1], 1, 0)

    def _inverse(self, y):
        y_cumsum = 1 - (y * y).cumsum(-1)
        y_cumsum_shifted = _pad(y_cumsum[..., :-1], 1, 0)
        t = tril_matrix_to_vec(y, diag=-1) / tril_matrix_to_vec(y_cumsum_shifted, diag=-1).sqrt()
        return (t.log1p() - t.neg().log1p()) / 2   # atanh

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        # The spaces differ in dimension: this is the log |det J| of x and y's flattened lower triangle.
        y1m_cumsum = 1 - (y * y).cumsum(-1)
        # (diagonal -2 needs no shift of the cumulative products, and works for 2 x 2 too)
        stick_breaking_logdet = 0.5 * tril_matrix_to_vec(y1m_cumsum, diag=-2).log().sum(-1)
        tanh_logdet = -2 * (x + _tg().nn.functional.softplus(-2 * x) - math.log(2.0)).sum(dim=-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        _at_least_one_dim(shape)
        N = shape[-1]
        D = round((0.25 + 2 * N) ** 0.5 + 0.5)
        if D * (D - 1) // 2 != N:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return shape[:-1] + (D, D)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        D = shape[-1]
        return shape[:-2] + (D * (D - 1) // 2,)


def _check_slices(name, value, dim, size, what, called="tensor"):
    """PyTorch's checks that `value` (called `name`; `called` where dim is out of range) has `size` along dim."""
    if not (-value.dim() <= dim < value.dim()):
        raise AssertionError(f"dim {dim} out of range for {called} with {value.dim()} dimensions")
    if value.size(dim) != size:
        raise AssertionError(f"{name}.size({dim}) = {value.size(dim)} must equal {what} {size}")


class CatTransform(Transform):
    """The transforms `tseq` on consecutive slices (of `lengths`) along `dim`, joined as cat joins them."""

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = [1] * len(self.transforms) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms ({len(self.transforms)})")
        self.dim = dim

    @lazy_property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @lazy_property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _slices(self, value):
        start = 0
        for length in self.lengths:
            yield value.narrow(self.dim, start, length)
            start = start + length

    def _call(self, x):
        _check_slices("x", x, self.dim, self.length, "length")
        return _tg().cat([t(s) for t, s in zip(self.transforms, self._slices(x))], dim=self.dim)

    def _inverse(self, y):
        _check_slices("y", y, self.dim, self.length, "length")
        return _tg().cat([t.inv(s) for t, s in zip(self.transforms, self._slices(y))], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        _check_slices("x", x, self.dim, self.length, "length", "x")
        _check_slices("y", y, self.dim, self.length, "length", "y")
        terms = []
        for t, xs, ys in zip(self.transforms, self._slices(x), self._slices(y)):
            term = t.log_abs_det_jacobian(xs, ys)
            if t.event_dim < self.event_dim:
                term = _sum_rightmost(term, self.event_dim - t.event_dim)
            terms.append(term)
        # concatenated where dim is a batch dim of the result, summed where it lies inside the event
        dim = (self.dim - x.dim() if self.dim >= 0 else self.dim) + self.event_dim
        return _tg().cat(terms, dim=dim) if dim < 0 else sum(terms)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim, self.lengths)


class StackTransform(Transform):
    """The transforms `tseq` on the slices along `dim`, one each, joined as stack joins them."""

    def __init__(self, tseq, dim=0, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z):
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _call(self, x):
        _check_slices("x", x, self.dim, len(self.transforms), "len(transforms)")
        return _tg().stack([t(s) for s, t in zip(self._slice(x), self.transforms)], dim=self.dim)

    def _inverse(self, y):
        _check_slices("y", y, self.dim, len(self.transforms), "len(transforms)")
        return _tg().stack([t.inv(s) for s, t in zip(self._slice(y), self.transforms)], dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        _check_slices("x", x, self.dim, len(self.transforms), "len(transforms)", "x")
        _check_slices("y", y, self.dim, len(self.transforms), "len(transforms)", "y")
        terms = [t.log_abs_det_jacobian(xs, ys) for xs, ys, t in zip(self._slice(x), self._slice(y), self.transforms)]
        return _tg().stack(terms, dim=self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """A distribution's cdf, onto the unit interval (its inverse the icdf, its log |det J| the log density)."""
    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)
