"""PyTorch's argument-parser errors: the function, the argument, its position, or every overload listed.

Where PyTorch has several signatures for a function (`sum()` and `sum(dim, keepdim)`, `narrow` with an int or a
Tensor start), a call that fits none of them raises "received an invalid combination of arguments", listing
every overload, or, when the number of arguments fits exactly one of them, that overload's error for the first
argument of the wrong type. A function with one signature always raises the latter ("cumsum(): argument 'dim'
(position 1) must be int, not float"); those signatures are derived from aten's schemas where PyTorch's errors
confirm them. tapegrad's functions check their arguments as they read them; when one raises a
TypeError, `explained` works out which error PyTorch raises for the call as the user wrote it (positional and
keyword arguments), from the signatures PyTorch's parser has (`_torch_signatures`, generated). It runs on the
error path only: a call whose arguments fit a signature keeps the error it raised.

The message is built as PyTorch's parser builds it (torch/csrc/utils/invalid_arguments.cpp), quirks included:
an overload's "didn't match" line appears when its count of parameters, keyword-only marker included, is the
count of arguments given; an argument's type there is its Python type's name, marked `!name!` where it is not
the parameter's.
"""
import functools
import operator

_SIMPLE = {"int": ("int",), "float": ("float", "int")}   # what the listing's type check takes for these


class _Parameter:
    __slots__ = ("type", "name", "optional", "keyword_only", "nullable", "lone_int")

    def __init__(self, text, keyword_only, facts):
        declared, _, default = text.partition(" = ")
        self.type, _, self.name = declared.rpartition(" ")
        self.optional = bool(default) or self.name == "out"
        self.keyword_only = keyword_only
        # (facts None: what the schema says is not known for this overload, so any parameter may take None,
        # and any int list a lone int; an int list with a default, `int[1] dim=[]`, takes None too)
        self.nullable = default in ("None", "[]") or facts is None or self.name in facts[0]
        self.lone_int = facts is None or self.name in facts[1]


class _Overload:
    __slots__ = ("text", "parameters", "listed_count", "min_args", "max_args")

    def __init__(self, text, facts):
        self.text = text
        items = text[1:-1].split(", ")
        self.listed_count = len(items)   # (the listing counts "()" as one parameter and "*" as one)
        self.parameters = []
        keyword_only = False
        for item in items:
            if item == "*":
                keyword_only = True
            elif item:
                self.parameters.append(_Parameter(item, keyword_only, facts))
        self.min_args = sum(not p.optional for p in self.parameters)
        self.max_args = len(self.parameters)

    def positional(self):
        return [p for p in self.parameters if not p.keyword_only]

    def fits(self, args, kwargs, fname):
        """Whether PyTorch's parser takes these arguments with this overload."""
        positional = self.positional()
        if _packed(positional, args):
            args = (args,)   # an int list given as several ints (`x.permute(1, 0)`)
        if len(args) > len(positional):
            return False
        # (in the parser's order: each parameter, then the keywords left over)
        for i, p in enumerate(self.parameters):
            given = i < len(args) or p.name in kwargs
            if not given and not p.optional:
                return False
            if given and not _accepts(p, args[i] if i < len(args) else kwargs[p.name], fname, i):
                return False
        names = [p.name for p in self.parameters]
        return all(k in names and names.index(k) >= len(args) for k in kwargs)

    def first_error(self, fname, args, kwargs):
        """PyTorch's error for this overload and these arguments, in its parser's order
        (FunctionSignature::parse), or None."""
        positional = self.positional()
        if _packed(positional, args):
            args = (args,)   # (ints as the one int list, as fits() reads them)
        if len(args) > len(positional):
            return _extra_args(fname, self.min_args, len(positional), len(args))
        for i, p in enumerate(self.parameters):
            keyword = i >= len(args)
            if keyword and p.name not in kwargs:
                if p.optional:
                    continue
                missing = [f'"{q.name}"' for q in self.parameters[i:] if not q.optional]
                # (PyTorch's plural is inverted here: "missing 1 required positional arguments")
                plural = "s" if len(missing) == 1 else ""
                return f"{fname}() missing {len(missing)} required positional argument{plural}: {', '.join(missing)}"
            value = kwargs[p.name] if keyword else args[i]
            if not _accepts(p, value, fname, i):
                where = "" if keyword else f" (position {i + 1})"
                return f"{fname}(): argument '{p.name}'{where} {_must_be(p, value, keyword)}"
        names = [p.name for p in self.parameters]
        for k in kwargs:
            if k not in names:
                return f"{fname}() got an unexpected keyword argument '{k}'"
            if names.index(k) < len(args):
                return f"{fname}() got multiple values for argument '{k}'"
        return None


