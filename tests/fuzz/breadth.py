"""Generators for the wider op set: more elementwise functions, ops along a dim (softmax, cumsum, flip ...),
joins, index-driven ops (index_select, gather, masked_fill, advanced indexing) and losses.

Each writes one step's code and records its result in the abstract State, as strategy.py's generators do.
Values are quarters in [-2, 2], so ties, zeros and negative inputs (log, sqrt, pow) come up often: both
libraries must agree there too. Each list names the templates whose result may differ in the last bits
(*_ROUNDS) and those that need operands that do not (*_KINKED: see state.py). (Not copysign: it reads a
NaN's sign bit, which each library's log of a negative number sets its own way; the op table's tests check
copysign on numbers.)
"""
from hypothesis import strategies as st

from .shapes import broadcast
from .state import allowed, floating, promote


def _pick(draw, items):
    return draw(st.sampled_from(items))


MORE_UNARY = ["{x}.square()", "{x}.sign()", "{x}.floor()", "{x}.reciprocal()", "{x}.atan()", "{x}.erf()",
              "{x}.expm1()", "{x}.log1p()", "{x}.rsqrt()", "{x}.sinh()", "{x}.asinh()", "{x}.frac()",
              "{x}.trunc()", "{x}.exp2()", "{x}.logit()", "{x}.sigmoid().log()",
              "torch.nn.functional.gelu({x})", "torch.nn.functional.silu({x})",
              "torch.nn.functional.softplus({x})", "torch.nn.functional.leaky_relu({x}, 0.1)",
              "torch.nn.functional.elu({x})", "torch.nn.functional.hardtanh({x}, -0.5, 0.5)",
              "torch.nn.functional.gelu({x}, approximate='tanh')", "{x}.clamp(max=0.25)",
              "{x}.nan_to_num(0.0)", "{x}.masked_fill({x} > 0.5, 2.0)", "torch.where({x} < 0, {x}, 0.25)"]
MORE_UNARY_ROUNDS = {"{x}.reciprocal()", "{x}.atan()", "{x}.erf()", "{x}.expm1()", "{x}.log1p()", "{x}.rsqrt()",
                     "{x}.sinh()", "{x}.asinh()", "{x}.exp2()", "{x}.logit()", "{x}.sigmoid().log()",
                     "torch.nn.functional.gelu({x})", "torch.nn.functional.silu({x})",
                     "torch.nn.functional.softplus({x})", "torch.nn.functional.leaky_relu({x}, 0.1)",
                     "torch.nn.functional.elu({x})", "torch.nn.functional.gelu({x}, approximate='tanh')"}
MORE_UNARY_KINKED = {"{x}.sign()", "{x}.floor()", "{x}.reciprocal()", "{x}.log1p()", "{x}.rsqrt()", "{x}.frac()",
                     "{x}.trunc()", "{x}.logit()", "torch.nn.functional.leaky_relu({x}, 0.1)",
                     "torch.nn.functional.hardtanh({x}, -0.5, 0.5)", "{x}.clamp(max=0.25)",
                     "{x}.masked_fill({x} > 0.5, 2.0)", "torch.where({x} < 0, {x}, 0.25)"}


def more_unary(draw, s):
    x = _pick(draw, list(s.vars.values()))
    name = s.fresh()
    template = _pick(draw, allowed(MORE_UNARY, MORE_UNARY_KINKED, x))
    rounds = template in MORE_UNARY_ROUNDS
    s.result(name, x.shape, floating(x.dtype) if rounds else x.dtype, [x], rounds=rounds)
    return f"{name} = " + template.format(x=x.name)


MORE_BINARY = ["{a} / {b}", "torch.atan2({a}, {b})", "{a}.pow({b})", "torch.hypot({a}, {b})",
               "torch.fmod({a}, {b})", "torch.remainder({a}, {b})", "torch.lerp({a}, {b}, 0.25)",
               "torch.xlogy({a}, {b})", "{a}.div({b}, rounding_mode='floor')",
               "{a}.clamp(min={b})", "torch.maximum({a}, {b}.detach())", "{a}.addcmul({b}, {b}, value=0.5)",
               "{a}.addcdiv({a}, {b}, value=-2)", "{a} // {b}", "{a} % {b}", "{a} & {b}", "{a} | {b}", "{a} ^ {b}",
               "({a} == {b})", "({a} < {b}).float()", "torch.where({a} >= {b}, {a}, {b} * 2)"]
