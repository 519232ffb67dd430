"""Specs for the recurrent kernels (tapegrad/_ops/nn_rnn.py): RNN (tanh, relu), GRU and LSTM.

There is no functional form of these layers in PyTorch's public API, so each case builds the module in
both libraries and swaps its parameters for the case's input tensors (as torch.func.functional_call
does): gradients then reach the weights, the input and the initial states. See op_specs.py for the
format.
"""
from op_specs import F, Case, cases

_GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def _weights(kind, input_size, hidden, layers=1, bidirectional=False, bias=True):
    """Descriptors of the flat weights in PyTorch's order (per layer and direction: w_ih, w_hh[, b_ih, b_hh])."""
    dirs = 2 if bidirectional else 1
    gate = _GATES[kind] * hidden
    out = []
    for layer in range(layers):
        for _ in range(dirs):
            layer_in = input_size if layer == 0 else hidden * dirs
            out += [F(gate, layer_in), F(gate, hidden)] + ([F(gate), F(gate)] if bias else [])
    return out


def _recurrent(kind, input_size, hidden, states=True, **kw):
    """fn(lib, x, [h0, [c0]], *weights) running lib.nn.<kind>(...) with the given weights."""
    lstm = kind == "LSTM"
    nstates = (2 if lstm else 1) if states else 0
    dropout_training = kw.get("dropout", 0) > 0

    def fn(lib, x, *rest):
        module = getattr(lib.nn, kind)(input_size, hidden, dtype=x.dtype, **kw)
        module.train(dropout_training)
        hx, weights = rest[:nstates], rest[nstates:]
        for attr, w in zip(module._flat_weights_names, weights):
            delattr(module, attr)    # a plain tensor in place of the Parameter, as functional_call does
            setattr(module, attr, w)
        if not nstates:
            return module(x)
        return module(x, tuple(hx) if lstm else hx[0])
    return fn


def _case(kind, x, input_size, hidden, states=True, layers=1, bidirectional=False, bias=True, batch=None,
          **kw):
    dirs = 2 if bidirectional else 1
    state_shape = (layers * dirs,) + ((batch,) if batch else ()) + (hidden,)
    nstates = (2 if kind == "LSTM" else 1) if states else 0
    mode = dict(num_layers=layers, bidirectional=bidirectional, bias=bias, **kw)
    if kind == "RNN_RELU":
        kind, mode["nonlinearity"] = "RNN", "relu"
    compare = kw.get("dropout", 0) == 0
    # Dropout masks are random: values and gradients differ from PyTorch's draws, finite differences
    # (under tapegrad's fixed key) still hold.
    return Case(_recurrent(kind, input_size, hidden, states, **mode), x,
                *[F(*state_shape, low=-1, high=1) for _ in range(nstates)],
                *_weights(kind, input_size, hidden, layers, bidirectional, bias),
                compare=compare, grad=compare)


SPECS = {
    "rnn": cases(_case("RNN", F(5, 2, 3), 3, 4, batch=2),
                 _case("RNN_RELU", F(4, 2, 3), 3, 4, layers=2, bidirectional=True, bias=False, batch=2),
                 _case("RNN", F(4, 3), 3, 2, states=False),
                 _case("GRU", F(2, 5, 3), 3, 4, batch=2, batch_first=True),
                 _case("GRU", F(4, 2, 3), 3, 2, layers=2, bidirectional=True, batch=2),
                 _case("GRU", F(4, 2, 3), 3, 2, layers=2, batch=2, dropout=0.5)),
    "lstm": cases(_case("LSTM", F(5, 2, 3), 3, 4, batch=2),
                  _case("LSTM", F(4, 2, 3), 3, 2, layers=2, bidirectional=True, batch=2),
                  _case("LSTM", F(2, 4, 3), 3, 2, states=False, batch_first=True, bias=False),
                  _case("LSTM", F(4, 3), 3, 2, layers=2, batch=None),
                  _case("LSTM", F(4, 2, 3), 3, 2, layers=2, batch=2, dropout=0.5)),
}
