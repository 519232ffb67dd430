"""PyTorch's torch.nn.utils.prune: a `<name>_orig` parameter, a `<name>_mask` buffer and a forward pre-hook
that recomputes `<name> = mask * orig` before each call.

Masks are computed once per pruning call on the host (NumPy over the weights' values), as deterministic as
PyTorch's for l1/ln; random methods draw from tapegrad's generator. Pruning one tensor a second time
(PyTorch's PruningContainer) is not supported yet and raises.
"""
import numbers
from abc import ABC, abstractmethod

import numpy as np

from ..._creation import ones_like, tensor
from ..._dtypes import float64
from ..._functional import cat
from ...random import rand, rand_like

__all__ = ["BasePruningMethod", "Identity", "RandomUnstructured", "L1Unstructured", "RandomStructured",
           "LnStructured", "CustomFromMask", "identity", "random_unstructured", "l1_unstructured",
           "random_structured", "ln_structured", "global_unstructured", "custom_from_mask", "remove", "is_pruned"]


class BasePruningMethod(ABC):
    _tensor_name = None

    def __call__(self, module, inputs):
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask (same shape as t) for the importance scores t, starting from default_mask."""

    def apply_mask(self, module):
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        if is_pruned_tensor(module, name):
            raise NotImplementedError(f"Parameter '{name}' of module {module} is already pruned; pruning it again "
                                      "(PyTorch's PruningContainer) is not supported. Call prune.remove first.")
        method = cls(*args, **kwargs)
        method._tensor_name = name
        orig = getattr(module, name)
        if importance_scores is None:
            importance_scores = orig
        elif tuple(importance_scores.shape) != tuple(orig.shape):
            raise ValueError(f"importance_scores should have the same shape as parameter {name} of {module}")
        mask = method.compute_mask(importance_scores, default_mask=ones_like(orig))
        module.register_parameter(name + "_orig", orig)
        del module._parameters[name]
        module.register_buffer(name + "_mask", mask)
        setattr(module, name, method.apply_mask(module))
        module.register_forward_pre_hook(method)
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        scores = t if importance_scores is None else importance_scores
        default_mask = ones_like(t) if default_mask is None else default_mask
        return t * self.compute_mask(scores, default_mask=default_mask)

    def remove(self, module):
        if self._tensor_name is None:
            raise ValueError(f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        orig = module._parameters[self._tensor_name + "_orig"]
        orig.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, orig)


def _host(t):
    return np.asarray(t.detach().numpy(force=True) if hasattr(t, "detach") else t)


def _mask_like(default_mask, values):
    return tensor(values, dtype=default_mask.dtype, device=default_mask.device)


def _validate_amount(amount):
    if not isinstance(amount, numbers.Real) or (isinstance(amount, numbers.Integral) and amount < 0) or (
            not isinstance(amount, numbers.Integral) and not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a non-negative integer")


def _nparams_to_prune(amount, size):
    if isinstance(amount, numbers.Integral):
        if amount > size:
            raise ValueError(f"amount={amount} should be smaller than the number of parameters to prune={size}")
        return amount
    return round(amount * size)


def _keep_all_but(scores, k):
    """A flat mask zeroing the k smallest scores."""
    keep = np.ones(scores.size)
    if k:
        keep[np.argsort(scores.reshape(-1), kind="stable")[:k]] = 0
    return keep


class Identity(BasePruningMethod):
    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        k = _nparams_to_prune(self.amount, t.numel())
        if k == 0:   # (PyTorch draws nothing then)
            return default_mask
        scores = _host(rand_like(t))   # PyTorch's draws: the k highest are pruned
        return _mask_like(default_mask, _host(default_mask) * _keep_all_but(-scores, k).reshape(t.shape))

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_amount(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        k = _nparams_to_prune(self.amount, t.numel())
        return _mask_like(default_mask, _host(default_mask) * _keep_all_but(np.abs(_host(t)), k).reshape(t.shape))

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _structured_mask(t, dim, keep_idx, default_mask):
    mask = np.zeros(tuple(t.shape))
    index = [slice(None)] * t.ndim
    index[dim] = keep_idx
    mask[tuple(index)] = 1
    return _mask_like(default_mask, mask * _host(default_mask))


class RandomStructured(BasePruningMethod):
    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_amount(amount)
        self.amount, self.dim = amount, dim

    def compute_mask(self, t, default_mask):
        size = t.shape[self.dim]
        k = _nparams_to_prune(self.amount, size)
        if k == 0:
            return default_mask
        scores = _host(rand(size))   # PyTorch's draws: the k lowest channels are pruned
        return _structured_mask(t, self.dim, np.argsort(-scores, kind="stable")[:size - k], default_mask)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _validate_amount(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def compute_mask(self, t, default_mask):
        size = t.shape[self.dim]
        k = _nparams_to_prune(self.amount, size)
        if k == 0:
            return default_mask
        values = np.moveaxis(_host(t), self.dim, 0).reshape(size, -1)
        norms = np.linalg.norm(values, ord=self.n, axis=1) if self.n not in ("fro", "nuc") else \
            np.linalg.norm(values, axis=1)
        return _structured_mask(t, self.dim, np.argsort(-norms, kind="stable")[:size - k], default_mask)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim, importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


def identity(module, name):
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module, name, mask):
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    if not isinstance(parameters, (list, tuple)) and not hasattr(parameters, "__iter__"):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    parameters = list(parameters)
    importance_scores = importance_scores or {}
    scores = [importance_scores.get((m, n), getattr(m, n)) for m, n in parameters]
    flat = cat([s.detach().reshape(-1) for s in scores])
    method = pruning_method(**kwargs)
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    mask = method.compute_mask(flat, default_mask=ones_like(flat))
    start = 0
    for (module, name), s in zip(parameters, scores):
        n = s.numel()
        custom_from_mask(module, name, mask[start:start + n].view_as(s))
        start += n


def remove(module, name):
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning can be removed")


def is_pruned_tensor(module, name):
    return any(isinstance(h, BasePruningMethod) and h._tensor_name == name for h in module._forward_pre_hooks.values())


def is_pruned(module):
    return any(isinstance(h, BasePruningMethod) for m in module.modules() for h in m._forward_pre_hooks.values())