COMPARES = {"({a} == {b})", "({a} < {b}).float()"}   # (their results: bool, float32)
MORE_BINARY_ROUNDS = {"{a} / {b}", "torch.atan2({a}, {b})", "{a}.pow({b})", "torch.hypot({a}, {b})",
                      "torch.xlogy({a}, {b})", "{a}.addcdiv({a}, {b}, value=-2)"}
MORE_BINARY_KINKED = MORE_BINARY_ROUNDS | {"torch.fmod({a}, {b})", "torch.remainder({a}, {b})",
                                           "{a}.div({b}, rounding_mode='floor')", "{a}.clamp(min={b})",
                                           "torch.maximum({a}, {b}.detach())", "{a} // {b}", "{a} % {b}",
                                           "({a} == {b})", "({a} < {b}).float()",
                                           "torch.where({a} >= {b}, {a}, {b} * 2)"}


# (a tie of +0.0 and -0.0 between two tensors: see strategy.SIGNED_ZERO_TIES)
MORE_BINARY_ZERO_TIES = {"{a}.clamp(min={b})", "torch.maximum({a}, {b}.detach())"}


def more_binary(draw, s):
    pool = list(s.vars.values())
    a = _pick(draw, pool)
    fits = [b for b in pool if broadcast(a.shape, b.shape) is not None]
    b = _pick(draw, fits)
    template = _pick(draw, allowed(MORE_BINARY, MORE_BINARY_KINKED, a, b))
    shape = broadcast(a.shape, b.shape)
    if "clamp" in template or "addc" in template:   # (a's shape: min=b must broadcast to it, and so on)
        if broadcast(a.shape, b.shape) != a.shape:
            return None
        shape = a.shape
    name = s.fresh()
    dtype = {"({a} == {b})": "bool", "({a} < {b}).float()": "float32"}.get(template, promote(a, b))
    s.result(name, shape, dtype, [] if template in COMPARES else [a, b],
             rounds=template in MORE_BINARY_ROUNDS or template in MORE_BINARY_ZERO_TIES)
    return f"{name} = " + template.format(a=a.name, b=b.name)


ALONG_DIM = ["{x}.softmax({d})", "{x}.log_softmax({d})", "{x}.cumsum({d})", "{x}.cumprod({d})",
             "{x}.flip({d})", "{x}.roll(1, {d})", "torch.nn.functional.normalize({x}, dim={d})",
             "{x}.logcumsumexp({d})", "torch.nn.functional.softmin({x}, {d})"]
REDUCING_DIM = ["{x}.var({d})", "{x}.std({d}, keepdim=True)", "{x}.norm(dim={d})", "{x}.nansum({d})",
                "torch.linalg.vector_norm({x}, 3, dim={d})", "{x}.var({d}, correction=0)"]
ALONG_DIM_ROUNDS = {"{x}.softmax({d})", "{x}.log_softmax({d})", "torch.nn.functional.normalize({x}, dim={d})",
                    "{x}.logcumsumexp({d})", "torch.nn.functional.softmin({x}, {d})", "{x}.var({d})",
                    "{x}.std({d}, keepdim=True)", "{x}.norm(dim={d})", "torch.linalg.vector_norm({x}, 3, dim={d})",
                    "{x}.var({d}, correction=0)"}
# (a norm's gradient is x / norm, 0 at a zero vector: one rounded away from zero is a unit vector)
ALONG_DIM_KINKED = {"torch.nn.functional.normalize({x}, dim={d})", "{x}.std({d}, keepdim=True)",
                    "{x}.norm(dim={d})", "torch.linalg.vector_norm({x}, 3, dim={d})"}


def _tensor_and_dim(draw, s):
    """A tensor of the pool with dims and one of its dims (negative too), or None where none has dims."""
    dims = [v for v in s.vars.values() if v.shape]
    if not dims:
        return None
    x = _pick(draw, dims)
    return x, draw(st.integers(-len(x.shape), len(x.shape) - 1))


