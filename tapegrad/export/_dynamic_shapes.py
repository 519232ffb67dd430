"""torch.export's dynamic shapes: `Dim`, the `Dim.AUTO`/`DYNAMIC`/`STATIC` hints, and what they become.

`dynamic_shapes` (a dict by argument name or a tuple by position; per tensor None, a dict {dim: spec}
or a tuple of specs) is normalised to one `Axis` per dimension of every input. A dynamic axis becomes
a JAX symbolic dimension (`jax.export.symbolic_shape`, bounds as its constraints; one Dim used on several
inputs is one symbol), so the exported StableHLO program runs at every size in range. Calls are checked
first, with PyTorch's guard messages (AssertionError "Guard failed: x.size()[0] <= 64").
"""
import dataclasses
import itertools

import jax

__all__ = ["Dim", "int_oo"]


class _IntInfinity:
    """PyTorch's int_oo: the upper bound of a Dim given no max."""

    def __repr__(self):
        return "int_oo"

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, _IntInfinity)

    def __hash__(self):
        return hash("int_oo")

    def __gt__(self, other):
        return not isinstance(other, _IntInfinity)

    def __ge__(self, other):
        return True

    def __lt__(self, other):
        return False

    def __le__(self, other):
        return isinstance(other, _IntInfinity)


int_oo = _IntInfinity()


@dataclasses.dataclass
class _DimHint:
    """Dim.AUTO (dynamic where the code allows, else static), Dim.DYNAMIC (dynamic, or an error), Dim.STATIC."""
    type: str
    min: int = None
    max: int = None
    _factory: bool = True

    def __call__(self, min=None, max=None):
        """The hint with bounds: Dim.DYNAMIC(min=2, max=64)."""
        if not self._factory:
            raise TypeError(f"'{type(self)}' object is not callable")
        if min is not None and min < 0:
            raise AssertionError(f"min must be non-negative, got {min}")
        if max is not None and max < 0:
            raise AssertionError(f"max must be non-negative, got {max}")
        if min is not None and max is not None and min > max:
            raise AssertionError(f"min must be <= max, got min={min}, max={max}")
        return _DimHint(self.type, min, max, False)

    def __repr__(self):
        parts = [self.type] + [f"{k}={v}" for k, v in (("min", self.min), ("max", self.max)) if v is not None]
        return f"DimHint({', '.join(parts)})"


class Dim:
    """A named dynamic dimension, Dim("batch", min=2, max=64): every input dimension marked with it has
    that size (one symbol), anywhere in [min, max]. `2 * d + 1` is a dimension derived from it."""

    AUTO = _DimHint("AUTO")
    DYNAMIC = _DimHint("DYNAMIC")
    STATIC = _DimHint("STATIC")

    def __init__(self, name, *, min=None, max=None):
        low, high = 0 if min is None else min, int_oo if max is None else max
        if not high > low:
            raise AssertionError(f"Cannot create Dim with inconsistent min={min}, max={max}")
        if not name.isidentifier():
            raise AssertionError(f"Dim name must be a valid identifier, got {name}")
        self.__name__, self.min, self.max = name, low, high

    def __repr__(self):
        low = None if self.min == 2 else self.min
        high = None if self.max == int_oo else self.max
        bounds = "".join(f", {k}={v}" for k, v in (("min", low), ("max", high)) if v is not None)
        return f"Dim('{self.__name__}'{bounds})"

    # derived dims: increasing linear functions A*d + B of a Dim, as PyTorch allows
    _scale, _offset = 1, 0

    @property
    def _root(self):
        return self

    def __add__(self, other):
        if type(other) is not int:
            raise NotImplementedError(f"Attempted to add {other} to {self.__name__}, where an integer was expected. "
                                      f"{_LINEAR}")
        return _DerivedDim(self._root, self._scale, self._offset + other)

    __radd__ = __add__

    def __sub__(self, other):
        if type(other) is not int:
            raise NotImplementedError(f"Attempted to subtract {other} from {self.__name__}, where an integer was "
                                      f"expected. {_LINEAR}")
        return _DerivedDim(self._root, self._scale, self._offset - other)

    def __rsub__(self, other):
        raise NotImplementedError(f"Attempted to negate {self.__name__}. {_LINEAR}")

    def __mul__(self, other):
        if type(other) is not int or other <= 0:
            raise NotImplementedError(f"Attempted to multiply {other} with {self.__name__}, where a positive integer "
                                      f"was expected. {_LINEAR}")
        return _DerivedDim(self._root, self._scale * other, self._offset * other)

    __rmul__ = __mul__


_LINEAR = "(Only increasing linear operations with integer coefficients are supported.)"


class _DerivedDim(Dim):
    """scale*root + offset: a dimension whose size follows a Dim's (its name as PyTorch prints it: 2*d + 1)."""

    def __init__(self, root, scale, offset):
        self._base, self._scale, self._offset = root, scale, offset
        self.__name__ = _linear(root.__name__, scale, offset)

    @property
    def _root(self):
        return self._base

    @property
    def min(self):
        return self._scale * self._base.min + self._offset

    @property
    def max(self):
        return self._base.max if self._base.max == int_oo else self._scale * self._base.max + self._offset

    def __repr__(self):
        return self.__name__


