"""abstraction."""
