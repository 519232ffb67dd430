"""How PyTorch reads an index expression before it indexes (python_variable_indexing.cpp).

A list shorter than 32 that holds a sequence, a slice, a tensor, None or `...` is read as a tuple (deprecated,
with PyTorch's warning): x[[rows, cols]] is x[rows, cols]. Any other sequence is one index tensor: of bools
as they are, else of longs (floats truncated toward zero, an empty list an empty long index). Anything but an
int, a slice, None, `...`, a bool, a tensor or a sequence is refused.
"""
import numpy as np

from . import _dtypes as D
from ._tensor import Tensor
from ._user_frames import warn_user

_AS_TUPLE_WARNING = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed in pytorch 2.9; "
    "use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted as tensor index, "
    "x[torch.tensor(seq)], which will result either in an error or a different result")


def list_index(index):
    """A list index as PyTorch reads it: a tuple of its items (with the warning) or the list itself."""
    if len(index) < 32 and any(x is None or x is Ellipsis or isinstance(x, (Tensor, slice)) or _is_sequence(x)
                               for x in index):
        warn_user(_AS_TUPLE_WARNING, UserWarning)
        return tuple(index)
    return index


def index_values(x):
    """A non-tensor advanced index as the NumPy array PyTorch's index tensor would hold: bools, else int64."""
    if not _is_sequence(x):
        from ._argument_errors import _tp_name
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid "
                         f"indices (got {_tp_name(x)})")
    if isinstance(x, np.ndarray):
        D.from_jax(x.dtype)   # (PyTorch's refusal of text and object arrays)
        arr = x
    else:
        try:
            arr = np.asarray(x)
        except ValueError:   # ragged: torch.tensor's words for it
            arr = None
        if arr is None or arr.dtype.kind not in "biuf":   # ragged, text, objects, tensors inside: as torch.tensor
            from ._creation import tensor
            arr = np.asarray(tensor(x)._value)
    if arr.dtype.kind == "b":
        return arr
    return (arr.real if arr.dtype.kind == "c" else arr).astype(np.int64)


def _is_sequence(x):
    # CPython's PySequence_Check: a __getitem__ that is not a mapping's (NumPy's scalars index as mappings)
    return not isinstance(x, (dict, np.generic)) and hasattr(type(x), "__getitem__") and not isinstance(x, type)

