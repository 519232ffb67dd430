"""Checkpoints in PyTorch's zip format: `_writer` (save), `_reader` (load), `_unpickler` (the globals a
load accepts), `_tensors` (storages shared on load), `_records` (the aligned zip container), `_legacy`
(earlier tapegrad files)."""
