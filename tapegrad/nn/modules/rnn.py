"""RNN, LSTM, GRU: one kernel call per forward (every layer and direction inside it)."""
import math
import numbers

from ... import _creation as C
from ..._dispatch import apply
from ..._ops import nn_rnn as K
from .. import init
from .._functional.sparse import keep_mask
from ..parameter import Parameter
from .._packed_sequence import PackedSequence, _padded_sorted, _repack
from .module import Module
from ..._user_frames import warn_user

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _of_type(name, value, kind):
    if not isinstance(value, kind):
        raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")


class RNNBase(Module):
    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
                 bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__()
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warn_user("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                      f"expects num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}")
        _of_type("bias", bias, bool)
        _of_type("batch_first", batch_first, bool)
        _of_type("input_size", input_size, int)
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        _of_type("hidden_size", hidden_size, int)
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        dirs = 2 if bidirectional else 1
        gate = _GATES[mode] * hidden_size
        out_size = proj_size or hidden_size   # the size of h (and of each direction's output)
        self._flat_weights_names = []
        for layer in range(num_layers):
            for d in range(dirs):
                layer_in = input_size if layer == 0 else out_size * dirs
                suffix = "_reverse" if d == 1 else ""
                shapes = [("weight_ih", (gate, layer_in)), ("weight_hh", (gate, out_size))]
                if bias:
                    shapes += [("bias_ih", (gate,)), ("bias_hh", (gate,))]
                if proj_size:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                for name, shape in shapes:
                    full = f"{name}_l{layer}{suffix}"
                    setattr(self, full, Parameter(C.empty(shape, device=device, dtype=dtype)))
                    self._flat_weights_names.append(full)
        self.reset_parameters()

    @property
    def _flat_weights(self):
        return [getattr(self, name) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        per = (4 if self.bias else 2) + (1 if self.proj_size else 0)
        w = self._flat_weights
        return [w[i:i + per] for i in range(0, len(w), per)]

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self):
        pass

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    def _run(self, input, hx, valid=None):
        """Shared forward: returns (output, (h_n[, c_n])) with PyTorch's layouts; with `valid` (packed
        sequences), input is time-major and padded, and `valid` marks each sequence's real steps."""
        lstm = self.mode == "LSTM"
        if input.ndim not in (2, 3):
            raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.ndim}D instead")
        batched = input.ndim == 3
        dirs = 2 if self.bidirectional else 1
        batch_first = self.batch_first and valid is None
        batch_dim = 0 if batch_first else 1
        if not batched:   # as PyTorch's module: a batch of one along the batch dim
            input = input.unsqueeze(batch_dim)
            if hx is not None:
                hx = tuple(h.unsqueeze(1) for h in hx) if lstm else hx.unsqueeze(1)
        if batch_first:
            input = input.transpose(0, 1)
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.shape[-1]}")
        steps, batch = input.shape[0], input.shape[1]
        out_size = self.proj_size or self.hidden_size
        sizes = (out_size, self.hidden_size) if lstm else (self.hidden_size,)   # h (projected), c
        if hx is None:
            hx = tuple(C.zeros((self.num_layers * dirs, batch, n), dtype=input.dtype, device=input.device)
                       for n in sizes)
            hx = hx if lstm else hx[0]
        states = tuple(hx) if lstm else (hx,)
        for k, (h, n) in enumerate(zip(states, sizes)):
            expected = (self.num_layers * dirs, batch, n)
            if tuple(h.shape) != expected:
                which = f"hidden[{k}]" if lstm else "hidden"
                raise RuntimeError(f"Expected {which} size {expected}, got {list(h.shape)}")
        masks = ()
        if self.training and self.dropout > 0 and self.num_layers > 1:
            masks = tuple(keep_mask((steps, batch, dirs * out_size), self.dropout, input.device)
                          for _ in range(self.num_layers - 1))
        op = K.lstm if lstm else K.rnn
        options = {} if valid is None else {"packed": True}
        if self.proj_size:
            options["proj"] = True
        masks = masks if valid is None else masks + (C.tensor(valid, device=input.device),)
        outs = apply(op, input, *states, *self._flat_weights, *masks, **options, mode="LSTM" if lstm else self.mode[:3],
                     nonlinearity="relu" if self.mode == "RNN_RELU" else "tanh", num_layers=self.num_layers,
                     bidirectional=self.bidirectional, has_bias=self.bias,
                     dropout_scale=1.0 / (1.0 - self.dropout) if masks else 1.0)
        output, hidden = outs[0], outs[1:]
        if batch_first:
            # PyTorch's LSTM returns a transposed view; its RNN and GRU transpose their output in place
            output = output.transpose(0, 1) if lstm else output.transpose_(0, 1)
        if not batched:
            output = output.squeeze(batch_dim)
            hidden = tuple(h.squeeze(1) for h in hidden)
        return output, (hidden if lstm else hidden[0])

    def forward(self, input, hx=None):
        if isinstance(input, PackedSequence):
            return self._run_packed(input, hx)
        return self._run(input, hx)

    def _run_packed(self, input, hx):
        """A PackedSequence runs padded with a mask of real steps; the output is packed again."""
        order, restore = input.sorted_indices, input.unsorted_indices
        if hx is not None and order is not None:
            hx = tuple(h.index_select(1, order) for h in hx) if self.mode == "LSTM" else hx.index_select(1, order)
        padded, _, valid, rows = _padded_sorted(input)
        output, hidden = self._run(padded, hx, valid)
        if restore is not None:
            hidden = (tuple(h.index_select(1, restore) for h in hidden) if self.mode == "LSTM"
                      else hidden.index_select(1, restore))
        return PackedSequence(_repack(output, rows), input.batch_sizes, order, restore), hidden


def _no_projection(kwargs):
    if "proj_size" in kwargs:
        raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")


class RNN(RNNBase):
    def __init__(self, *args, **kwargs):
        _no_projection(kwargs)
        nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        self.nonlinearity = nonlinearity
        super().__init__("RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU", *args, **kwargs)


class LSTM(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    def __init__(self, *args, **kwargs):
        _no_projection(kwargs)
        super().__init__("GRU", *args, **kwargs)


from .rnn_cell import GRUCell, LSTMCell, RNNCell, RNNCellBase  # noqa: E402,F401  (PyTorch's nn.modules.rnn holds them)
