"""PyTorch's top-level in-place functions (torch.sin_(x), torch.clamp_(x, 0, 1), ...).

Each is the Tensor method of the same name called on its first argument, as in PyTorch, so it
shares the method's recording, version bump and errors.
"""
from ._tensor import Tensor

# The in-place functions PyTorch exposes at top level that tapegrad's Tensor has as methods.
NAMES = ("abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_", "arctan_", "arctanh_",
         "as_strided_",
         "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_", "clamp_max_", "clamp_min_", "clip_",
         "conj_physical_", "cos_", "cosh_", "deg2rad_", "detach_", "erf_", "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_",
         "frac_", "gcd_", "i0_", "index_put_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_", "nan_to_num_", "neg_",
         "negative_", "rad2deg_", "reciprocal_", "relu_", "round_", "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_",
         "sqrt_", "square_", "tan_", "tanh_", "trunc_", "xlogy_", "zero_")


def _function(name):
    method = getattr(Tensor, name)

    def inplace(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}. Pass a tensor (tapegrad.tensor(...)) to modify it in place.")
        return method(input, *args, **kwargs)

    inplace.__name__ = inplace.__qualname__ = name
    return inplace


FUNCTIONS = {name: _function(name) for name in NAMES if hasattr(Tensor, name)}
