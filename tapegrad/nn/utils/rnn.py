"""PyTorch's torch.nn.utils.rnn: padding and packing variable-length sequences.

Lengths live on the host (PyTorch requires them on the CPU too); every move of data is one gather with an
index tensor computed from them, so the recorded ops depend on the shapes only (the packed length
sum(lengths)), not on where each sequence ends.
"""
from collections import namedtuple

import numpy as np

import tapegrad as _tg

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence", "pack_sequence",
           "unpad_sequence", "unpack_sequence"]


class PackedSequence(namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """Sequences packed time step by time step: `data` holds, for each step, the batch entries still running."""

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
    return _tg.tensor(inverse)


def _host_lengths(lengths):
    if isinstance(lengths, _tg.Tensor):
        return np.asarray(lengths.tolist(), dtype=np.int64).reshape(-1)
    return np.asarray(lengths, dtype=np.int64).reshape(-1)


def _packed_rows(sorted_lengths, batch):
    """Row (t * batch + b) of the time-major padded tensor for each packed element, in packed order."""
    steps = np.arange(int(sorted_lengths[0]))[:, None]
    valid = steps < sorted_lengths[None, :]
    return (steps * batch + np.arange(batch)[None, :])[valid], valid


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    lengths = _host_lengths(lengths)
    if enforce_sorted:
        if np.any(lengths[:-1] < lengths[1:]):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                               "to sidestep this requirement if you do not need ONNX exportability.")
        sorted_indices = None
        order = np.arange(len(lengths))
    else:
        order = np.argsort(-lengths, kind="stable")
        sorted_indices = _tg.tensor(order)
        input = input.index_select(0 if batch_first else 1, sorted_indices.to(input.device))
    if batch_first:
        input = input.transpose(0, 1)
    batch = input.shape[1]
    if len(lengths) != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} "
                           f"(batch_size={batch}). Pass one length per sequence.")
    sorted_lengths = lengths[order]
    if batch and sorted_lengths[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0. Drop empty sequences before packing.")
    if sorted_lengths[0] > input.shape[0]:
        raise RuntimeError(f"Expected sequence length to be larger than or equal to the longest length, got "
                           f"{input.shape[0]} < {sorted_lengths[0]}. Pad the input to the longest sequence.")
    rows, valid = _packed_rows(sorted_lengths, batch)
    data = _repack(input, rows)
    return PackedSequence(data, _tg.tensor(valid.sum(1)), sorted_indices, None)


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
    pad_row = _tg.full((1, *data.shape[1:]), padding_value, dtype=data.dtype, device=data.device)
    padded = _tg.cat([data, pad_row]).index_select(0, _tg.tensor(source, device=data.device))
    valid = np.pad(valid, ((0, max_len - valid.shape[0]), (0, 0)))
    return padded.reshape(max_len, batch, *data.shape[1:]), sorted_lengths, valid, rows


def _repack(padded, rows):
    """Time-major padded (T, B, *) back to packed data, the inverse gather of `_padded_sorted`."""
    flat = padded.reshape(padded.shape[0] * padded.shape[1], *padded.shape[2:])
    return flat.index_select(0, _tg.tensor(rows, device=padded.device))


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    padded, lengths, _, _ = _padded_sorted(sequence, padding_value, total_length)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices.to(padded.device))
        lengths = lengths[np.asarray(sequence.unsorted_indices.tolist(), dtype=np.int64)]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, _tg.tensor(lengths)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, _tg.Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences. Pass at least one sequence.")
    max_len = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        fill = _tg.full((max_len - s.shape[0], *s.shape[1:]), padding_value, dtype=s.dtype, device=s.device)
        padded.append(_tg.cat([s, fill] if padding_side == "right" else [fill, s]))
    return _tg.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, _host_lengths(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    lengths = _tg.tensor([s.shape[0] for s in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
