"""Implementation of `tapegrad.nn.functional`, split by family; the public names are re-exported there."""
