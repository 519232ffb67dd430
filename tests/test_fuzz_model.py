"""The fuzzer's model of exact values (tests/fuzz/state.py): which values both libraries compute to the same
bits, and that discontinuous ops are drawn only on those (else rounding noise reads as a difference)."""
import re

from hypothesis import find, given, settings
from hypothesis import strategies as st

from fuzz import breadth, strategy
from fuzz.state import State, Var

KINKED = [strategy.UNARY_KINKED, strategy.BINARY_KINKED, strategy.REDUCTION_KINKED, strategy.INPLACE_KINKED,
          breadth.MORE_UNARY_KINKED, breadth.MORE_BINARY_KINKED, breadth.ALONG_DIM_KINKED,
          breadth.REORDER_KINKED, breadth.LOSSES_KINKED]


def _pattern(template):
    """A template as a regex over the code it writes: its tensors {x}, {a}, {b}, {y} stand for names, its
    {d}, {k}, {c} for numbers and flags."""
    pattern = re.sub(r"\\\{[abxy]\\\}", r"[A-Za-z_]\\w*", re.escape(template))
    return re.compile(re.sub(r"\\\{[a-z]\\\}", r"[\\w.\\-]+", pattern))


KINKED_PATTERNS = [_pattern(t) for kinked in KINKED for t in kinked]


def _leaf(s, name, exact, shape=(2, 3)):
    return s.add(Var(name, shape, "float32", True, True, root=name, leaves=frozenset({name}), exact=exact))


def test_rounding_spreads_to_results_views_and_storage():
    s = State()
    x, y = _leaf(s, "x", True), _leaf(s, "y", True)
    assert s.result("a", (2, 3), "float32", [x, y]).exact
    e = s.result("e", (2, 3), "float32", [x], rounds=True)
    assert not e.exact
    assert not s.result("b", (2, 3), "float32", [x, e]).exact
    v = s.result("v", (3,), "float32", [y], view_of=y)
    assert v.exact
    s.write_inplace(v, [], rounds=True)   # y.div_(3) through a view: y and its views are rounded
    assert not s.vars["y"].exact and not s.vars["v"].exact and s.vars["x"].exact
    z = _leaf(s, "z", True)
    s.write_inplace(z, [e])               # z.add_(e)
    assert not s.vars["z"].exact


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_discontinuous_ops_take_only_exact_operands(data):
    s = State()
    _leaf(s, "r", exact=False)
    _leaf(s, "q", exact=False, shape=(3,))
    s.grad_enabled = False   # (in-place ops may then write any of them)
    generators = [strategy.unary, strategy.binary, strategy.reduction, strategy.inplace, breadth.more_unary,
                  breadth.more_binary, breadth.along_dim, breadth.reorder, breadth.loss]
    code = data.draw(st.sampled_from(generators))(data.draw, s)
    if code is None:
        return
    assert not _kinked(code), code


def _kinked(code):
    return code is not None and any(p.fullmatch(code.split(" = ", 1)[-1]) for p in KINKED_PATTERNS)


def test_discontinuous_ops_are_still_drawn_on_exact_operands():
    def on_an_exact_leaf(draw):
        s = State()
        _leaf(s, "x", exact=True)
        return draw(st.sampled_from([strategy.unary, breadth.more_unary, breadth.reorder]))(draw, s)
    assert _kinked(find(st.composite(on_an_exact_leaf)(), _kinked, settings=settings(database=None)))


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_adam_steps_no_gradient_of_rounding_noise(data):
    """Adam divides a gradient by its own size: a gradient that is zero up to rounding steps by ±lr either way."""
    s = State()
    _leaf(s, "w", exact=True)
    s.optimizers["opt"], s.adams = ["w"], {"opt"}
    s.noisy_grads.add("w")
    assert strategy.optimizer_step(data.draw, s) == "opt.zero_grad()"
    assert not s.noisy_grads
