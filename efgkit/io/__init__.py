"""The lowest floor: atomic writes, one-line error text, checked HDF5, memory-mapped arrays."""