def _int_list_alone(positional):
    """Whether an overload's only positional parameter is an int list: PyTorch's parser then takes several ints
    as that list (`x.tile(2, 3)` as `x.tile((2, 3))`, its allow_varargs_intlist); not an int list with a default
    (`std(0, 1)` is refused for `std(tuple of ints dim = None, *, ...)`)."""
    return len(positional) == 1 and positional[0].type == "tuple of ints" and not positional[0].optional


def _packed(positional, args):
    """Whether PyTorch's parser takes these positional arguments as one int list: the first one an int
    (`x.permute(1, 0)`, and one int alone, `x.flip(1)`; not `x.expand(2.0, 3)`)."""
    return len(args) >= 1 and _int_list_alone(positional) and _is_int(args[0])


def _extra_args(fname, min_args, max_positional, given):
    if min_args != max_positional:   # (min_args counts required keyword-only parameters too, as PyTorch's)
        return f"{fname}() takes from {min_args} to {max_positional} positional arguments but {given} were given"
    return (f"{fname}() takes {max_positional} positional argument{'s' if max_positional != 1 else ''} but {given} "
            f"{'were' if given != 1 else 'was'} given")


# Functions whose Tensor parameters take a Python number too (python_arg_parser's numbers-as-tensors list)
_NUMBERS_AS_TENSORS = {n + s for n in ("add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "eq",
                                       "ne", "lt", "le", "gt", "ge") for s in ("", "_")} | {"copy_"}


# tapegrad's classes for PyTorch's C types, whose names (tp_name) carry their module
_TORCH_TYPES = {"dtype", "device", "Size", "layout", "memory_format", "Generator", "finfo", "iinfo"}


def _tp_name(value):
    """The name PyTorch prints for a value's type: CPython's tp_name (a C type's carries its module)."""
    t = type(value)
    if t.__module__.startswith("tapegrad") and t.__name__ in _TORCH_TYPES:
        return f"torch.{t.__name__}"
    if t.__module__ in ("builtins", None) or t.__flags__ & (1 << 9):   # built-in, or a class defined in Python
        return t.__name__
    return f"{t.__module__}.{t.__name__}"


def _must_be(p, value, keyword):
    # (a keyword argument's message names its type only; a positional list's names the element)
    if p.type == "tuple of ints" and isinstance(value, (tuple, list)) and value and not keyword:
        return f"must be tuple of ints, but found element of type {_tp_name(value[0])} at pos 0"
    return f"must be {p.type}, not {_tp_name(value)}"


def _is_int(value):
    if type(value) is bool:
        return False
    try:
        operator.index(value)
        return True
    except TypeError:
        return False


class _ElementError(Exception):
    """PyTorch's parser raising while it matches a signature: a tensor list with an element that is not one."""