def along_dim(draw, s):
    picked = _tensor_and_dim(draw, s)
    if picked is None:
        return None
    x, d = picked
    name = s.fresh()
    if draw(st.integers(0, 2)) == 0:
        template = _pick(draw, allowed(REDUCING_DIM, ALONG_DIM_KINKED, x))
        keep = "keepdim=True" in template
        shape = x.shape[:d % len(x.shape)] + ((1,) if keep else ()) + x.shape[d % len(x.shape) + 1:]
    else:
        template, shape = _pick(draw, allowed(ALONG_DIM, ALONG_DIM_KINKED, x)), x.shape
    rounds = template in ALONG_DIM_ROUNDS
    s.result(name, shape, floating(x.dtype) if rounds else x.dtype, [x], rounds=rounds)
    return f"{name} = " + template.format(x=x.name, d=d)


def reorder(draw, s):
    """Ops that pick, sort or difference along a dim (ties are common: values are quarters)."""
    picked = _tensor_and_dim(draw, s)
    if picked is None:
        return None
    x, d = picked
    k = d % len(x.shape)
    options = {"{x}.sort(dim={d}, stable=True).values": x.shape, "{x}.cummax({d}).values": x.shape,
               "{x}.cummin({d}).values": x.shape, "{x}.topk(1, {d}).values": x.shape[:k] + (1,) + x.shape[k + 1:],
               "{x}.diff(dim={d})": x.shape[:k] + (max(x.shape[k] - 1, 0),) + x.shape[k + 1:],
               "{x}.flatten()": (_count(x.shape),),
               "{x}.argsort(dim={d}, stable=True).float()": x.shape}
    if len(x.shape) >= 2:
        options.update({"{x}.tril()": x.shape, "{x}.triu(1)": x.shape, "{x}.mT.contiguous()": x.shape[:-2] + x.shape[:-3:-1]})
    # (ties decide which element a sort or a running extreme picks: a tie broken by rounding picks another)
    template = _pick(draw, allowed(sorted(options), REORDER_KINKED, x))
    name = s.fresh()
    s.result(name, options[template], x.dtype, [x])
    return f"{name} = " + template.format(x=x.name, d=d)


REORDER_KINKED = {"{x}.sort(dim={d}, stable=True).values", "{x}.cummax({d}).values", "{x}.cummin({d}).values",
                  "{x}.topk(1, {d}).values", "{x}.argsort(dim={d}, stable=True).float()"}


def _count(shape):
    n = 1
    for k in shape:
        n *= k
    return n


def join(draw, s):
    dims = [v for v in s.vars.values() if v.shape]
    if not dims:
        return None
    x = _pick(draw, dims)
    d = draw(st.integers(0, len(x.shape) - 1))
    same = [v for v in dims if v.shape == x.shape]
    along = [v for v in dims if len(v.shape) == len(x.shape)
             and all(a == b for k, (a, b) in enumerate(zip(v.shape, x.shape)) if k != d)]
    name = s.fresh()
    if draw(st.booleans()):
        y = _pick(draw, same)
        shape = x.shape[:d] + (2,) + x.shape[d:]
        s.result(name, shape, promote(x, y), [x, y])
        return f"{name} = torch.stack([{x.name}, {y.name}], {d})"
    y = _pick(draw, along)
    shape = x.shape[:d] + (x.shape[d] + y.shape[d],) + x.shape[d + 1:]
    s.result(name, shape, promote(x, y), [x, y])
    return f"{name} = torch.cat([{x.name}, {y.name}], {d})"


