"""PackedSequence and the packing gathers that nn.utils.rnn's functions and nn.modules.rnn's RNNs share.

Below both nn.utils and nn.modules, so neither imports the other (nn.utils' parametrizations subclass
nn.modules' Module); tapegrad.nn.utils.rnn re-exports the public names.
"""
from collections import namedtuple

import numpy as np

from .._creation import full, tensor
from .._functional import cat


class PackedSequence(namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """Sequences packed time step by time step: `data` holds, for each step, the batch entries still running."""
    __module__ = "tapegrad.nn.utils.rnn"   # its public path, as PyTorch's torch.nn.utils.rnn (repr, pickle)

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = _invert(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        index = lambda t: None if t is None else t.to(data.device)
        return type(self)(data, self.batch_sizes, index(self.sorted_indices), index(self.unsorted_indices))

    @property
    def is_cuda(self):
        return self.data.is_cuda

    def is_pinned(self):
        return False


def _invert(permutation):
    inverse = np.empty(len(permutation), dtype=np.int64)
    inverse[np.asarray(permutation.tolist())] = np.arange(len(permutation))
    return tensor(inverse)


def _packed_rows(sorted_lengths, batch):
    """Row (t * batch + b) of the time-major padded tensor for each packed element, in packed order."""
    steps = np.arange(int(sorted_lengths[0]))[:, None]
    valid = steps < sorted_lengths[None, :]
    return (steps * batch + np.arange(batch)[None, :])[valid], valid


def _padded_sorted(sequence, padding_value=0.0, total_length=None):
    """The packed data as a time-major padded tensor in sorted batch order, with its (T, B) validity mask
    and the padded rows the packed elements came from."""
    data, batch_sizes = sequence.data, np.asarray(sequence.batch_sizes.tolist(), dtype=np.int64)
    batch, max_len = int(batch_sizes[0]), len(batch_sizes)
    sorted_lengths = (batch_sizes[:, None] > np.arange(batch)[None, :]).sum(0)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError("Expected total_length to be at least the length of the longest sequence in input, "
                             f"but got total_length={total_length} and max sequence length being {max_len}")
        max_len = total_length
    rows, valid = _packed_rows(sorted_lengths, batch)
    # Each padded row reads its packed element, or the extra padding row at the end of `data`.
    source = np.full(max_len * batch, len(rows), dtype=np.int64)
    source[rows] = np.arange(len(rows))
    pad_row = full((1, *data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    padded = cat([data, pad_row]).index_select(0, tensor(source, device=data.device))
    valid = np.pad(valid, ((0, max_len - valid.shape[0]), (0, 0)))
    return padded.reshape(max_len, batch, *data.shape[1:]), sorted_lengths, valid, rows


def _repack(padded, rows):
    """Time-major padded (T, B, *) back to packed data, the inverse gather of `_padded_sorted`."""
    flat = padded.reshape(padded.shape[0] * padded.shape[1], *padded.shape[2:])
    return flat.index_select(0, tensor(rows, device=padded.device))