def _accepts(p, value, fname=None, index=0):
    """Whether PyTorch's parser takes `value` for parameter `p` (FunctionParameter::check, for the types its
    listings show; a type not modelled here is taken, so that tapegrad's own error stands)."""
    from ._tensor import Tensor
    expected = p.type
    if value is None:
        return p.nullable
    if expected == "Tensor":
        return isinstance(value, Tensor) or (fname in _NUMBERS_AS_TENSORS and _is_number(value))
    if expected in ("int", "SymInt"):
        return _is_int(value)
    if expected == "float":
        return isinstance(value, (int, float)) or _is_int(value) or _float_like(value)
    if expected == "bool":
        return type(value) is bool or type(value).__name__ == "bool_"
    if expected == "Number":   # (a tensor only as a 0-dim one that does not require grad)
        return (value.ndim == 0 and not value.requires_grad) if isinstance(value, Tensor) else _is_number(value)
    if expected in ("tuple of ints", "tuple of SymInts"):
        if isinstance(value, (tuple, list)):
            return not value or _is_int(value[0])
        return p.lone_int and _is_int(value)
    if expected in ("tuple of Scalars", "tuple of floats"):
        return isinstance(value, (tuple, list)) and (not value or _is_number(value[0]))
    if expected == "tuple of Tensors":
        if not isinstance(value, (tuple, list)):
            return False
        bad = next((k for k, v in enumerate(value) if not isinstance(v, Tensor)), None)
        if bad is not None:   # (its check raises at once, whichever overload it was matching)
            raise _ElementError(f"expected Tensor as element {bad} in argument {index}, but got "
                                f"{_tp_name(value[bad])}")
        return True
    if expected == "str":
        return isinstance(value, str)
    if expected == "torch.dtype":
        from ._dtypes import dtype
        return isinstance(value, dtype) or value in (float, int, bool, complex)
    if expected in ("name", "tuple of names"):
        return isinstance(value, (str, tuple, list))
    if expected == "torch.device":
        return isinstance(value, str) or _is_int(value) or _tp_name(value) == expected
    if expected in _TYPED:
        return _tp_name(value) == expected
    return True


_TYPED = {"torch.layout", "torch.memory_format", "torch.Generator"}


def _is_number(value):
    return isinstance(value, (int, float, complex)) or _is_int(value) or _float_like(value)


def _float_like(value):
    return type(value).__name__.startswith(("float", "int")) and hasattr(value, "__float__")


@functools.cache
def _overloads(kind, name):
    """(overloads, whether PyTorch's parser has this one signature only) for a name, or (None, False)."""
    from . import _torch_signatures as T
    single = T.SINGLE[kind].get(name)
    texts = (single,) if single is not None else T.OVERLOADS[kind].get(name)
    if texts is None:
        return None, False
    facts = T.FACTS.get((kind, name), (((), ()),) * len(texts))
    return tuple(_Overload(t, f) for t, f in zip(texts, facts)), single is not None


def _parser_order(kwargs):
    """Keyword arguments in the order PyTorch's message lists them: it copies them into a C++ hash map, whose
    iteration (libstdc++) gives keys in different buckets last-inserted first. (Two keys in one bucket come
    out the other way round; that rare case is not modelled.)"""
    return dict(reversed(kwargs.items()))


def explained(error, kind, name, args, kwargs, fname=None):
    """The TypeError PyTorch raises for `name(*args, **kwargs)` (kind: "function", "nn", "method" with args
    without self, or "kernel"; see _torch_signatures), given the TypeError that tapegrad's function raised:
    `error` itself when PyTorch's parser has no signatures for the name, or the arguments fit one of them."""
    overloads, single = _overloads(kind, name)
    try:
        if overloads is None:
            return error
        if any(o.fits(args, kwargs, name) for o in overloads):
            # (tapegrad's own error for a value the parser takes; its "argument 'dim' ..." errors without the
            # function, which PyTorch's always name)
            if str(error).startswith("argument '"):
                from . import _torch_signatures
                return _raised(f"{fname or _torch_signatures.NAMED.get((kind, name), name)}(): {error}", error)
            return error
    except _ElementError as e:
        return _raised(str(e), error)
    from . import _torch_signatures
    fname = fname or _torch_signatures.NAMED.get((kind, name), name)
    count = len(args) + len(kwargs)
    plausible = [o for o in overloads if o.min_args <= count <= o.max_args]
    if single or len(plausible) == 1:   # (a parser of one signature always reports argument by argument)
        plausible = plausible or overloads
        text = plausible[0].first_error(fname, args, kwargs)
        return error if text is None else _raised(text, error)
    return _raised(invalid_combination(fname, overloads, args, _parser_order(kwargs)), error)


def _raised(text, error):
    out = TypeError(text)
    out.__cause__, out.__suppress_context__ = None, True
    return out


