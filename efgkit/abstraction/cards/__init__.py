"""abstraction/cards."""
