"""The materialised public-tree engine: every betting sequence and every pair of hands in
memory (``public_tree``), its strategy layout, vector CFR variants, and its exact best
response; for the poker games that fit a tree (docs/poker-engine.md)."""