def invalid_combination(fname, overloads, args, kwargs):
    """PyTorch's "received an invalid combination of arguments" message (format_invalid_args)."""
    got = _described(args, kwargs)
    head = f"{fname}() received an invalid combination of arguments - got {got}, but expected "
    count = len(args) + len(kwargs)
    if len(overloads) == 1:
        o = overloads[0]
        unmatched = _unmatched_keywords(o, kwargs)
        if unmatched:
            return (f"{fname}() received an invalid combination of arguments - got unrecognized keyword arguments: "
                    + ", ".join(unmatched))
        shown = _marked(o, args, kwargs) if o.listed_count == count else got
        return f"{fname}() received an invalid combination of arguments - got {shown}, but expected {o.text}"
    lines = [head + "one of:"]
    for o in overloads:
        lines.append(f" * {o.text}")
        if o.listed_count == count:
            unmatched = _unmatched_keywords(o, kwargs)
            if unmatched:
                lines.append("      didn't match because some of the keywords were incorrect: " + ", ".join(unmatched))
            else:
                lines.append("      didn't match because some of the arguments have invalid types: "
                             + _marked(o, args, kwargs))
    return "\n".join(lines) + "\n"


def _described(args, kwargs):
    parts = [_tp_name(a) + ", " for a in args] + [f"{k}={_tp_name(v)}, " for k, v in kwargs.items()]
    text = "".join(parts)
    if args:   # (PyTorch trims the last separator only when there are positional arguments)
        text = text[:-2]
    return f"({text})"


def _listed_items(o):
    """The listing's parameters as its parser splits them: (type, name) per item, "*" and "" included."""
    out = []
    for item in o.text[1:-1].split(", "):
        cut = item.rfind(" ")
        out.append((item[:cut] if cut >= 0 else "", item[cut + 1:]))
    return out


def _unmatched_keywords(o, kwargs):
    items = _listed_items(o)
    start = max(len(items) - len(kwargs), 0)
    names = {name for _, name in items[start:]}
    return [k for k in kwargs if k not in names]


def _marked(o, args, kwargs):
    items = _listed_items(o)
    values = list(args) + [kwargs.get(items[i][1]) for i in range(len(args), len(args) + len(kwargs))]
    parts = []
    for i, value in enumerate(values):
        type_name = items[i][0] if i < len(items) else None
        accepted = _SIMPLE.get(type_name, (type_name,))
        text = _shown(value)
        if i >= len(args):
            text = f"{items[i][1]}={text}"
        parts.append((text if _tp_name(value) in accepted else f"!{text}!") + ", ")
    text = "".join(parts)
    return "(" + (text[:-2] if args else text) + ")"   # (trimmed only after positional arguments, as PyTorch)


def _shown(value):
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_tp_name(v) for v in value)
        if isinstance(value, tuple):
            return f"tuple of ({inner}{',' if len(value) == 1 else ''})"
        return f"list of [{inner}]"
    return _tp_name(value)


def parsed(fn, kind, name, before=None):
    """fn raising PyTorch's argument-parser error where it raises a TypeError for arguments that fit none of
    `name`'s overloads (kind "method": fn's first argument is the tensor). before(args): the positional
    arguments as the parser reads them (several ints packed into one list), or PyTorch's error (see
    pack_int_varargs, refuse_loose_int_lists), in the same wrapper."""
    @functools.wraps(fn)
    def call(*args, **kwargs):
        given = args if before is None else before(args, kwargs)
        try:
            return fn(*given, **kwargs)
        except TypeError as e:
            reraise(e, kind, name, args[1:] if kind == "method" else args, kwargs)
    call.parses_arguments = True
    call.parsing = (fn, kind, name)   # (what a later `before` rebuilds the wrapper from)
    return call


def _with_before(fn, kind, name, before):
    """fn's wrapper with `before` run first: its own parser wrapper rebuilt, or one of its own."""
    inner = getattr(fn, "parsing", None)
    if inner is not None:
        return parsed(*inner, before=before)

    @functools.wraps(fn)
    def call(*args, **kwargs):
        return fn(*before(args, kwargs), **kwargs)
    return call


def reraise(error, kind, name, args, kwargs):
    """Raise, in place of the TypeError `error` that a call raised, PyTorch's parser error for it (see
    `explained`), or `error` itself."""
    out = explained(error, kind, name, args, kwargs)
    if out is error:
        raise error
    raise out from None


