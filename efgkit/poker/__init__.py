"""The public-tree vector engine for the limit-poker family (docs/poker-engine.md)."""