def by_index(draw, s):
    dims = [v for v in s.vars.values() if v.shape and 0 not in v.shape]
    if not dims:
        return None
    x = _pick(draw, dims)
    d = draw(st.integers(0, len(x.shape) - 1))
    n = x.shape[d]
    picks = draw(st.lists(st.integers(-n if d == 0 else 0, n - 1), min_size=1, max_size=4))
    name = s.fresh()
    kind = _pick(draw, ["index_select", "gather", "advanced", "take_along"])
    if kind == "index_select":
        picks = [p % n for p in picks]
        s.result(name, x.shape[:d] + (len(picks),) + x.shape[d + 1:], x.dtype, [x])
        return f"{name} = {x.name}.index_select({d}, torch.tensor({picks}))"
    if kind == "advanced":   # x[[i, j, ...]] along dim 0 (negative indices too), or at dim d after slices
        s.result(name, x.shape[:d] + (len(picks),) + x.shape[d + 1:], x.dtype, [x])
        return f"{name} = {x.name}[{':, ' * d}torch.tensor({picks})]"
    # gather / take_along_dim: an index of x's shape with `size` entries along d
    size = draw(st.integers(1, 3))
    shape = x.shape[:d] + (size,) + x.shape[d + 1:]
    count = 1
    for k in shape:
        count *= k
    values = [draw(st.integers(0, n - 1)) for _ in range(count)]
    index = f"torch.tensor({values}).reshape({', '.join(map(str, shape))})"
    s.result(name, shape, x.dtype, [x])
    if kind == "gather":
        return f"{name} = {x.name}.gather({d}, {index})"
    return f"{name} = torch.take_along_dim({x.name}, {index}, {d})"


LOSSES = ["torch.nn.functional.mse_loss({a}, {b})", "torch.nn.functional.l1_loss({a}, {b})",
          "torch.nn.functional.smooth_l1_loss({a}, {b}, beta=0.5)", "torch.nn.functional.huber_loss({a}, {b})",
          "torch.nn.functional.mse_loss({a}, {b}, reduction='sum')",
          "torch.nn.functional.binary_cross_entropy_with_logits({a}, {b}.sigmoid())",
          "torch.nn.functional.kl_div({a}.log_softmax(-1), {b}.softmax(-1), reduction='batchmean')"]
LOSSES_KINKED = {"torch.nn.functional.l1_loss({a}, {b})", "torch.nn.functional.smooth_l1_loss({a}, {b}, beta=0.5)",
                 "torch.nn.functional.huber_loss({a}, {b})"}


def loss(draw, s):
    pool = [v for v in s.vars.values() if v.shape]
    if not pool:
        return None
    a = _pick(draw, pool)
    same = [b for b in pool if b.shape == a.shape and b.dtype == a.dtype]
    b = _pick(draw, same)
    losses = LOSSES if b is not a else LOSSES[:-1]   # (kl_div of a distribution with itself is rounding noise,
    name = s.fresh()                                 # ~1e-17, which a later division would blow up)
    template = _pick(draw, allowed(losses, LOSSES_KINKED, a, b))
    # (every loss but the summed square takes a mean)
    s.result(name, (), floating(a.dtype), [a, b], rounds="reduction='sum'" not in template)
    return f"{name} = " + template.format(a=a.name, b=b.name)


def layer_norm(draw, s):
    # (of exact values only: normalising a row that is constant up to rounding, a gradient that is zero up to
    # rounding say, blows the rounding up to the result's own size)
    pool = [v for v in s.vars.values() if v.shape and v.exact]
    if not pool:
        return None
    x = _pick(draw, pool)
    weights = [w for w in s.vars.values() if w.shape == x.shape[-1:] and w.dtype == x.dtype]
    name = s.fresh()
    if weights and draw(st.booleans()):
        # (a weight alone: a bias can cancel the scaled normalised value, and a row of two normalises to
        # +-(1 - eps/var) where float32 rounding then decides the difference's leading digits, seed 322)
        w = _pick(draw, weights)
        s.result(name, x.shape, floating(x.dtype), [x, w], rounds=True)
        return f"{name} = torch.nn.functional.layer_norm({x.name}, {x.shape[-1:]}, {w.name})"
    s.result(name, x.shape, floating(x.dtype), [x], rounds=True)
    return f"{name} = torch.nn.functional.layer_norm({x.name}, {x.shape[-1:]})"


WEIGHTS = {more_unary: 2, more_binary: 2, along_dim: 2, reorder: 2, join: 1, by_index: 2, loss: 1, layer_norm: 1}