_WRAPPERS = {}


def parse_all(namespace, names, kind):
    """`parsed` on each of `names` in `namespace` (a module's globals, or a class's attributes) that PyTorch's
    parser has signatures for under `kind` (see _torch_signatures) and that is not parsed already."""
    from . import _torch_signatures as T
    table = {**T.OVERLOADS[kind], **T.SINGLE[kind]}
    for name in names:
        fn = namespace.get(name) if isinstance(namespace, dict) else namespace.__dict__.get(name)
        if name not in table or not callable(fn) or isinstance(fn, type) or getattr(fn, "parses_arguments", False):
            continue
        # one wrapper for one function under one signature, so that what is one object in PyTorch (torch.pdist
        # is torch.nn.functional.pdist) stays one in tapegrad
        wrapped = _WRAPPERS.setdefault((fn, name, table[name]), parsed(fn, kind, name))
        if isinstance(namespace, dict):
            namespace[name] = wrapped
        else:
            setattr(namespace, name, wrapped)


def int_list_alone_methods():
    """The Tensor methods with an overload whose only positional parameter is an int list (_int_list_alone),
    each with whether every overload is such (then a lone int is that list too)."""
    from . import _torch_signatures as T
    out = {}
    for name in {**T.OVERLOADS["method"], **T.SINGLE["method"]}:
        alone = [_int_list_alone(o.positional()) for o in _overloads("method", name)[0]]
        if any(alone):
            out[name] = all(alone)
    return out


def pack_int_varargs(cls):
    """Tensor methods whose overload takes one int list, implemented without *args, given several ints
    (`x.tile(2, 3)`, `x.squeeze(0, 1)`, `x.hsplit(1, 2)`): called with them packed, as PyTorch's parser does
    when the first argument is an int (not a bool)."""
    for name, only in int_list_alone_methods().items():
        fn = cls.__dict__.get(name)
        if fn is None or _reads_ints_itself(getattr(fn, "parsing", (fn,))[0]):
            continue
        # (a lone int too where no overload takes an int there: `x.broadcast_to(3)`)
        setattr(cls, name, _with_before(fn, "method", name, _packing(0 if only else 1)))


def _reads_ints_itself(fn):
    """fn takes the ints as *args itself (`flip(input, *dims)`, `new(*args)`); the in-place methods' wrappers
    (_methods) only hand theirs to the out-of-place function, which needs them packed."""
    import inspect
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True   # (no signature to read: left as it is)
    return fn.__module__ != "tapegrad._methods" and any(p.kind is p.VAR_POSITIONAL for p in parameters)


def _packing(more_than):
    def pack(args, kwargs):   # (args[0] is the tensor)
        if len(args) > more_than + 1 and type(args[1]) is not bool and hasattr(args[1], "__index__"):
            return args[:1] + (args[1:],)
        return args
    return pack


def refuse_loose_int_lists(namespace, kind):
    """The functions of `namespace` (kind "function" or "nn") with one signature whose int lists come after
    another positional parameter (`torch.flip(input, dims)`, `torch.tile(input, dims)`): PyTorch's parser takes
    neither a lone int there (unless the list has a fixed size) nor the list as several ints, which tapegrad's
    functions, shared with the methods, would read as the method does. Such calls raise PyTorch's error."""
    from . import _torch_signatures as T
    for name in T.SINGLE[kind]:
        fn = namespace.get(name)
        if fn is None or not callable(fn) or isinstance(fn, type):
            continue
        positional = _overloads(kind, name)[0][0].positional()
        lists = tuple(i for i, p in enumerate(positional) if i and p.type == "tuple of ints" and not p.lone_int)
        if lists or positional and positional[0].type == "tuple of ints" and not positional[0].lone_int:
            namespace[name] = _with_before(fn, kind, name, _refusing_loose(kind, name, len(positional),
                                                                             lists or (0,)))


def _refusing_loose(kind, name, count, lists):
    def refuse(args, kwargs):
        if len(args) > count or any(i < len(args) and isinstance(args[i], (int, float)) for i in lists):
            error = TypeError(name)
            out = explained(error, kind, name, args, kwargs)
            if out is not error:
                raise out
        return args
    return refuse