def _linear(x, scale, offset):
    """scale*x + offset written as sympy writes it (d + 1, 2*d - 3)."""
    term = x if scale == 1 else f"{scale}*{x}"
    return term if offset == 0 else f"{term} + {offset}" if offset > 0 else f"{term} - {-offset}"


@dataclasses.dataclass(frozen=True)
class Axis:
    """One input dimension: static (symbol None) or scale*symbol + offset, the symbol's bounds [min, max];
    kind "named", "AUTO" or "DYNAMIC"."""
    size: int
    symbol: str = None
    min: int = 0
    max: object = int_oo
    kind: str = "static"
    scale: int = 1
    offset: int = 0

    def bounds(self):
        high = self.max if self.max == int_oo else self.scale * self.max + self.offset
        return self.scale * self.min + self.offset, high


def _user_error(message, sep="\n"):
    from .._dynamo.exc import UserError
    return UserError(message + sep + "For more information about this error, see: "
                     "https://pytorch.org/docs/main/generated/exportdb/index.html#dynamic-shapes-validation")


def axes(dynamic_shapes, names, args):
    """[[Axis per dimension] per input] from dynamic_shapes (None: all static)."""
    shapes = [tuple(int(n) for n in a.shape) for a in args]
    if dynamic_shapes is None:
        return [[Axis(n) for n in shape] for shape in shapes]
    if isinstance(dynamic_shapes, dict):
        if sorted(dynamic_shapes) != sorted(names):
            raise _user_error(f"When `dynamic_shapes` is specified as a dict, its top-level keys must be the arg "
                              f"names {names} of `inputs`, but here they are {list(dynamic_shapes)}. Alternatively, "
                              "you could also ignore arg names entirely and specify `dynamic_shapes` as a list/tuple "
                              "matching `inputs`.", sep=" ")
        per_input = [dynamic_shapes[n] for n in names]
    elif isinstance(dynamic_shapes, (tuple, list)):
        if len(dynamic_shapes) != len(args):
            raise _user_error(f"Detected mismatch between the structure of `inputs` and `dynamic_shapes`: `inputs` "
                              f"has {len(args)} elements, but `dynamic_shapes` has {len(dynamic_shapes)} elements")
        per_input = list(dynamic_shapes)
    else:
        raise _user_error(f"dynamic_shapes must be a dict by argument name or a tuple by position, got "
                          f"{type(dynamic_shapes).__name__}")
    out, hints = [], _hint_names(per_input)
    for name, shape, spec in zip(names, shapes, per_input):
        if spec is None:
            spec = {}
        elif isinstance(spec, (tuple, list)):
            spec = dict(enumerate(spec))
        elif not isinstance(spec, dict):
            raise _user_error(f"Unexpected input tensor shape {spec} specified at `dynamic_shapes['{name}']` "
                              "(expected either a list/tuple of dimensions, or a dict mapping indices to dimensions, "
                              "where each dimension is an int, a Dim, Dim.AUTO, Dim.STATIC, or Dim.DYNAMIC)")
        row = [Axis(n) for n in shape]
        for d, entry in spec.items():
            if not 0 <= d < len(shape):
                raise _user_error(f"Dimension {d} of `dynamic_shapes['{name}']` is out of range for an input of "
                                  f"{len(shape)} dimensions")
            size = shape[d]
            if entry is None or (isinstance(entry, _DimHint) and entry.type == "STATIC"):
                continue
            if isinstance(entry, int) and not isinstance(entry, bool):
                if entry != size:
                    raise RuntimeError(f"Static shape constraint of {entry} does not match input size of {size}, "
                                       f"for L['{name}'].size()[{d}]")
                continue
            scale, offset = 1, 0
            if isinstance(entry, Dim):
                root = entry._root
                low, high, symbol, kind = root.min, root.max, root.__name__, "named"
                scale, offset = entry._scale, entry._offset
            elif isinstance(entry, _DimHint):
                low = 0 if entry.min is None else entry.min
                high = int_oo if entry.max is None else entry.max
                symbol, kind = next(hints), entry.type
            else:
                raise _user_error(f"Unexpected dimension mapped to index {d} in input tensor shape {spec} specified "
                                  f"at `dynamic_shapes['{name}']` (expected None, an int, a Dim, Dim.AUTO, "
                                  f"Dim.STATIC, or Dim.DYNAMIC,  but got {entry!r} instead)")
            axis = Axis(size, symbol, low, high, kind, scale, offset)
            if not axis.bounds()[0] <= size <= axis.bounds()[1]:
                raise RuntimeError(f"{size} not in range [{axis.bounds()[0]}, {axis.bounds()[1]}]")
            row[d] = axis
        out.append(row)
    return out


