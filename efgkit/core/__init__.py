"""The engine core: what every solver and evaluator of every engine shares (docs/architecture.md)."""
