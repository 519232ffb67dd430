"""Questions about dtypes PyTorch answers at top level: result_type, can_cast, is_signed."""
import numbers

from .. import _dtypes as D
from .._tensor import Tensor


def result_type(tensor, other):
    """The dtype an arithmetic op on the two (tensors or numbers) computes in."""
    for name, x in (("tensor", tensor), ("other", other)):
        if not isinstance(x, (Tensor, numbers.Number)):
            raise TypeError(f"result_type() received an invalid combination of arguments - got "
                            f"({type(tensor).__name__}, {type(other).__name__}): {name} must be a Tensor or a "
                            "number")
    both = (tensor, other)
    return D.result_type([x.dtype for x in both if isinstance(x, Tensor) and x.ndim],
                         [x.dtype for x in both if isinstance(x, Tensor) and not x.ndim],
                         [x for x in both if not isinstance(x, Tensor)])


def can_cast(from_, to):
    """Whether PyTorch's in-place ops may write a result of dtype from_ into a tensor of dtype to: never complex
    to real, floating to integral, or anything else to bool."""
    from_, to = D.as_dtype(from_), D.as_dtype(to)
    if from_.is_complex and not to.is_complex:
        return False
    if from_.is_floating_point and not (to.is_floating_point or to.is_complex):
        return False
    return not (from_ is not D.bool_ and to is D.bool_)


def is_signed(input):
    if not isinstance(input, Tensor):
        raise TypeError(f"is_signed(): argument 'input' (position 1) must be Tensor, not {type(input).__name__}")
    return input.dtype.is_signed

