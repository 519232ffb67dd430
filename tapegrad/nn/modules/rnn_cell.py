"""RNNCell, LSTMCell, GRUCell: one time step, composed of linear layers and gates as PyTorch's cells are."""
import math

from ... import _creation as C
from .. import functional as F, init
from ..parameter import Parameter
from .module import Module


class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(C.empty((num_chunks * hidden_size, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(C.empty((num_chunks * hidden_size, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(C.empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(C.empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _gates(self, input, hx):
        return (F.linear(input, self.weight_ih, self.bias_ih), F.linear(hx, self.weight_hh, self.bias_hh))

    def _batch(self, input, hidden, hidden_name="hidden"):
        """(input, hidden as given, whether batched): 1-d input is one sample, as PyTorch's cells accept."""
        name = type(self).__name__
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        for h in hidden:
            if h is not None and h.ndim not in (1, 2):
                raise ValueError(f"{name}: Expected {hidden_name} to be 1D or 2D, got {h.ndim}D instead")
        batched = input.ndim == 2
        if not batched:
            input = input.unsqueeze(0)
            hidden = tuple(None if h is None else h.unsqueeze(0) for h in hidden)
        zeros = None
        if any(h is None for h in hidden):
            zeros = C.zeros((input.shape[0], self.hidden_size), dtype=input.dtype, device=input.device)
        return input, tuple(zeros if h is None else h for h in hidden), batched


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        if self.nonlinearity not in ("tanh", "relu"):
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        input, (hx,), batched = self._batch(input, (hx,))
        gi, gh = self._gates(input, hx)
        out = (gi + gh).tanh() if self.nonlinearity == "tanh" else F.relu(gi + gh)
        return out if batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, (h, c), batched = self._batch(input, (None, None) if hx is None else tuple(hx), "hx[0]")
        gi, gh = self._gates(input, h)
        i, f, g, o = (gi + gh).chunk(4, 1)
        c = f.sigmoid() * c + i.sigmoid() * g.tanh()
        h = o.sigmoid() * c.tanh()
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        input, (hx,), batched = self._batch(input, (hx,))
        gi, gh = self._gates(input, hx)
        i_r, i_z, i_n = gi.chunk(3, 1)
        h_r, h_z, h_n = gh.chunk(3, 1)
        reset = (i_r + h_r).sigmoid()
        update = (i_z + h_z).sigmoid()
        new = (i_n + reset * h_n).tanh()
        out = new + update * (hx - new)
        return out if batched else out.squeeze(0)
