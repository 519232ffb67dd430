"""PyTorch's torch.nn.utils.rnn: padding and packing variable-length sequences.

Lengths live on the host (PyTorch requires them on the CPU too); every move of data is one gather with an
index tensor computed from them, so the recorded ops depend on the shapes only (the packed length
sum(lengths)), not on where each sequence ends.
"""
import numpy as np

from ..._creation import full, tensor
from ..._tensor import Tensor
from .._packed_sequence import PackedSequence, _packed_rows, _padded_sorted, _repack

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence", "pack_sequence",
           "unpad_sequence", "unpack_sequence"]


def _host_lengths(lengths):
    if isinstance(lengths, Tensor):
        return np.asarray(lengths.tolist(), dtype=np.int64).reshape(-1)
    return np.asarray(lengths, dtype=np.int64).reshape(-1)


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
        sorted_indices = tensor(order)
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
    return PackedSequence(data, tensor(valid.sum(1)), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    padded, lengths, _, _ = _padded_sorted(sequence, padding_value, total_length)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices.to(padded.device))
        lengths = lengths[np.asarray(sequence.unsorted_indices.tolist(), dtype=np.int64)]
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, tensor(lengths)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences. Pass at least one sequence.")
    # PyTorch's kernel: the padding value in the first sequence's dtype and trailing shape, each sequence
    # copied into its slice (broadcast as copy_ does: its errors, and CopySlices nodes for the gradient)
    first = sequences[0]
    max_len = max(s.shape[0] for s in sequences)
    lead = (len(sequences), max_len) if batch_first else (max_len, len(sequences))
    out = full(lead + tuple(first.shape[1:]), padding_value, dtype=first.dtype, device=first.device)
    for i, s in enumerate(sequences):
        start = max_len - s.shape[0] if padding_side == "left" else 0
        if batch_first:
            out.select(0, i).narrow(0, start, s.shape[0]).copy_(s)
        else:
            out.narrow(0, start, s.shape[0]).select(1, i).copy_(s)
    return out


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences, _host_lengths(lengths))]


def pack_sequence(sequences, enforce_sorted=True):
    lengths = tensor([s.shape[0] for s in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
