"""Playing strategies against each other: sampled playouts and matches."""