def _hint_names(per_input):
    """s0, s1, ... for the hint dims (PyTorch's names for its symbols), skipping the names of Dims given."""
    taken = set()
    for spec in per_input:
        entries = spec.values() if isinstance(spec, dict) else spec if isinstance(spec, (tuple, list)) else ()
        taken.update(e._root.__name__ for e in entries if isinstance(e, Dim))
    return (f"s{i}" for i in itertools.count() if f"s{i}" not in taken)


def group_equal_hints(rows):
    """The hint axes of equal example size as one symbol (what PyTorch infers when the code needs them equal)."""
    first = {}
    return [[dataclasses.replace(a, symbol=first.setdefault(a.size, a.symbol)) if a.kind in ("AUTO", "DYNAMIC")
             else a for a in row] for row in rows]


def without_auto(rows, symbols=None):
    """The Dim.AUTO axes (those with one of `symbols`, or all) static."""
    return [[Axis(a.size) if a.kind == "AUTO" and (symbols is None or a.symbol in symbols) else a for a in row]
            for row in rows]


def symbolic_shapes(rows):
    """The shapes for jax.export: ints, and one symbol per distinct name (one scope, bounds as constraints)."""
    symbols = {}
    for row in rows:
        for a in row:
            if a.symbol is not None:
                low, high = symbols.get(a.symbol, (a.min, a.max))
                symbols[a.symbol] = (max(low, a.min), min(high, a.max))
    if not symbols:
        return [tuple(a.size for a in row) for row in rows]
    # a lower bound of 2 or less is not a constraint: PyTorch does not guard it, and a size of 1 runs
    constraints = [f"{s} >= {low}" for s, (low, _) in symbols.items() if low > 2]
    constraints += [f"{s} <= {high}" for s, (_, high) in symbols.items() if high != int_oo]
    terms = list(dict.fromkeys([*symbols] + [_linear(a.symbol, a.scale, a.offset) for row in rows for a in row
                                             if a.symbol is not None]))
    exprs = dict(zip(terms, jax.export.symbolic_shape(", ".join(terms), constraints=constraints)))
    return [tuple(exprs[_linear(a.symbol, a.scale, a.offset)] if a.symbol is not None else a.size for a in row)
            for row in rows]


def check_call(names, rows, shapes):
    """PyTorch's guards for a call with these input shapes (AssertionError "Guard failed: ...")."""
    seen = {}   # symbol -> (the first axis with it, where, its size)
    for name, row, shape in zip(names, rows, shapes):
        for d, (a, n) in enumerate(zip(row, shape)):
            where = f"{name}.size()[{d}]"
            if a.symbol is None:
                if n != a.size:
                    raise AssertionError(f"Guard failed: {where} == {a.size}")
                continue
            if a.symbol in seen:
                first, first_where, first_n = seen[a.symbol]
                if n * first.scale != a.scale * (first_n - first.offset) + a.offset * first.scale:
                    same = (a.scale, a.offset) == (first.scale, first.offset)
                    raise AssertionError(f"Guard failed: {where} == {first_where}" if same else
                                         f"Guard failed: {_relative(first, first_where, a)} == {where}")
                continue
            seen[a.symbol] = (a, where, n)
            low, high = a.bounds()
            if a.min > 2 and n < low:   # PyTorch does not guard a lower bound of 0, 1 or 2
                raise AssertionError(f"Guard failed: {where} >= {low}")
            if high != int_oo and n > high:
                raise AssertionError(f"Guard failed: {where} <= {high}")
            if (n - a.offset) % a.scale:
                raise AssertionError(f"Guard failed: {_linear(where, 1, -a.offset)} % {a.scale} == 0")
            if n == 0 or n == a.offset:
                raise RuntimeError(f"tapegrad.export: {where} is dynamic and got size {n}; JAX's symbolic "
                                   "dimensions are at least 1, so this input cannot run this program. Export again "
                                   "for it (static shapes).")


def _relative(first, where, a):
    """The size `a` must have, in terms of the first input dimension with its symbol (as PyTorch writes it)."""
    if first.scale == 1:   # symbol = where - first.offset
        offset = a.offset - a.scale * first.offset
        term = where if a.scale == 1 else f"{a.scale}*{where}"
        return term if offset == 0 else f"{offset} + {term}"
    return f"{a.scale}*(({where} - {first.offset})//{first.scale}) + {a.offset}"


def to_json(rows):
    return [[[a.size, a.symbol, a.min, None if a.max == int_oo else a.max, a.kind, a.scale, a.offset] for a in row]
            for row in rows]


def from_json(data):
    return [[Axis(size, symbol, low, int_oo if high is None else high, kind, scale, offset)
             for size, symbol, low, high, kind, scale, offset in row] for row in data]


def from_avals(avals):
    """Axes read off an exported program's input shapes (its symbols; their bounds are JAX's to check)."""
    return [[Axis(n) if isinstance(n, int) else Axis(0, str(n), 1, int_oo, "named") for n in aval.shape]
            for aval in avals]
